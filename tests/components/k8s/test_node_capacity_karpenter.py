"""KarpenterNodes: a karpenter.sh/v1 NodePool and a karpenter.k8s.aws/v1 EC2NodeClass per serving pool.

The objects are validated against Karpenter 1.14.1's own CRD schemas (github.com/aws/karpenter-provider-aws,
tag v1.14.1, pkg/apis/crds/karpenter.sh_nodepools.yaml and karpenter.k8s.aws_ec2nodeclasses.yaml, read
2026-12-02; the checked-in copies are the pinned ones of tests/k8s_schemas/, see its SOURCES): required
fields, enums (consolidationPolicy, httpTokens), patterns (durations, cr- ids, quantities) and the hop
limit's range.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity import KarpenterNodes
from inference_infra.components.k8s.node_capacity_args import ConsolidationPolicy, KarpenterNodesArgs

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
CRDS = Path(__file__).resolve().parents[2] / "k8s_schemas"  # one vendored copy (SOURCES: tag, SHA-256)


def _args(**kw) -> KarpenterNodesArgs:
    base = dict(
        pool="chat",
        instance_type="g6e.2xlarge",
        alternative_instance_types=["g6e.4xlarge"],
        capacity_types=[CapacityMode.SPOT, CapacityMode.ON_DEMAND],
        max_nodes=4,
        node_role="KarpenterNodeRole-inference",
        subnet_tags={"karpenter.sh/discovery": "inference"},
        security_group_tags={"karpenter.sh/discovery": "inference"},
    )
    return KarpenterNodesArgs(**{**base, **kw})


def _schema(crd_file: str) -> dict:
    crd = yaml.safe_load((CRDS / crd_file).read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]


def test_karpenter_node_pool_requirements_labels_taints_and_limits(plan_of):
    capture = plan_of(KarpenterNodes("chat-karpenter", _args()))
    pool = capture.one(NODE_POOL).props
    assert pool["metadata"] == {"name": "chat"}
    template = pool["spec"]["template"]
    assert template["metadata"]["labels"] == {
        "inference-infra.dev/pool": "chat",
        "inference-infra.dev/accelerator-family": "nvidia-gpu",
    }
    assert template["spec"]["requirements"] == [
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": ["g6e.2xlarge", "g6e.4xlarge"],
        },
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
    ]
    assert template["spec"]["taints"] == [
        {"key": "inference-infra.dev/pool", "value": "chat", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    ]
    assert template["spec"]["nodeClassRef"] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "chat",
    }
    assert template["spec"]["expireAfter"] == "720h"
    assert pool["spec"]["limits"] == {"nvidia.com/gpu": "4"}  # 4 nodes x 1 L40S
    assert pool["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}


def test_karpenter_node_class_is_imdsv2_hop_1_encrypted_and_private(plan_of):
    capture = plan_of(KarpenterNodes("chat-karpenter", _args(kms_key_id="alias/ebs-nodes")))
    spec = capture.one(NODE_CLASS).props["spec"]
    assert spec["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": "200Gi",
                "volumeType": "gp3",
                "encrypted": True,
                "deleteOnTermination": True,
                "kmsKeyID": "alias/ebs-nodes",
            },
        }
    ]
    assert spec["associatePublicIPAddress"] is False
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260724"}]
    assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "inference"}}]
    assert spec["role"] == "KarpenterNodeRole-inference"


def test_karpenter_objects_match_the_pinned_crd_schemas(plan_of):
    reserved = _args(
        capacity_types=[CapacityMode.RESERVED, CapacityMode.ON_DEMAND],
        capacity_reservation_ids=["cr-0123456789abcdef0"],
        consolidation_policy=ConsolidationPolicy.WHEN_EMPTY_OR_UNDERUTILIZED,
        expire_after="Never",
    )
    capture = plan_of(KarpenterNodes("a", _args()), KarpenterNodes("b", reserved))
    pool_schema = _schema("karpenter.sh_nodepools.yaml")
    class_schema = _schema("karpenter.k8s.aws_ec2nodeclasses.yaml")
    for pool in capture.of_type(NODE_POOL):
        jsonschema.validate(pool.props["spec"], pool_schema)
    for node_class in capture.of_type(NODE_CLASS):
        jsonschema.validate(node_class.props["spec"], class_schema)
    b = capture.one(NODE_CLASS, "b-nodeclass").props["spec"]
    assert b["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]


def test_karpenter_limit_counts_the_picks_accelerators(plan_of):
    capture = plan_of(
        KarpenterNodes("p5", _args(instance_type="p5.48xlarge", alternative_instance_types=[], max_nodes=2))
    )
    assert capture.one(NODE_POOL).props["spec"]["limits"] == {"nvidia.com/gpu": "16"}
    capture = plan_of(
        KarpenterNodes("inf", _args(instance_type="inf2.8xlarge", alternative_instance_types=[]))
    )
    assert capture.one(NODE_POOL, "inf-nodepool").props["spec"]["limits"] == {"aws.amazon.com/neuron": "4"}


def test_karpenter_crd_copies_are_the_pinned_release():
    for name in ("karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"):
        crd = yaml.safe_load((CRDS / name).read_text())
        assert crd["kind"] == "CustomResourceDefinition"
    pool = _schema("karpenter.sh_nodepools.yaml")
    policy = pool["properties"]["disruption"]["properties"]["consolidationPolicy"]["enum"]
    assert {p.value for p in ConsolidationPolicy} <= set(policy)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pool": "-chat"}, "pool '-chat' must be a DNS label"),
        ({"instance_type": "c5.large"}, "instance_type 'c5.large' is not an accelerator instance type"),
        (
            {"alternative_instance_types": ["inf2.xlarge"]},
            "'inf2.xlarge' has 1 x inferentia2; the pick g6e.2xlarge has 1 x l40s",
        ),
        ({"capacity_types": []}, "capacity_types [] must list on-demand/spot/reserved once each"),
        (
            {"capacity_types": [CapacityMode.PREEMPTIBLE]},
            "capacity_types[0] 'preemptible' is not offered on EKS",
        ),
        ({"capacity_types": [CapacityMode.RESERVED]}, "capacity_reservation_ids [] must name a reservation"),
        ({"capacity_reservation_ids": ["cr-0123456789abcdef0"]}, "need reserved in capacity_types"),
        (
            {"capacity_types": [CapacityMode.RESERVED], "capacity_reservation_ids": ["odcr-1"]},
            "capacity_reservation_ids[0] 'odcr-1' must be a capacity reservation id",
        ),
        (
            {"node_role": "arn:aws:iam::1:role/x"},
            "node_role 'arn:aws:iam::1:role/x' must be an IAM role name",
        ),
        ({"subnet_tags": {}}, "subnet_tags {} must name at least one tag"),
        ({"security_group_tags": {"team": "*"}}, "must not use the '*' wildcard"),
        ({"ami_alias": "al2023@latest"}, "ami_alias 'al2023@latest' must be al2023@v<release>"),
        ({"consolidate_after": "ten minutes"}, "consolidate_after 'ten minutes' must be a duration"),
        ({"expire_after": "30d"}, "expire_after '30d' must be a duration like 720h, or Never"),
        ({"max_nodes": 0}, "max_nodes 0 must be"),
    ],
)
def test_karpenter_nodes_rejects_bad_input_before_registering(plan_of, change, message):
    with pytest.raises(InputError) as raised:
        KarpenterNodes("bad", _args(**change))
    assert message in str(raised.value)
    assert [r for r in plan_of() if r.name.startswith("bad")] == []
