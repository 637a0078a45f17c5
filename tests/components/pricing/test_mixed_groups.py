"""Groups and fleets that mix spot and on-demand are priced by their instances distribution, and find
their launch templates however the reference is spelled."""

from __future__ import annotations

import pulumi_aws as aws
import pytest

from inference_infra.components.catalog import Cloud, PriceModel, find_instance_type
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing.core import hourly_price


def _rate(model: PriceModel) -> float:
    item = find_instance_type("g5.2xlarge", Cloud.AWS)
    return hourly_price(item, region="us-east-1", model=model, count=1).hourly_usd


def _group(template: aws.ec2.LaunchTemplate, distribution: dict) -> None:
    aws.autoscaling.Group(
        "mixed",
        min_size=1,
        max_size=6,
        desired_capacity=4,
        vpc_zone_identifiers=["subnet-1"],
        mixed_instances_policy={
            "launch_template": {
                "launch_template_specification": {"launch_template_id": template.id},
                "overrides": [{"instance_type": "g5.2xlarge"}],
            },
            "instances_distribution": distribution,
        },
    )


def test_mixed_group_pays_spot_for_its_spot_share(plan_of):
    template = aws.ec2.LaunchTemplate("lt", image_id="ami-1", instance_type="g5.2xlarge")
    # base 1 on demand, then 25% of the other 3 on demand: 1.75 on demand, 2.25 spot
    _group(template, {"on_demand_base_capacity": 1, "on_demand_percentage_above_base_capacity": 25})
    (item,) = [i for i in price_capture(plan_of()).items if i.urn.endswith("::mixed")]
    # An elastic pool is priced at its maximum (6: base 1, then 25% of 5 on demand) ...
    at_max = 2.25 * _rate(PriceModel.ON_DEMAND) + 3.75 * _rate(PriceModel.SPOT)
    assert item.hourly_usd == pytest.approx(at_max)
    assert "6 x g5.2xlarge, mixed by its instances distribution: 2.25 on-demand" in item.basis
    assert "+ 3.75 at the spot $" in item.basis
    # ... and expected at its desired capacity (4: 1.75 on demand, 2.25 spot), at least its minimum (1)
    expected = 1.75 * _rate(PriceModel.ON_DEMAND) + 2.25 * _rate(PriceModel.SPOT)
    assert item.hourly_expected == pytest.approx(expected)
    assert item.hourly_min == pytest.approx(_rate(PriceModel.ON_DEMAND))
    assert _rate(PriceModel.SPOT) < _rate(PriceModel.ON_DEMAND)  # the snapshot has this type


def test_mixed_group_all_on_demand_is_priced_on_demand(plan_of):
    template = aws.ec2.LaunchTemplate("lt", image_id="ami-1", instance_type="g5.2xlarge")
    _group(template, {"on_demand_base_capacity": 0, "on_demand_percentage_above_base_capacity": 100})
    (item,) = [i for i in price_capture(plan_of()).items if i.urn.endswith("::mixed")]
    assert item.hourly_usd == pytest.approx(6 * _rate(PriceModel.ON_DEMAND))
    assert item.hourly_expected == pytest.approx(4 * _rate(PriceModel.ON_DEMAND))
