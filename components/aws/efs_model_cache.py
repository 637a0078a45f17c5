"""EfsModelCache: a shared, encrypted EFS file system for model weights.

Elastic throughput (pay per byte moved, bursts to GiB/s when a fleet starts),
a mount target per subnet, an access point that confines clients to the
weights directory as a fixed POSIX user, a file system policy that refuses
clients not using TLS, and a client security group: a fleet that attaches it
(`GpuFleetArgs(efs=cache.attachment())`) may reach NFS, nobody else may.

Defaults and why: files untouched for 30 days move to Infrequent Access and
come back on first read (weights of retired models stop costing full price);
AWS Backup is off, because the weights' source of truth is the S3 model store
and backing up a cache doubles its cost. Turn it on with `backup=True` if the
cache holds anything S3 does not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.efs_model_cache_args import (
    IA_TRANSITIONS,
    EfsModelCacheArgs,
    ThroughputMode,
    validate_efs_cache,
)
from inference_infra.components.aws.fleet_args import EfsAttachment
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import input_problems

__all__ = ["IA_TRANSITIONS", "EfsModelCache", "EfsModelCacheArgs", "ThroughputMode", "validate_efs_cache"]

NFS_PORT = 2049


class EfsModelCache(pulumi.ComponentResource):
    file_system_id: pulumi.Output[str]
    file_system_arn: pulumi.Output[str]
    access_point_id: pulumi.Output[str]
    access_point_arn: pulumi.Output[str]
    writer_access_point_id: pulumi.Output[str]
    writer_access_point_arn: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    client_security_group_id: pulumi.Output[str]

    def __init__(self, name: str, args: EfsModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(f"EfsModelCache {name!r}", input_problems(args, validate_efs_cache))
        super().__init__("inference-infra:aws:EfsModelCache", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        lifecycle = []
        if args.transition_to_ia_days is not None:
            lifecycle = [
                {"transition_to_ia": f"AFTER_{args.transition_to_ia_days}_DAYS"},
                {"transition_to_primary_storage_class": "AFTER_1_ACCESS"},
            ]
        fs = aws.efs.FileSystem(
            f"{name}-fs",
            encrypted=True,
            kms_key_id=args.kms_key,
            performance_mode="generalPurpose",
            throughput_mode=args.throughput_mode.value,
            lifecycle_policies=lifecycle,
            tags={"Name": name},
            opts=child,
        )
        aws.efs.BackupPolicy(
            f"{name}-backup",
            file_system_id=fs.id,
            backup_policy={"status": "ENABLED" if args.backup else "DISABLED"},
            opts=child,
        )
        group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=args.vpc_id,
            description=f"{name}: NFS from the model cache's clients only",
            tags={"Name": f"{name}-sg"},
            opts=child,
        )
        clients = aws.ec2.SecurityGroup(
            f"{name}-clients",
            vpc_id=args.vpc_id,
            description=f"{name}: attach to instances that mount the model cache",
            tags={"Name": f"{name}-clients"},
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-clients-nfs",
            security_group_id=clients.id,
            referenced_security_group_id=group.id,
            ip_protocol="tcp",
            from_port=NFS_PORT,
            to_port=NFS_PORT,
            description="NFS to the model cache's mount targets",
            opts=child,
        )
        for i, source in enumerate([clients.id, *args.client_security_group_ids]):
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-nfs-from-{i}",
                security_group_id=group.id,
                referenced_security_group_id=source,
                ip_protocol="tcp",
                from_port=NFS_PORT,
                to_port=NFS_PORT,
                description="NFS from model cache clients",
                opts=child,
            )
        for subnet in args.subnets:
            aws.efs.MountTarget(
                f"{name}-{subnet.availability_zone}",
                file_system_id=fs.id,
                subnet_id=subnet.id,
                security_groups=[group.id],
                opts=child,
            )

        def point(suffix: str, access: str) -> aws.efs.AccessPoint:
            return aws.efs.AccessPoint(
                f"{name}-{suffix}",
                file_system_id=fs.id,
                posix_user={"uid": args.posix_uid, "gid": args.posix_gid},
                root_directory={
                    "path": args.weights_path,
                    "creation_info": {
                        "owner_uid": args.posix_uid,
                        "owner_gid": args.posix_gid,
                        "permissions": "0755",
                    },
                },
                tags={"Name": f"{name}-{suffix}", "Access": access},
                opts=child,
            )

        access_point = point("weights", "read-only")
        # The writer's access point: same directory and owner, so what it writes the readers can read.
        writer_point = point("writer", "read-write")
        aws.efs.FileSystemPolicy(
            f"{name}-policy",
            file_system_id=fs.id,
            policy=pulumi.Output.all(
                fs.arn, access_point.arn, writer_point.arn, *args.writer_principal_arns
            ).apply(lambda v: json.dumps(file_system_policy(v[0], v[1], v[2], v[3:]))),
            opts=child,
        )

        self.file_system_id = fs.id
        self.file_system_arn = fs.arn
        self.access_point_id = access_point.id
        self.access_point_arn = access_point.arn
        self.writer_access_point_id = writer_point.id
        self.writer_access_point_arn = writer_point.arn
        self.security_group_id = group.id
        self.client_security_group_id = clients.id
        self.register_outputs(
            {
                "file_system_id": self.file_system_id,
                "access_point_id": self.access_point_id,
                "security_group_id": self.security_group_id,
                "client_security_group_id": self.client_security_group_id,
            }
        )

    def attachment(self, *, mount_path: str = "/mnt/efs-models") -> EfsAttachment:
        """What a serving fleet needs to mount this cache: read-only, through the readers' access point
        (its instances join the client security group). The file-system policy refuses it writes."""
        return EfsAttachment(
            file_system_id=self.file_system_id,
            file_system_arn=self.file_system_arn,
            access_point_id=self.access_point_id,
            access_point_arn=self.access_point_arn,
            client_security_group_id=self.client_security_group_id,
            mount_path=mount_path,
            read_only=True,
        )

    def writer_attachment(self, *, mount_path: str = "/mnt/efs-models") -> EfsAttachment:
        """For the publisher only (its role must be in writer_principal_arns): read-write mount."""
        return EfsAttachment(
            file_system_id=self.file_system_id,
            file_system_arn=self.file_system_arn,
            access_point_id=self.writer_access_point_id,
            access_point_arn=self.writer_access_point_arn,
            client_security_group_id=self.client_security_group_id,
            mount_path=mount_path,
            read_only=False,
        )


def account_root(file_system_arn: str) -> str:
    """arn:aws:elasticfilesystem:<region>:<account>:file-system/<id> -> arn:<partition>:iam::<account>:root"""
    parts = file_system_arn.split(":")
    return f"arn:{parts[1]}:iam::{parts[4]}:root"


def file_system_policy(
    fs_arn: str, reader_point_arn: str, writer_point_arn: str, writers: Sequence[str]
) -> dict:
    """The file-system policy: TLS only; principals of this account (whose own IAM policy must also
    allow it) may mount read-only through the readers' access point; only the named writers may write,
    and only through the writer access point. No statement allows an anonymous principal."""
    statements: list[dict] = [
        {
            "Sid": "RefuseWithoutTls",
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "*",
            "Resource": fs_arn,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        },
        {
            "Sid": "ReadThroughReadersAccessPoint",
            "Effect": "Allow",
            "Principal": {"AWS": account_root(fs_arn)},
            "Action": ["elasticfilesystem:ClientMount"],
            "Resource": fs_arn,
            "Condition": {
                "Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"},
                "StringEquals": {"elasticfilesystem:AccessPointArn": reader_point_arn},
            },
        },
    ]
    if writers:
        statements.append(
            {
                "Sid": "WriteByNamedWritersOnly",
                "Effect": "Allow",
                "Principal": {"AWS": sorted(writers)},
                "Action": ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"],
                "Resource": fs_arn,
                "Condition": {
                    "Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"},
                    "StringEquals": {"elasticfilesystem:AccessPointArn": writer_point_arn},
                },
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}
