"""OffHours under Pulumi's mock runtime: scheduled actions on the group, the 503 responder, the switch."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pytest

from inference_infra.components.aws import OffHours, OffHoursArgs
from inference_infra.components.aws.off_hours import MODIFY_RULE_TARGET
from inference_infra.components.errors import InputError
from inference_infra.components.fleet.elastic import ScheduleArgs
from inference_infra.components.fleet.off_hours import off_hours_plan

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


def test_off_hours_plan_rolls_an_end_at_midnight_into_the_next_day():
    plan = off_hours_plan(
        ScheduleArgs(time_zone="UTC", days="FRI-MON", start_hour=22, end_hour=24),
        min_size=2,
        warmup_seconds=7201,
    )
    start, end = plan.actions
    assert (start.recurrence, start.min_size, start.desired, start.max_size) == ("0 22 * * 0,1,5,6", 2, 2, -1)
    assert (end.recurrence, end.min_size, end.desired) == ("0 0 * * 0,1,2,6", 0, 0)
    assert plan.asleep_cron == "cron(0 0 ? * SUN,MON,TUE,SAT *)"
    assert plan.awake_cron == "cron(1 0 ? * SUN,MON,TUE,SAT *)"  # 22:00 + 2 h 0 min 1 s, rounded up
    assert plan.awake_delay_seconds == 7260


def test_off_hours_schedules_the_group_in_its_time_zone(plan_of):
    group = _group()
    OffHours(
        "dev-pool-hours", OffHoursArgs(group_name=group.name, schedule=BERLIN, min_size=1, warmup_seconds=540)
    )
    capture = plan_of()
    actions = {
        r.props["scheduledActionName"]: r.props for r in capture.of_type("aws:autoscaling/schedule:Schedule")
    }
    assert actions["working-hours-start"]["recurrence"] == "0 8 * * 1,2,3,4,5"
    assert actions["working-hours-end"]["recurrence"] == "0 19 * * 1,2,3,4,5"
    assert {a["timeZone"] for a in actions.values()} == {"Europe/Berlin"}
    assert (actions["working-hours-end"]["minSize"], actions["working-hours-end"]["desiredCapacity"]) == (
        0,
        0,
    )
    assert {a["maxSize"] for a in actions.values()} == {-1}
    assert {a["autoscalingGroupName"] for a in actions.values()} == {
        capture.one("aws:autoscaling/group:Group").id
    }


def test_off_hours_responder_is_a_lambda_target_the_alb_may_invoke(plan_of):
    OffHours(
        "hours",
        OffHoursArgs(group_name="g", schedule=BERLIN, min_size=1, warmup_seconds=540, pool_name="dev"),
    )
    capture = plan_of()
    target_group = capture.one("aws:lb/targetGroup:TargetGroup").props
    assert target_group["targetType"] == "lambda"
    assert "port" not in target_group
    assert "vpcId" not in target_group
    permission = capture.one("aws:lambda/permission:Permission").props
    assert permission["principal"] == "elasticloadbalancing.amazonaws.com"
    function = capture.one("aws:lambda/function:Function").props
    assert function["handler"] == "pool_asleep.handler.handler"
    assert function["reservedConcurrentExecutions"] == 5  # callers of a sleeping pool cannot run it unbounded
    assert function["environment"]["variables"] == {
        "TIME_ZONE": "Europe/Berlin",
        "DAYS": "1,2,3,4,5",
        "START_HOUR": "8",
        "END_HOUR": "19",
        "WARMUP_SECONDS": "540",
        "POOL_NAME": "dev",
    }
    assert capture.of_type("aws:scheduler/schedule:Schedule") == []  # no rule given: no switch


def test_off_hours_switches_the_pools_rule_with_modify_rule(plan_of):
    rule = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/ep/1/2/3"
    pool_tg = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/pool/1"
    OffHours(
        "hours",
        OffHoursArgs(
            group_name="g",
            schedule=BERLIN,
            min_size=1,
            warmup_seconds=540,
            listener_rule_arns=[rule],
            pool_target_group_arns=[pool_tg],
        ),
    )
    capture = plan_of()
    switches = {r.name: r.props for r in capture.of_type("aws:scheduler/schedule:Schedule")}
    asleep, awake = switches["hours-asleep-0"], switches["hours-awake-0"]
    assert asleep["scheduleExpression"] == "cron(0 19 ? * MON,TUE,WED,THU,FRI *)"
    assert awake["scheduleExpression"] == "cron(9 8 ? * MON,TUE,WED,THU,FRI *)"
    assert {s["scheduleExpressionTimezone"] for s in switches.values()} == {"Europe/Berlin"}
    assert {s["target"]["arn"] for s in switches.values()} == {MODIFY_RULE_TARGET}
    assert json.loads(awake["target"]["input"]) == {
        "RuleArn": rule,
        "Actions": [
            {"Type": "forward", "ForwardConfig": {"TargetGroups": [{"TargetGroupArn": pool_tg, "Weight": 1}]}}
        ],
    }
    responder = capture.one("aws:lb/targetGroup:TargetGroup")
    (asleep_group,) = json.loads(asleep["target"]["input"])["Actions"][0]["ForwardConfig"]["TargetGroups"]
    assert asleep_group["TargetGroupArn"].endswith(responder.id)
    (policy,) = [
        r for r in capture.of_type("aws:iam/rolePolicy:RolePolicy") if r.name == "hours-switch-policy"
    ]
    (statement,) = json.loads(policy.props["policy"])["Statement"]
    assert (statement["Action"], statement["Resource"]) == ("elasticloadbalancing:ModifyRule", [rule])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"schedule": ScheduleArgs(time_zone="Berlin")}, "schedule.time_zone"),
        ({"schedule": ScheduleArgs(time_zone="UTC", start_hour=20, end_hour=8)}, "schedule.end_hour"),
        ({"schedule": ScheduleArgs(time_zone="UTC", off_hours_size=2)}, "schedule.off_hours_size"),
        ({"listener_rule_arns": ["arn:aws:elasticloadbalancing:x"]}, "listener_rule_arns"),
        ({"warmup_seconds": -5}, "warmup_seconds -5 must be at least 0"),
        ({"warmup_seconds": 86401}, r"warmup_seconds 86401 must be 0\.\.86400"),
        ({"warmup_seconds": "60"}, "warmup_seconds '60'"),
        ({"min_size": -1}, "min_size -1 must be at least 0"),
        ({"min_size": 1.5}, "min_size 1.5"),
    ],
)
def test_off_hours_rejects_bad_inputs_before_registering_anything(plan_of, overrides, message):
    values = {"group_name": "g", "schedule": BERLIN, "min_size": 1, "warmup_seconds": 60, **overrides}
    with pytest.raises(InputError, match=message):
        OffHours("hours", OffHoursArgs(**values))
    assert plan_of().custom == []
