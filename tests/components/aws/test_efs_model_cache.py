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


def test_efs_model_cache_encrypts_with_the_customer_key(plan_of, subnets):
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    capture = plan_of(
        EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, kms_key=key))
    )
    assert capture.one("aws:efs/fileSystem:FileSystem").props["kmsKeyId"] == key


def test_efs_model_cache_args_accept_kms_key_id_with_a_warning(subnets):
    with pytest.warns(DeprecationWarning, match=r"kms_key_id=\.\.\.\) is deprecated.*use kms_key"):
        args = EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, kms_key_id="arn:aws:kms:x")
    assert args.kms_key == "arn:aws:kms:x"


def test_efs_model_cache_refuses_clients_without_tls(plan_of, subnets):
    capture = plan_of(EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets)))
    policy = json.loads(capture.one("aws:efs/fileSystemPolicy:FileSystemPolicy").props["policy"])
    deny = next(s for s in policy["Statement"] if s["Effect"] == "Deny")
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_efs_model_cache_access_point_confines_clients_to_the_weights_directory(plan_of, subnets):
    cache = EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets))
    capture = plan_of(cache)
    point = capture.one("aws:efs/accessPoint:AccessPoint", "cache-weights").props
    assert point["rootDirectory"]["path"] == "/models"
    assert point["posixUser"] == {"uid": 1000, "gid": 1000}
    assert cache.attachment().read_only is True
    assert cache.writer_attachment().read_only is False


def _policy(capture):
    return json.loads(capture.one("aws:efs/fileSystemPolicy:FileSystemPolicy").props["policy"])


def test_efs_model_cache_policy_has_no_anonymous_allow(plan_of, subnets):
    capture = plan_of(EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets)))
    allows = [s for s in _policy(capture)["Statement"] if s["Effect"] == "Allow"]
    assert allows
    for statement in allows:
        assert statement["Principal"] != {"AWS": "*"}
        assert "elasticfilesystem:AccessPointArn" in statement["Condition"]["StringEquals"]
    # Nobody is named as writer: no statement grants ClientWrite at all.
    assert not any("elasticfilesystem:ClientWrite" in s["Action"] for s in allows)


def test_efs_model_cache_readers_mount_read_only_through_their_access_point(plan_of, subnets):
    capture = plan_of(EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets)))
    reader = capture.one("aws:efs/accessPoint:AccessPoint", "cache-weights")
    read = next(s for s in _policy(capture)["Statement"] if s["Sid"] == "ReadThroughReadersAccessPoint")
    assert read["Action"] == ["elasticfilesystem:ClientMount"]
    assert read["Principal"]["AWS"].endswith(":root")
    assert read["Condition"]["StringEquals"]["elasticfilesystem:AccessPointArn"].endswith(reader.id)


def test_efs_model_cache_only_named_writers_write_through_the_writer_access_point(plan_of, subnets):
    writer = "arn:aws:iam::123456789012:role/model-publisher"
    args = EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, writer_principal_arns=[writer])
    capture = plan_of(EfsModelCache("cache", args))
    point = capture.one("aws:efs/accessPoint:AccessPoint", "cache-writer")
    write = next(s for s in _policy(capture)["Statement"] if s["Sid"] == "WriteByNamedWritersOnly")
    assert write["Principal"] == {"AWS": [writer]}
    assert "elasticfilesystem:ClientWrite" in write["Action"]
    assert write["Condition"]["StringEquals"]["elasticfilesystem:AccessPointArn"].endswith(point.id)


def test_efs_model_cache_rejects_a_wildcard_writer(subnets):
    with pytest.raises(InputError, match=r"writer_principal_arns\[0\]"):
        EfsModelCache(
            "cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, writer_principal_arns=["*"])
        )


def test_efs_model_cache_rejects_two_subnets_in_one_zone(plan_of, subnets):
    subnets = [*subnets, SubnetRef(id="subnet-0c", availability_zone="us-east-1a")]
    with pytest.raises(InputError, match=r"subnets .* must be in different zones"):
        EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets))


def test_efs_model_cache_rejects_an_unsupported_ia_transition(subnets):
    with pytest.raises(InputError, match=r"transition_to_ia_days 45 must be one of 1, 7, 14, 30"):
        EfsModelCache(
            "cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=subnets, transition_to_ia_days=45)
        )
