"""Elastic AWS pools: an Auto Scaling group from the pool's launch template, scaled on its engines' load.

Every resource the elastic path registers, asserted on the inputs the engine receives (mock runtime), and
every refusal; failure modes: a scale-out refused for capacity falls back along the capacity order and
alarms, an empty warm pool still scales from cold, a budget lowers the maximum.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from inference_infra.components.aws import (
    GpuFleet,
    GpuFleetArgs,
    InferenceEndpoint,
    InferenceEndpointArgs,
    InferentiaFleet,
    InferentiaFleetArgs,
    S3Weights,
)
from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.api_rules import metric_alarm_problems, scaling_policy_problems
from inference_infra.components.aws.capacity import CapacityBlock, NewCapacityReservation
from inference_infra.components.aws.elastic_group import LAUNCH_HOOK, scale_in_expression
from inference_infra.components.endpoints import PoolWeight, Route
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ElasticArgs, ScheduleArgs, ServedModel
from inference_infra.components.fleet import elastic as el

PIN = "ab" * 32
GROUP = "aws:autoscaling/group:Group"
POLICY = "aws:autoscaling/policy:Policy"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
TG = "aws:lb/targetGroup:TargetGroup"
TG_ATTACHMENT = "aws:lb/targetGroupAttachment:TargetGroupAttachment"
SOURCE = "aws:autoscaling/trafficSourceAttachment:TrafficSourceAttachment"
TOPIC = "arn:aws:sns:us-east-1:123456789012:oncall"
LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=4)
LLAMA_70B = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64)
WEIGHTS = S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256=PIN)


def _fleet(fleet_args, name: str = "llama-8b", **overrides) -> GpuFleet:
    values = {
        "instance_type": "g6.xlarge",
        "spot": 0,
        "on_demand": 4,
        "model": LLAMA_8B,
        "weights": WEIGHTS,
        "elastic": ElasticArgs(),
        "alarm_actions": [TOPIC],
    }
    return GpuFleet(name, fleet_args(GpuFleetArgs, **(values | overrides)))


def _user_data(template) -> str:
    return boot.decode_user_data(template.props["userData"])


# -- the group ---------------------------------------------------------------------------------------------


def test_elastic_pool_is_a_group_from_the_launch_template(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet)
    assert capture.of_type(INSTANCE) == []
    group = capture.one(GROUP).props
    plan = fleet.scaling_plan
    assert (group["minSize"], group["maxSize"], group["desiredCapacity"]) == (1, 4, 1)  # 25% of 4, peak
    assert (plan.min_size, plan.max_size) == (1, 4)
    assert set(group["launchTemplate"]) == {"id", "version"}
    assert group["vpcZoneIdentifiers"] == ["subnet-0a", "subnet-0b"]
    assert group["healthCheckType"] == "ELB"
    assert group["healthCheckGracePeriod"] == fleet.cold_start.grace_seconds() == plan.warmup_seconds
    # the warm-up is the slow start after InService (the node completes its launch hook once its engines
    # answer), not the grace: a machine in warm-up blocks every dynamic scale-in (issue #39)
    expected = fleet.cold_start.slow_start_seconds()
    assert group["defaultInstanceWarmup"] == plan.instance_warmup_seconds == expected
    assert expected < plan.warmup_seconds
    assert group["instanceMaintenancePolicy"] == {"minHealthyPercentage": 100, "maxHealthyPercentage": 200}
    assert group["waitForCapacityTimeout"] == "0"
    assert group["defaultCooldown"] == plan.scale_out_cooldown_seconds == 60
    assert "GroupInServiceInstances" in group["enabledMetrics"]
    assert "mixedInstancesPolicy" not in group


def test_elastic_pool_lifecycle_hooks_on_launch_and_termination(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    hooks = {h["name"]: h for h in plan_of(fleet).one(GROUP).props["initialLifecycleHooks"]}
    launch, drained = hooks[LAUNCH_HOOK], hooks["drained"]
    assert launch["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_LAUNCHING"
    assert launch["defaultResult"] == "ABANDON"  # weights never verified: replaced, not kept
    assert launch["heartbeatTimeout"] == fleet.scaling_plan.warmup_seconds
    assert drained["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING"
    assert drained["defaultResult"] == "CONTINUE"


def test_elastic_pool_has_no_warm_pool_by_default_when_a_restart_saves_under_half(plan_of, fleet_args):
    # g6.xlarge: 15 GiB from S3 at 10 Gbit/s x 60%; a restart reads it back twice from gp3 at 1,000 MiB/s
    # and skips the first boot: faster, but not half the cold start (fleet.elastic.WARM_POOL_MAX_START_SHARE)
    fleet = _fleet(fleet_args, root_volume_gib=150)
    group = plan_of(fleet).one(GROUP).props
    assert fleet.scaling_plan.warm_start_seconds < fleet.cold_start.seconds
    assert fleet.scaling_plan.warm_pool_size == 0
    assert "warmPool" not in group or not group["warmPool"]
    assert any("not at most 50% of a cold start" in note for note in fleet.scaling_plan.notes)


def test_elastic_pool_warm_pool_of_stopped_machines_with_weights_on_ebs(plan_of, fleet_args):
    fleet = _fleet(fleet_args, root_volume_gib=150, elastic=ElasticArgs(warm_pool_size=3))
    capture = plan_of(fleet)
    plan = fleet.scaling_plan
    assert plan.warm_pool_size == 3
    warm = capture.one(GROUP).props["warmPool"]
    assert warm == {
        "poolState": "Stopped",
        "minSize": 3,
        "maxGroupPreparedCapacity": 4,
        "instanceReusePolicy": {"reuseOnScaleIn": True},
    }
    template = capture.one(TEMPLATE)
    ebs = template.props["blockDeviceMappings"][0]["ebs"]
    assert (ebs["volumeType"], ebs["throughput"], ebs["iops"]) == ("gp3", 1000, 6000)
    assert ebs["throughput"] <= 0.25 * ebs["iops"]  # gp3's throughput per IOPS
    user_data = _user_data(template)
    # The cache stays on the root volume (0 instance-store disks), which survives the stop.
    assert "nvme-cache.sh /opt/models 0" in user_data


def test_elastic_pool_without_warm_pool_keeps_instance_store_cache(plan_of, fleet_args):
    fleet = _fleet(fleet_args, elastic=ElasticArgs(warm_pool_size=0))
    capture = plan_of(fleet)
    assert "warmPool" not in capture.one(GROUP).props
    ebs = capture.one(TEMPLATE).props["blockDeviceMappings"][0]["ebs"]
    assert ebs["throughput"] == 500
    assert "nvme-cache.sh /opt/models 1" in _user_data(capture.one(TEMPLATE))


def test_elastic_pool_empty_warm_pool_still_scales_from_cold(plan_of, fleet_args):
    """A scale-out that finds the warm pool empty launches cold: nothing on the group is sized for the
    warm start only, so a cold machine is neither abandoned nor marked unhealthy before it serves."""
    fleet = _fleet(fleet_args, root_volume_gib=150)
    group = plan_of(fleet).one(GROUP).props
    cold = fleet.cold_start.seconds
    hooks = {h["name"]: h for h in group["initialLifecycleHooks"]}
    assert hooks[LAUNCH_HOOK]["heartbeatTimeout"] >= cold
    assert group["healthCheckGracePeriod"] >= cold
    assert group["maxSize"] > group["minSize"]
    assert fleet.scaling_plan.warmup_seconds >= cold > fleet.scaling_plan.warm_start_seconds


def test_elastic_pool_user_data_publishes_its_load_and_completes_the_launch(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet)
    user_data = _user_data(capture.one(TEMPLATE))
    assert "inference-serving-load.service" in user_data
    # Completed once the engines answer, within three cold-start graces (heartbeats until then).
    deadline = 3 * fleet.scaling_plan.warmup_seconds
    assert f"--complete-launch {LAUNCH_HOOK} --launch-deadline {deadline}" in user_data
    assert "serving_load.py --ports 8000 " in user_data


def test_fixed_pool_user_data_has_no_load_signal(plan_of, fleet_args):
    capture = plan_of(_fleet(fleet_args, elastic=None))
    assert "serving-load" not in _user_data(capture.one(TEMPLATE))
    assert capture.of_type(GROUP) == []
    assert len(capture.of_type(INSTANCE)) == 4


# -- the load signal and the policies -----------------------------------------------------------------------


def test_elastic_pool_tracks_in_flight_requests_per_machine(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet)
    policies = {p.name: p.props for p in capture.of_type(POLICY)}
    tracking = policies["llama-8b-track-load"]
    assert tracking["policyType"] == "TargetTrackingScaling"
    assert tracking["estimatedInstanceWarmup"] == fleet.scaling_plan.instance_warmup_seconds
    assert fleet.scaling_plan.instance_warmup_seconds < fleet.scaling_plan.warmup_seconds  # not the grace
    config = tracking["targetTrackingConfiguration"]
    engines = fleet.engines
    assert config["targetValue"] == pytest.approx(engines.engines * engines.max_num_seqs * 0.7)
    assert config["disableScaleIn"] is True
    metric = config["customizedMetricSpecification"]
    assert (metric["namespace"], metric["metricName"], metric["statistic"]) == (
        "InferenceInfra/Serving/llama-8b",  # the pool's own namespace, the one its role may publish to
        "InFlightRequests",
        "Average",
    )
    assert [d["name"] for d in metric["metricDimensions"]] == ["AutoScalingGroupName"]


def test_elastic_pool_scales_in_one_machine_per_cooldown(plan_of, fleet_args):
    fleet = _fleet(
        fleet_args,
        elastic=ElasticArgs(scale_in_cooldown_seconds=1200, scale_in_share=0, scale_in_sizing="share"),
    )
    capture = plan_of(fleet)
    scale_in = capture.one(POLICY, "llama-8b-scale-in").props
    assert (scale_in["policyType"], scale_in["scalingAdjustment"], scale_in["cooldown"]) == (
        "SimpleScaling",
        -1,
        1200,
    )
    alarm = capture.one(ALARM, "llama-8b-low-load").props
    assert alarm["evaluationPeriods"] == alarm["datapointsToAlarm"] == 20  # 1,200 s of quiet minutes
    assert alarm["comparisonOperator"] == "LessThanThreshold"
    assert alarm["treatMissingData"] == "notBreaching"
    expression = next(q["expression"] for q in alarm["metricQueries"] if q["id"] == "e1")
    assert expression == scale_in_expression(fleet.scaling_plan.target_in_flight)[0]
    assert alarm["threshold"] == pytest.approx(fleet.scaling_plan.target_in_flight * 0.8, abs=0.01)


def test_elastic_pool_scales_in_its_share_of_the_group_when_the_rest_would_stay_quiet(plan_of, fleet_args):
    fleet = _fleet(
        fleet_args,
        elastic=ElasticArgs(scale_in_cooldown_seconds=300, scale_in_share=0.25, scale_in_sizing="share"),
    )
    capture = plan_of(fleet)
    scale_in = capture.one(POLICY, "llama-8b-scale-in").props
    assert {
        k: scale_in.get(k) for k in ("policyType", "adjustmentType", "scalingAdjustment", "cooldown")
    } == {
        "policyType": "SimpleScaling",
        "adjustmentType": "PercentChangeInCapacity",
        "scalingAdjustment": -25,
        "cooldown": 300,
    }
    assert scale_in["minAdjustmentMagnitude"] == 1  # at least one machine, as the replay's step
    alarm = capture.one(ALARM, "llama-8b-low-load").props
    expression = next(q["expression"] for q in alarm["metricQueries"] if q["id"] == "e1")
    assert expression == scale_in_expression(fleet.scaling_plan.target_in_flight, percent=25)[0]
    assert alarm["evaluationPeriods"] == 5


def test_scale_in_expression_divides_the_load_by_the_machines_a_share_leaves():
    expression, threshold = scale_in_expression(10.0, percent=25)
    assert expression == (
        "IF(m2 > 1, m1 * m2 / (m2 - IF(FLOOR(m2 * 0.25) > 1, FLOOR(m2 * 0.25), 1)), IF(m1 > 0, 10000, 0))"
    )
    assert threshold == 8.0


def test_scale_in_expression_is_the_load_per_machine_with_one_fewer():
    expression, threshold = scale_in_expression(10.0)
    assert expression == "IF(m2 > 1, m1 * m2 / (m2 - 1), IF(m1 > 0, 10000, 0))"
    assert threshold == 8.0


def test_elastic_pool_node_may_publish_only_its_own_pools_load(plan_of, fleet_args):
    # IAM's one condition key on cloudwatch:PutMetricData is cloudwatch:namespace (CloudWatch guide,
    # "Using condition keys to limit access to CloudWatch namespaces"): a namespace per pool, so the 8b
    # pool's nodes cannot publish the 70b pool's load (and scale it, or hold it up).
    _fleet(fleet_args)
    _fleet(fleet_args, name="llama-70b")
    capture = plan_of()
    conditions = {}
    for pool in ("llama-8b", "llama-70b"):
        node = json.loads(capture.one(ROLE_POLICY, f"{pool}-node").props["policy"])
        load = next(s for s in node["Statement"] if s["Sid"] == "ServingLoadMetric")
        assert load["Action"] == "cloudwatch:PutMetricData"
        conditions[pool] = load["Condition"]
        tracking = capture.one(POLICY, f"{pool}-track-load").props["targetTrackingConfiguration"]
        namespace = tracking["customizedMetricSpecification"]["namespace"]
        assert conditions[pool] == {"StringEquals": {"cloudwatch:namespace": namespace}}
        # The node publishes there (its unit's --namespace), and nowhere else.
        user_data = _user_data(capture.one(TEMPLATE, f"{pool}-lt"))
        assert f"--namespace {namespace}" in user_data
    assert conditions["llama-8b"] != conditions["llama-70b"]
    lifecycle = json.loads(capture.one(ROLE_POLICY, "llama-8b-lifecycle").props["policy"])
    assert lifecycle["Statement"][0]["Action"] == [
        "autoscaling:CompleteLifecycleAction",
        "autoscaling:RecordLifecycleActionHeartbeat",  # the hook stays open while the engines load
    ]


# -- capacity order, spot, reservations, failure modes ------------------------------------------------------


def test_elastic_spot_pool_mixes_instances_in_capacity_order_with_rebalance(plan_of, fleet_args):
    fleet = _fleet(
        fleet_args,
        instance_type="g5.xlarge",
        spot=6,
        on_demand=1,
        spot_instance_types=["g5.2xlarge", "g5.4xlarge"],
    )
    group = plan_of(fleet).one(GROUP).props
    assert group["capacityRebalance"] is True
    assert "warmPool" not in group  # AWS refuses it here
    assert "launchTemplate" not in group
    policy = group["mixedInstancesPolicy"]
    overrides = [o["instanceType"] for o in policy["launchTemplate"]["overrides"]]
    assert overrides == ["g5.xlarge", "g5.2xlarge", "g5.4xlarge"]  # the fallback order
    assert policy["instancesDistribution"] == {
        "onDemandBaseCapacity": 1,
        "onDemandPercentageAboveBaseCapacity": 0,
        "onDemandAllocationStrategy": "prioritized",
        "spotAllocationStrategy": "capacity-optimized-prioritized",
    }
    assert fleet.scaling_plan.warm_pool_size == 0


def test_elastic_pool_alarms_when_launches_are_refused(plan_of, fleet_args):
    capture = plan_of(_fleet(fleet_args))
    shortfall = capture.one(ALARM, "llama-8b-capacity-shortfall").props
    assert shortfall["alarmActions"] == [TOPIC]
    queries = {q["id"]: q for q in shortfall["metricQueries"]}
    assert queries["short"]["expression"] == "desired - serving - pending"
    assert queries["desired"]["metric"]["metricName"] == "GroupDesiredCapacity"
    rule = capture.one(RULE, "llama-8b-launch-failed").props
    pattern = json.loads(rule["eventPattern"])
    assert pattern["source"] == ["aws.autoscaling"]
    assert pattern["detail-type"] == ["EC2 Instance Launch Unsuccessful"]
    assert list(pattern["detail"]) == ["AutoScalingGroupName"]
    assert capture.one(TARGET).props["arn"] == TOPIC


def test_elastic_reserved_pool_launches_into_its_reservation_first(plan_of, fleet_args):
    fleet = _fleet(
        fleet_args,
        instance_type="p5.48xlarge",
        model=LLAMA_70B,
        on_demand=1,
        reserved=2,
        reservation=NewCapacityReservation(availability_zone="us-east-1a", instance_count=2),
        root_volume_gib=300,
    )
    group = plan_of(fleet).one(GROUP).props
    spec = group["capacityReservationSpecification"]
    assert spec["capacityReservationPreference"] == "capacity-reservations-first"
    assert len(spec["capacityReservationTarget"]["capacityReservationIds"]) == 1
    assert group["vpcZoneIdentifiers"] == ["subnet-0a"]  # the reservation's zone
    assert fleet.scaling_plan.min_size == 2  # the reserved machines are billed anyway
    # p5: S3 at 100 Gbit/s is faster than reading 131 GiB back from gp3 twice: no warm pool by default.
    assert fleet.scaling_plan.warm_pool_size == 0
    assert any("no warm pool" in note for note in fleet.scaling_plan.notes)


def test_elastic_pool_budget_lowers_the_default_maximum_with_a_note(plan_of, fleet_args):
    # g6.xlarge at $0.8048/h on-demand (catalog): $2.50 pays for 3 of the 4-machine peak.
    fleet = _fleet(fleet_args, budget_hourly_usd=2.5)
    capture = plan_of(fleet)
    assert capture.one(GROUP).props["maxSize"] == fleet.scaling_plan.max_size == 3
    assert any("budget" in note for note in fleet.scaling_plan.notes)


def test_elastic_pool_budget_keeps_an_explicit_maximum(plan_of, fleet_args):
    fleet = _fleet(fleet_args, budget_hourly_usd=2.5, elastic=ElasticArgs(max_size=4))
    assert plan_of(fleet).one(GROUP).props["maxSize"] == 4


def test_elastic_inferentia_pool_is_a_group_too(plan_of, fleet_args):
    fleet = InferentiaFleet(
        "inf2-llama-8b",
        fleet_args(
            InferentiaFleetArgs,
            instance_type="inf2.8xlarge",
            spot=0,
            on_demand=2,
            model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=4),
            weights=WEIGHTS,
            elastic=ElasticArgs(min_size=1),
        ),
    )
    group = plan_of(fleet).one(GROUP).props
    assert (group["minSize"], group["maxSize"]) == (1, 2)
    # Without precompiled artifacts every new machine compiles (10..40 min): a warm machine kept them on
    # its root volume, so a warm start is under half the cold start and the pool keeps a warm machine
    assert fleet.scaling_plan.warm_start_seconds * 2 <= fleet.cold_start.seconds
    assert fleet.scaling_plan.warm_pool_size == 1


def test_elastic_inferentia_pool_with_precompiled_artifacts_has_no_warm_pool(plan_of, fleet_args):
    fleet = InferentiaFleet(
        "inf2-llama-8b",
        fleet_args(
            InferentiaFleetArgs,
            instance_type="inf2.8xlarge",
            spot=0,
            on_demand=2,
            model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=4),
            weights=dataclasses.replace(WEIGHTS, neuron_precompiled=True),
            elastic=ElasticArgs(min_size=1),
        ),
    )
    # Precompiled: the Neuron load is minutes either way; a restart is faster, but not half the cold start
    assert fleet.scaling_plan.warm_pool_size == 0
    assert fleet.scaling_plan.warm_start_seconds < fleet.cold_start.seconds


# -- rejections ---------------------------------------------------------------------------------------------


def test_elastic_pool_rejects_warm_pool_on_spot(plan_of, fleet_args):
    with pytest.raises(InputError, match=r"elastic.warm_pool_size 2 is refused on a pool with spot"):
        _fleet(fleet_args, spot=3, on_demand=0, elastic=ElasticArgs(warm_pool_size=2))
    assert plan_of().of_type(GROUP) == []


def test_elastic_pool_rejects_min_above_max(fleet_args):
    with pytest.raises(InputError, match=r"elastic.min_size 5 gives a minimum of 5 machines above the max"):
        _fleet(fleet_args, elastic=ElasticArgs(min_size=5, max_size=3))


def test_elastic_pool_rejects_no_model(fleet_args):
    with pytest.raises(InputError, match=r"elastic 'set' needs model=ServedModel"):
        _fleet(fleet_args, model=None, instance_type="g6.xlarge")


def test_elastic_pool_rejects_small_root_volume_for_its_warm_pool(fleet_args):
    with pytest.raises(InputError, match=r"root_volume_gib 100 must be at least 130 GiB with a warm pool"):
        _fleet(fleet_args, root_volume_gib=100, elastic=ElasticArgs(warm_pool_size=1))


def test_elastic_pool_default_warm_pool_off_when_root_volume_is_small(plan_of, fleet_args):
    fleet = _fleet(fleet_args, root_volume_gib=100)
    assert fleet.scaling_plan.warm_pool_size == 0


def test_elastic_pool_rejects_nonpositive_budget(fleet_args):
    with pytest.raises(InputError, match=r"budget_hourly_usd 0 must be more than 0"):
        _fleet(fleet_args, budget_hourly_usd=0)


# -- the endpoint attaches the group ----------------------------------------------------------------------


def test_endpoint_attaches_an_elastic_pool_per_engine_port(plan_of, fleet_args):
    fleet = _fleet(fleet_args, name="llama-70b", instance_type="p5.48xlarge", model=LLAMA_70B, on_demand=2)
    pool = fleet.endpoint_pool()
    assert pool.instance_ids == ()
    assert pool.deregistration_delay_seconds == fleet.scaling_plan.deregistration_delay_seconds
    endpoint = InferenceEndpoint(
        "llm",
        InferenceEndpointArgs(
            vpc_id="vpc-0test",
            subnet_ids=["subnet-0a", "subnet-0b"],
            pools=[pool],
            routes=[Route(pools=[PoolWeight("llama-70b")])],
            client_cidr_blocks=["10.0.0.0/16"],
        ),
    )
    capture = plan_of(fleet, endpoint)
    groups = capture.of_type(TG)
    assert sorted(g.props["port"] for g in groups) == [8000, 8001]
    delay = fleet.scaling_plan.deregistration_delay_seconds
    assert {g.props["deregistrationDelay"] for g in groups} == {delay}
    assert 0 < delay <= 3600
    attachments = capture.of_type(SOURCE)
    assert len(attachments) == 2
    assert {a.props["trafficSource"]["type"] for a in attachments} == {"elbv2"}
    assert capture.of_type(TG_ATTACHMENT) == []
    assert len(endpoint.pool_target_group_arns["llama-70b"]) == 2


def _block(**overrides) -> CapacityBlock:
    values = {
        "availability_zone": "us-east-1a",
        "instance_count": 2,
        "duration_hours": 72,
        "start_date_range": "2026-12-01T00:00:00Z",
        "end_date_range": "2026-12-15T00:00:00Z",
        "purchase": True,
    }
    return CapacityBlock(**{**values, **overrides})


def test_elastic_capacity_block_pool_launches_into_the_block_only(plan_of, fleet_args):
    fleet = _fleet(
        fleet_args,
        name="burst",
        instance_type="p5.48xlarge",
        model=LLAMA_70B,
        on_demand=0,
        reserved=2,
        reservation=_block(),
        root_volume_gib=300,
    )
    capture = plan_of(fleet)
    template = capture.one(TEMPLATE).props
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    spec = capture.one(GROUP).props["capacityReservationSpecification"]
    assert spec["capacityReservationPreference"] == "capacity-reservations-only"
    assert fleet.scaling_plan.min_size == 2


def test_elastic_capacity_block_pool_rejects_other_modes(fleet_args):
    with pytest.raises(InputError, match=r"with a Capacity Block launches into the block only"):
        _fleet(
            fleet_args,
            name="burst",
            instance_type="p5.48xlarge",
            model=LLAMA_70B,
            on_demand=1,
            reserved=2,
            reservation=_block(),
            root_volume_gib=300,
        )


def test_elastic_pool_template_sets_no_public_ip_on_its_interface(plan_of, fleet_args):
    template = plan_of(_fleet(fleet_args)).one(TEMPLATE).props
    (interface,) = template["networkInterfaces"]
    assert interface["associatePublicIpAddress"] == "false"
    assert "vpcSecurityGroupIds" not in template


# -- rolling updates, hooks on existing groups, working hours (issue #38 items 3, 5, 8) ---------------------

HOOK = "aws:autoscaling/lifecycleHook:LifecycleHook"
SCHEDULE = "aws:autoscaling/schedule:Schedule"


def test_elastic_pool_rolls_template_changes_with_an_instance_refresh(plan_of, fleet_args):
    fleet = _fleet(fleet_args, root_volume_gib=150, elastic=ElasticArgs(warm_pool_size=3))
    group = plan_of(fleet).one(GROUP).props
    # group.go: a launch_template change always triggers the refresh (no triggers needed); preferences
    # min 0..100 and max 100..200, at most 100 apart: launch the replacement, then retire the old one.
    assert group["instanceRefresh"] == {
        "strategy": "Rolling",
        "preferences": {
            "minHealthyPercentage": 100,
            "maxHealthyPercentage": 200,
            "instanceWarmup": str(fleet.scaling_plan.warmup_seconds),
            "skipMatching": True,
        },
    }
    assert "warmPool" in group  # the refresh replaces the warm pool's machines too (its WarmPoolProgress)


def test_elastic_pool_hooks_reach_an_existing_group_as_resources(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet)
    group = capture.one(GROUP)
    hooks = {h.props["name"]: h.props for h in capture.of_type(HOOK)}
    assert set(hooks) == {LAUNCH_HOOK, "drained"}
    initial = {h["name"]: h for h in group.props["initialLifecycleHooks"]}
    # The same hooks as the group's initial ones (ForceNew in group.go: kept for the first machines,
    # their later changes ignored): PutLifecycleHook updates them on a group that already exists.
    for hook_name, hook in hooks.items():
        assert {k: hook[k] for k in initial[hook_name]} == initial[hook_name]
    assert hooks[LAUNCH_HOOK]["heartbeatTimeout"] == fleet.scaling_plan.warmup_seconds
    assert hooks[LAUNCH_HOOK]["defaultResult"] == "ABANDON"


def test_elastic_pool_with_a_schedule_makes_its_own_scheduled_actions(plan_of, fleet_args):
    schedule = ScheduleArgs(time_zone="Europe/Berlin", start_hour=8, end_hour=19)
    fleet = _fleet(fleet_args, elastic=ElasticArgs(min_size=0, schedule=schedule))
    capture = plan_of(fleet)
    actions = {a.props["scheduledActionName"]: a.props for a in capture.of_type(SCHEDULE)}
    assert len(actions) == 2
    assert sorted((a["recurrence"], a["minSize"], a["desiredCapacity"]) for a in actions.values()) == [
        ("0 19 * * 1,2,3,4,5", 0, 0),
        ("0 8 * * 1,2,3,4,5", 1, 1),
    ]
    assert all(a["timeZone"] == "Europe/Berlin" for a in actions.values())
    # Working hours keep one machine (min_size 0 asked): back from zero needs a load signal.
    assert fleet.scaling_plan.min_size == 1
    assert capture.one(GROUP).props["minSize"] == 1
    assert any("working-hours minimum 1" in n for n in fleet.scaling_plan.notes)


def test_elastic_pool_without_a_schedule_has_no_scheduled_actions(plan_of, fleet_args):
    assert plan_of(_fleet(fleet_args)).of_type(SCHEDULE) == []


def test_elastic_pool_rejects_min_zero_without_a_schedule(fleet_args):
    with pytest.raises(InputError, match=r"elastic.min_size 0 must be at least 1 without a schedule"):
        _fleet(fleet_args, elastic=ElasticArgs(min_size=0))


def test_elastic_pool_scales_out_fast_on_one_datapoint_with_steps_sized_to_the_excess(plan_of, fleet_args):
    fleet = _fleet(fleet_args, elastic=ElasticArgs(fast_scale_out_ratio=1.2))
    plan = fleet.scaling_plan
    capture = plan_of(fleet)
    policy = capture.one(POLICY, "llama-8b-fast-scale-out").props
    assert {
        k: policy.get(k)
        for k in (
            "policyType",
            "adjustmentType",
            "minAdjustmentMagnitude",
            "metricAggregationType",
            "estimatedInstanceWarmup",
        )
    } == {
        "policyType": "StepScaling",
        "adjustmentType": "PercentChangeInCapacity",
        "minAdjustmentMagnitude": 1,
        "metricAggregationType": "Average",
        # the expected InService-to-serving time: machines starting count, and no longer than that
        "estimatedInstanceWarmup": plan.instance_warmup_seconds,
    }
    assert "cooldown" not in policy  # SimpleScaling's only (terraform-provider-aws policy.go)
    # the rendered steps are the plan's, the ones the replay reads (bounds as the provider's strings)
    rendered = sorted(
        (
            float(s["metricIntervalLowerBound"]),
            float(s["metricIntervalUpperBound"]) if s.get("metricIntervalUpperBound") else None,
            s["scalingAdjustment"],
        )
        for s in policy["stepAdjustments"]
    )
    assert rendered == [(s.lower, s.upper, s.percent) for s in plan.fast_scale_out_steps]
    assert rendered[0][0] == 0.0
    assert rendered[-1][1:] == (None, 100)
    alarm = capture.one(ALARM, "llama-8b-high-load").props
    assert (alarm["evaluationPeriods"], alarm["datapointsToAlarm"], alarm["period"]) == (1, 1, 60)
    assert (alarm["comparisonOperator"], alarm["statistic"], alarm["metricName"]) == (
        "GreaterThanOrEqualToThreshold",
        "Average",
        "InFlightRequests",
    )
    assert alarm["namespace"] == "InferenceInfra/Serving/llama-8b"  # the target tracking's metric
    assert alarm["threshold"] == pytest.approx(plan.target_in_flight * 1.2, abs=0.01)
    assert alarm["threshold"] == plan.fast_scale_out_threshold


def test_elastic_pool_without_a_fast_step_keeps_target_tracking_alone(plan_of, fleet_args):
    capture = plan_of(_fleet(fleet_args, elastic=ElasticArgs(fast_scale_out_ratio=0)))
    names = {p.name for p in capture.of_type(POLICY)}
    assert names == {"llama-8b-track-load", "llama-8b-scale-in"}
    assert "llama-8b-high-load" not in {a.name for a in capture.of_type(ALARM)}


def test_elastic_pool_rejects_a_fast_step_below_the_target(fleet_args):
    with pytest.raises(InputError, match=r"fast_scale_out_ratio.*0\.5.*0 \(off\) or 1 to 2"):
        _fleet(fleet_args, elastic=ElasticArgs(fast_scale_out_ratio=0.5))


def test_elastic_pool_scales_in_by_steps_sized_to_the_deficit(plan_of, fleet_args):
    fleet = _fleet(fleet_args, elastic=ElasticArgs(scale_in_sizing="deficit", scale_in_cooldown_seconds=180))
    plan = fleet.scaling_plan
    capture = plan_of(fleet)
    policy = capture.one(POLICY, "llama-8b-scale-in").props
    assert {
        k: policy.get(k)
        for k in ("policyType", "adjustmentType", "minAdjustmentMagnitude", "metricAggregationType")
    } == {
        "policyType": "StepScaling",
        "adjustmentType": "PercentChangeInCapacity",
        "minAdjustmentMagnitude": 1,  # a breach always lets one machine go, as the alarm's metric allows
        "metricAggregationType": "Average",
    }
    # no cooldown (SimpleScaling's only) and no warm-up of its own (the group's default holds scale-in)
    assert "cooldown" not in policy
    assert "estimatedInstanceWarmup" not in policy
    assert "scalingAdjustment" not in policy  # conflicts with step_adjustment (policy.go)
    # the rendered steps are the plan's, the ones the replay reads (bounds as the provider's strings)
    rendered = {
        (
            float(s["metricIntervalLowerBound"]) if s.get("metricIntervalLowerBound") else None,
            float(s["metricIntervalUpperBound"]),
            s["scalingAdjustment"],
        )
        for s in policy["stepAdjustments"]
    }
    assert rendered == {(s.lower, s.upper, s.percent) for s in plan.scale_in_steps}
    assert len(policy["stepAdjustments"]) == len(plan.scale_in_steps)
    assert plan.scale_in_steps == el.deficit_steps(0.8, plan.target_in_flight)[1]
    assert scaling_policy_problems(policy) == []
    alarm = capture.one(ALARM, "llama-8b-low-load").props
    # the load were ONE machine gone: any breach lets at least one go; the steps size the rest
    expression = next(q["expression"] for q in alarm["metricQueries"] if q["id"] == "e1")
    assert expression == scale_in_expression(plan.target_in_flight)[0]
    assert alarm["threshold"] == plan.scale_in_threshold
    assert alarm["evaluationPeriods"] == alarm["datapointsToAlarm"] == 3  # 180 s of quiet minutes
    assert alarm["comparisonOperator"] == "LessThanThreshold"
    assert metric_alarm_problems(alarm) == []
