"""Capacity Block node groups and their upgrade path (issue #34, item 2), and the rules EKS applies to a
node group's rendered inputs (node_capacity_rules.py).

Held against the EKS user guide, capacity-blocks-mng (awsdocs/amazon-eks-user-guide
latest/ug/ml/capacity-blocks-mng.adoc, read 2026-12-02):
- create: a custom launch template with MarketType capacity-block, the block's CapacityReservationId and
  an InstanceType; capacity type CAPACITY_BLOCK; subnets of the block's zone only; a non-zero desired
  size is honoured (the group launches once the block is active);
- upgrade: "make sure that the desired size of the node group is set to 0";
- end: EKS scales the group to 0 forty minutes before the block ends ("Amazon EKS Node Group Capacity
  Scaledown Before Reservation End"), EC2 starts shutting instances down thirty minutes before;
and EKS's "Minimum capacity N can't be greater than desired size M" (terraform-aws-modules/
terraform-aws-eks#2508, #3306), and terraform-provider-aws node_group.go's update order (the version
update, for a template change, runs before the scaling update).
"""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.k8s.node_capacity import EksNodeGroups
from inference_infra.components.k8s.node_capacity_args import (
    EksNodeGroupsArgs,
    EksReservation,
    NodeSubnet,
)
from inference_infra.components.k8s.node_capacity_rules import eks_node_group_api_problems
from tests.components.k8s.node_cases import eks_args

GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SUBNETS = [
    NodeSubnet(id="subnet-0a", availability_zone="us-east-1a"),
    NodeSubnet(id="subnet-0b", availability_zone="us-east-1b"),
]
BLOCK = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1b", capacity_block=True)


def _args(**kw) -> EksNodeGroupsArgs:
    base = {"pool": "train", "instance_type": "p5.48xlarge", "reserved": 2, "reservation": BLOCK}
    return eks_args(**{**base, "subnets": SUBNETS, **kw})


def _spy_options(monkeypatch) -> dict:
    import pulumi_aws as aws

    seen: dict = {}
    real = aws.eks.NodeGroup

    def spy(name, *args, opts=None, **kwargs):  # the options the engine gets with the group
        seen[name] = opts
        return real(name, *args, opts=opts, **kwargs)

    monkeypatch.setattr(aws.eks, "NodeGroup", spy)
    return seen


def test_capacity_block_group_is_created_at_the_blocks_size_with_a_minimum_of_0(plan_of, monkeypatch):
    seen = _spy_options(monkeypatch)
    capture = plan_of(EksNodeGroups("cb", _args()))
    group = capture.one(GROUP).props
    template = capture.one(TEMPLATE).props
    assert group["capacityType"] == "CAPACITY_BLOCK"
    assert group["scalingConfig"] == {"minSize": 0, "desiredSize": 2, "maxSize": 2}
    assert group["subnetIds"] == ["subnet-0b"]  # the block's zone only
    assert "instanceTypes" not in group
    assert template["instanceType"] == "p5.48xlarge"
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    # the desired size is the stack's own: `pulumi up` sends the drained 0 and the block's size back
    assert not seen["cb-reserved"].ignore_changes
    assert eks_node_group_api_problems(group, template) == []


def test_capacity_block_group_ignores_the_pools_floor(plan_of):
    # a pool floor of 1 for its other groups; the block's group still reaches 0 for its upgrade
    capture = plan_of(EksNodeGroups("cb", _args(on_demand=1, min_nodes=1, max_nodes=3)))
    groups = {g.props["capacityType"]: g.props for g in capture.of_type(GROUP)}
    assert groups["CAPACITY_BLOCK"]["scalingConfig"] == {"minSize": 0, "desiredSize": 2, "maxSize": 2}
    assert groups["ON_DEMAND"]["scalingConfig"] == {"minSize": 1, "desiredSize": 1, "maxSize": 3}


def test_capacity_block_group_drained_for_its_upgrade_renders_desired_size_0(plan_of):
    drained = EksReservation(
        target="cr-0123456789abcdef0", availability_zone="us-east-1b", capacity_block=True, drained=True
    )
    capture = plan_of(EksNodeGroups("cb", _args(reservation=drained)))
    group = capture.one(GROUP).props
    assert group["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    assert eks_node_group_api_problems(group, capture.one(TEMPLATE).props) == []


def test_on_demand_reservation_group_keeps_its_floor_and_refuses_drained(plan_of):
    odcr = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1b")
    group = plan_of(EksNodeGroups("odcr", _args(reservation=odcr))).one(GROUP).props
    assert group["capacityType"] == "ON_DEMAND"
    assert group["scalingConfig"] == {"minSize": 2, "desiredSize": 2, "maxSize": 2}
    drained = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1b", drained=True)
    with pytest.raises(InputError, match=r"reservation\.drained True is for a Capacity Block"):
        EksNodeGroups("bad", _args(reservation=drained))


# --- the rules, one failing case each -----------------------------------------------------------------

TEMPLATE_OK = {
    "instanceType": "p5.48xlarge",
    "instanceMarketOptions": {"marketType": "capacity-block"},
    "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": "cr-0a"}},
}
GROUP_OK = {"capacityType": "CAPACITY_BLOCK", "scalingConfig": {"minSize": 0, "desiredSize": 2, "maxSize": 2}}


def test_eks_rules_accept_a_capacity_block_group_and_a_spot_group_of_several_types():
    assert eks_node_group_api_problems(GROUP_OK, TEMPLATE_OK) == []
    spot = {
        "capacityType": "SPOT",
        "instanceTypes": ["g6e.xlarge", "g6e.2xlarge"],
        "scalingConfig": {"minSize": 0, "desiredSize": 1, "maxSize": 2},
    }
    assert eks_node_group_api_problems(spot, {"metadataOptions": {"httpTokens": "required"}}) == []


@pytest.mark.parametrize(
    ("group", "template", "message"),
    [
        (
            {"capacityType": "SPOT", "instanceTypes": ["g6e.xlarge", "g6e.2xlarge"]},
            {"instanceType": "g6e.xlarge"},
            "are both set; EKS fails the node group",
        ),
        ({"instanceTypes": [f"t{i}" for i in range(21)]}, None, "instanceTypes has 21 types"),
        (
            {"scalingConfig": {"minSize": 2, "desiredSize": 1, "maxSize": 3}},
            None,
            "must have min <= desired <= max",
        ),
        (GROUP_OK, None, "a CAPACITY_BLOCK group needs a launch template"),
        (GROUP_OK, {**TEMPLATE_OK, "instanceMarketOptions": {}}, "needs 'capacity-block'"),
        (
            GROUP_OK,
            {**TEMPLATE_OK, "capacityReservationSpecification": {}},
            "names no capacityReservationTarget",
        ),
        (GROUP_OK, {k: v for k, v in TEMPLATE_OK.items() if k != "instanceType"}, "names no instanceType"),
        (
            {**GROUP_OK, "instanceTypes": ["p5.48xlarge"]},
            {k: v for k, v in TEMPLATE_OK.items() if k != "instanceType"},
            "a CAPACITY_BLOCK group's type is its template's",
        ),
        (
            {**GROUP_OK, "scalingConfig": {"minSize": 1, "desiredSize": 2, "maxSize": 2}},
            TEMPLATE_OK,
            "scalingConfig.minSize is 1; a CAPACITY_BLOCK group is upgraded only at desired size 0",
        ),
        (
            {"capacityType": "ON_DEMAND"},
            TEMPLATE_OK,
            "the capacity type is ON_DEMAND; EKS rejects it unless the capacity type is CAPACITY_BLOCK",
        ),
    ],
)
def test_eks_rules_reject_what_eks_refuses(group, template, message):
    problems = eks_node_group_api_problems(group, template)
    assert any(message in p for p in problems), problems
