"""ModelStore: the S3 bucket the fleets read model weights from.

Versioned (a bad upload can be rolled back), encrypted at rest (SSE-S3),
public access blocked, object ownership enforced (no ACLs), TLS required by
bucket policy, and with `publishers` every object write, replacement or delete
denied to any other principal (the deploying role is not one unless listed).
Integrity and authenticity do not rest on the bucket: each fleet pins its
manifest's SHA-256 and nodes refuse any other. Old versions expire after `noncurrent_version_days` and
abandoned multipart uploads after 7 days, so replaced weights stop costing
money. With `gateway_endpoint`, an S3 gateway endpoint on the given route
tables keeps weight downloads off the NAT gateway (free instead of per-GB).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.buckets import access_log_bucket, private_bucket
from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.aws.model_store_args import (
    GatewayEndpointArgs,
    ModelStoreArgs,
    validate_model_store,
)
from inference_infra.components.aws.network import s3_gateway_endpoint
from inference_infra.components.aws.private_endpoints import S3Gateway
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import input_problems

__all__ = ["GatewayEndpointArgs", "ModelStore", "ModelStoreArgs", "bucket_policy", "validate_model_store"]

# Everything that writes, replaces or deletes an object (a version included).
OBJECT_WRITES = (
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:RestoreObject",
    "s3:ReplicateObject",
    "s3:ReplicateDelete",
)


def bucket_policy(bucket_arn: pulumi.Input[str], publishers: Sequence[str]) -> dict[str, Any]:
    """TLS only; with publishers, object writes by anyone else denied (an explicit deny: no IAM grant
    elsewhere in the account, the deploying role's included, overrides it)."""
    statements: list[dict[str, Any]] = [
        {
            "Sid": "RefuseWithoutTls",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": [bucket_arn, pulumi.Output.concat(bucket_arn, "/*")],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    ]
    if publishers:
        statements.append(
            {
                "Sid": "OnlyPublishersWriteWeights",
                "Effect": "Deny",
                "Principal": "*",
                "Action": list(OBJECT_WRITES),
                "Resource": pulumi.Output.concat(bucket_arn, "/*"),
                "Condition": {"ArnNotEquals": {"aws:PrincipalArn": list(publishers)}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


class ModelStore(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]
    bucket_arn: pulumi.Output[str]
    gateway_endpoint_id: pulumi.Output[str] | None

    def __init__(self, name: str, args: ModelStoreArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(f"ModelStore {name!r}", input_problems(args, validate_model_store))
        super().__init__("inference-infra:aws:ModelStore", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        naming = {"bucket": args.bucket_name} if args.bucket_name else {"bucket_prefix": f"{name[:36]}-"}
        bucket = private_bucket(
            f"{name}-bucket",
            prefix=name,
            naming=naming,
            tags={"Name": name},
            force_destroy=args.force_destroy,
            opts=child,
        )
        aws.s3.BucketVersioning(
            f"{name}-versioning", bucket=bucket.id, versioning_configuration={"status": "Enabled"}, opts=child
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket.id,
            rules=[
                {
                    "id": "expire-replaced-weights",
                    "status": "Enabled",
                    "filter": {},
                    "noncurrent_version_expiration": {"noncurrent_days": args.noncurrent_version_days},
                    "abort_incomplete_multipart_upload": {"days_after_initiation": 7},
                }
            ],
            opts=child,
        )
        aws.s3.BucketPolicy(
            f"{name}-tls-only",  # the name it had when TLS was its only statement (a rename replaces it)
            bucket=bucket.id,
            policy=pulumi.Output.json_dumps(bucket_policy(bucket.arn, args.publishers)),
            opts=child,
        )
        if args.access_logs:
            self._access_logs(name, bucket, args, child)
        self.gateway_endpoint_id = None
        self._gateway: aws.ec2.VpcEndpoint | None = None
        if args.gateway_endpoint is not None:
            endpoint = s3_gateway_endpoint(
                f"{name}-s3-endpoint",
                vpc_id=args.gateway_endpoint.vpc_id,
                route_table_ids=args.gateway_endpoint.route_table_ids,
                parent=self,
            )
            self.gateway_endpoint_id = endpoint.id
            self._gateway = endpoint
        self.bucket_name = bucket.bucket
        self.bucket_arn = bucket.arn
        self.register_outputs(
            {
                "bucket_name": self.bucket_name,
                "bucket_arn": self.bucket_arn,
                "gateway_endpoint_id": self.gateway_endpoint_id,
            }
        )

    def source(self, prefix: str, *, manifest_sha256: str | None = None, prefetch: bool = True) -> S3Weights:
        """Read access to s3://<bucket>/<prefix> for a fleet, and a boot-time prefetch onto its cache of
        the files the manifest with this SHA-256 lists (`inference-infra models manifest` prints it)."""
        return S3Weights(
            bucket_name=self.bucket_name, prefix=prefix, prefetch=prefetch, manifest_sha256=manifest_sha256
        )

    def gateway(self) -> S3Gateway:
        """The S3 gateway endpoint and its prefix list, for PrivateEndpointsArgs.s3_gateway (reuse it)."""
        if self._gateway is None:
            raise ValueError("ModelStore has no gateway endpoint: set ModelStoreArgs.gateway_endpoint")
        return S3Gateway(endpoint_id=self._gateway.id, prefix_list_id=self._gateway.prefix_list_id)

    def _access_logs(
        self, name: str, bucket: aws.s3.Bucket, args: ModelStoreArgs, child: pulumi.ResourceOptions
    ) -> None:
        """A private log bucket that only S3's logging service may write, for this bucket's logs only."""
        logs = access_log_bucket(
            f"{name}-access-logs",
            prefix=f"{name}-access-logs",
            naming={"bucket_prefix": f"{name[:28]}-logs-"},
            tags={"Name": f"{name}-access-logs"},
            expire_days=args.access_log_days,
            force_destroy=args.force_destroy,
            opts=child,
        )
        aws.s3.BucketPolicy(
            f"{name}-access-logs-policy",
            bucket=logs.id,
            policy=pulumi.Output.json_dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "S3ServerAccessLogs",
                            "Effect": "Allow",
                            "Principal": {"Service": "logging.s3.amazonaws.com"},
                            "Action": "s3:PutObject",
                            "Resource": pulumi.Output.concat(logs.arn, "/*"),
                            "Condition": {"ArnLike": {"aws:SourceArn": bucket.arn}},
                        }
                    ],
                }
            ),
            opts=child,
        )
        aws.s3.BucketLogging(
            f"{name}-access-logging",
            bucket=bucket.id,
            target_bucket=logs.id,
            target_prefix=f"{name}/",
            opts=child,
        )
