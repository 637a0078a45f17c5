"""Node capacity inputs that look right but are not: a value with a trailing newline.

Python's `$` also matches just before a final newline, so `re.match(r"^...$", "chat\\n")` accepts it;
the validators use `fullmatch`, which does not. Each value below would otherwise reach the engine
unchanged: a pool name becomes a Kubernetes label value and a taint (the API server refuses a label
value with a newline: apimachinery `validation.IsValidLabelValue`, `(([A-Za-z0-9][-A-Za-z0-9_.]*)?
[A-Za-z0-9])?`), and a reservation id, security group, KMS key or role ARN goes to EC2/EKS as it is,
where the call fails only at `pulumi up`.
"""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.device_plugins import DevicePluginsArgs, validate_device_plugins
from inference_infra.components.k8s.node_capacity_args import (
    EksNodeGroupsArgs,
    EksReservation,
    GkeNodePoolArgs,
    KarpenterNodesArgs,
    NodeSubnet,
    validate_eks_node_groups,
    validate_gke_node_pool,
    validate_karpenter_nodes,
)
from tests.components.k8s.node_cases import eks_args, gke_args, karpenter_args

BLOCK_ID = "cr-0123456789abcdef0"


def _eks(**kw) -> EksNodeGroupsArgs:
    return eks_args(**{"on_demand": 1, **kw})


def _karpenter(**kw) -> KarpenterNodesArgs:
    return karpenter_args(**kw)


def _gke(**kw) -> GkeNodePoolArgs:
    return gke_args(**kw)


def _fields(problems) -> list[str]:
    return [p.input for p in problems]


def test_node_capacity_validators_accept_the_same_values_without_the_newline():
    assert validate_eks_node_groups(_eks()) == []
    block = EksReservation(target=BLOCK_ID, availability_zone="us-east-1a", capacity_block=True)
    assert validate_eks_node_groups(_eks(instance_type="p5.48xlarge", reserved=1, reservation=block)) == []
    assert validate_karpenter_nodes(_karpenter()) == []
    assert validate_gke_node_pool(_gke()) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"pool": "chat\n"}, "pool"),
        ({"security_group_ids": ["sg-0123456789abcdef0\n"]}, "security_group_ids[0]"),
        ({"kms_key_arn": "arn:aws:kms:us-east-1:123456789012:key/abc\n"}, "kms_key_arn"),
        ({"node_role_arn": "arn:aws:iam::123456789012:role/nodes\n"}, "node_role_arn"),
        (
            {"subnets": [NodeSubnet(id="subnet-0a", availability_zone="us-east-1a\n")]},
            "subnets[0].availability_zone",
        ),
        (
            {
                "instance_type": "p5.48xlarge",
                "reserved": 1,
                "reservation": EksReservation(
                    target=BLOCK_ID + "\n", availability_zone="us-east-1a", capacity_block=True
                ),
            },
            "reservation.target",
        ),
    ],
)
def test_eks_node_groups_rejects_a_value_with_a_trailing_newline(change, field):
    assert field in _fields(validate_eks_node_groups(_eks(**change)))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"pool": "chat\n"}, "pool"),
        ({"node_role": "nodes\n"}, "node_role"),
        (
            {"capacity_types": [CapacityMode.RESERVED], "capacity_reservation_ids": [BLOCK_ID + "\n"]},
            "capacity_reservation_ids[0]",
        ),
        ({"consolidate_after": "5m\n"}, "consolidate_after"),
    ],
)
def test_karpenter_nodes_rejects_a_value_with_a_trailing_newline(change, field):
    assert field in _fields(validate_karpenter_nodes(_karpenter(**change)))


@pytest.mark.parametrize(
    ("change", "field"),
    [({"pool": "chat\n"}, "pool"), ({"location": "us-central1\n"}, "location")],
)
def test_gke_node_pool_rejects_a_value_with_a_trailing_newline(change, field):
    assert field in _fields(validate_gke_node_pool(_gke(**change)))


def test_device_plugins_rejects_a_namespace_with_a_trailing_newline():
    assert "namespace" in _fields(
        validate_device_plugins(
            DevicePluginsArgs(families=[AcceleratorFamily.NVIDIA_GPU], namespace="kube-system\n")
        )
    )


def test_eks_node_groups_rejects_a_reservation_arn_of_another_region():
    # the id is taken from the ARN for the launch template; EC2 finds no such reservation in the
    # subnets' region (us-east-1) and every launch fails
    arn = "arn:aws:ec2:us-west-2:123456789012:capacity-reservation/" + BLOCK_ID
    block = EksReservation(target=arn, availability_zone="us-east-1a", capacity_block=True)
    problems = validate_eks_node_groups(_eks(instance_type="p5.48xlarge", reserved=1, reservation=block))
    assert [str(p) for p in problems] == [
        f"reservation.target '{arn}' is in us-west-2, not in the subnets' region us-east-1: a reservation "
        "serves instances of its own region only"
    ]
    same = EksReservation(target=arn.replace("us-west-2", "us-east-1"), availability_zone="us-east-1a")
    assert validate_eks_node_groups(_eks(instance_type="p5.48xlarge", reserved=1, reservation=same)) == []
