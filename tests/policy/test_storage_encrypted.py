"""storage-encrypted: EBS, EFS, S3 and Filestore encrypted at rest (customer keys on request)."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE as WIRE_UNKNOWN

from inference_infra.policy.rules import storage_encrypted as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

VOLUME = "aws:ebs/volume:Volume"
EFS = "aws:efs/fileSystem:FileSystem"
INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
BUCKET = "aws:s3/bucket:Bucket"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
FILESTORE = "gcp:filestore/instance:Instance"
CMK = {"requireCustomerManagedKeys": True}
WHY = (
    "(whether an unset flag encrypts depends on the account's EBS/EFS default, which the program cannot see)."
)


def _sse(algorithm: str, key: str | None = None) -> dict:
    default = {"sseAlgorithm": algorithm, **({"kmsMasterKeyId": key} if key else {})}
    return {"rules": [{"applyServerSideEncryptionByDefault": default}]}


def test_storage_encrypted_passes_encrypted_storage(check):
    assert check(rule, VOLUME, {"encrypted": True, "size": 100}) == Outcome()
    assert check(rule, EFS, {"encrypted": True}) == Outcome()
    assert check(rule, INSTANCE, {"rootBlockDevice": {"encrypted": True}}) == Outcome()
    template = {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}}]}
    assert check(rule, TEMPLATE, template) == Outcome()
    assert check(rule, BUCKET, {}) == Outcome()  # S3 encrypts every object (SSE-S3) by default
    assert check(rule, SSE, _sse("aws:kms")) == Outcome()
    assert check(rule, FILESTORE, {"tier": "BASIC_SSD"}) == Outcome()  # Google-managed encryption


def test_storage_encrypted_rejects_unencrypted_volumes_and_file_systems(check):
    assert check(rule, VOLUME, {"size": 100}, name="cache").violations == (
        f"aws:ebs/volume:Volume 'cache': encrypted is unset; set it to true {WHY}",
    )
    assert check(rule, EFS, {"encrypted": False}, name="weights").violations == (
        f"aws:efs/fileSystem:FileSystem 'weights': encrypted is false; set it to true {WHY}",
    )


def test_storage_encrypted_rejects_unencrypted_instance_and_template_block_devices(check):
    props = {
        "rootBlockDevice": {"volumeSize": 200},
        "ebsBlockDevices": [{"encrypted": True}, {"encrypted": False}],
    }
    assert check(rule, INSTANCE, props, name="gpu").violations == (
        f"aws:ec2/instance:Instance 'gpu': rootBlockDevice.encrypted is unset; set it to true {WHY}",
        f"aws:ec2/instance:Instance 'gpu': ebsBlockDevices[1].encrypted is false; set it to true {WHY}",
    )
    template = {
        "blockDeviceMappings": [
            {"deviceName": "/dev/sdb", "virtualName": "ephemeral0"},  # instance store: not EBS
            {"deviceName": "/dev/xvda", "ebs": {"encrypted": "false", "volumeSize": 200}},
        ]
    }
    assert check(rule, TEMPLATE, template, name="lt").violations == (
        f"aws:ec2/launchTemplate:LaunchTemplate 'lt': blockDeviceMappings[1].ebs.encrypted is 'false'; "
        f"set it to true {WHY}",
    )
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge"}) == Outcome()  # AMI's devices: not judged


def test_storage_encrypted_rejects_s3_algorithms_outside_the_allowed_set(check):
    outcome = check(rule, SSE, _sse("AES256"), {"s3Algorithms": ["aws:kms"]}, name="enc")
    assert outcome.violations == (
        f"{SSE} 'enc': rules[0].applyServerSideEncryptionByDefault.sseAlgorithm is 'AES256'; "
        "allowed: aws:kms.",
    )
    inline = {"serverSideEncryptionConfiguration": {"rule": {"applyServerSideEncryptionByDefault": {}}}}
    assert check(rule, BUCKET, inline, name="b").violations == (
        "aws:s3/bucket:Bucket 'b': serverSideEncryptionConfiguration.rule.applyServerSideEncryptionByDefault"
        ".sseAlgorithm is unset; allowed: AES256, aws:kms, aws:kms:dsse.",
    )


def test_storage_encrypted_rejects_missing_customer_managed_keys_when_required(check):
    assert check(rule, VOLUME, {"encrypted": True}, CMK, name="v").violations == (
        "aws:ebs/volume:Volume 'v': kmsKeyId is unset; requireCustomerManagedKeys asks for a KMS key.",
    )
    assert check(rule, VOLUME, {"encrypted": True, "kmsKeyId": "arn:aws:kms:k"}, CMK) == Outcome()
    assert check(rule, SSE, _sse("AES256"), CMK, name="e").violations == (
        f"{SSE} 'e': rules[0].applyServerSideEncryptionByDefault.sseAlgorithm is 'AES256'; "
        "allowed: aws:kms, aws:kms:dsse.",
    )
    assert check(rule, SSE, _sse("aws:kms"), CMK, name="e").violations == (
        f"{SSE} 'e': rules[0].applyServerSideEncryptionByDefault.kmsMasterKeyId is unset; "
        "requireCustomerManagedKeys asks for a customer-managed KMS key.",
    )
    assert check(rule, FILESTORE, {}, CMK, name="fs").violations == (
        "gcp:filestore/instance:Instance 'fs' has no kmsKeyName; requireCustomerManagedKeys asks for a Cloud "
        "KMS key.",
    )


def test_storage_encrypted_does_not_apply_to_other_types(check):
    assert check(rule, "aws:iam/role:Role", {}).not_applicable.startswith("applies to EBS volumes")


def test_storage_encrypted_does_not_judge_values_not_known_yet(check, sdk):
    assert check(rule, VOLUME, {"encrypted": UNKNOWN}) == Outcome(unknown=("encrypted",))
    assert check(rule, INSTANCE, {"rootBlockDevice": UNKNOWN}) == Outcome(
        unknown=("rootBlockDevice.encrypted",)
    )
    assert sdk(rule, EFS, {"encrypted": WIRE_UNKNOWN}) == (
        [],
        None,
        "string value at .encrypted can't be known during preview",
    )


def test_storage_encrypted_on_captured_resources(plan_of, run_pack):
    aws.ebs.Volume("good", availability_zone="us-east-1a", size=100, encrypted=True)
    aws.ebs.Volume("bad", availability_zone="us-east-1a", size=100)
    aws.efs.FileSystem("fs", encrypted=True)
    bucket = aws.s3.Bucket("weights")
    aws.s3.BucketServerSideEncryptionConfiguration(
        "weights-sse",
        bucket=bucket.id,
        rules=[{"apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms"}}],
    )
    gcp.filestore.Instance(
        "cache",
        location="us-central1-a",
        tier="BASIC_SSD",
        file_shares={"name": "models", "capacity_gb": 2560},
        networks=[{"network": "default", "modes": ["MODE_IPV4"]}],
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        f"aws:ebs/volume:Volume 'bad': encrypted is unset; set it to true {WHY}"
    ]
