"""storage-encrypted: where model weights and caches live is encrypted at rest.

EBS volumes (standalone, on instances, in launch templates) and EFS file
systems must say `encrypted: true`: whether an unset flag encrypts depends on
an account setting the program cannot see. S3 encrypts every object
(SSE-S3 at least); a bucket's encryption settings may only name a configured
algorithm. Filestore is always encrypted by Google. With
`requireCustomerManagedKeys`, every one of them must also name a KMS key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import AWS_INSTANCE, AWS_LAUNCH_TEMPLATE, AWS_SPOT_REQUEST, get_path
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    rule_metadata,
    show,
)

NAME = "storage-encrypted"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "EBS volumes, EFS file systems, S3 buckets and Filestore instances are encrypted at rest."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "requireCustomerManagedKeys": {
            "type": "boolean",
            "default": False,
            "description": "Also require a customer-managed KMS key (kmsKeyId, kmsMasterKeyId, kmsKeyName).",
        },
        "s3Algorithms": {
            "type": "array",
            "items": {"type": "string", "enum": ["AES256", "aws:kms", "aws:kms:dsse"]},
            "minItems": 1,
            "default": ["AES256", "aws:kms", "aws:kms:dsse"],
            "description": "Server-side encryption algorithms an S3 bucket may use.",
        },
    }
)

EBS_VOLUME = "aws:ebs/volume:Volume"
EFS_FILE_SYSTEM = "aws:efs/fileSystem:FileSystem"
S3_BUCKETS = frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"})
S3_ENCRYPTION = frozenset(
    {
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
    }
)
FILESTORE = "gcp:filestore/instance:Instance"
_KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    found = Findings()
    cmk = config["requireCustomerManagedKeys"]
    props = resource.props
    if resource.type in (EBS_VOLUME, EFS_FILE_SYSTEM):
        _encrypted(resource, props, "", cmk, found)
    elif resource.type in (AWS_INSTANCE, AWS_SPOT_REQUEST):
        for path, device in _instance_devices(props):
            _encrypted(resource, device, path, cmk, found)
    elif resource.type == AWS_LAUNCH_TEMPLATE:
        for path, device in _template_devices(props):
            _encrypted(resource, device, path, cmk, found)
    elif resource.type in S3_BUCKETS:
        rule = get_path(props, "serverSideEncryptionConfiguration", "rule")
        if rule is not None:
            _s3_rule(resource, rule, "serverSideEncryptionConfiguration.rule", config, found)
    elif resource.type in S3_ENCRYPTION:
        rules = props.get("rules")
        if rules is UNKNOWN:
            found.not_known("rules")
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            _s3_rule(resource, rule, f"rules[{i}]", config, found)
    elif resource.type == FILESTORE:
        key = props.get("kmsKeyName")
        if key is UNKNOWN:
            found.not_known("kmsKeyName")
        elif cmk and not key:
            found.violation(
                f"{resource.label} has no kmsKeyName; requireCustomerManagedKeys asks for a Cloud KMS key."
            )
    else:
        return not_applicable(
            "applies to EBS volumes, instances' and launch templates' EBS block devices, "
            "EFS file systems, S3 buckets and their encryption settings, Filestore instances"
        )
    return found.outcome()


def _instance_devices(props: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Block devices an instance declares; undeclared ones come from the AMI and are not judged."""
    devices = (
        [("rootBlockDevice.", props["rootBlockDevice"])] if props.get("rootBlockDevice") is not None else []
    )
    ebs = props.get("ebsBlockDevices")
    if ebs is UNKNOWN:
        devices.append(("ebsBlockDevices.", UNKNOWN))
    devices += [(f"ebsBlockDevices[{i}].", d) for i, d in enumerate(ebs if isinstance(ebs, list) else [])]
    return devices


def _template_devices(props: Mapping[str, Any]) -> list[tuple[str, Any]]:
    mappings = props.get("blockDeviceMappings")
    if mappings is UNKNOWN:
        return [("blockDeviceMappings.", UNKNOWN)]
    return [
        (f"blockDeviceMappings[{i}].ebs.", m["ebs"])
        for i, m in enumerate(mappings if isinstance(mappings, list) else [])
        if isinstance(m, Mapping) and m.get("ebs") is not None  # instance-store and no-device entries
    ]


def _encrypted(resource: Resource, device: Any, path: str, cmk: bool, found: Findings) -> None:
    encrypted, key = get_path(device, "encrypted"), get_path(device, "kmsKeyId")
    if encrypted is UNKNOWN or (cmk and key is UNKNOWN):
        found.not_known(f"{path}encrypted" if encrypted is UNKNOWN else f"{path}kmsKeyId")
        return
    if not (encrypted is True or (isinstance(encrypted, str) and encrypted.lower() == "true")):
        state = f"is {show(encrypted)}" if encrypted is not None else "is unset"
        found.violation(
            f"{resource.label}: {path}encrypted {state}; set it to true (whether an unset flag encrypts "
            "depends on the account's EBS/EFS default, which the program cannot see)."
        )
    elif cmk and not key:
        found.violation(
            f"{resource.label}: {path}kmsKeyId is unset; requireCustomerManagedKeys asks for a KMS key."
        )


def _s3_rule(resource: Resource, rule: Any, path: str, config: Mapping[str, Any], found: Findings) -> None:
    default = get_path(rule, "applyServerSideEncryptionByDefault")
    algorithm, key = get_path(default, "sseAlgorithm"), get_path(default, "kmsMasterKeyId")
    if algorithm is UNKNOWN or key is UNKNOWN:
        found.not_known(f"{path}.applyServerSideEncryptionByDefault")
        return
    allowed = list(config["s3Algorithms"])
    if config["requireCustomerManagedKeys"]:
        allowed = [a for a in allowed if a in _KMS_ALGORITHMS]
    if algorithm not in allowed:
        found.violation(
            f"{resource.label}: {path}.applyServerSideEncryptionByDefault.sseAlgorithm is "
            f"{show(algorithm) if algorithm is not None else 'unset'}; "
            f"allowed: {', '.join(allowed) or '(none: s3Algorithms has no KMS algorithm)'}."
        )
    elif config["requireCustomerManagedKeys"] and not key:
        found.violation(
            f"{resource.label}: {path}.applyServerSideEncryptionByDefault.kmsMasterKeyId is unset; "
            "requireCustomerManagedKeys asks for a customer-managed KMS key."
        )


POLICY = resource_policy(**rule_metadata(__name__), check=check)
