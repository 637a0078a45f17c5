"""Each scaling alarm and the policy it invokes, held together (api_rules.alarm_policy_problems, review6).

A step policy whose steps leave part of its alarm's breach uncovered is taken by the API and then scales
nothing there ("No step adjustment found for metric value [...] and breach threshold ...", the alarm's
history); CloudWatch invokes simple and step policies from metric alarms, metric-math ones included
(CloudWatch User Guide, "Create a CloudWatch alarm based on a metric math expression", read 2026-12-02).
"""

from __future__ import annotations

import pytest

from inference_infra.components.aws.api_rules import alarm_policy_problems
from inference_infra.components.fleet.elastic import ElasticArgs
from tests.components.aws.test_elastic_pool import _fleet

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
POLICY = "aws:autoscaling/policy:Policy"


@pytest.mark.parametrize("sizing", ["share", "deficit"])
def test_every_rendered_alarm_invokes_a_policy_that_answers_its_whole_breach(plan_of, fleet_args, sizing):
    fleet = _fleet(fleet_args, elastic=ElasticArgs(scale_in_sizing=sizing, fast_scale_out_ratio=1.0))
    capture = plan_of(fleet)
    pairs = {"llama-8b-low-load": "llama-8b-scale-in", "llama-8b-high-load": "llama-8b-fast-scale-out"}
    for alarm_name, policy_name in pairs.items():
        alarm = capture.one(ALARM, alarm_name).props
        policy = capture.one(POLICY, policy_name).props
        assert len(alarm["alarmActions"]) == 1
        assert alarm_policy_problems(alarm, policy) == [], (alarm_name, policy_name)
    low = capture.one(POLICY, "llama-8b-scale-in").props
    assert low["policyType"] == ("StepScaling" if sizing == "deficit" else "SimpleScaling")


def _step(lower: str | None, upper: str | None, percent: int) -> dict:
    return {
        "metricIntervalLowerBound": lower,
        "metricIntervalUpperBound": upper,
        "scalingAdjustment": percent,
    }


LOW = {"comparisonOperator": "LessThanThreshold", "threshold": 8.96}
HIGH = {"comparisonOperator": "GreaterThanOrEqualToThreshold", "threshold": 11.2}


def test_a_low_alarm_with_no_open_lower_step_would_scale_nothing_on_a_deep_breach():
    closed = {"policyType": "StepScaling", "stepAdjustments": [_step("-2", "0", -10), _step("-4", "-2", -20)]}
    assert "no step has an open lower bound" in alarm_policy_problems(LOW, closed)[0]
    above = {"policyType": "StepScaling", "stepAdjustments": [_step(None, "0", -10), _step("0", "2", -1)]}
    assert "never matches" in alarm_policy_problems(LOW, above)[0]


def test_a_high_alarm_needs_an_open_upper_step_and_no_policy_of_its_own_kind():
    closed = {"policyType": "StepScaling", "stepAdjustments": [_step("0", "2", 10)]}
    assert "no step has an open upper bound" in alarm_policy_problems(HIGH, closed)[0]
    tracking = {"policyType": "TargetTrackingScaling"}
    assert "simple and step policies only" in alarm_policy_problems(HIGH, tracking)[0]
    assert alarm_policy_problems(HIGH, {"policyType": "SimpleScaling", "scalingAdjustment": 1}) == []


def test_every_scaling_alarm_of_the_prod_plan_pairs_with_a_policy_that_answers_it(plan_stack):
    capture = plan_stack("prod").capture
    policies = {p.name: p.props for p in capture.of_type(POLICY)}
    checked = 0
    for alarm in capture.of_type(ALARM):
        for suffix, policy_suffix in (("-low-load", "-scale-in"), ("-high-load", "-fast-scale-out")):
            if alarm.name.endswith(suffix):
                policy = policies[alarm.name.removesuffix(suffix) + policy_suffix]
                assert alarm_policy_problems(alarm.props, policy) == [], alarm.name
                checked += 1
    assert checked >= 3
