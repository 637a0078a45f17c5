"""EfsModelCache: encrypted elastic EFS, NFS from the client group only, TLS enforced."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.aws import EfsModelCache, EfsModelCacheArgs
from inference_infra.components.aws.network import SubnetRef
from inference_infra.components.errors import InputError

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def test_efs_model_cache_is_encrypted_elastic_with_ia_lifecycle(plan_of, subnets):
    capture = plan_of(EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets)))
    fs = capture.one("aws:efs/fileSystem:FileSystem").props
    assert fs["encrypted"] is True
    assert fs["throughputMode"] == "elastic"
    assert fs["lifecyclePolicies"] == [
        {"transitionToIa": "AFTER_30_DAYS"},
        {"transitionToPrimaryStorageClass": "AFTER_1_ACCESS"},
    ]
    backup = capture.one("aws:efs/backupPolicy:BackupPolicy").props
    assert backup["backupPolicy"] == {"status": "DISABLED"}


def test_efs_model_cache_has_a_mount_target_per_subnet(plan_of, subnets):
    capture = plan_of(EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets)))
    targets = capture.of_type("aws:efs/mountTarget:MountTarget")
    assert sorted(t.props["subnetId"] for t in targets) == ["subnet-0a", "subnet-0b"]
    group = capture.one("aws:ec2/securityGroup:SecurityGroup", "cache-sg")
    assert all(t.props["securityGroups"] == [group.id] for t in targets)


def test_efs_model_cache_allows_nfs_only_from_named_client_groups(plan_of, subnets):
    args = EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, client_security_group_ids=["sg-0loader"])
    capture = plan_of(EfsModelCache("cache", args))
    clients = capture.one("aws:ec2/securityGroup:SecurityGroup", "cache-clients")
    rules = capture.of_type(INGRESS)
    assert {r.props["referencedSecurityGroupId"] for r in rules} == {clients.id, "sg-0loader"}
    assert all((r.props["fromPort"], r.props["toPort"]) == (2049, 2049) for r in rules)
    assert not any("cidrIpv4" in r.props for r in rules)


def test_efs_model_cache_refuses_clients_without_tls(plan_of, subnets):
    capture = plan_of(EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets)))
    policy = json.loads(capture.one("aws:efs/fileSystemPolicy:FileSystemPolicy").props["policy"])
    deny = next(s for s in policy["Statement"] if s["Effect"] == "Deny")
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_efs_model_cache_access_point_confines_clients_to_the_weights_directory(plan_of, subnets):
    cache = EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets))
    capture = plan_of(cache)
    point = capture.one("aws:efs/accessPoint:AccessPoint").props
    assert point["rootDirectory"]["path"] == "/models"
    assert point["posixUser"] == {"uid": 1000, "gid": 1000}
    attachment = cache.attachment(read_only=True)
    assert attachment.read_only is True


def test_efs_model_cache_rejects_two_subnets_in_one_zone(plan_of, subnets):
    subnets = [*subnets, SubnetRef(id="subnet-0c", availability_zone="us-east-1a")]
    with pytest.raises(InputError, match=r"subnets .* must be in different zones"):
        EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets))


def test_efs_model_cache_rejects_an_unsupported_ia_transition(subnets):
    with pytest.raises(InputError, match=r"transition_to_ia_days 45 must be one of 1, 7, 14, 30"):
        EfsModelCache(
            "cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, transition_to_ia_days=45)
        )
