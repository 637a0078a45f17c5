"""`plan` prices the node capacity: EKS node groups and GKE node pools as ranges between their scaling
bounds, Karpenter NodePools from 0 nodes up to their limits (issue #34, item 8), from the catalog."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import PriceModel, hourly_price, instance_type
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity import EksNodeGroups, GkeNodePool, KarpenterNodes
from inference_infra.components.k8s.node_capacity_args import (
    EksNodeGroupsArgs,
    EksReservation,
    GkeNodePoolArgs,
    KarpenterNodesArgs,
    NodeSubnet,
)
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing import price_use
from inference_infra.components.pricing.karpenter import node_pool_range

SUBNETS = [NodeSubnet(id="subnet-0a", availability_zone="us-east-1a")]


def _item(report, name):
    [item] = [i for i in report.items if i.urn.endswith(f"::{name}") and i.category == "accelerator"]
    return item


def _rate(name: str, region: str, model=PriceModel.ON_DEMAND) -> float:
    return hourly_price(instance_type(name), region=region, model=model, count=1).hourly_usd


def test_eks_node_groups_are_priced_as_ranges_per_capacity_mode(plan_of):
    args = EksNodeGroupsArgs(
        cluster_name="c",
        pool="chat",
        instance_type="g6e.xlarge",
        on_demand=1,
        spot=2,
        min_nodes=0,
        max_nodes=4,
        subnets=SUBNETS,
        security_group_ids=["sg-0123456789abcdef0"],
    )
    report = price_capture(plan_of(EksNodeGroups("eks", args)))
    on_demand = _item(report, "eks-ondemand")
    rate = _rate("g6e.xlarge", "us-east-1")
    assert on_demand.hourly_usd == pytest.approx(4 * rate)  # the maximum, like every elastic pool
    assert (on_demand.range.minimum, on_demand.range.expected) == (0.0, pytest.approx(rate))
    assert (on_demand.range.min_size, on_demand.range.max_size) == (0, 4)
    assert on_demand.basis.startswith("4 x g6e.xlarge on-demand us-east-1; elastic 0..4 machines")
    spot = _item(report, "eks-spot")
    assert "spot" in spot.basis
    assert spot.range.expected == pytest.approx(2 * _rate("g6e.xlarge", "us-east-1", PriceModel.SPOT))


def test_eks_capacity_block_group_is_priced_at_the_on_demand_estimate(plan_of):
    block = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1a", capacity_block=True)
    args = EksNodeGroupsArgs(
        cluster_name="c",
        pool="train",
        instance_type="p5.48xlarge",
        reserved=2,
        reservation=block,
        subnets=SUBNETS,
        security_group_ids=["sg-0123456789abcdef0"],
    )
    item = _item(price_capture(plan_of(EksNodeGroups("cb", args))), "cb-reserved")
    assert item.hourly_usd == pytest.approx(2 * _rate("p5.48xlarge", "us-east-1"))
    assert "Capacity Block, estimated at the on-demand rate" in item.basis
    # paid for whole: no range down to $0 at 0 nodes (EKS itself scales the group to 0)
    assert item.range is None


def test_eks_capacity_block_group_drained_for_an_upgrade_is_still_priced_whole(plan_of):
    # `drained` renders desired size 0 for EKS's upgrade; the block is still paid for while it lasts
    block = EksReservation(
        target="cr-0123456789abcdef0", availability_zone="us-east-1a", capacity_block=True, drained=True
    )
    args = EksNodeGroupsArgs(
        cluster_name="c",
        pool="train",
        instance_type="p5.48xlarge",
        reserved=2,
        reservation=block,
        subnets=SUBNETS,
        security_group_ids=["sg-0123456789abcdef0"],
    )
    item = _item(price_capture(plan_of(EksNodeGroups("cb", args))), "cb-reserved")
    assert item.hourly_usd == pytest.approx(2 * _rate("p5.48xlarge", "us-east-1"))
    assert item.basis.startswith("2 x p5.48xlarge on-demand us-east-1; Capacity Block")
    assert item.range is None  # not "expected $0.00/h (its desired capacity, 0)", which the budget judged


def test_gke_gpu_and_tpu_pools_are_priced_between_their_autoscaling_bounds(plan_of):
    capture = plan_of(
        GkeNodePool(
            "gke",
            GkeNodePoolArgs(
                cluster="c", location="us-central1", pool="g", machine_type="g2-standard-8", max_nodes=3
            ),
        ),
        GkeNodePool(
            "tpu",
            GkeNodePoolArgs(
                cluster="c",
                location="us-central1",
                pool="t",
                machine_type="ct5lp-hightpu-4t",
                tpu_topology="4x4",
                min_nodes=0,
                max_nodes=4,
                spot=True,
            ),
        ),
    )
    report = price_capture(capture)
    gpu = _item(report, "gke-pool")
    assert (gpu.range.min_size, gpu.range.max_size) == (1, 3)
    assert gpu.hourly_usd == pytest.approx(3 * _rate("g2-standard-8", "us-central1"))
    tpu = _item(report, "tpu-pool")
    # four ct5lp-hightpu-4t hosts in a 4x4 topology are one v5litepod-16 slice, all or nothing
    assert tpu.basis.startswith("v5litepod-16 spot")
    assert (tpu.range.minimum, tpu.range.min_size, tpu.range.max_size) == (0.0, 0, 1)
    assert tpu.hourly_usd == pytest.approx(
        hourly_price(
            instance_type("v5litepod-16"), region="us-central1", model=PriceModel.SPOT, count=1
        ).hourly_usd
    )


def test_karpenter_node_pool_is_priced_from_zero_to_its_limits(plan_of):
    args = KarpenterNodesArgs(
        pool="k",
        instance_type="g6e.2xlarge",
        alternative_instance_types=["g6e.4xlarge"],
        capacity_types=[CapacityMode.SPOT],
        max_nodes=4,
        node_role="nodes",
        subnet_tags={"karpenter.sh/discovery": "c"},
        security_group_tags={"karpenter.sh/discovery": "c"},
    )
    report = price_capture(plan_of(KarpenterNodes("k", args)))
    item = _item(report, "k-nodepool")
    spot = _rate("g6e.4xlarge", "us-east-1", PriceModel.SPOT)  # the dearest of the two types
    assert item.hourly_usd == pytest.approx(4 * spot)
    assert (item.range.minimum, item.range.expected) == (0.0, pytest.approx(spot))
    assert (item.range.min_size, item.range.max_size) == (0, 4)
    assert item.basis.startswith(
        "Karpenter NodePool, 0 nodes until pods are pending, up to its limits (nvidia.com/gpu 4); "
        "the dearest fill is 4 x g6e.4xlarge spot"
    )


def test_karpenter_pool_without_limits_is_not_priced():
    props = {
        "spec": {
            "template": {
                "spec": {
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.xlarge"]}
                    ]
                }
            }
        }
    }
    assert node_pool_range(props, "kubernetes:karpenter.sh/v1:NodePool", "us-east-1", price_use) is None
    props["spec"]["limits"] = {"nvidia.com/gpu": "2"}
    span, basis = node_pool_range(props, "kubernetes:karpenter.sh/v1:NodePool", "us-east-1", price_use)
    assert span.maximum == pytest.approx(2 * _rate("g5.xlarge", "us-east-1"))
    assert "on-demand" in basis  # no capacity-type requirement: Karpenter's default is on-demand
