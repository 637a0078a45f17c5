"""What AWS and the provider accept of an elastic pool's resources: pure checks over the engine's inputs.

The offline plan cannot run `pulumi up`, so these hold the inputs a pool registers (camelCase, as the
engine receives them) against the rules the provider and the API apply, and the tests run them over every
alarm, group and lifecycle hook of every plan. Sources (read 2026-12-02):

- terraform-provider-aws `internal/service/cloudwatch/metric_alarm.go`, resourceMetricAlarm's schema:
  `metric_query.return_data` is `Optional, Default: false` (a query that leaves it unset is sent as
  false); `metric_query.metric.period` is 1, 5, 10, 30 or a multiple of 60; `alarm_description` is
  0..1024 characters; `evaluation_periods` and `datapoints_to_alarm` are at least 1; `ok_actions` and
  `insufficient_data_actions` take at most 5; the CustomizeDiff refuses a query with both `expression`
  and `metric`.
- The CloudWatch API reference, PutMetricAlarm: `Metrics` "exactly one of the MetricDataQuery objects
  must have ReturnData set to true"; a query `Id` starts with a lower-case letter (letters, digits,
  underscore); `AlarmActions` at most 5; EvaluationPeriods x Period at most one day (86,400 s).
- terraform-provider-aws `internal/service/autoscaling/group.go`, resourceGroup's schema:
  `initial_lifecycle_hook.heartbeat_timeout` IntBetween(30, 7200), `name` 1..255 of [A-Za-z0-9-_/];
  `instance_maintenance_policy.min_healthy_percentage` -1..100, `max_healthy_percentage` 100..200 (or
  -1); `instance_refresh.strategy` required, `preferences.min_healthy_percentage` 0..100 (default 90),
  `preferences.max_healthy_percentage` 100..200 (default 100), `instance_warmup` and
  `checkpoint_delay` at least 0; `warm_pool.min_size` at least 0, `max_group_prepared_capacity` at
  least -1, `pool_state` one of Stopped, Running, Hibernated; exactly one of `launch_configuration`,
  `launch_template`, `mixed_instances_policy`. A refresh's `triggers` never need `launch_template` or
  `mixed_instances_policy` (validateGroupInstanceRefreshTriggerFields: those "always trigger an
  instance refresh").
- The Auto Scaling API reference, StartInstanceRefresh / RefreshPreferences: with MaxHealthyPercentage
  the two percentages may be at most 100 apart.
- terraform-provider-aws `internal/service/autoscaling/policy.go` (expandPutScalingPolicyInput and the
  schema): `policy_type` defaults to SimpleScaling; SimpleScaling requires `scaling_adjustment`;
  `cooldown` other than 0 only with SimpleScaling; `estimated_instance_warmup` other than 0 only with
  StepScaling or TargetTrackingScaling; `min_adjustment_magnitude` at least 1. The PutScalingPolicy
  reference: AdjustmentType is ChangeInCapacity, ExactCapacity or PercentChangeInCapacity (required for
  SimpleScaling and StepScaling); MinAdjustmentMagnitude is "the minimum value to scale by when the
  adjustment type is PercentChangeInCapacity"; a percent change lies in -100..100 (the CDK's
  AdjustmentType docs state the range; read 2026-12-02).
- StepScaling (policy.go as above; the PutScalingPolicy and StepAdjustment API references, read
  2026-12-02): `step_adjustment` is required for StepScaling and refused otherwise (and conflicts with a
  policy-level `scaling_adjustment`); `metric_aggregation_type` (Minimum, Maximum, Average) is
  StepScaling's only; each step has a `scaling_adjustment` and bounds relative to the alarm's threshold
  (nullable floats, strings in the provider's schema); the steps' ranges may not overlap or leave a
  gap; at most one has no lower bound and at most one no upper bound, never both in one step; a
  negative lower bound needs a step without a lower bound, a positive upper bound one without an upper
  bound. Ours: the steps reach the threshold (offset 0), where every breach starts. EC2 Auto Scaling
  quotas: at most 20 step adjustments a policy.
- An alarm and the policy it invokes (`alarm_policy_problems`): CloudWatch invokes a simple or step
  policy from a metric alarm, a metric-math one included (CloudWatch User Guide, "Create a CloudWatch
  alarm based on a metric math expression": such an alarm may "perform Auto Scaling ... actions";
  composite alarms may not; target tracking and predictive policies make their own alarms). EC2 Auto
  Scaling picks the step whose bounds hold the aggregated breach (User Guide, "Step and simple scaling
  policies"), and when none does it scales nothing (the alarm history's "No step adjustment found for
  metric value [...] and breach threshold ..."): the steps must cover the alarm's whole breach side,
  every offset at or below 0 for a LessThan alarm (a step without a lower bound), at or above 0 for a
  GreaterThan one (a step without an upper bound). Read 2026-12-02.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from typing import Any

MAX_ALARM_ACTIONS = 5
MAX_ALARM_SECONDS = 86_400
_QUERY_ID = re.compile(r"^[a-z][A-Za-z0-9_]*$")
_HOOK_NAME = re.compile(r"^[A-Za-z0-9\-_/]{1,255}$")
_COMPARISONS = {
    "GreaterThanOrEqualToThreshold",
    "GreaterThanThreshold",
    "LessThanThreshold",
    "LessThanOrEqualToThreshold",
    "LessThanLowerOrGreaterThanUpperThreshold",
    "LessThanLowerThreshold",
    "GreaterThanUpperThreshold",
}
_MISSING = {"breaching", "notBreaching", "ignore", "missing"}
_TRANSITIONS = {"autoscaling:EC2_INSTANCE_LAUNCHING", "autoscaling:EC2_INSTANCE_TERMINATING"}
_POOL_STATES = {"Stopped", "Running", "Hibernated"}
_POLICY_TYPES = {"SimpleScaling", "StepScaling", "TargetTrackingScaling", "PredictiveScaling"}
_ADJUSTMENTS = {"ChangeInCapacity", "ExactCapacity", "PercentChangeInCapacity"}
_AGGREGATIONS = {"Minimum", "Maximum", "Average"}
MAX_STEP_ADJUSTMENTS = 20


def _period_ok(period: Any, *, query: bool) -> bool:
    short = (1, 5, 10, 30) if query else (10, 30)
    return isinstance(period, int) and period > 0 and (period in short or period % 60 == 0)


def metric_alarm_problems(props: Mapping[str, Any]) -> list[str]:
    """Every rule a CloudWatch metric alarm's inputs break (empty: AWS and the provider take it)."""
    problems: list[str] = []
    evaluation = props.get("evaluationPeriods")
    if not isinstance(evaluation, int) or evaluation < 1:
        problems.append(f"evaluationPeriods {evaluation!r} must be at least 1")
        evaluation = 1
    datapoints = props.get("datapointsToAlarm")
    if datapoints is not None and not 1 <= datapoints <= evaluation:
        problems.append(f"datapointsToAlarm {datapoints!r} must be 1..evaluationPeriods ({evaluation})")
    if props.get("comparisonOperator") not in _COMPARISONS:
        problems.append(f"comparisonOperator {props.get('comparisonOperator')!r} is not one AWS takes")
    missing = props.get("treatMissingData", "missing")
    if missing not in _MISSING:
        problems.append(f"treatMissingData {missing!r} must be one of {sorted(_MISSING)}")
    if len(props.get("alarmDescription") or "") > 1024:
        problems.append("alarmDescription is longer than 1024 characters")
    for key in ("alarmActions", "okActions", "insufficientDataActions"):
        if len(props.get(key) or ()) > MAX_ALARM_ACTIONS:
            problems.append(f"{key} has {len(props[key])} actions; AWS takes at most {MAX_ALARM_ACTIONS}")
    queries = props.get("metricQueries")
    if not queries:
        if not props.get("metricName"):
            problems.append("needs metricName or metricQueries")
        if (props.get("statistic") is None) == (props.get("extendedStatistic") is None):
            problems.append("a single-metric alarm needs exactly one of statistic, extendedStatistic")
        period = props.get("period")
        if not _period_ok(period, query=False):
            problems.append(f"period {period!r} must be 10, 30 or a multiple of 60")
        elif period * evaluation > MAX_ALARM_SECONDS:
            problems.append(f"evaluationPeriods x period = {period * evaluation} s is more than one day")
        return problems
    for key in ("metricName", "namespace", "period", "statistic", "dimensions"):
        if props.get(key) is not None:
            problems.append(f"{key} conflicts with metricQueries")
    returning = [q.get("id") for q in queries if q.get("returnData") is True]
    if len(returning) != 1:
        problems.append(
            f"exactly one metric query must return data (returnData: true; the provider sends false when "
            f"unset); {len(returning)} do: {returning}"
        )
    ids = [q.get("id") for q in queries]
    if len(set(ids)) != len(ids):
        problems.append(f"metric query ids {ids} repeat")
    for query in queries:
        ident = query.get("id")
        if not isinstance(ident, str) or not _QUERY_ID.fullmatch(ident):
            problems.append(
                f"metric query id {ident!r} must start with a lower-case letter (letters, digits, _)"
            )
        expression, metric = query.get("expression"), query.get("metric")
        if bool(expression) == bool(metric):
            problems.append(f"metric query {ident!r} needs exactly one of expression, metric")
        if metric:
            period = metric.get("period")
            if not _period_ok(period, query=True):
                problems.append(f"metric query {ident!r} period {period!r} must be 1, 5, 10, 30 or n x 60")
            elif period * evaluation > MAX_ALARM_SECONDS:
                problems.append(
                    f"metric query {ident!r}: evaluationPeriods x period = {period * evaluation} s is "
                    "more than one day"
                )
            if not metric.get("metricName") or not metric.get("stat"):
                problems.append(f"metric query {ident!r} needs metricName and stat")
        if expression and len(expression) > 1024:
            problems.append(f"metric query {ident!r} expression is longer than 1024 characters")
    return problems


def lifecycle_hook_problems(hook: Mapping[str, Any], where: str = "lifecycle hook") -> list[str]:
    """A group's initial hook or an aws.autoscaling.LifecycleHook's inputs (same rules)."""
    problems: list[str] = []
    name = hook.get("name")
    if not isinstance(name, str) or not _HOOK_NAME.fullmatch(name):
        problems.append(f"{where} name {name!r} must be 1..255 of letters, digits, -, _ and /")
    if hook.get("lifecycleTransition") not in _TRANSITIONS:
        problems.append(
            f"{where} lifecycleTransition {hook.get('lifecycleTransition')!r} is not a transition"
        )
    if hook.get("defaultResult", "ABANDON") not in ("CONTINUE", "ABANDON"):
        problems.append(f"{where} defaultResult {hook.get('defaultResult')!r} must be CONTINUE or ABANDON")
    timeout = hook.get("heartbeatTimeout")
    if timeout is not None and not 30 <= timeout <= 7200:
        problems.append(f"{where} heartbeatTimeout {timeout!r} must be 30..7200 seconds")
    return problems


def group_problems(props: Mapping[str, Any]) -> list[str]:
    """Every rule an Auto Scaling group's inputs break (empty: AWS and the provider take it)."""
    problems: list[str] = []
    low, high = props.get("minSize"), props.get("maxSize")
    desired = props.get("desiredCapacity", low)
    if not (isinstance(low, int) and isinstance(high, int) and 0 <= low <= desired <= high):
        problems.append(f"minSize {low!r} <= desiredCapacity {desired!r} <= maxSize {high!r} does not hold")
    sources = [k for k in ("launchConfiguration", "launchTemplate", "mixedInstancesPolicy") if props.get(k)]
    if len(sources) != 1:
        problems.append(
            f"exactly one of launchConfiguration, launchTemplate, mixedInstancesPolicy; got {sources}"
        )
    for hook in props.get("initialLifecycleHooks") or ():
        problems += lifecycle_hook_problems(hook, "initialLifecycleHooks")
    maintenance = props.get("instanceMaintenancePolicy")
    if maintenance:
        lo, hi = maintenance.get("minHealthyPercentage"), maintenance.get("maxHealthyPercentage")
        if not (isinstance(lo, int) and -1 <= lo <= 100):
            problems.append(f"instanceMaintenancePolicy.minHealthyPercentage {lo!r} must be -1..100")
        if not (isinstance(hi, int) and (100 <= hi <= 200 or hi == -1)):
            problems.append(f"instanceMaintenancePolicy.maxHealthyPercentage {hi!r} must be 100..200 or -1")
    refresh = props.get("instanceRefresh")
    if refresh:
        if refresh.get("strategy") not in ("Rolling", "ReplaceRootVolume"):
            problems.append(f"instanceRefresh.strategy {refresh.get('strategy')!r} must be Rolling")
        for trigger in refresh.get("triggers") or ():
            if trigger in ("launch_template", "mixed_instances_policy", "launch_configuration"):
                problems.append(
                    f"instanceRefresh.triggers {trigger!r} always triggers a refresh; leave it out"
                )
        prefs = refresh.get("preferences") or {}
        lo, hi = prefs.get("minHealthyPercentage", 90), prefs.get("maxHealthyPercentage", 100)
        if not 0 <= lo <= 100:
            problems.append(f"instanceRefresh.preferences.minHealthyPercentage {lo!r} must be 0..100")
        if not 100 <= hi <= 200:
            problems.append(f"instanceRefresh.preferences.maxHealthyPercentage {hi!r} must be 100..200")
        if hi - lo > 100:
            problems.append(
                f"instanceRefresh.preferences: max {hi} - min {lo} healthy must be at most 100 apart"
            )
        for key in ("instanceWarmup", "checkpointDelay"):
            value = prefs.get(key)
            if value is not None and int(value) < 0:
                problems.append(f"instanceRefresh.preferences.{key} {value!r} must be 0 or more")
    warm = props.get("warmPool")
    if warm:
        if warm.get("minSize", 0) < 0:
            problems.append(f"warmPool.minSize {warm.get('minSize')!r} must be 0 or more")
        if warm.get("maxGroupPreparedCapacity", -1) < -1:
            problems.append(
                f"warmPool.maxGroupPreparedCapacity {warm['maxGroupPreparedCapacity']!r} must be >= -1"
            )
        if warm.get("poolState", "Stopped") not in _POOL_STATES:
            problems.append(
                f"warmPool.poolState {warm.get('poolState')!r} must be one of {sorted(_POOL_STATES)}"
            )
    return problems


def scaling_policy_problems(props: Mapping[str, Any]) -> list[str]:
    """Every rule an Auto Scaling policy's inputs break (empty: AWS and the provider take it)."""
    problems: list[str] = []
    kind = props.get("policyType", "SimpleScaling")
    if kind not in _POLICY_TYPES:
        return [f"policyType {kind!r} must be one of {sorted(_POLICY_TYPES)}"]
    adjustment_type = props.get("adjustmentType")
    adjustment = props.get("scalingAdjustment")
    magnitude = props.get("minAdjustmentMagnitude")
    if kind in ("SimpleScaling", "StepScaling"):
        if adjustment_type not in _ADJUSTMENTS:
            problems.append(f"adjustmentType {adjustment_type!r} must be one of {sorted(_ADJUSTMENTS)}")
    elif adjustment_type is not None:
        problems.append(f"adjustmentType is for SimpleScaling and StepScaling, not {kind}")
    if kind == "SimpleScaling":
        if not isinstance(adjustment, int):
            problems.append(
                f"scalingAdjustment {adjustment!r} is required (a whole number) for SimpleScaling"
            )
        elif adjustment_type == "PercentChangeInCapacity" and not -100 <= adjustment <= 100:
            problems.append(f"scalingAdjustment {adjustment} must be -100..100 for PercentChangeInCapacity")
    elif adjustment not in (None, 0):
        problems.append(f"scalingAdjustment is for SimpleScaling only, not {kind}")
    if props.get("cooldown") not in (None, 0) and kind != "SimpleScaling":
        problems.append(f"cooldown is for SimpleScaling only, not {kind}")
    if props.get("estimatedInstanceWarmup") not in (None, 0) and kind == "SimpleScaling":
        problems.append("estimatedInstanceWarmup is for StepScaling and TargetTrackingScaling only")
    if magnitude is not None:
        if not isinstance(magnitude, int) or magnitude < 1:
            problems.append(f"minAdjustmentMagnitude {magnitude!r} must be at least 1")
        elif adjustment_type != "PercentChangeInCapacity":
            problems.append(
                f"minAdjustmentMagnitude is for PercentChangeInCapacity only, not {adjustment_type!r}"
            )
    if kind == "TargetTrackingScaling" and not props.get("targetTrackingConfiguration"):
        problems.append("targetTrackingConfiguration is required for TargetTrackingScaling")
    aggregation = props.get("metricAggregationType")
    if aggregation is not None:
        if kind != "StepScaling":
            problems.append(f"metricAggregationType is for StepScaling only, not {kind}")
        elif aggregation not in _AGGREGATIONS:
            problems.append(f"metricAggregationType {aggregation!r} must be one of {sorted(_AGGREGATIONS)}")
    steps = props.get("stepAdjustments")
    if kind == "StepScaling":
        if not steps:
            problems.append("stepAdjustments are required for StepScaling")
        else:
            problems += step_adjustment_problems(steps, adjustment_type)
    elif steps:
        problems.append(f"stepAdjustments are for StepScaling only, not {kind}")
    return problems


def _bound(value: Any) -> float | None:
    """A step's bound as the provider sends it: a string (or number) of a float; None or "" is no bound."""
    if value is None or value == "":
        return None
    return float(value)


def step_adjustment_problems(steps: list[Mapping[str, Any]], adjustment_type: Any = None) -> list[str]:
    """Every rule a StepScaling policy's step adjustments break (module doc: StepAdjustment)."""
    problems: list[str] = []
    if len(steps) > MAX_STEP_ADJUSTMENTS:
        problems.append(f"{len(steps)} step adjustments; a policy takes at most {MAX_STEP_ADJUSTMENTS}")
    ranges: list[tuple[float, float]] = []
    for i, step in enumerate(steps):
        adjustment = step.get("scalingAdjustment")
        if not isinstance(adjustment, int):
            problems.append(
                f"stepAdjustments[{i}].scalingAdjustment {adjustment!r} is required (a whole number)"
            )
        elif adjustment_type == "PercentChangeInCapacity" and not -100 <= adjustment <= 100:
            problems.append(
                f"stepAdjustments[{i}].scalingAdjustment {adjustment} must be -100..100 for "
                "PercentChangeInCapacity"
            )
        try:
            low = _bound(step.get("metricIntervalLowerBound"))
            high = _bound(step.get("metricIntervalUpperBound"))
        except (TypeError, ValueError):
            problems.append(f"stepAdjustments[{i}] bounds must be numbers (as strings), got {dict(step)!r}")
            continue
        if low is None and high is None:
            problems.append(f"stepAdjustments[{i}] has neither a lower nor an upper bound")
            continue
        if low is not None and high is not None and low >= high:
            problems.append(f"stepAdjustments[{i}] lower bound {low:g} is not below its upper bound {high:g}")
            continue
        ranges.append((-math.inf if low is None else low, math.inf if high is None else high))
    if problems:
        return problems
    lows = sum(1 for lo, _ in ranges if lo == -math.inf)
    highs = sum(1 for _, hi in ranges if hi == math.inf)
    if lows > 1:
        problems.append(f"{lows} step adjustments have no lower bound; at most one may")
    if highs > 1:
        problems.append(f"{highs} step adjustments have no upper bound; at most one may")
    if any(lo < 0 for lo, _ in ranges) and not lows:
        problems.append("a step has a negative lower bound, so one step must have no lower bound")
    if any(0 < hi < math.inf for _, hi in ranges) and not highs:
        problems.append("a step has a positive upper bound, so one step must have no upper bound")
    ordered = sorted(ranges)
    if not ordered[0][0] <= 0 <= ordered[-1][1]:
        problems.append(
            f"the steps cover [{ordered[0][0]:g}, {ordered[-1][1]:g}) of the breach, which does not reach "
            "the threshold (offset 0): a breach there would match no step"
        )
    for (lo1, hi1), (lo2, hi2) in itertools.pairwise(ordered):
        if lo2 < hi1:
            problems.append(f"step ranges [{lo1:g}, {hi1:g}) and [{lo2:g}, {hi2:g}) overlap")
        elif lo2 > hi1:
            problems.append(f"a gap between step ranges [{lo1:g}, {hi1:g}) and [{lo2:g}, {hi2:g})")
    return problems


def alarm_policy_problems(alarm: Mapping[str, Any], policy: Mapping[str, Any]) -> list[str]:
    """Every rule an alarm and the scaling policy it invokes break together (module doc): the policy is
    one an alarm may invoke, and a step policy's steps cover the alarm's whole breach side."""
    kind = policy.get("policyType", "SimpleScaling")
    if kind not in ("SimpleScaling", "StepScaling"):
        return [f"an alarm invokes simple and step policies only, not {kind} (it makes its own alarms)"]
    if kind != "StepScaling":
        return []
    operator = str(alarm.get("comparisonOperator", ""))
    if operator not in _COMPARISONS or "Lower" in operator or "Upper" in operator:
        return [f"a step policy needs a static-threshold alarm; comparisonOperator {operator!r} has none"]
    try:
        ranges = [
            (_bound(s.get("metricIntervalLowerBound")), _bound(s.get("metricIntervalUpperBound")))
            for s in policy.get("stepAdjustments") or ()
        ]
    except (TypeError, ValueError):
        return []  # step_adjustment_problems names the bound
    if operator.startswith("LessThan"):
        if not any(lo is None for lo, _ in ranges):
            return [
                f"the alarm breaches below its threshold ({operator}) but no step has an open lower "
                "bound: a deep breach would match no step and scale nothing"
            ]
        if any(lo is not None and lo >= 0 for lo, _ in ranges):
            return [f"a step above the threshold never matches an alarm that breaches below it ({operator})"]
    elif not any(hi is None for _, hi in ranges):
        return [
            f"the alarm breaches above its threshold ({operator}) but no step has an open upper bound: "
            "a high breach would match no step and scale nothing"
        ]
    elif any(hi is not None and hi <= 0 for _, hi in ranges):
        return [f"a step below the threshold never matches an alarm that breaches above it ({operator})"]
    return []


__all__ = [
    "alarm_policy_problems",
    "group_problems",
    "lifecycle_hook_problems",
    "metric_alarm_problems",
    "scaling_policy_problems",
    "step_adjustment_problems",
]
