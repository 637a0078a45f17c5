"""An elastic pool on AWS: an Auto Scaling group from the pool's launch template, scaled on its engines' load.

`AcceleratorFleet` (launch.py) builds this instead of one instance per slot when its Args set `elastic`
(components/fleet/elastic.py resolves the numbers into the fleet's `scaling_plan`):

- the group: min/max/desired from the plan; the pool's subnets (the reservation's zone only when the
  pool holds reserved machines: a reservation is billed used or not, so its machines must land there);
  ELB health checks with the cold start's grace; instance warm-up = the load balancer's slow start after
  InService (the node completes the launch hook when its engines answer), not the grace
  (ScalingPlan.instance_warmup_seconds: a machine in warm-up blocks every dynamic scale-in); an instance
  maintenance policy that launches a replacement before it terminates (a refresh never drops serving
  capacity); `desired_capacity` set at creation only (ignore_changes), so `pulumi up` never resets
  what the policies scaled to;
- capacity in the pool's capacity order: reserved first through the group's capacity reservation
  specification (`capacity-reservations-first`: the reservation, then on-demand; a Capacity Block:
  `capacity-reservations-only` with the template's capacity-block market type); spot through a mixed
  instances policy whose overrides are the pool's type, then `spot_instance_types`, in that priority
  (`capacity-optimized-prioritized` for spot, `prioritized` for on-demand), with capacity rebalancing;
- a warm pool of stopped machines (on-demand and reserved pools only, see fleet_args.WARM_POOL_REFUSED)
  whose weights stay on the root EBS volume (the template keeps the cache off instance store, which a
  stop wipes), returned to the pool on scale-in;
- lifecycle hooks: on launch (the node completes it once its weights are verified; ABANDON when it
  does not within the cold start's grace, so a machine that cannot serve is replaced, and a warm-pool
  machine is never stopped halfway through its download), and on termination (after the load
  balancer has drained it for the longest generation: the target groups' deregistration delay);
- scaling: a target-tracking policy on InferenceInfra/Serving/<pool> InFlightRequests (Average per machine)
  that only scales out, and a simple scale-in policy raised by an alarm only when the load would stay
  under the target without the machines it lets go for `scale_in_cooldown_seconds`: one machine
  (`scale_in_share` 0), or the plan's share of the group (PercentChangeInCapacity, at least one machine,
  the alarm's metric math dividing the load by the machines left: fleet.elastic.scale_in_step), or
  with `scale_in_sizing` "deficit" the same policy as StepScaling: each minute the alarm (the load were
  one machine gone) stays under its threshold, the share of the group its band is under it
  (fleet.elastic.deficit_steps, sized for the firing on the stale datapoint after each step);
  and a fast scale-out (`ElasticArgs.fast_scale_out_ratio`): a StepScaling policy raised by an alarm on
  ONE one-minute datapoint of the same load (Average per machine) at the plan's threshold, adding the
  share of the group the load is over the target (PercentChangeInCapacity steps, at most 100% a step,
  `fleet.elastic.fast_steps`), with the cold start as its instance warm-up: target tracking waits for
  three datapoints, so a queue starting at the pool's minimum waits two minutes less;
- failed launches alarmed: a CloudWatch alarm when the group stays short of its desired capacity
  (launches refused for capacity, in every zone and type of the order), and an EventBridge rule on
  "EC2 Instance Launch Unsuccessful" to the pool's alarm topics;
- the load signal in the pool's own namespace (InferenceInfra/Serving/<pool>): IAM's only condition key
  on cloudwatch:PutMetricData is `cloudwatch:namespace` (CloudWatch guide, "Using condition keys to limit
  access to CloudWatch namespaces", read 2026-12-02), so a namespace per pool is what lets a node's role
  publish its own pool's load and no other pool's;
- rolling updates: an instance refresh (Rolling, 100% healthy kept, up to 200%: a replacement serves
  before the old machine goes; the warm pool's machines are replaced too) that the provider starts
  whenever the launch template's version changes; the lifecycle hooks as `aws.autoscaling.LifecycleHook`
  resources too (PutLifecycleHook creates or updates), so a group made by an earlier release gets them
  and a changed timeout reaches an existing group without replacing it (the group's
  `initial_lifecycle_hook` is ForceNew in the provider; it stays for the first machines and its changes
  are ignored);
- working hours (`ElasticArgs.schedule`): the two scheduled actions of components/fleet/off_hours.py on
  the group, made by the pool itself (OffHours adds only the 503 responder and the rule switch for it).
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.capacity import CapacityBlock
from inference_infra.components.aws.node import serving_load
from inference_infra.components.fleet import CapacityCounts, ScalingPlan
from inference_infra.components.fleet import elastic as elastic_domain
from inference_infra.components.fleet.off_hours import off_hours_plan

NAMESPACE = serving_load.NAMESPACE  # InferenceInfra/Serving
METRIC = serving_load.METRIC  # InFlightRequests
DIMENSION = serving_load.DIMENSION  # AutoScalingGroupName
# The group's own metrics (AWS/AutoScaling, 1-minute) the alarms read; enabled on the group.
GROUP_METRICS = (
    "GroupDesiredCapacity",
    "GroupInServiceInstances",
    "GroupPendingInstances",
    "GroupTotalInstances",
    "WarmPoolWarmedCapacity",
)
# The period and the scale-in headroom are the ScalingPlan's (components/fleet/elastic.py); the names
# stay here for the previous release's importers.
METRIC_PERIOD_SECONDS = elastic_domain.METRIC_PERIOD_SECONDS
SCALE_IN_HEADROOM = elastic_domain.SCALE_IN_HEADROOM
# The group short of its desired capacity this long (launches failing, not merely slow) alarms.
SHORTFALL_MINUTES = 15
# The termination hook: the balancer has drained the machine already (AWS deregisters a terminating
# instance and waits for the deregistration delay before the hook; lifecycle-hooks-overview.html, read
# 2026-11-25); this is the window for the node's last logs and metrics and the spot drain's bookkeeping.
TERMINATION_HOOK_SECONDS = elastic_domain.TERMINATION_HOOK_SECONDS
OFF_HOURS_TYPE = "inference-infra:aws:OffHours"
LAUNCH_HOOK = "launch-verified"  # the node completes it (bootstrap.ServingLoad.launch_hook)
TERMINATION_HOOK = "drained"


def launch_deadline_seconds(plan: ScalingPlan) -> int:
    """How long a new machine's engines may take to load before the group replaces it: three cold-start
    graces (the grace assumes Neuron artifacts compiled already; a first compile on the machine takes
    longer), at most AWS's 48 hours for one lifecycle action. An estimate of ours (2026-12-02)."""
    return min(3 * plan.warmup_seconds, 48 * 3600)


def load_namespace(pool: str) -> str:
    """The pool's own CloudWatch namespace for its load signal (module doc): InferenceInfra/Serving/<pool>."""
    return f"{NAMESPACE}/{pool}"


def lifecycle_hooks(plan: ScalingPlan) -> list[dict[str, Any]]:
    """The launch and termination hooks (snake_case, as the provider's args take them)."""
    return [
        {
            "name": LAUNCH_HOOK,
            "lifecycle_transition": "autoscaling:EC2_INSTANCE_LAUNCHING",
            "default_result": "ABANDON",
            "heartbeat_timeout": plan.warmup_seconds,
        },
        {
            "name": TERMINATION_HOOK,
            "lifecycle_transition": "autoscaling:EC2_INSTANCE_TERMINATING",
            "default_result": "CONTINUE",
            "heartbeat_timeout": TERMINATION_HOOK_SECONDS,
        },
    ]


def instance_refresh(plan: ScalingPlan) -> dict[str, Any]:
    """A rolling refresh that keeps every serving machine until its replacement is warm (module doc).

    min 100 / max 200 healthy: launch first, then terminate (RefreshPreferences: the two at most 100
    apart); the refresh's own warm-up is the cold start's grace (a replacement counts as healthy only
    once even a slow engine load is done; the policies' warm-up is the expected one); skip_matching
    leaves machines already on the template's version alone (a refresh retried after a failure does
    not replace them again).
    """
    return {
        "strategy": "Rolling",
        "preferences": {
            "min_healthy_percentage": 100,
            "max_healthy_percentage": 200,
            "instance_warmup": str(plan.warmup_seconds),
            "skip_matching": True,
        },
    }


def instances_distribution(counts: CapacityCounts) -> dict[str, Any]:
    """On-demand (and reserved) machines first as the base, spot above it, in the pool's proportions."""
    base = counts.reserved + counts.on_demand
    above = counts.total - base
    return {
        "on_demand_base_capacity": base,
        # Above the base the pool is spot (its counts put every other machine on spot).
        "on_demand_percentage_above_base_capacity": 0 if above else 100,
        "on_demand_allocation_strategy": "prioritized",
        "spot_allocation_strategy": "capacity-optimized-prioritized",
    }


def scale_in_expression(
    target: float, headroom: float = SCALE_IN_HEADROOM, percent: int = 0
) -> tuple[str, float]:
    """(metric math, threshold) of the scale-in alarm: the load per machine once a scale-in is done.

    m1 = in-flight requests per machine (Average of the machines' datapoints in a minute, so a machine
    whose datapoint falls in the next minute does not count twice or not at all), m2 = machines in
    service: the pool holds m1 x m2, which the machines left would share. `percent` 0: one machine
    goes (m2 - 1 left); else the policy's PercentChangeInCapacity -percent with MinAdjustmentMagnitude 1
    lets FLOOR(m2 x percent / 100), at least one, go (fleet.elastic.scale_in_step), and the expression
    divides by what is left. With one machine it may go (to a minimum of 0) only when nothing is in
    flight. FLOOR and IF are CloudWatch metric math functions that act on each datapoint.
    """
    gone = "1" if percent <= 0 else f"IF(FLOOR(m2 * {percent / 100:g}) > 1, FLOOR(m2 * {percent / 100:g}), 1)"
    expression = f"IF(m2 > 1, m1 * m2 / (m2 - {gone}), IF(m1 > 0, {target * 1000:g}, 0))"
    return expression, round(target * headroom, 2)


def fast_scale_out_policy(plan: ScalingPlan) -> dict[str, Any]:
    """The fast scale-out's StepScaling policy (provider args; module doc), {} when the plan has none.

    terraform-provider-aws internal/service/autoscaling/policy.go (read 2026-12-02): step_adjustment is
    required for StepScaling and only for it; metric_interval_lower_bound/upper_bound are nullable
    floats (strings in the provider's schema, so the SDK takes them as strings; an unset upper bound is
    no end); metric_aggregation_type and estimated_instance_warmup are sent for StepScaling; cooldown is
    SimpleScaling's only (a step policy waits for the warm-up instead: a breach in the same step while
    the machines it launched warm up launches no more, a higher step only the difference; EC2 Auto
    Scaling User Guide, "Step and simple scaling policies").
    """
    if not plan.fast_scale_out_steps:
        return {}
    steps = _step_adjustments(plan.fast_scale_out_steps)
    return {
        "policy_type": "StepScaling",
        "adjustment_type": "PercentChangeInCapacity",
        "min_adjustment_magnitude": 1,
        # the alarm's statistic is the Average per machine; the policy aggregates the same way
        "metric_aggregation_type": "Average",
        "estimated_instance_warmup": plan.policy_warmup_seconds,
        "step_adjustments": steps,
    }


def _step_adjustments(steps: Any) -> list[dict[str, Any]]:
    """A StepScaling policy's step_adjustments from the plan's steps (each a percent between bounds
    relative to the alarm's threshold; None = open). Bounds are strings: the provider's nullable floats
    take them so (policy.go, read 2026-12-02)."""
    entries = []
    for step in steps:
        entry: dict[str, Any] = {"scaling_adjustment": step.percent}
        if step.lower is not None:
            entry["metric_interval_lower_bound"] = f"{step.lower:g}"
        if step.upper is not None:
            entry["metric_interval_upper_bound"] = f"{step.upper:g}"
        entries.append(entry)
    return entries


def deficit_scale_in_policy(plan: ScalingPlan) -> dict[str, Any]:
    """The deficit scale-in's StepScaling policy (provider args), {} when the plan sizes by share.

    PercentChangeInCapacity steps under the low-load alarm's threshold, each negative (a decrease),
    from the plan's `scale_in_steps` (fleet.elastic.deficit_steps: the top step's upper bound is 0, the
    lowest has no lower bound); MinAdjustmentMagnitude 1, so a step always lets one machine go (the
    alarm's metric says one may). No cooldown (SimpleScaling's only: api_rules) and no warm-up of its
    own (a scale-in launches nothing; the group's default instance warm-up still holds every dynamic
    scale-in while a machine warms up). Bounds are strings, as the provider's nullable floats take them
    (policy.go, read 2026-12-02).

    Its alarm is a metric-math one, which may invoke an Auto Scaling policy (CloudWatch User Guide,
    "Create a CloudWatch alarm based on a metric math expression"; api_rules.alarm_policy_problems
    holds the pair), and EC2 Auto Scaling picks the band from the Average (metric_aggregation_type) of
    the alarm's latest datapoints, its window, not from the last one (User Guide, "Step and simple
    scaling policies", "Step adjustments for step scaling"; both read 2026-12-02): the replay does too.
    """
    if not plan.scale_in_steps:
        return {}
    steps = _step_adjustments(plan.scale_in_steps)
    return {
        "policy_type": "StepScaling",
        "adjustment_type": "PercentChangeInCapacity",
        "min_adjustment_magnitude": 1,
        "metric_aggregation_type": "Average",
        "step_adjustments": steps,
    }


def simple_scale_in_policy(plan: ScalingPlan) -> dict[str, Any]:
    """The share scale-in's SimpleScaling policy (provider args): its adjustment and cooldown."""
    return {
        "policy_type": "SimpleScaling",
        "cooldown": plan.scale_in_cooldown_seconds,
        **scale_in_policy(plan),
    }


def scale_in_policy(plan: ScalingPlan) -> dict[str, Any]:
    """The scale-in policy's adjustment (provider args): one machine, or the plan's share of the group.

    terraform-provider-aws internal/service/autoscaling/policy.go (expandPutScalingPolicyInput, read
    2026-12-02): SimpleScaling requires scaling_adjustment; cooldown is SimpleScaling's only;
    min_adjustment_magnitude is sent for SimpleScaling and StepScaling and is at least 1
    (validation.IntAtLeast(1)); the API takes it with PercentChangeInCapacity only
    (api_rules.scaling_policy_problems).
    """
    if plan.scale_in_percent <= 0:
        return {"adjustment_type": "ChangeInCapacity", "scaling_adjustment": -1}
    return {
        "adjustment_type": "PercentChangeInCapacity",
        "scaling_adjustment": -plan.scale_in_percent,
        "min_adjustment_magnitude": 1,
    }


class ElasticGroupBuilder:
    """Registers an elastic pool's group and its policies as children of the fleet (see module doc)."""

    def __init__(self, fleet: pulumi.ComponentResource, name: str, args: Any, counts: CapacityCounts):
        self.fleet, self.name, self.args, self.counts = fleet, name, args, counts
        self.child = pulumi.ResourceOptions(parent=fleet)

    def group(
        self,
        plan: ScalingPlan,
        template: aws.ec2.LaunchTemplate,
        instance_types: list[str],
        reservation_id: pulumi.Output[str] | None,
    ) -> aws.autoscaling.Group:
        name, args, counts = self.name, self.args, self.counts
        version = template.latest_version.apply(str)
        subnets = list(args.subnets)
        if counts.reserved and args.reservation is not None:
            zone = args.reservation.availability_zone
            subnets = [s for s in subnets if s.availability_zone == zone]
        extra: dict[str, Any] = {}
        if counts.spot or len(instance_types) > 1:
            extra["mixed_instances_policy"] = {
                "launch_template": {
                    "launch_template_specification": {"launch_template_id": template.id, "version": version},
                    "overrides": [{"instance_type": t} for t in instance_types],
                },
                "instances_distribution": instances_distribution(counts),
            }
            extra["capacity_rebalance"] = counts.spot > 0
        else:
            extra["launch_template"] = {"id": template.id, "version": version}
        if plan.warm_pool_size > 0:
            extra["warm_pool"] = {
                "pool_state": "Stopped",
                "min_size": plan.warm_pool_size,
                # The pool holds this total less the desired capacity, and never fewer than min_size.
                "max_group_prepared_capacity": plan.min_size + plan.warm_pool_size,
                "instance_reuse_policy": {"reuse_on_scale_in": True},
            }
        if reservation_id is not None and counts.reserved:
            block = isinstance(args.reservation, CapacityBlock)
            extra["capacity_reservation_specification"] = {
                "capacity_reservation_preference": "capacity-reservations-only"
                if block
                else "capacity-reservations-first",
                "capacity_reservation_target": {"capacity_reservation_ids": [reservation_id]},
            }
        group = aws.autoscaling.Group(
            f"{name}-asg",
            min_size=plan.min_size,
            max_size=plan.max_size,
            desired_capacity=plan.desired,
            vpc_zone_identifiers=[s.id for s in subnets],
            health_check_type="ELB",
            health_check_grace_period=plan.warmup_seconds,
            # The slow start after InService (= serving), not the grace: a machine in warm-up blocks every
            # dynamic scale-in (ScalingPlan.instance_warmup_seconds).
            default_instance_warmup=plan.policy_warmup_seconds,
            # Target tracking waits for the instance warm-up, not a cooldown; this is the group's default
            # for simple policies without their own (the scale-in policy has its own, longer one).
            default_cooldown=plan.scale_out_cooldown_seconds,
            initial_lifecycle_hooks=lifecycle_hooks(plan),
            instance_refresh=instance_refresh(plan),
            instance_maintenance_policy={"min_healthy_percentage": 100, "max_healthy_percentage": 200},
            enabled_metrics=list(GROUP_METRICS),
            metrics_granularity="1Minute",
            # pulumi up does not wait for machines: accelerator capacity may take longer than its
            # timeout, and the failed-launch alarm says when it does not come at all.
            wait_for_capacity_timeout="0",
            tags=[
                {"key": "Name", "value": name, "propagate_at_launch": True},
                {"key": "Pool", "value": name, "propagate_at_launch": True},
                *[{"key": k, "value": v, "propagate_at_launch": True} for k, v in args.tags.items()],
            ],
            opts=pulumi.ResourceOptions(
                parent=self.fleet,
                # The policies own the desired capacity after creation; the endpoint attaches its
                # target groups (TrafficSourceAttachment).
                # The hooks' later changes go through the LifecycleHook resources below (the initial
                # ones are ForceNew: a changed timeout would replace the group and its machines).
                ignore_changes=[
                    "desiredCapacity",
                    "targetGroupArns",
                    "trafficSources",
                    "loadBalancers",
                    "initialLifecycleHooks",
                ],
            ),
            **extra,
        )
        self.hooks = [
            aws.autoscaling.LifecycleHook(
                f"{name}-hook-{hook['name']}",
                autoscaling_group_name=group.name,
                **hook,
                opts=self.child,
            )
            for hook in lifecycle_hooks(plan)
        ]
        self.schedule = self.scheduled_actions(plan, group)
        return group

    def scheduled_actions(
        self, plan: ScalingPlan, group: aws.autoscaling.Group
    ) -> list[aws.autoscaling.Schedule]:
        """Working hours on the group (ElasticArgs.schedule): smaller at end_hour, back at start_hour.

        Aliased to where the reference stack's OffHours made them before (`<pool>-hours-<action>`), so an
        existing stack moves them instead of deleting them after making the new ones (the delete would
        remove the action by name, the one just made).
        """
        if plan.schedule is None:
            return []
        off = off_hours_plan(plan.schedule, min_size=plan.min_size, warmup_seconds=plan.warmup_seconds)
        name = self.name
        return [
            aws.autoscaling.Schedule(
                f"{name}-{action.name}",
                autoscaling_group_name=group.name,
                scheduled_action_name=action.name,
                recurrence=action.recurrence,
                time_zone=action.time_zone,
                min_size=action.min_size,
                desired_capacity=action.desired,
                max_size=action.max_size,
                opts=pulumi.ResourceOptions(
                    parent=self.fleet,
                    aliases=[
                        pulumi.Alias(
                            name=f"{name}-hours-{action.name}",
                            parent=pulumi.create_urn(f"{name}-hours", OFF_HOURS_TYPE),
                        )
                    ],
                ),
            )
            for action in off.actions
        ]

    def policies(self, plan: ScalingPlan, group: aws.autoscaling.Group) -> dict[str, Any]:
        """Scale out fast on the target, scale in slowly: one machine or a share a step (module doc)."""
        name = self.name
        tracking = aws.autoscaling.Policy(
            f"{name}-track-load",
            autoscaling_group_name=group.name,
            policy_type="TargetTrackingScaling",
            # Machines still warming up count as the target's capacity, so a burst does not launch a
            # second round of machines while the first is loading its model.
            estimated_instance_warmup=plan.policy_warmup_seconds,
            target_tracking_configuration={
                "target_value": plan.target_in_flight,
                # Scale-in is the simple policy below: target tracking would remove several machines
                # at once after 15 quiet minutes; a machine let go costs a cold start to get back.
                "disable_scale_in": True,
                "customized_metric_specification": {
                    "namespace": load_namespace(name),
                    "metric_name": METRIC,
                    "metric_dimensions": [{"name": DIMENSION, "value": group.name}],
                    "statistic": "Average",
                    "unit": "Count",
                },
            },
            opts=self.child,
        )
        # The same resource name for both sizings: policy_type is not ForceNew in the provider
        # (terraform-provider-aws internal/service/autoscaling/policy.go, read 2026-12-02: only `name` and
        # `autoscaling_group_name` are), so switching sizing updates the policy in place (PutScalingPolicy).
        scale_in = aws.autoscaling.Policy(
            f"{name}-scale-in",
            autoscaling_group_name=group.name,
            **(deficit_scale_in_policy(plan) or simple_scale_in_policy(plan)),
            opts=self.child,
        )
        deficit = bool(plan.scale_in_steps)
        # The deficit alarm judges the load were ONE machine gone (so any breach lets at least one go),
        # its steps the share; the share alarm judges the load after the whole share.
        expression, threshold = scale_in_expression(
            plan.target_in_flight, plan.scale_in_headroom, 0 if deficit else plan.scale_in_percent
        )
        quiet_minutes = plan.scale_in_datapoints
        fewer = (
            f"{plan.scale_in_percent}% of the machines (at least one)"
            if plan.scale_in_percent
            else "one machine"
        )
        description = (
            f"{name}: with one machine fewer the pool would still run under {threshold:g} in-flight requests "
            f"per machine ({plan.scale_in_headroom:.0%} of the {plan.target_in_flight:g} target) for "
            f"{quiet_minutes} minutes: each minute it stays so, let go the share of the group the load is "
            "under that (the step policy's bands)."
            if deficit
            else f"{name}: with {fewer} fewer the pool would still run under {threshold:g} "
            f"in-flight requests per machine ({plan.scale_in_headroom:.0%} of the {plan.target_in_flight:g} "
            f"target) for {quiet_minutes} minutes: scale in by as many."
        )
        low = aws.cloudwatch.MetricAlarm(
            f"{name}-low-load",
            alarm_description=description,
            comparison_operator="LessThanThreshold",
            threshold=threshold,
            evaluation_periods=quiet_minutes,
            datapoints_to_alarm=quiet_minutes,
            # No datapoint (no machine serving yet) is not evidence of a quiet pool.
            treat_missing_data="notBreaching",
            metric_queries=[
                {
                    "id": "m1",
                    "return_data": False,
                    "metric": {
                        "namespace": load_namespace(name),
                        "metric_name": METRIC,
                        "dimensions": {DIMENSION: group.name},
                        "period": plan.period_seconds,
                        "stat": "Average",
                    },
                },
                {
                    "id": "m2",
                    "return_data": False,
                    "metric": {
                        "namespace": "AWS/AutoScaling",
                        "metric_name": "GroupInServiceInstances",
                        "dimensions": {DIMENSION: group.name},
                        "period": plan.period_seconds,
                        "stat": "Average",
                    },
                },
                # AWS takes a metric-math alarm only when exactly one query returns data, and the
                # provider sends return_data=false for a query that leaves it unset (alarm_rules.py).
                {
                    "id": "e1",
                    "expression": expression,
                    "label": "in-flight per machine after the scale-in",
                    "return_data": True,
                },
            ],
            alarm_actions=[scale_in.arn],
            tags={"Name": f"{name}-low-load", **self.args.tags},
            opts=self.child,
        )
        made = {"tracking": tracking, "scale_in": scale_in, "low_load": low}
        made.update(self.fast_scale_out(plan, group))
        return made

    def fast_scale_out(self, plan: ScalingPlan, group: aws.autoscaling.Group) -> dict[str, Any]:
        """The step policy and its one-datapoint alarm (module doc); nothing when the plan has none."""
        policy_args = fast_scale_out_policy(plan)
        if not policy_args:
            return {}
        name = self.name
        fast = aws.autoscaling.Policy(
            f"{name}-fast-scale-out",
            autoscaling_group_name=group.name,
            **policy_args,
            opts=self.child,
        )
        high = aws.cloudwatch.MetricAlarm(
            f"{name}-high-load",
            alarm_description=f"{name}: one minute at {plan.fast_scale_out_threshold:g} or more in-flight "
            f"requests per machine ({plan.fast_scale_out_ratio:g} x the {plan.target_in_flight:g} target): "
            "add the share of the group the load is over the target, without waiting for target "
            "tracking's three datapoints.",
            comparison_operator="GreaterThanOrEqualToThreshold",
            threshold=plan.fast_scale_out_threshold,
            evaluation_periods=1,
            datapoints_to_alarm=1,
            # No datapoint (no machine serving yet) is not evidence of load.
            treat_missing_data="notBreaching",
            namespace=load_namespace(name),
            metric_name=METRIC,
            dimensions={DIMENSION: group.name},
            period=plan.period_seconds,
            statistic="Average",
            alarm_actions=[fast.arn],
            tags={"Name": f"{name}-high-load", **self.args.tags},
            opts=self.child,
        )
        return {"fast_scale_out": fast, "high_load": high}

    def launch_alarms(self, group: aws.autoscaling.Group) -> dict[str, Any]:
        """The group short of what it wants (launches refused for capacity), and each refused launch."""
        name, args = self.name, self.args
        shortfall = aws.cloudwatch.MetricAlarm(
            f"{name}-capacity-shortfall",
            alarm_description=f"{name}: the group has stayed below its desired capacity for "
            f"{SHORTFALL_MINUTES} minutes: launches are failing (InsufficientInstanceCapacity in every "
            "zone and type of its capacity order, a reservation used up, or a quota). Its activity "
            "history says why.",
            comparison_operator="GreaterThanOrEqualToThreshold",
            threshold=1,
            evaluation_periods=SHORTFALL_MINUTES,
            datapoints_to_alarm=SHORTFALL_MINUTES,
            treat_missing_data="notBreaching",
            metric_queries=[
                *[
                    {
                        "id": query_id,
                        "return_data": False,
                        "metric": {
                            "namespace": "AWS/AutoScaling",
                            "metric_name": metric,
                            "dimensions": {DIMENSION: group.name},
                            "period": METRIC_PERIOD_SECONDS,
                            "stat": "Average",
                        },
                    }
                    for query_id, metric in (
                        ("desired", "GroupDesiredCapacity"),
                        ("serving", "GroupInServiceInstances"),
                        ("pending", "GroupPendingInstances"),
                    )
                ],
                {
                    "id": "short",
                    "expression": "desired - serving - pending",
                    "label": "machines missing",
                    "return_data": True,  # the one query the alarm judges (alarm_rules.py)
                },
            ],
            alarm_actions=list(args.alarm_actions),
            tags={"Name": f"{name}-capacity-shortfall", **args.tags},
            opts=self.child,
        )
        alarms: dict[str, Any] = {"shortfall": shortfall}
        # EC2 Auto Scaling's event for a refused launch (source aws.autoscaling, detail-type "EC2 Instance
        # Launch Unsuccessful", detail.AutoScalingGroupName; read 2026-11-25 at
        # https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-event-reference.html).
        rule = aws.cloudwatch.EventRule(
            f"{name}-launch-failed",
            description=f"{name}: a launch of the group failed (capacity, quota, reservation)",
            event_pattern=group.name.apply(
                lambda group_name: json.dumps(
                    {
                        "source": ["aws.autoscaling"],
                        "detail-type": ["EC2 Instance Launch Unsuccessful"],
                        "detail": {"AutoScalingGroupName": [group_name]},
                    }
                )
            ),
            tags={"Name": f"{name}-launch-failed", **args.tags},
            opts=self.child,
        )
        alarms["launch_failed_rule"] = rule
        # The topic's policy must let events.amazonaws.com publish (the pool does not own the topics).
        for i, topic in enumerate(args.alarm_actions):
            aws.cloudwatch.EventTarget(
                f"{name}-launch-failed-{i}", rule=rule.name, arn=topic, opts=self.child
            )
        return alarms

    def lifecycle_policy(self, role: aws.iam.Role, group: aws.autoscaling.Group) -> aws.iam.RolePolicy:
        """The node completes its own launch action, on its own group only."""
        return aws.iam.RolePolicy(
            f"{self.name}-lifecycle",
            role=role.id,
            policy=pulumi.Output.json_dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "CompleteOwnLaunch",
                            "Effect": "Allow",
                            # Heartbeats keep the launch open while the engines load (serving_load.py).
                            "Action": [
                                "autoscaling:CompleteLifecycleAction",
                                "autoscaling:RecordLifecycleActionHeartbeat",
                            ],
                            "Resource": group.arn,
                        }
                    ],
                }
            ),
            opts=self.child,
        )


def serving_load_statement(pool: str) -> dict[str, Any]:
    """The node may publish its own pool's load signal: that pool's namespace only (module doc)."""
    return {
        "Sid": "ServingLoadMetric",
        "Effect": "Allow",
        "Action": "cloudwatch:PutMetricData",
        "Resource": "*",
        "Condition": {"StringEquals": {"cloudwatch:namespace": load_namespace(pool)}},
    }
