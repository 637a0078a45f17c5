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
    "outside production buy spot (a mixed-instances policy or fleet with no on-demand share, a SPOT compute "
    "environment), or set the tag and scale the group to zero when idle."
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
        "applies to accelerator instances, VMs, TPU slices and the templates that launch them"
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
        min_size=0,
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
