"""Elastic pools through the pack: OffHours' scheduled actions make an on-demand dev pool pass."""

from __future__ import annotations

import pulumi_aws as aws
import pytest

from inference_infra.components.aws import OffHours, OffHoursArgs
from inference_infra.components.fleet.elastic import ScheduleArgs
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.policy.rules import nonprod_accelerators_spot_or_autoshutdown as nonprod

BERLIN = ScheduleArgs(time_zone="Europe/Berlin", days="MON-FRI", start_hour=8, end_hour=19)


def _group() -> aws.autoscaling.Group:
    template = aws.ec2.LaunchTemplate(
        "dev-pool-lt", image_id="ami-1", instance_type="g5.xlarge", tags={"Environment": "dev"}
    )
    return aws.autoscaling.Group(
        "dev-pool",
        min_size=1,
        max_size=3,
        desired_capacity=1,
        vpc_zone_identifiers=["subnet-1"],
        launch_template={"id": template.id, "version": "$Latest"},
        tags=[{"key": "Environment", "value": "dev", "propagate_at_launch": True}],
    )


def test_off_hours_makes_an_on_demand_dev_pool_pass_the_nonprod_policy_and_prices_the_night(
    plan_of, run_pack
):
    group = _group()
    bare = run_pack(plan_of(), nonprod.NAME)
    assert [v.urn.rsplit("::", 1)[1] for v in bare.violations] == ["dev-pool"]
    OffHours(
        "dev-pool-hours", OffHoursArgs(group_name=group.name, schedule=BERLIN, min_size=1, warmup_seconds=540)
    )
    capture = plan_of()
    assert run_pack(capture, nonprod.NAME).violations == []
    (item,) = [
        i
        for i in price_capture(capture).items
        if i.urn.endswith("::dev-pool") and i.category == "accelerator"
    ]
    assert item.range.min_size == 0
    assert item.range.expected_size == pytest.approx(55 / 168)  # 1 machine for 5 x 11 h a week
