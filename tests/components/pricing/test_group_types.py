"""A group that may launch several machine types (mixed-instances overrides, node group instanceTypes,
fleet overrides, Batch types) is priced at the dearest of them, and its basis names the range."""

from __future__ import annotations

import pulumi_aws as aws
import pytest

from inference_infra.components.catalog import Cloud, PriceModel, find_instance_type, hourly_price
from inference_infra.components.catalog.compute import machine_price
from inference_infra.components.offline_plan.pricing import price_capture

SUBNETS = ["subnet-0aaaaaaaaaaaaaaaa"]
ROLE = "arn:aws:iam::123456789012:role/n"


def _items(report) -> dict[str, object]:
    """The machines' items (not their disks', which share the group's URN)."""
    return {i.urn.rsplit("::", 1)[1]: i for i in report.items if i.category in ("accelerator", "compute")}


def _gpu(name: str, model: PriceModel = PriceModel.ON_DEMAND) -> float:
    item = find_instance_type(name, Cloud.AWS)
    return hourly_price(item, region="us-east-1", model=model, count=1).hourly_usd


def _cpu(name: str) -> float:
    return machine_price("aws", name, "us-east-1").hourly_usd


def _node_group(name: str, types: list[str], desired: int = 3) -> None:
    aws.eks.NodeGroup(
        name, cluster_name="c", node_role_arn=ROLE, subnet_ids=SUBNETS, instance_types=types,
        scaling_config={"desired_size": desired, "min_size": 1, "max_size": 5},
    )  # fmt: skip


def test_node_group_with_several_cpu_types_is_priced_at_the_dearest(plan_of):
    _node_group("system", ["m5.2xlarge", "m5.large"])
    item = _items(price_capture(plan_of()))["system"]
    assert item.hourly_usd == pytest.approx(3 * _cpu("m5.2xlarge"))
    assert item.basis.startswith("3 x m5.2xlarge on-demand us-east-1")
    assert (
        f"the dearest of the 2 types it may launch (m5.large ${_cpu('m5.large'):.4g}/h each "
        f"to m5.2xlarge ${_cpu('m5.2xlarge'):.4g}/h each)"
    ) in item.basis


def test_mixed_group_overrides_are_priced_at_the_dearest_with_the_spot_share(plan_of):
    template = aws.ec2.LaunchTemplate("lt", image_id="ami-1", instance_type="g5.xlarge")
    aws.autoscaling.Group(
        "mixed", min_size=1, max_size=6, desired_capacity=4, vpc_zone_identifiers=SUBNETS,
        mixed_instances_policy={
            "launch_template": {
                "launch_template_specification": {"launch_template_id": template.id},
                "overrides": [{"instance_type": "g5.xlarge"}, {"instance_type": "g5.12xlarge"}],
            },
            "instances_distribution": {
                "on_demand_base_capacity": 2, "on_demand_percentage_above_base_capacity": 0,
            },
        },
    )  # fmt: skip
    item = _items(price_capture(plan_of()))["mixed"]
    expected = 2 * _gpu("g5.12xlarge") + 2 * _gpu("g5.12xlarge", PriceModel.SPOT)
    assert item.hourly_expected == pytest.approx(expected)  # at its desired capacity, 4
    assert item.hourly_usd == pytest.approx(
        2 * _gpu("g5.12xlarge") + 4 * _gpu("g5.12xlarge", PriceModel.SPOT)
    )
    assert item.basis.startswith("6 x g5.12xlarge, mixed by its instances distribution")
    assert "types it may launch (g5.xlarge $" in item.basis


def test_group_with_an_unpriced_type_is_priced_at_the_dearest_priced_one_and_names_the_other(plan_of):
    _node_group("memory", ["m5.large", "x2iedn.xlarge"], desired=2)
    report = price_capture(plan_of())
    item = _items(report)["memory"]
    assert item.hourly_usd == pytest.approx(2 * _cpu("m5.large"))
    assert item.basis.endswith("; not priced: x2iedn.xlarge")
    assert not [u for u, _ in report.unpriced if u.endswith("::memory")]


def test_group_rejects_pricing_when_no_type_is_priced(plan_of):
    _node_group("odd", ["x2iedn.xlarge", "m5.metal"])
    report = price_capture(plan_of())
    assert "odd" not in _items(report)
    (reason,) = [why for u, why in report.unpriced if u.endswith("::odd")]
    assert "x2iedn.xlarge:" in reason
    assert "m5.metal:" in reason


def test_spot_fleet_overrides_are_priced_at_the_dearest(plan_of):
    template = aws.ec2.LaunchTemplate("fleet-lt", image_id="ami-1", instance_type="g5.xlarge")
    aws.ec2.SpotFleetRequest(
        "fleet", iam_fleet_role=ROLE, target_capacity=2,
        launch_template_configs=[{
            "launch_template_specification": {"id": template.id, "version": "$Latest"},
            "overrides": [{"instance_type": "g5.2xlarge"}, {"instance_type": "g5.xlarge"}],
        }],
    )  # fmt: skip
    item = _items(price_capture(plan_of()))["fleet"]
    assert item.hourly_usd == pytest.approx(2 * _gpu("g5.2xlarge", PriceModel.SPOT))
    assert "(g5.xlarge $" in item.basis
    assert "to g5.2xlarge $" in item.basis


def test_batch_environment_is_priced_at_the_type_that_makes_its_vcpus_dearest(plan_of):
    aws.batch.ComputeEnvironment(
        "batch", type="MANAGED",
        compute_resources={"type": "EC2", "min_vcpus": 0, "desired_vcpus": 96, "max_vcpus": 192,
                           "instance_types": ["g5.xlarge", "g5.12xlarge"], "subnets": SUBNETS,
                           "security_group_ids": ["sg-1"]},
    )  # fmt: skip
    item = _items(price_capture(plan_of()))["batch"]
    small, large = 96 // 4 * _gpu("g5.xlarge"), 96 // 48 * _gpu("g5.12xlarge")
    assert item.hourly_usd == pytest.approx(max(small, large))
    dearest = "g5.xlarge" if small > large else "g5.12xlarge"
    assert item.basis.startswith(f"{96 // find_instance_type(dearest, Cloud.AWS).vcpus} x {dearest}")
    assert "/vCPU-hour to " + dearest in item.basis
