"""nonprod-accelerators-spot-or-autoshutdown: outside prod, spot or AutoShutdown=true."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE as WIRE_UNKNOWN

from inference_infra.policy.rules import nonprod_accelerators_spot_or_autoshutdown as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GCE = "gcp:compute/instance:Instance"
TPU = "gcp:tpu/v2Vm:V2Vm"
DEV = {"Environment": "dev"}
GROUP_TAIL = (
    "outside production buy spot (a mixed-instances policy with no on-demand share), give the group a "
    "minimum of 0, or a scheduled action that takes it to 0 outside working hours (the idle watchdog "
    "leaves a group's instances alone)."
)
TAIL = "outside production use spot capacity or set the tag so the idle watchdog can stop it."


def test_nonprod_passes_spot_and_auto_shutdown_machines(check):
    spot = {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}, "tags": DEV}
    assert check(rule, INSTANCE, spot) == Outcome()
    tagged = {"instanceType": "g5.xlarge", "tags": {**DEV, "AutoShutdown": "true"}}
    assert check(rule, INSTANCE, tagged) == Outcome()
    preemptible = {"machineType": "g2-standard-4", "scheduling": {"provisioningModel": "SPOT"}}
    assert check(rule, GCE, preemptible, {"environment": "dev"}) == Outcome()
    tpu = {"acceleratorType": "v5litepod-4", "labels": {"environment": "dev", "auto-shutdown": "true"}}
    assert check(rule, TPU, tpu) == Outcome()


def test_nonprod_rejects_on_demand_machines_without_auto_shutdown(check):
    outcome = check(
        rule, INSTANCE, {"instanceType": "p5.48xlarge", "tags": {**DEV, "AutoShutdown": "false"}}, name="gpu"
    )
    assert outcome.violations == (
        "aws:ec2/instance:Instance 'gpu' runs p5.48xlarge on on-demand capacity in environment 'dev' without "
        f"the tag AutoShutdown=true; {TAIL}",
    )
    vm = {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 1}]}
    assert check(rule, GCE, vm, {"environment": "staging"}, name="vm").violations == (
        "gcp:compute/instance:Instance 'vm' runs n1-standard-8 + 1 x nvidia-tesla-t4 on on-demand "
        "capacity in "
        "environment 'staging' without the label auto-shutdown=true; outside production use spot capacity or "
        "set the label so the idle watchdog can stop it.",
    )


def test_nonprod_treats_a_resource_without_environment_as_non_production(check):
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge"}, name="gpu").violations == (
        "aws:ec2/instance:Instance 'gpu' runs g5.xlarge on on-demand capacity in an environment with no "
        f"Environment tag without the tag AutoShutdown=true; {TAIL}",
    )


def test_nonprod_reads_a_launch_templates_instance_tags(check):
    market = {"marketType": "capacity-block"}
    template = {
        "instanceType": "g6.xlarge",
        "instanceMarketOptions": market,
        "tags": {**DEV, "AutoShutdown": "true"},
    }
    assert check(rule, TEMPLATE, template, name="lt").violations == (
        "aws:ec2/launchTemplate:LaunchTemplate 'lt' runs g6.xlarge on capacity-block capacity in environment "
        "'dev' "
        f"without the tag AutoShutdown=true; {TAIL}",
    )
    specs = [{"resourceType": "instance", "tags": {"AutoShutdown": "true"}}]
    assert check(rule, TEMPLATE, {**template, "tagSpecifications": specs}) == Outcome()


def test_nonprod_leaves_a_template_naming_no_market_to_its_launchers(check):
    template = {"instanceType": "g6.xlarge", "tags": DEV}
    assert check(rule, TEMPLATE, template, name="lt").not_applicable == (
        "a launch template that sets no market; its launchers are judged"
    )


@pytest.mark.parametrize(
    ("props", "config", "environment"),
    [({"tags": {"Environment": "prod"}}, {}, "prod"), ({}, {"environment": "production"}, "production")],
)
def test_nonprod_does_not_apply_in_production(check, props, config, environment):
    outcome = check(rule, INSTANCE, {"instanceType": "p5.48xlarge", **props}, config)
    assert outcome == Outcome(not_applicable=f"environment {environment!r} is production")


def test_nonprod_does_not_apply_to_cpu_machines(check):
    assert check(rule, INSTANCE, {"instanceType": "m5.large"}).not_applicable == (
        "applies to accelerator instances, VMs, TPU slices and the templates that launch them, and "
        "Karpenter NodePools that may launch them"
    )


def test_nonprod_does_not_judge_values_not_known_yet(check, sdk):
    props = {"instanceType": "g5.xlarge", "tags": {**DEV, "AutoShutdown": UNKNOWN}}
    assert check(rule, INSTANCE, props) == Outcome(unknown=("tags.AutoShutdown",))
    wire = {"instanceType": "g5.xlarge", "tags": {**DEV, "AutoShutdown": WIRE_UNKNOWN}}
    assert sdk(rule, INSTANCE, wire) == (
        [],
        None,
        "string value at .r.tags.AutoShutdown can't be known during preview",  # <resource>.<path>
    )


def test_nonprod_on_captured_resources(plan_of, tagged, run_pack):
    # `tagged` sets AutoShutdown=true on accelerator instances that do not set it themselves.
    aws.ec2.Instance("watched", instance_type="g5.xlarge", ami="ami-1")
    aws.ec2.Instance("opted-out", instance_type="g5.xlarge", ami="ami-1", tags={"AutoShutdown": "false"})
    gcp.compute.Instance(
        "spot-vm",
        machine_type="g2-standard-4",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12"}},
        network_interfaces=[{"network": "default"}],
        labels={"auto-shutdown": "false"},
        scheduling={"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False},
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        "aws:ec2/instance:Instance 'opted-out' runs g5.xlarge on on-demand capacity in environment 'test' "
        f"without the tag AutoShutdown=true; {TAIL}"
    ]


def _template(name: str, **extra) -> aws.ec2.LaunchTemplate:
    return aws.ec2.LaunchTemplate(name, instance_type="g6.12xlarge", image_id="ami-1", **extra)


def test_nonprod_judges_groups_by_the_template_they_launch_from(plan_of, run_pack):
    on_demand = _template("od-template", tags={"Environment": "dev"})
    aws.autoscaling.Group(
        "od-group",
        min_size=1,  # never below one machine: judged as a fixed on-demand machine
        max_size=2,
        desired_capacity=1,
        vpc_zone_identifiers=["subnet-1"],
        launch_template={"id": on_demand.id, "version": "$Latest"},
        tags=[{"key": "Environment", "value": "dev", "propagate_at_launch": True}],
    )
    spot = _template("spot-template", instance_market_options={"market_type": "spot"})
    aws.autoscaling.Group(
        "spot-group",
        min_size=0,
        max_size=2,
        vpc_zone_identifiers=["subnet-1"],
        launch_template={"name": spot.name, "version": "$Latest"},
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [(v.message, v.urn.rsplit("::", 1)[1]) for v in report.violations] == [
        (
            "aws:autoscaling/group:Group 'od-group' runs g6.12xlarge on on-demand capacity in environment "
            f"'dev' without the tag AutoShutdown=true; {GROUP_TAIL}",
            "od-group",
        )
    ]


def test_nonprod_rejects_an_instance_whose_template_sets_an_on_demand_type(plan_of, run_pack):
    template = _template("gpu-template", tag_specifications=[{"resource_type": "instance", "tags": DEV}])
    aws.ec2.Instance("from-template", launch_template={"id": template.id})
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        "aws:ec2/instance:Instance 'from-template' runs g6.12xlarge on on-demand capacity in environment "
        f"'dev' without the tag AutoShutdown=true; {TAIL}"
    ]


def test_nonprod_passes_a_group_whose_template_tags_its_instances_auto_shutdown(plan_of, run_pack):
    template = _template(
        "tagged-template",
        tag_specifications=[{"resource_type": "instance", "tags": {**DEV, "AutoShutdown": "true"}}],
    )
    aws.autoscaling.Group(
        "tagged-group",
        min_size=0,
        max_size=1,
        vpc_zone_identifiers=["subnet-1"],
        launch_template={"id": template.id},
    )
    assert run_pack(plan_of(), rule.NAME).violations == []


def _mig(name: str, template) -> None:
    gcp.compute.InstanceGroupManager(
        name, zone="us-central1-a", base_instance_name=name, target_size=2,
        versions=[{"instance_template": template.self_link}],
    )  # fmt: skip


def _gce_template(name: str, **extra):
    return gcp.compute.InstanceTemplate(
        name,
        machine_type="g2-standard-8",
        disks=[{"source_image": "debian-12", "boot": True}],
        network_interfaces=[{"network": "default"}],
        **extra,
    )


def test_nonprod_judges_managed_instance_groups_by_their_template(plan_of, run_pack):
    spot = {"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False}
    _mig("spot-mig", _gce_template("spot", scheduling=spot, labels={"environment": "dev"}))
    _mig("watched-mig", _gce_template("watched", labels={"environment": "dev", "auto-shutdown": "true"}))
    _mig("od-mig", _gce_template("od", labels={"environment": "dev"}))
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        "gcp:compute/instanceGroupManager:InstanceGroupManager 'od-mig' runs g2-standard-8 on on-demand "
        "capacity in environment 'dev' without the label auto-shutdown=true; outside production use spot "
        "capacity or set the label so the idle watchdog can stop it."
    ]


def _elastic_group(name: str, *, min_size: int, template=None) -> aws.autoscaling.Group:
    template = template or _template(f"{name}-template", tags=DEV)
    return aws.autoscaling.Group(
        name,
        min_size=min_size,
        max_size=4,
        desired_capacity=max(min_size, 1),
        vpc_zone_identifiers=["subnet-1"],
        launch_template={"id": template.id, "version": "$Latest"},
        tags=[{"key": "Environment", "value": "dev", "propagate_at_launch": True}],
    )


def test_nonprod_passes_an_on_demand_elastic_pool_whose_minimum_is_zero(plan_of, run_pack):
    _elastic_group("elastic", min_size=0)
    assert run_pack(plan_of(), rule.NAME).violations == []


def test_nonprod_passes_an_on_demand_group_scheduled_to_zero_outside_working_hours(plan_of, run_pack):
    group = _elastic_group("office-hours", min_size=1)
    aws.autoscaling.Schedule(
        "office-hours-night",
        autoscaling_group_name=group.name,
        scheduled_action_name="off-hours",
        recurrence="0 19 * * MON-FRI",
        time_zone="Europe/Berlin",
        min_size=0,
        desired_capacity=0,
        max_size=-1,
    )
    assert run_pack(plan_of(), rule.NAME).violations == []


def test_nonprod_rejects_a_group_whose_schedule_does_not_reach_zero(plan_of, run_pack):
    group = _elastic_group("office-hours", min_size=1)
    aws.autoscaling.Schedule(
        "office-hours-night",
        autoscaling_group_name=group.name,
        scheduled_action_name="off-hours",
        recurrence="0 19 * * MON-FRI",
        min_size=1,
        desired_capacity=1,
        max_size=-1,
    )
    other = _elastic_group("other", min_size=1)
    aws.autoscaling.Schedule(  # another group's schedule to zero does not count for this one
        "other-night",
        autoscaling_group_name=other.name,
        scheduled_action_name="x",
        min_size=0,
        desired_capacity=0,
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.urn.rsplit("::", 1)[1] for v in report.violations] == ["office-hours"]
    assert report.violations[0].message.endswith(GROUP_TAIL)


def test_nonprod_matches_a_schedule_to_its_group_by_dependency_when_the_name_is_unknown():
    from inference_infra.components.resources.schedules import schedule_index
    from inference_infra.policy.rules._base import Resource

    group = Resource(
        "aws:autoscaling/group:Group",
        "pool",
        {"minSize": 1, "maxSize": 2, "mixedInstancesPolicy": {"launchTemplate": {"overrides": [
            {"instanceType": "g5.xlarge"}]}}, "tags": [{"key": "Environment", "value": "dev"}]},
        urn="urn:group",
    )  # fmt: skip
    schedule = Resource(
        "aws:autoscaling/schedule:Schedule",
        "night",
        {"autoscalingGroupName": UNKNOWN, "minSize": 0, "desiredCapacity": 0},
        urn="urn:schedule",
        dependencies=("urn:group",),
    )
    schedules_of = schedule_index([group, schedule], lambda r: r.dependencies)
    config = {"productionEnvironments": ["prod"]}
    assert rule.check(group, config, None, schedules_of) == Outcome()
    assert rule.check(group, config, None, schedule_index([group], lambda r: ())).violations


# --- GCP elastic pools: a managed instance group whose autoscaler lets it stand at zero ----------

GCP_GROUP_TAIL = (
    "outside production use Spot VMs, or an autoscaler minimum of 0 (with a scaling schedule for working "
    "hours) so the group empties when idle."
)


def _gcp_elastic_pool(name: str, **elastic):
    from inference_infra.components.fleet import ElasticArgs, ServedModel
    from inference_infra.components.gcp.gpu_fleet import GpuFleet, GpuFleetArgs
    from tests.components.gcp.helpers import pinned_weights

    return GpuFleet(
        name,
        GpuFleetArgs(
            machine_type="g2-standard-8",
            zone="us-central1-a",
            subnetwork="projects/test-project/regions/us-central1/subnetworks/gpu",
            network="projects/test-project/global/networks/gpu",
            on_demand=2,
            model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8),
            weights=pinned_weights("models", ["gs://models/llama-3.1-8b-instruct"]),
            tags={"environment": "dev"},
            elastic=ElasticArgs(**elastic),
        ),
    )


def test_nonprod_passes_an_on_demand_gcp_group_scheduled_to_zero_outside_working_hours(plan_of, run_pack):
    from inference_infra.components.fleet import ScheduleArgs

    _gcp_elastic_pool("office-hours", schedule=ScheduleArgs(time_zone="Europe/Berlin"))
    assert run_pack(plan_of(), rule.NAME).violations == []


def test_nonprod_passes_an_on_demand_gcp_group_whose_autoscaler_minimum_is_zero(plan_of, run_pack):
    from inference_infra.components.fleet import ScheduleArgs

    # min_size 0 needs working hours (issue #38: a pool at zero has no load to scale out on): the
    # autoscaler's minimum is 0 and a scaling schedule raises it in working hours.
    _gcp_elastic_pool("idle-to-zero", min_size=0, schedule=ScheduleArgs(time_zone="Europe/Berlin"))
    assert run_pack(plan_of(), rule.NAME).violations == []


def test_nonprod_rejects_an_on_demand_gcp_group_that_never_reaches_zero(plan_of, run_pack):
    from inference_infra.components.fleet import ScheduleArgs

    _gcp_elastic_pool("always-on", min_size=1)
    # off-hours size 1: the schedule never takes the group below one VM
    _gcp_elastic_pool("nights-at-one", schedule=ScheduleArgs(time_zone="Europe/Berlin", off_hours_size=1))
    report = run_pack(plan_of(), rule.NAME)
    by_name = {v.urn.rsplit("::", 1)[1]: v.message for v in report.violations}
    assert sorted(by_name) == ["always-on-group", "nights-at-one-group"]
    assert by_name["always-on-group"] == (
        "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager 'always-on-group' runs "
        "g2-standard-8 on on-demand capacity in environment 'dev' without the label auto-shutdown=true; "
        f"{GCP_GROUP_TAIL}"
    )


def test_nonprod_matches_a_gcp_autoscaler_to_its_group_by_dependency_when_the_link_is_unknown():
    from inference_infra.components.resources.schedules import schedule_index
    from inference_infra.policy.rules._base import Resource

    group = Resource(
        "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
        "pool",
        {"versions": [{"instanceTemplate": "t"}]},
        urn="urn:group",
    )
    template = Resource(
        "gcp:compute/instanceTemplate:InstanceTemplate",
        "t",
        {"id": "t", "machineType": "g2-standard-8", "labels": {"environment": "dev"}},
    )
    autoscaler = Resource(
        "gcp:compute/regionAutoscaler:RegionAutoscaler",
        "pool-autoscaler",
        {"target": UNKNOWN, "autoscalingPolicy": {"minReplicas": 0, "maxReplicas": 2}},
        urn="urn:autoscaler",
        dependencies=("urn:group",),
    )
    from inference_infra.components.resources import template_index

    templates = template_index([group, template, autoscaler])
    config = {"productionEnvironments": ["prod"]}
    assert rule.check(
        group, config, templates, schedule_index([group, autoscaler], lambda r: r.dependencies)
    ) == (Outcome())
    # without its autoscaler it is a plain group of on-demand VMs (the label remedy)
    violations = rule.check(group, config, templates, schedule_index([group], lambda r: ())).violations
    assert violations[0].endswith("set the label so the idle watchdog can stop it.")
    at_one = Resource(
        autoscaler.type,
        autoscaler.name,
        {"target": UNKNOWN, "autoscalingPolicy": {"minReplicas": 1}},
        urn="urn:autoscaler",
        dependencies=("urn:group",),
    )
    violations = rule.check(
        group, config, templates, schedule_index([group, at_one], lambda r: r.dependencies)
    )
    assert violations.violations[0].endswith(GCP_GROUP_TAIL)


# -- Kubernetes node capacity: EKS managed node groups, GKE node pools, Karpenter NodePools -----------

EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_POOL = "gcp:container/nodePool:NodePool"
KARPENTER = "kubernetes:karpenter.sh/v1:NodePool"


def _node_group(capacity: str, low: object) -> dict:
    return {
        "instanceTypes": ["g6e.xlarge"],
        "capacityType": capacity,
        "scalingConfig": {"minSize": low, "maxSize": 4, "desiredSize": 1},
    }


def test_nonprod_passes_a_spot_or_scale_to_zero_eks_node_group(check):
    assert check(rule, EKS_GROUP, _node_group("SPOT", 1), {"environment": "dev"}) == Outcome()
    assert check(rule, EKS_GROUP, _node_group("ON_DEMAND", 0), {"environment": "dev"}) == Outcome()


def test_nonprod_rejects_an_on_demand_eks_node_group_that_never_empties(check):
    [message] = check(
        rule, EKS_GROUP, _node_group("ON_DEMAND", 1), {"environment": "dev"}, name="gpu"
    ).violations
    assert message == (
        f"{EKS_GROUP} 'gpu' runs g6e.xlarge on on-demand capacity in environment 'dev' without the tag "
        "AutoShutdown=true; outside production set capacityType SPOT, or scalingConfig.minSize 0 so the "
        "cluster autoscaler (or Karpenter) empties the group when its pods are gone."
    )
    unknown = check(rule, EKS_GROUP, _node_group("ON_DEMAND", UNKNOWN), {"environment": "dev"})
    assert unknown == Outcome(unknown=("scalingConfig.minSize",))


def _gke_pool(**extra: object) -> dict:
    config = {"machineType": "g2-standard-8", "guestAccelerators": [{"type": "nvidia-l4", "count": 1}]}
    return {"nodeConfig": config, "nodeCount": 1, **extra}


def test_nonprod_passes_a_gke_node_pool_autoscaled_from_zero(check):
    for autoscaling in (
        {"minNodeCount": 0, "maxNodeCount": 3},
        {"totalMinNodeCount": 0, "totalMaxNodeCount": 3},
    ):
        assert check(rule, GKE_POOL, _gke_pool(autoscaling=autoscaling), {"environment": "dev"}) == Outcome()


def test_nonprod_rejects_an_on_demand_gke_node_pool_with_a_floor(check):
    pool = _gke_pool(autoscaling={"minNodeCount": 1, "maxNodeCount": 3})
    [message] = check(rule, GKE_POOL, pool, {"environment": "dev"}, name="l4").violations
    assert message.endswith(
        "outside production set nodeConfig.spot, or autoscaling with a minimum of 0 (minNodeCount or "
        "totalMinNodeCount) so the cluster autoscaler empties the pool."
    )


def _karpenter(capacity: list | None, **spec: object) -> dict:
    requirements = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]}]
    if capacity is not None:
        requirements.append({"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity})
    return {
        "spec": {
            "template": {
                "metadata": {"labels": {"Environment": "dev"}},
                "spec": {"requirements": requirements},
            },
            **spec,
        }
    }


def test_nonprod_passes_karpenter_pools_on_spot_or_that_remove_empty_nodes(check):
    assert check(rule, KARPENTER, _karpenter(["spot"], disruption={"consolidateAfter": "Never"})) == Outcome()
    # On-demand, but Karpenter launches nodes only for pending pods and removes them once empty.
    assert check(rule, KARPENTER, _karpenter(None)) == Outcome()
    assert (
        check(rule, KARPENTER, _karpenter(["on-demand"], disruption={"consolidateAfter": "5m"})) == Outcome()
    )


def test_nonprod_rejects_karpenter_pools_that_keep_on_demand_nodes(check):
    kept = _karpenter(["spot", "on-demand"], disruption={"consolidateAfter": "Never"})
    [message] = check(rule, KARPENTER, kept, name="gpu").violations
    assert message.startswith(
        f"{KARPENTER} 'gpu' may launch g6e.xlarge, g6e.2xlarge, g6e.4xlarge, g6e.8xlarge and "
    )
    assert "on spot/on-demand capacity in environment 'dev' and never removes empty nodes" in message
    static = _karpenter(None, replicas=2.0)  # the engine sends numbers as floats
    [message] = check(rule, KARPENTER, static).violations
    assert "on on-demand capacity in environment 'dev' and keeps 2 static nodes (spec.replicas)" in message
    not_spot = {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]}
    pool = _karpenter(None, replicas=1)
    pool["spec"]["template"]["spec"]["requirements"].append(not_spot)
    assert "on on-demand/reserved capacity" in check(rule, KARPENTER, pool).violations[0]


def test_nonprod_does_not_judge_production_cpu_or_unknown_karpenter_pools(check):
    kept = _karpenter(None, replicas=2)
    assert (
        check(rule, KARPENTER, kept, {"environment": "prod"}).not_applicable
        == "environment 'prod' is production"
    )
    cpu = {
        "spec": {
            "template": {
                "spec": {
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c"]}
                    ]
                }
            }
        }
    }
    assert check(rule, KARPENTER, cpu).not_applicable.startswith("a Karpenter NodePool whose requirements")
    unknown = _karpenter(None, disruption={"consolidateAfter": UNKNOWN})
    assert check(rule, KARPENTER, unknown) == Outcome(unknown=("spec.disruption.consolidateAfter",))


def test_nonprod_rejects_a_captured_on_demand_eks_node_group_and_passes_one_from_zero(plan_of, run_pack):
    for name, low in (("fixed", 1), ("elastic", 0)):
        aws.eks.NodeGroup(
            name,
            cluster_name="c",
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["subnet-1"],
            instance_types=["g6e.xlarge"],
            capacity_type="ON_DEMAND",
            scaling_config={"min_size": low, "max_size": 2, "desired_size": 1},
            tags={"Environment": "dev"},
        )
    report = run_pack(plan_of(), rule.NAME, {"environment": "dev"})
    assert [v.message.split(" runs ")[0] for v in report.violations] == [f"{EKS_GROUP} 'fixed'"]
