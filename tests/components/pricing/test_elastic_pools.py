"""An elastic pool is priced as a range: its minimum, its expected cost and its maximum (the total)."""

from __future__ import annotations

import pulumi_aws as aws
import pytest

from inference_infra.components.catalog import Cloud, PriceModel, find_instance_type
from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing import apply_usage_file
from inference_infra.components.pricing.core import hourly_price
from inference_infra.components.pricing.elastic import week_shares
from inference_infra.components.resources.schedules import ScheduledSize

SUBNETS = ["subnet-1"]


def _rate(name: str = "g5.xlarge", model: PriceModel = PriceModel.ON_DEMAND) -> float:
    return hourly_price(
        find_instance_type(name, Cloud.AWS), region="us-east-1", model=model, count=1
    ).hourly_usd


def _pool(
    name: str = "pool", *, min_size: int = 1, max_size: int = 4, desired: int = 2
) -> aws.autoscaling.Group:
    template = aws.ec2.LaunchTemplate(f"{name}-lt", image_id="ami-1", instance_type="g5.xlarge")
    return aws.autoscaling.Group(
        name,
        min_size=min_size,
        max_size=max_size,
        desired_capacity=desired,
        vpc_zone_identifiers=SUBNETS,
        launch_template={"id": template.id, "version": "$Latest"},
    )


def _schedule(name: str, group, recurrence: str, size: int) -> None:
    aws.autoscaling.Schedule(
        name,
        autoscaling_group_name=group.name,
        scheduled_action_name=name,
        recurrence=recurrence,
        time_zone="Europe/Berlin",
        min_size=size,
        desired_capacity=size,
        max_size=-1,
    )


def _item(report, name: str = "pool"):
    (item,) = [i for i in report.items if i.urn.endswith(f"::{name}") and i.category == "accelerator"]
    return item


def test_elastic_pool_is_priced_at_its_maximum_with_its_minimum_and_expected_cost(plan_of):
    _pool(min_size=1, max_size=4, desired=2)
    report = price_capture(plan_of())
    item = _item(report)
    assert item.hourly_usd == pytest.approx(4 * _rate())
    assert (item.hourly_min, item.hourly_expected) == (pytest.approx(_rate()), pytest.approx(2 * _rate()))
    assert item.basis.startswith("4 x g5.xlarge on-demand us-east-1; elastic 1..4 machines: ")
    assert "(its desired capacity, 2)" in item.basis
    listed = item.as_json()
    assert {k: listed[k] for k in ("min_size", "max_size", "expected_size", "expected_basis")} == {
        "min_size": 1,
        "max_size": 4,
        "expected_size": 2.0,
        "expected_basis": "its desired capacity, 2",
    }
    assert listed["hourly_max"] == listed["hourly_usd"] == round(4 * _rate(), 4)
    cost = report.as_json()
    assert cost["hourly_max"] == cost["hourly_usd"]  # the budget's figure stays the maximum
    assert cost["hourly_min"] == pytest.approx(cost["hourly_usd"] - 3 * _rate(), abs=1e-3)
    assert cost["hourly_expected"] == pytest.approx(cost["hourly_usd"] - 2 * _rate(), abs=1e-3)


def test_elastic_pool_scheduled_to_zero_overnight_expects_the_working_hours_only(plan_of):
    group = _pool(min_size=2, max_size=4, desired=2)
    _schedule("morning", group, "0 8 * * MON-FRI", 2)
    _schedule("evening", group, "0 19 * * MON-FRI", 0)
    item = _item(price_capture(plan_of()))
    working = 5 * 11 / 168  # 55 of the week's 168 hours at 2 machines, the rest at 0
    assert item.range.min_size == 0
    assert item.hourly_min == 0
    assert item.hourly_expected == pytest.approx(working * 2 * _rate())
    assert item.hourly_usd == pytest.approx(4 * _rate())
    assert (
        item.range.expected_basis == "scheduled actions replayed over a week: 113 h/week at 0, 55 h/week at 2"
    )


def test_week_shares_replays_weekly_crons_and_gives_up_on_others():
    night = ScheduledSize("night", 0, -1, 0, "30 18 * * 1-5", None)
    day = ScheduledSize("day", 1, -1, 3, "30 7 * * MON-FRI", None)
    shares = week_shares([night, day], low=0, high=4)
    assert shares == {0: pytest.approx((168 - 55) / 168), 3: pytest.approx(55 / 168)}
    monthly = ScheduledSize("monthly", 0, -1, 0, "0 0 1 * *", None)
    assert week_shares([night, monthly], low=0, high=4) is None
    assert week_shares([ScheduledSize("keep", -1, -1, -1, "0 8 * * *", None)], low=0, high=4) is None


def test_usage_file_gives_an_elastic_pools_hours_at_each_size(plan_of):
    _pool(min_size=0, max_size=4, desired=1)
    report = price_capture(plan_of())
    apply_usage_file(report, {"pool": {"hours_at_size": {2: 250, "4": 80}}}, where="usage.yaml")
    item = _item(report)
    assert item.hourly_expected == pytest.approx((250 * 2 + 80 * 4) / 730 * _rate())
    assert item.range.expected_size == pytest.approx((250 * 2 + 80 * 4) / 730)
    assert item.range.expected_basis == "usage.yaml: 250 h at 2, 80 h at 4 per month"
    assert item.hourly_usd == pytest.approx(4 * _rate())  # the maximum does not move
    assert report.as_json()["hourly_expected"] < report.as_json()["hourly_usd"]


@pytest.mark.parametrize(
    ("usage", "message"),
    [
        ({"pool": {"hours_at_size": {5: 10}}}, r"size 5 is not a machine count the pool can run \(0..4\)"),
        ({"pool": {"hours_at_size": {2: 500, 4: 300}}}, "adds up to 800 hours; a month has 730"),
        ({"pool": {"hours_at_size": {2: -1}}}, r"pool.hours_at_size.2 = -1; must be a non-negative"),
        ({"pool": {"hours_at_size": []}}, "must map machine counts"),
        (
            {"pol": {"hours_at_size": {1: 10}}},
            "'pol' is not an elastic pool of the plan; close matches: pool",
        ),
    ],
)
def test_usage_file_rejects_hours_the_pool_cannot_run(plan_of, usage, message):
    _pool(min_size=0, max_size=4, desired=1)
    report = price_capture(plan_of())
    with pytest.raises(InputError, match=message):
        apply_usage_file(report, usage, where="usage.yaml")


def test_a_group_with_fixed_size_is_still_a_range_of_one_point(plan_of):
    _pool(min_size=3, max_size=3, desired=3)
    item = _item(price_capture(plan_of()))
    assert item.hourly_min == item.hourly_expected == item.hourly_usd == pytest.approx(3 * _rate())


ELASTIC_PROGRAM = """
import pulumi_aws as aws
lt = aws.ec2.LaunchTemplate("pool-lt", image_id="ami-1", instance_type="g5.xlarge")
pool = aws.autoscaling.Group("pool", min_size=0, max_size=4, desired_capacity=1, vpc_zone_identifiers=["s-1"],
                             launch_template={"id": lt.id, "version": "$Latest"})
"""


def _cli(project, *extra: str):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    return subprocess.run(
        [sys.executable, "-m", "inference_infra.components.cli", "plan", "--cwd", str(project), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )


def test_plan_cli_shows_the_range_and_takes_hours_at_size_from_the_usage_file(pulumi_project, tmp_path):
    import json

    from inference_infra.components.offline_plan import plan, render_table

    project = pulumi_project(ELASTIC_PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    table = render_table(plan(project, "dev"))
    assert (
        "Elastic pools:   1 (pool 0..4); the total above is each at its maximum. Range: $0.00/hour" in table
    )
    usage, typo = tmp_path / "usage.yml", tmp_path / "typo.yml"
    usage.write_text("resource_usage:\n  pool:\n    hours_at_size:\n      1: 365\n      4: 73\n")
    typo.write_text("resource_usage:\n  pool:\n    hours_at_size:\n      9: 1\n")
    cost = json.loads(_cli(project, "--json", "--usage-file", str(usage)).stdout)["cost"]
    (item,) = [i for i in cost["items"] if i["urn"].endswith("::pool") and i["category"] == "accelerator"]
    assert item["expected_size"] == pytest.approx((365 + 4 * 73) / 730)
    assert item["hourly_expected"] == pytest.approx((365 + 4 * 73) / 730 * _rate(), abs=1e-4)
    assert cost["hourly_max"] == cost["hourly_usd"]
    bad = _cli(project, "--json", "--usage-file", str(typo))
    assert bad.returncode == 2
    assert "size 9 is not a machine count the pool can run (0..4)" in bad.stderr.replace("\n", " ")
    assert "Traceback" not in bad.stderr


def test_an_elastic_pool_at_zero_with_nothing_saying_when_it_runs_is_not_free(plan_of):
    """Minimum and desired capacity 0, no schedule, no usage file: one machine expected, said so."""
    _pool(min_size=0, max_size=4, desired=0)
    item = _item(price_capture(plan_of()))
    assert item.hourly_min == 0
    assert item.hourly_expected == pytest.approx(_rate())
    assert item.range.expected_size == 1
    assert "no schedule or usage file says when it runs, so one machine" in item.range.expected_basis
    assert "hours_at_size in a --usage-file" in item.range.expected_basis


def test_scheduled_actions_that_set_only_a_minimum_are_replayed_at_that_minimum(plan_of):
    group = _pool(min_size=0, max_size=4, desired=0)
    for name, cron, size in (("morning", "0 8 * * MON-FRI", 2), ("evening", "0 19 * * MON-FRI", 0)):
        aws.autoscaling.Schedule(
            name,
            autoscaling_group_name=group.name,
            scheduled_action_name=name,
            recurrence=cron,
            min_size=size,
            max_size=-1,
        )
    item = _item(price_capture(plan_of()))
    assert item.hourly_expected == pytest.approx(5 * 11 / 168 * 2 * _rate())
    assert (
        item.range.expected_basis == "scheduled actions replayed over a week: 113 h/week at 0, 55 h/week at 2"
    )
