"""Spot node capacity over several instance types (issue #34, item 2): the spot group runs the planner's
pick and its catalog stand-ins; on-demand and reserved groups keep the pick alone.

Held against (read 2026-12-02):
- the EKS API reference, CreateNodegroup `instanceTypes`: 0-20 types, and a template that names a type
  together with any `instanceTypes` fails the group; with SPOT, several types are recommended;
- the EKS user guide, managed-node-groups "Spot": price-capacity-optimized allocation (clusters 1.28+),
  several types of the same vCPU and memory, "use the API to pass multiple instance types. Don't pass a
  single instance type through the launch template";
- terraform-provider-aws `internal/service/eks/node_group.go` (hashicorp main, 012e0a32): `instance_types`
  is a list of strings, Optional, Computed, ForceNew (a changed list replaces the group); the pinned
  pulumi-aws 7.51.1 SDK's `eks.NodeGroup(instance_types=...)` passes it as `instanceTypes`;
- Karpenter v1.14.1's NodePool CRD: `node.kubernetes.io/instance-type` In <values>.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.catalog import Cloud, find_instance_type, instance_types
from inference_infra.components.catalog.spot import SPOT_SNAPSHOT, spot_row
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity import EksNodeGroups, KarpenterNodes
from inference_infra.components.k8s.node_capacity_args import (
    EKS_AMI_TYPES,
    EksNodeGroupsArgs,
    EksReservation,
    KarpenterNodesArgs,
    NodeSubnet,
    eks_region,
    subnets_region,
)
from inference_infra.components.k8s.node_capacity_rules import eks_node_group_api_problems
from inference_infra.components.k8s.node_capacity_spot import (
    SPOT_DEFAULT_TYPES,
    SPOT_SIZE_FACTOR,
    cpu_architecture,
    spot_alternatives,
    spot_equivalence,
)
from inference_infra.components.offline_plan.pricing import price_capture
from tests.components.k8s.node_cases import SUBNETS, eks_args, karpenter_args

GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _args(**kw) -> EksNodeGroupsArgs:
    return eks_args(**{"spot": 2, **kw})


def _karpenter(**kw) -> KarpenterNodesArgs:
    return karpenter_args(**{"capacity_types": [CapacityMode.SPOT], **kw})


def _template_of(capture, group):
    templates = {t.name: t.props for t in capture.of_type(TEMPLATE)}
    return templates[f"{group.name}-lt"]


# --- the catalog's stand-ins (pure) --------------------------------------------------------------------


def test_spot_alternatives_of_an_l40s_node_are_the_same_gpu_on_larger_hosts():
    assert spot_alternatives("g6e.xlarge", "us-east-1") == ["g6e.2xlarge", "g6e.4xlarge"]


def test_spot_alternatives_every_one_runs_the_picks_pods_unchanged():
    # the invariant over the whole catalog: same device and count, 1..SPOT_SIZE_FACTOR x the host, spot
    for pick in instance_types(Cloud.AWS):
        for region in (None, "us-east-1", "us-west-2"):
            alternatives = spot_alternatives(pick.name, region)
            assert len(alternatives) <= SPOT_DEFAULT_TYPES - 1
            for name in alternatives:
                alt = find_instance_type(name, Cloud.AWS)
                assert alt.accelerator == pick.accelerator
                assert alt.accelerator_count == pick.accelerator_count
                assert pick.vcpus <= alt.vcpus <= SPOT_SIZE_FACTOR * pick.vcpus
                assert pick.memory_gib <= alt.memory_gib <= SPOT_SIZE_FACTOR * pick.memory_gib
                assert alt.spot_discount > 0
                assert not alt.capacity_blocks_only


def test_spot_alternatives_keep_to_types_offered_as_spot_in_the_region():
    regions = {r.region for r in SPOT_SNAPSHOT if r.cloud is Cloud.AWS}
    # every default stand-in has a spot row in a region the snapshot covers
    for pick in instance_types(Cloud.AWS):
        for region in regions:
            for name in spot_alternatives(pick.name, region):
                assert spot_row(Cloud.AWS, name, region) is not None
    # and one the snapshot does not list there is refused, naming the region
    pick, alt = find_instance_type("g6e.xlarge", Cloud.AWS), find_instance_type("g6e.2xlarge", Cloud.AWS)
    assert spot_equivalence(pick, alt, "us-east-1") is None
    unlisted = replace(alt, name="g6e.unlisted")  # the same shape, with no spot row anywhere
    assert "has no spot offer in us-east-1" in spot_equivalence(pick, unlisted, "us-east-1")
    assert spot_equivalence(pick, unlisted, "eu-north-1") is None  # a region the snapshot does not cover
    assert spot_equivalence(pick, unlisted, None) is None


def test_spot_equivalence_rejects_a_host_of_another_cpu_architecture():
    # g5g (Graviton, arm64) carries T4G GPUs; were the catalog to hold a Graviton row of the pick's device,
    # it still could not stand in: the group's AMI type (AL2023_x86_64_NVIDIA) and the engine image are x86
    pick = find_instance_type("g4dn.xlarge", Cloud.AWS)
    graviton = replace(find_instance_type("g4dn.2xlarge", Cloud.AWS), name="g5g.2xlarge")
    assert cpu_architecture("g5g.2xlarge") == "arm64"
    assert cpu_architecture("c7gn.large") == "arm64"
    assert [
        cpu_architecture(n) for n in ("g4dn.xlarge", "g6e.xlarge", "p4de.24xlarge", "trn1n.32xlarge")
    ] == ["x86_64"] * 4
    assert "is an arm64 host; the pick g4dn.xlarge is x86_64" in spot_equivalence(pick, graviton, None)


def test_eks_ami_types_fit_every_accelerator_type_of_the_catalog():
    # EKS_AMI_TYPES are the x86_64 accelerated AMIs (botocore AMITypes: AL2023_x86_64_NVIDIA,
    # AL2023_x86_64_NEURON; the arm64 one is AL2023_ARM_64_NVIDIA): a Graviton row in the catalog would
    # need its own AMI type before a pool could run it
    assert set(EKS_AMI_TYPES.values()) == {"AL2023_x86_64_NVIDIA", "AL2023_x86_64_NEURON"}
    assert [t.name for t in instance_types(Cloud.AWS) if cpu_architecture(t.name) != "x86_64"] == []


def test_spot_alternatives_cost_no_more_as_spot_than_the_pick_on_demand():
    # the invariant over the catalog: in a region the spot snapshot covers, every default stand-in's
    # dearest-zone spot price is at most the pick's on-demand price there (else the spot group may pay
    # more than an on-demand node of the pick: price-capacity-optimized picks by capacity too)
    regions = sorted({r.region for r in SPOT_SNAPSHOT if r.cloud is Cloud.AWS})
    for pick in instance_types(Cloud.AWS):
        for region in regions:
            for name in spot_alternatives(pick.name, region):
                assert spot_row(Cloud.AWS, name, region).highest_usd <= pick.hourly_usd[region], (pick, name)


def test_spot_alternatives_leave_out_a_host_dearer_as_spot_than_the_pick_on_demand():
    # us-west-2, spot snapshot of 2026-11-25: g6.8xlarge up to $1.1655/h as spot, an on-demand g6.2xlarge
    # $0.9776/h; g6.4xlarge's dearest zone ($0.8978/h) stays below it
    pick, big = find_instance_type("g6.2xlarge", Cloud.AWS), find_instance_type("g6.8xlarge", Cloud.AWS)
    assert spot_row(Cloud.AWS, "g6.8xlarge", "us-west-2").highest_usd > pick.hourly_usd["us-west-2"]
    assert spot_alternatives("g6.2xlarge", "us-west-2") == ["g6.4xlarge"]
    assert spot_alternatives("g6.2xlarge", "us-east-1") == ["g6.4xlarge"]  # $0.9995 there, dearer too
    assert spot_alternatives("g6.2xlarge", None) == ["g6.4xlarge", "g6.8xlarge"]  # no region: no price rule
    why = spot_equivalence(pick, big, "us-west-2")
    assert "costs up to $1.1655/h as spot in us-west-2" in why
    assert "more than an on-demand g6.2xlarge there ($0.9776/h)" in why
    assert spot_equivalence(pick, big, None) is None  # no region: no price to hold it to


def test_spot_alternatives_of_an_eight_gpu_node_without_a_twin_are_none():
    # p5.48xlarge's H100s come in no other AWS type of the catalog (p5e/p5en carry H200s)
    assert spot_alternatives("p5.48xlarge", "us-east-1") == []


def test_eks_node_groups_region_defaults_to_their_subnets_zones():
    west = [NodeSubnet(id="subnet-0c", availability_zone="us-west-2b")]
    assert eks_region(_args(subnets=west)) == "us-west-2"
    assert eks_region(_args(subnets=west, region="us-east-1")) == "us-east-1"
    mixed = [*SUBNETS, *west]
    assert subnets_region(mixed) is None  # no one region: no filter


# --- EksNodeGroups -------------------------------------------------------------------------------------


def test_eks_spot_group_names_its_types_on_the_group_and_none_in_the_template(plan_of):
    capture = plan_of(EksNodeGroups("chat-nodes", _args(on_demand=1)))
    groups = {g.props["capacityType"]: g for g in capture.of_type(GROUP)}
    spot, on_demand = groups["SPOT"], groups["ON_DEMAND"]
    assert spot.props["instanceTypes"] == ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"]
    assert "instanceType" not in _template_of(capture, spot)
    # on-demand keeps the pick alone, in its template
    assert "instanceTypes" not in on_demand.props
    assert _template_of(capture, on_demand)["instanceType"] == "g6e.xlarge"
    for group in (spot, on_demand):
        assert eks_node_group_api_problems(group.props, _template_of(capture, group)) == []


def test_eks_spot_group_takes_the_users_own_stand_ins(plan_of):
    capture = plan_of(EksNodeGroups("chat-nodes", _args(spot_instance_types=["g6e.4xlarge"])))
    assert capture.one(GROUP).props["instanceTypes"] == ["g6e.xlarge", "g6e.4xlarge"]


def test_eks_spot_group_without_stand_ins_keeps_the_pick_in_its_template(plan_of):
    capture = plan_of(EksNodeGroups("chat-nodes", _args(spot_instance_types=[])))
    assert "instanceTypes" not in capture.one(GROUP).props
    assert capture.one(TEMPLATE).props["instanceType"] == "g6e.xlarge"


def test_eks_spot_group_of_a_pick_without_a_twin_keeps_it_in_its_template(plan_of):
    capture = plan_of(EksNodeGroups("big", _args(instance_type="p5.48xlarge", spot=1)))
    assert "instanceTypes" not in capture.one(GROUP).props
    assert capture.one(TEMPLATE).props["instanceType"] == "p5.48xlarge"


def test_eks_spot_group_instances_keep_the_auto_shutdown_cost_tag(pulumi_project):
    # the cost-tag transform marks a template's instances from its instanceType, which a several-type
    # template has none of: the component sets AutoShutdown on the instances itself
    from inference_infra.components.offline_plan import plan

    program = """
from inference_infra.components.k8s import EksNodeGroups, EksNodeGroupsArgs, NodeSubnet
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml", environment="dev", owner="ml@example.com", auto_shutdown=False))
EksNodeGroups("eks", EksNodeGroupsArgs(
    cluster_name="inference", pool="chat", instance_type="g6e.xlarge", spot=2,
    subnets=[NodeSubnet(id="subnet-0a1b2c3d4e5f60718", availability_zone="us-east-1a")],
    security_group_ids=["sg-0123456789abcdef0"]))
"""
    result = plan(pulumi_project(program, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    template = result.capture.one(TEMPLATE)
    [instance] = [s for s in template.props["tagSpecifications"] if s["resourceType"] == "instance"]
    assert instance["tags"]["AutoShutdown"] == "false"
    assert not [v for v in result.policy.violations if v.policy == "required-cost-tags"]


def test_eks_spot_group_is_priced_at_the_dearest_of_its_types(plan_of):
    report = price_capture(plan_of(EksNodeGroups("eks", _args(min_nodes=0, max_nodes=4))))
    [item] = [i for i in report.items if i.urn.endswith("::eks-spot") and i.category == "accelerator"]
    assert "the dearest of the 3 types it may launch" in item.basis
    assert (item.range.min_size, item.range.max_size) == (0, 4)
    # the expected figure is the desired 2 nodes at the dearest type's rate; the maximum 4 of them
    assert item.range.expected == pytest.approx(item.range.maximum / 2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"spot_instance_types": ["g5.xlarge"]},
            "spot_instance_types[0] 'g5.xlarge' has 1 x a10g; the pick g6e.xlarge has 1 x l40s",
        ),
        (
            {"spot_instance_types": ["g6e.12xlarge"]},
            "spot_instance_types[0] 'g6e.12xlarge' has 4 x l40s",
        ),
        (
            {"spot_instance_types": ["g6e.16xlarge"]},
            "'g6e.16xlarge' has 64 vCPUs and 512 GiB, more than 4 times the pick g6e.xlarge's",
        ),
        (
            {"instance_type": "g6e.2xlarge", "spot_instance_types": ["g6e.xlarge"]},
            "'g6e.xlarge' has 4 vCPUs and 32 GiB, fewer than the pick g6e.2xlarge's 8 and 64 GiB",
        ),
        (
            {"instance_type": "p5en.48xlarge", "spot_instance_types": ["p5e.48xlarge"]},
            "'p5e.48xlarge' is not sold as spot",
        ),
        ({"spot_instance_types": ["g6e.huge"]}, "spot_instance_types[0] 'g6e.huge' is not an accelerator"),
        (
            {"spot_instance_types": [f"x{i}.large" for i in range(20)]},
            "more than the 20 instance types an EKS node group takes",
        ),
        (
            {"spot": 0, "on_demand": 1, "spot_instance_types": ["g6e.2xlarge"]},
            "spot_instance_types ['g6e.2xlarge'] is given but spot is 0",
        ),
        ({"region": "us-east-9"}, "region 'us-east-9' is an unknown region"),
        # the subnets are in us-east-1: a cluster region of us-west-2 would filter the stand-ins wrongly
        ({"region": "us-west-2"}, "region 'us-west-2' must be the region of the subnets' zones (us-east-1)"),
    ],
)
def test_eks_node_groups_rejects_a_spot_type_that_cannot_stand_in(plan_of, change, message):
    with pytest.raises(InputError) as raised:
        EksNodeGroups("bad", _args(**change))
    assert message in str(raised.value)


def test_eks_node_groups_rejection_names_the_allowed_stand_ins(plan_of):
    with pytest.raises(InputError) as raised:
        EksNodeGroups("bad", _args(spot_instance_types=["g5.xlarge"]))
    assert "allowed: types with 1 x l40s, 1-4x the pick's vCPUs and memory, sold as spot" in str(raised.value)
    assert "g6e.2xlarge, g6e.4xlarge" in str(raised.value)


# --- Karpenter -----------------------------------------------------------------------------------------


def _instance_types_requirement(capture) -> list[str]:
    pool = next(r for r in capture.of_type("kubernetes:karpenter.sh/v1:NodePool"))
    [requirement] = [
        r
        for r in pool.props["spec"]["template"]["spec"]["requirements"]
        if r["key"] == "node.kubernetes.io/instance-type"
    ]
    return requirement["values"]


def test_karpenter_spot_only_pool_launches_the_pick_and_its_stand_ins(plan_of):
    capture = plan_of(KarpenterNodes("k", _karpenter()))
    assert _instance_types_requirement(capture) == ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"]


def test_karpenter_pool_with_on_demand_keeps_the_pick_alone_by_default(plan_of):
    capture = plan_of(
        KarpenterNodes("k", _karpenter(capacity_types=[CapacityMode.ON_DEMAND, CapacityMode.SPOT]))
    )
    assert _instance_types_requirement(capture) == ["g6e.xlarge"]


def test_karpenter_pool_given_no_alternatives_keeps_the_pick_alone(plan_of):
    capture = plan_of(KarpenterNodes("k", _karpenter(alternative_instance_types=[])))
    assert _instance_types_requirement(capture) == ["g6e.xlarge"]


def test_karpenter_reserved_alternative_need_not_be_sold_as_spot(plan_of):
    # a reserved-only pool launches into its reservations (a Capacity Block among them), so an alternative
    # need not be sold as spot or on-demand: p5e.48xlarge is sold through Capacity Blocks only
    args = _karpenter(
        instance_type="p5en.48xlarge",
        capacity_types=[CapacityMode.RESERVED],
        capacity_reservation_ids=["cr-0123456789abcdef0"],
        alternative_instance_types=["p5e.48xlarge"],
    )
    capture = plan_of(KarpenterNodes("k", args))
    assert _instance_types_requirement(capture) == ["p5en.48xlarge", "p5e.48xlarge"]
    with pytest.raises(InputError, match=r"'p5e\.48xlarge' is not sold as spot"):
        KarpenterNodes(
            "k2", _karpenter(instance_type="p5en.48xlarge", alternative_instance_types=["p5e.48xlarge"])
        )


def test_karpenter_rejects_a_capacity_blocks_only_alternative_in_an_on_demand_pool():
    # the catalog's capacity_blocks_only: EC2 sells p5e.48xlarge through Capacity Blocks only, so an
    # on-demand NodePool could never launch it (the fleet refuses it the same way: aws/fleet_args.py)
    with pytest.raises(InputError) as raised:
        KarpenterNodes(
            "k",
            _karpenter(
                instance_type="p5en.48xlarge",
                capacity_types=[CapacityMode.ON_DEMAND],
                alternative_instance_types=["p5e.48xlarge"],
            ),
        )
    assert "alternative_instance_types[0] 'p5e.48xlarge' is sold through EC2 Capacity Blocks only" in str(
        raised.value
    )


@pytest.mark.parametrize(
    "modes", [[CapacityMode.ON_DEMAND], [CapacityMode.SPOT], [CapacityMode.SPOT, CapacityMode.RESERVED]]
)
def test_karpenter_rejects_a_capacity_blocks_only_pick_bought_on_demand_or_spot(modes):
    with pytest.raises(
        InputError, match=r"instance_type 'p5e\.48xlarge' is sold through EC2 Capacity Blocks"
    ):
        KarpenterNodes(
            "k",
            _karpenter(
                instance_type="p5e.48xlarge",
                capacity_types=modes,
                capacity_reservation_ids=["cr-0123456789abcdef0"] if CapacityMode.RESERVED in modes else [],
            ),
        )


@pytest.mark.parametrize(
    ("change", "buying"),
    [
        ({"spot": 1}, "spot nodes"),
        ({"spot": 0, "on_demand": 1}, "on_demand nodes"),
        (
            {
                "spot": 0,
                "reserved": 1,
                "reservation": EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1a"),
            },
            "reserved (an On-Demand Capacity Reservation's) nodes",
        ),
    ],
)
def test_eks_node_groups_rejects_a_capacity_blocks_only_pick_outside_a_block(change, buying):
    # a spot or on-demand group of p5e.48xlarge (Capacity Blocks only) would never get a node
    with pytest.raises(InputError) as raised:
        EksNodeGroups("bad", _args(instance_type="p5e.48xlarge", **change))
    assert f"instance_type 'p5e.48xlarge' is sold through EC2 Capacity Blocks only, so {buying}" in str(
        raised.value
    )


def test_eks_node_groups_runs_a_capacity_blocks_only_pick_in_its_block(plan_of):
    block = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1a", capacity_block=True)
    capture = plan_of(
        EksNodeGroups("cb", _args(instance_type="p5e.48xlarge", spot=0, reserved=1, reservation=block))
    )
    assert capture.one(GROUP).props["capacityType"] == "CAPACITY_BLOCK"
