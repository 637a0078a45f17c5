"""model-cache-write-restricted: no anonymous Allow on EFS; root squash on Filestore but for a writer."""

from __future__ import annotations

import json

from inference_infra.components.aws import EfsModelCache, EfsModelCacheArgs
from inference_infra.components.aws.network import SubnetRef
from inference_infra.components.gcp.filestore_model_cache import FilestoreModelCache, FilestoreModelCacheArgs
from inference_infra.policy.rules import model_cache_write_restricted as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

EFS_POLICY = "aws:efs/fileSystemPolicy:FileSystemPolicy"
FILESTORE = "gcp:filestore/instance:Instance"
FS_ARN = "arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-1"


def _efs(*statements: dict) -> dict:
    return {
        "fileSystemId": "fs-1",
        "policy": json.dumps({"Version": "2012-10-17", "Statement": list(statements)}),
    }


def _export(ranges: list[str], access: str, squash: str) -> dict:
    return {"ipRanges": ranges, "accessMode": access, "squashMode": squash}


def _share(*options: dict) -> dict:
    return {"fileShares": {"name": "models", "capacityGb": 1024, "nfsExportOptions": list(options)}}


ANONYMOUS_WRITE = {
    "Sid": "MountThroughMountTargets",
    "Effect": "Allow",
    "Principal": {"AWS": "*"},
    "Action": ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"],
    "Resource": FS_ARN,
    "Condition": {"Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"}},
}
TLS_DENY = {"Sid": "Tls", "Effect": "Deny", "Principal": {"AWS": "*"}, "Action": "*", "Resource": FS_ARN}


def test_model_cache_write_restricted_passes_named_principals_and_an_anonymous_deny(check):
    named = {**ANONYMOUS_WRITE, "Principal": {"AWS": "arn:aws:iam::123456789012:root"}}
    assert check(rule, EFS_POLICY, _efs(TLS_DENY, named)) == Outcome()


def test_model_cache_write_restricted_rejects_the_anonymous_allow(check):
    outcome = check(rule, EFS_POLICY, _efs(TLS_DENY, ANONYMOUS_WRITE))
    assert len(outcome.violations) == 1
    assert "Statement[1] (MountThroughMountTargets) allows an anonymous principal" in outcome.violations[0]


def test_model_cache_write_restricted_passes_read_only_squashed_exports_and_a_host_writer(check):
    share = _share(
        _export(["10.40.0.0/20"], "READ_ONLY", "ROOT_SQUASH"),
        _export(["10.41.0.10/32"], "READ_WRITE", "NO_ROOT_SQUASH"),
    )
    assert check(rule, FILESTORE, share) == Outcome()


def test_model_cache_write_restricted_rejects_a_subnet_wide_export_without_root_squash(check):
    outcome = check(rule, FILESTORE, _share(_export(["10.40.0.0/20"], "READ_WRITE", "NO_ROOT_SQUASH")))
    assert len(outcome.violations) == 1
    assert (
        "exports READ_WRITE with NO_ROOT_SQUASH to '10.40.0.0/20' (4096 addresses)" in outcome.violations[0]
    )


def test_model_cache_write_restricted_rejects_a_share_without_export_options(check):
    outcome = check(rule, FILESTORE, {"fileShares": {"name": "models", "capacityGb": 1024}})
    assert "has no nfsExportOptions" in outcome.violations[0]


def test_model_cache_write_restricted_leaves_an_unknown_policy_undetermined(check):
    assert check(rule, EFS_POLICY, {"policy": UNKNOWN}).unknown == ("policy",)


def test_model_cache_write_restricted_passes_the_components_caches(plan_of, run_pack):
    subnets = [SubnetRef(id="subnet-0a", availability_zone="us-east-1a")]
    EfsModelCache("efs", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets))
    FilestoreModelCache(
        "cache",
        FilestoreModelCacheArgs(
            network="gpu-vpc",
            location="us-central1-a",
            client_ranges=["10.40.0.0/20"],
            writer_ranges=["10.41.0.10/32"],
        ),
    )
    report = run_pack(plan_of(), rule.NAME)
    assert report.violations == []
    assert report.undetermined == []
