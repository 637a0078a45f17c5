"""Alarms, groups and hooks AWS accepts (issue #38 item 2): every one of every reference plan, held against
the provider's and the API's rules (components/aws/api_rules.py names the sources).

terraform-provider-aws internal/service/cloudwatch/metric_alarm.go: `metric_query.return_data` is
`Optional: true, Default: false`, so a query that leaves it unset is sent as false, and PutMetricAlarm
takes metric math only when exactly one query returns data. internal/service/autoscaling/group.go:
`initial_lifecycle_hook` is ForceNew with `heartbeat_timeout` IntBetween(30, 7200);
`instance_refresh.preferences` min 0..100 (default 90) and max 100..200 (default 100).
"""

from __future__ import annotations

import base64
import dataclasses

import pytest

from inference_infra.components.aws import InferentiaFleet, InferentiaFleetArgs, S3Weights
from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.api_rules import (
    group_problems,
    lifecycle_hook_problems,
    metric_alarm_problems,
    scaling_policy_problems,
)
from inference_infra.components.fleet import ServedModel

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
GROUP = "aws:autoscaling/group:Group"
HOOK = "aws:autoscaling/lifecycleHook:LifecycleHook"
POLICY = "aws:autoscaling/policy:Policy"

MATH_ALARM = {
    "comparisonOperator": "LessThanThreshold",
    "evaluationPeriods": 15,
    "datapointsToAlarm": 15,
    "threshold": 8,
    "treatMissingData": "notBreaching",
    "metricQueries": [
        {
            "id": "m1",
            "returnData": False,
            "metric": {"metricName": "InFlightRequests", "period": 60, "stat": "Average"},
        },
        {
            "id": "m2",
            "returnData": False,
            "metric": {"metricName": "GroupInServiceInstances", "period": 60, "stat": "Average"},
        },
        {"id": "e1", "expression": "m1 * m2", "returnData": True},
    ],
}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_alarm_group_and_hook_of_every_plan_is_one_aws_accepts(plan_stack, stack):
    capture = plan_stack(stack).capture
    alarms = capture.of_type(ALARM)
    assert alarms
    for alarm in alarms:
        assert metric_alarm_problems(alarm.props) == [], alarm.name
    for group in capture.of_type(GROUP):
        assert group_problems(group.props) == [], group.name
    for hook in capture.of_type(HOOK):
        assert lifecycle_hook_problems(hook.props) == [], hook.name
    policies = capture.of_type(POLICY)
    assert policies
    for policy in policies:
        assert scaling_policy_problems(policy.props) == [], policy.name


def test_prod_metric_math_alarms_return_exactly_one_query(plan_stack):
    capture = plan_stack("prod").capture
    math = [a for a in capture.of_type(ALARM) if a.props.get("metricQueries")]
    # Per elastic pool: low-load and capacity-shortfall (the eight alarms of the issue).
    assert len(math) == 2 * len(capture.of_type(GROUP)) >= 6
    for alarm in math:
        returning = [q["id"] for q in alarm.props["metricQueries"] if q.get("returnData")]
        assert returning == [alarm.props["metricQueries"][-1]["id"]], alarm.name


def test_api_rules_accept_a_math_alarm_with_one_query_returning_data():
    assert metric_alarm_problems(MATH_ALARM) == []


def test_api_rules_rejects_math_alarm_whose_expression_leaves_return_data_unset():
    # The shape the elastic pools rendered before: the provider sends false for every query.
    queries = [*MATH_ALARM["metricQueries"][:2], {"id": "e1", "expression": "m1 * m2"}]
    problems = metric_alarm_problems({**MATH_ALARM, "metricQueries": queries})
    assert problems == [
        "exactly one metric query must return data (returnData: true; the provider sends false when unset); "
        "0 do: []"
    ]


def test_api_rules_rejects_two_queries_returning_data_and_a_query_with_both_parts():
    queries = [
        {**MATH_ALARM["metricQueries"][0], "returnData": True},
        MATH_ALARM["metricQueries"][1],
        {
            "id": "e1",
            "expression": "m1",
            "returnData": True,
            "metric": {"metricName": "x", "period": 60, "stat": "Sum"},
        },
    ]
    problems = metric_alarm_problems({**MATH_ALARM, "metricQueries": queries})
    assert any("2 do: ['m1', 'e1']" in p for p in problems)
    assert "metric query 'e1' needs exactly one of expression, metric" in problems


def test_api_rules_rejects_alarm_longer_than_a_day_and_more_than_five_actions():
    props = {**MATH_ALARM, "evaluationPeriods": 1441, "datapointsToAlarm": 1441, "alarmActions": ["a"] * 6}
    problems = metric_alarm_problems(props)
    assert "alarmActions has 6 actions; AWS takes at most 5" in problems
    assert any("86460 s is more than one day" in p for p in problems)


def test_api_rules_rejects_hook_timeout_outside_30_to_7200():
    hook = {
        "name": "launch-verified",
        "lifecycleTransition": "autoscaling:EC2_INSTANCE_LAUNCHING",
        "heartbeatTimeout": 7201,
    }
    assert lifecycle_hook_problems(hook) == ["lifecycle hook heartbeatTimeout 7201 must be 30..7200 seconds"]


def test_api_rules_rejects_refresh_percentages_more_than_100_apart_and_redundant_triggers():
    group = {
        "minSize": 1,
        "maxSize": 2,
        "launchTemplate": {"id": "lt-0"},
        "instanceRefresh": {
            "strategy": "Rolling",
            "triggers": ["launch_template"],
            "preferences": {"minHealthyPercentage": 90, "maxHealthyPercentage": 200},
        },
    }
    problems = group_problems(group)
    assert "instanceRefresh.preferences: max 200 - min 90 healthy must be at most 100 apart" in problems
    assert "instanceRefresh.triggers 'launch_template' always triggers a refresh; leave it out" in problems


TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _user_data_bytes(template) -> int:
    return len(base64.b64decode(template.props["userData"]))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_launch_template_keeps_a_kib_under_ec2s_user_data_limit(plan_stack, stack):
    # EC2: user data at most 16 KiB before base64 (ours is the gzip-compressed document).
    # EKS node groups' templates carry no user data: EKS's AMI boots those nodes (nodeadm).
    templates = [
        t
        for t in plan_stack(stack).capture.of_type(TEMPLATE)
        if "inference-infra:k8s:EksNodeGroups$" not in t.urn
    ]
    assert templates
    for template in templates:
        size = _user_data_bytes(template)
        assert size <= boot.USER_DATA_MAX_BYTES - boot.USER_DATA_SPARE_BYTES, (template.name, size)


def test_largest_inferentia_boot_keeps_a_kib_spare(plan_of, fleet_args):
    # inf2.48xlarge: 12 engines (fixed: an elastic pool takes at most 5, one target group each) and the
    # API key from a secret; the elastic Inferentia boot is the prod stack's inf2-llama-8b above.
    InferentiaFleet(
        "inf2-big",
        fleet_args(
            InferentiaFleetArgs,
            instance_type="inf2.48xlarge",
            spot=0,
            on_demand=1,
            model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=4),
            weights=S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256="ab" * 32),
            root_volume_gib=300,
            api_key="arn:aws:secretsmanager:us-east-1:123456789012:secret:engine-key-AbCdEf",
        ),
    )
    template = plan_of().one(TEMPLATE)
    assert _user_data_bytes(template) <= boot.USER_DATA_MAX_BYTES - boot.USER_DATA_SPARE_BYTES


def test_fleet_rejects_more_alarm_topics_than_an_alarm_takes(harness, fleet_args):
    from inference_infra.components.aws import GpuFleet, GpuFleetArgs
    from inference_infra.components.errors import InputError

    topics = [f"arn:aws:sns:us-east-1:123456789012:oncall-{i}" for i in range(6)]
    with pytest.raises(InputError, match=r"alarm_actions .* must name at most 5 topics"):
        GpuFleet("pool", fleet_args(GpuFleetArgs, alarm_actions=topics))


SHARE_POLICY = {
    "policyType": "SimpleScaling",
    "adjustmentType": "PercentChangeInCapacity",
    "scalingAdjustment": -25,
    "minAdjustmentMagnitude": 1,
    "cooldown": 300,
}


def test_api_rules_accept_a_percent_scale_in_with_a_minimum_of_one_machine():
    assert scaling_policy_problems(SHARE_POLICY) == []
    one = {"policyType": "SimpleScaling", "adjustmentType": "ChangeInCapacity", "scalingAdjustment": -1}
    assert scaling_policy_problems(one) == []


def test_api_rules_rejects_min_adjustment_magnitude_without_a_percent_change():
    problems = scaling_policy_problems({**SHARE_POLICY, "adjustmentType": "ChangeInCapacity"})
    assert problems == ["minAdjustmentMagnitude is for PercentChangeInCapacity only, not 'ChangeInCapacity'"]


def test_api_rules_rejects_simple_scaling_without_adjustment_and_a_percent_beyond_100():
    missing = {k: v for k, v in SHARE_POLICY.items() if k != "scalingAdjustment"}
    assert scaling_policy_problems(missing) == [
        "scalingAdjustment None is required (a whole number) for SimpleScaling"
    ]
    assert scaling_policy_problems({**SHARE_POLICY, "scalingAdjustment": -120}) == [
        "scalingAdjustment -120 must be -100..100 for PercentChangeInCapacity"
    ]
    assert scaling_policy_problems({**SHARE_POLICY, "minAdjustmentMagnitude": 0}) == [
        "minAdjustmentMagnitude 0 must be at least 1"
    ]


def test_api_rules_rejects_cooldown_on_target_tracking():
    tracking = {
        "policyType": "TargetTrackingScaling",
        "cooldown": 60,
        "targetTrackingConfiguration": {"x": 1},
    }
    assert scaling_policy_problems(tracking) == [
        "cooldown is for SimpleScaling only, not TargetTrackingScaling"
    ]


STEP_POLICY = {
    "policyType": "StepScaling",
    "adjustmentType": "PercentChangeInCapacity",
    "minAdjustmentMagnitude": 1,
    "metricAggregationType": "Average",
    "estimatedInstanceWarmup": 300,
    "stepAdjustments": [
        {"metricIntervalLowerBound": "0", "metricIntervalUpperBound": "2", "scalingAdjustment": 20},
        {"metricIntervalLowerBound": "2", "scalingAdjustment": 100},
    ],
}


def test_api_rules_accept_the_fast_step_policy_the_plan_renders():
    from inference_infra.components.aws.elastic_group import fast_scale_out_policy
    from inference_infra.components.fleet.elastic import fast_steps

    threshold, steps = fast_steps(1.0, 9.6)
    plan = dataclasses.make_dataclass("P", ["fast_scale_out_steps", "policy_warmup_seconds"])(steps, 98)
    args = fast_scale_out_policy(plan)  # provider args, snake_case: as the engine receives them
    props = {
        "policyType": args["policy_type"],
        "adjustmentType": args["adjustment_type"],
        "minAdjustmentMagnitude": args["min_adjustment_magnitude"],
        "metricAggregationType": args["metric_aggregation_type"],
        "estimatedInstanceWarmup": args["estimated_instance_warmup"],
        "stepAdjustments": [
            {
                "metricIntervalLowerBound": s["metric_interval_lower_bound"],
                "metricIntervalUpperBound": s.get("metric_interval_upper_bound"),
                "scalingAdjustment": s["scaling_adjustment"],
            }
            for s in args["step_adjustments"]
        ],
    }
    assert threshold == 9.6
    assert len(props["stepAdjustments"]) == 11
    assert scaling_policy_problems(props) == []
    assert scaling_policy_problems(STEP_POLICY) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"stepAdjustments": []}, "stepAdjustments are required for StepScaling"),
        ({"metricAggregationType": "Sum"}, "metricAggregationType 'Sum' must be one of"),
        ({"cooldown": 60}, "cooldown is for SimpleScaling only, not StepScaling"),
        ({"scalingAdjustment": 10}, "scalingAdjustment is for SimpleScaling only, not StepScaling"),
        (
            {
                "stepAdjustments": [
                    {
                        "metricIntervalLowerBound": "0",
                        "metricIntervalUpperBound": "3",
                        "scalingAdjustment": 20,
                    },
                    {"metricIntervalLowerBound": "2", "scalingAdjustment": 100},
                ]
            },
            "step ranges [0, 3) and [2, inf) overlap",
        ),
        (
            {
                "stepAdjustments": [
                    {
                        "metricIntervalLowerBound": "0",
                        "metricIntervalUpperBound": "1",
                        "scalingAdjustment": 20,
                    },
                    {"metricIntervalLowerBound": "2", "scalingAdjustment": 100},
                ]
            },
            "a gap between step ranges [0, 1) and [2, inf)",
        ),
        (
            {
                "stepAdjustments": [
                    {
                        "metricIntervalLowerBound": "0",
                        "metricIntervalUpperBound": "2",
                        "scalingAdjustment": 20,
                    },
                ]
            },
            "a step has a positive upper bound, so one step must have no upper bound",
        ),
        (
            {
                "stepAdjustments": [
                    {"metricIntervalLowerBound": "1", "scalingAdjustment": 100},
                ]
            },
            "does not reach the threshold (offset 0)",
        ),
        (
            {
                "stepAdjustments": [
                    {"metricIntervalLowerBound": "0", "scalingAdjustment": 20},
                    {"metricIntervalLowerBound": "2", "scalingAdjustment": 100},
                ]
            },
            "2 step adjustments have no upper bound; at most one may",
        ),
        (
            {"stepAdjustments": [{"scalingAdjustment": 20}]},
            "stepAdjustments[0] has neither a lower nor an upper bound",
        ),
        (
            {
                "stepAdjustments": [
                    {
                        "metricIntervalLowerBound": "0",
                        "metricIntervalUpperBound": "2",
                        "scalingAdjustment": 20,
                    },
                    {"metricIntervalLowerBound": "2", "scalingAdjustment": 150},
                ]
            },
            "stepAdjustments[1].scalingAdjustment 150 must be -100..100 for PercentChangeInCapacity",
        ),
        (
            {
                "stepAdjustments": [
                    {
                        "metricIntervalLowerBound": str(k),
                        "metricIntervalUpperBound": str(k + 1),
                        "scalingAdjustment": 5,
                    }
                    for k in range(20)
                ]
                + [{"metricIntervalLowerBound": "20", "scalingAdjustment": 100}]
            },
            "21 step adjustments; a policy takes at most 20",
        ),
    ],
)
def test_api_rules_reject_step_policies_aws_refuses(change, problem):
    problems = scaling_policy_problems({**STEP_POLICY, **change})
    assert any(problem in p for p in problems), problems


def test_api_rules_reject_step_adjustments_and_aggregation_on_other_policy_types():
    tracking = {
        "policyType": "TargetTrackingScaling",
        "targetTrackingConfiguration": {"x": 1},
        "metricAggregationType": "Average",
        "stepAdjustments": STEP_POLICY["stepAdjustments"],
    }
    assert scaling_policy_problems(tracking) == [
        "metricAggregationType is for StepScaling only, not TargetTrackingScaling",
        "stepAdjustments are for StepScaling only, not TargetTrackingScaling",
    ]


def _deficit_props(steps) -> dict:
    from inference_infra.components.aws.elastic_group import deficit_scale_in_policy

    plan = dataclasses.make_dataclass("P", ["scale_in_steps"])(steps)
    args = deficit_scale_in_policy(plan)  # provider args, snake_case: as the engine receives them
    return {
        "policyType": args["policy_type"],
        "adjustmentType": args["adjustment_type"],
        "minAdjustmentMagnitude": args["min_adjustment_magnitude"],
        "metricAggregationType": args["metric_aggregation_type"],
        "stepAdjustments": [
            {
                "metricIntervalLowerBound": s.get("metric_interval_lower_bound"),
                "metricIntervalUpperBound": s.get("metric_interval_upper_bound"),
                "scalingAdjustment": s["scaling_adjustment"],
            }
            for s in args["step_adjustments"]
        ],
    }


def test_api_rules_accept_the_deficit_scale_in_policy_the_plan_renders():
    from inference_infra.components.fleet.elastic import deficit_steps

    for target in (2.8, 11.2, 44.8):
        props = _deficit_props(deficit_steps(0.8, target)[1])
        assert scaling_policy_problems(props) == [], target
        assert all(s["scalingAdjustment"] < 0 for s in props["stepAdjustments"])


def test_api_rules_reject_deficit_steps_with_a_gap_or_two_open_lower_bounds():
    from inference_infra.components.fleet.elastic import FastStep, deficit_steps

    steps = list(deficit_steps(0.8, 11.2)[1])
    gap = [*steps[:2], FastStep(lower=steps[2].lower, upper=steps[2].upper - 0.5, percent=-13), *steps[3:]]
    assert any("gap" in p for p in scaling_policy_problems(_deficit_props(gap)))
    two_open = [*steps[:-2], FastStep(lower=None, upper=steps[-2].upper, percent=-50), steps[-1]]
    problems = scaling_policy_problems(_deficit_props(two_open))
    assert "2 step adjustments have no lower bound; at most one may" in problems
