"""idle-watchdog-required (stack policy): AutoShutdown=true needs the idle watchdog in the stack."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pytest

from inference_infra.policy.rules import idle_watchdog_required as rule
from inference_infra.policy.rules._base import Outcome, Resource, config_defaults

INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
WATCHDOG = Resource(rule.WATCHDOG_TYPE, "watchdog", {}, "urn:watchdog")
ADVICE = "add inference_infra.components.aws.IdleGpuWatchdog or nothing stops them when they sit idle."


def _check(resources: list[Resource], **config) -> Outcome:
    return rule.check(resources, {**config_defaults(rule.CONFIG_SCHEMA), **config})


def _gpu(name: str, auto_shutdown: str = "true", instance_type: str = "g5.xlarge") -> Resource:
    return Resource(INSTANCE, name, {"instanceType": instance_type, "tags": {"AutoShutdown": auto_shutdown}})


def test_watchdog_required_passes_when_the_watchdog_is_deployed():
    assert _check([_gpu("a"), WATCHDOG]) == Outcome()


def test_watchdog_required_rejects_auto_shutdown_instances_without_a_watchdog():
    assert _check([_gpu("a"), _gpu("b", "false")]).violations == (
        "1 AWS accelerator resource(s) tagged AutoShutdown=true (a) but the stack deploys no idle watchdog "
        f"(inference-infra:aws:IdleGpuWatchdog); {ADVICE}",
    )


def test_watchdog_required_counts_templates_and_rejects_tagged_groups():
    template = Resource(
        TEMPLATE,
        "lt",
        {
            "id": "lt-1",
            "instanceType": "g6.xlarge",
            "tagSpecifications": [{"resourceType": "instance", "tags": {"AutoShutdown": "true"}}],
        },
    )
    plain_template = Resource(TEMPLATE, "lt2", {"id": "lt-2", "instanceType": "g6.xlarge"})
    group = Resource(
        ASG,
        "asg",
        {
            "launchTemplate": {"id": "lt-2"},
            "desiredCapacity": 2,
            "tags": [{"key": "AutoShutdown", "value": "true", "propagateAtLaunch": True}],
        },
    )
    cpu_group = Resource(
        ASG, "web", {"tags": [{"key": "AutoShutdown", "value": "true", "propagateAtLaunch": True}]}
    )
    group_message = (
        "1 Auto Scaling group(s) tagged AutoShutdown=true (asg) that never shrink to zero, and the idle "
        "watchdog never stops group members (the group would replace them); give the group a minimum of 0 "
        "or a scheduled action to 0 outside working hours (an elastic pool's elastic.schedule), or tag it "
        "AutoShutdown=false."
    )
    assert _check([template, plain_template, group, cpu_group]).violations == (
        "1 AWS accelerator resource(s) tagged AutoShutdown=true (lt) but the stack deploys no idle "
        "watchdog "
        f"(inference-infra:aws:IdleGpuWatchdog); {ADVICE}",
        group_message,
    )
    # The watchdog does not help a group: its members are never stopped.
    assert _check([template, plain_template, group, WATCHDOG]).violations == (group_message,)
    assert _check([plain_template, group]).violations == (group_message,)


def test_watchdog_required_lists_at_most_five_names_and_accepts_configured_watchdog_types():
    resources = [_gpu(f"g{i}") for i in range(7)]
    assert _check(resources, watchdogTypes=["acme:ops:Reaper"]).violations == (
        "7 AWS accelerator resource(s) tagged AutoShutdown=true (g0, g1, g2, g3, g4 and 2 more) but the "
        "stack "
        f"deploys no idle watchdog (acme:ops:Reaper); {ADVICE}",
    )
    reaper = Resource("acme:ops:Reaper", "reaper", {})
    assert _check([*resources, reaper], watchdogTypes=["acme:ops:Reaper"]) == Outcome()


def test_watchdog_required_says_when_it_does_not_apply():
    assert _check([_gpu("a", "false"), _gpu("cpu", instance_type="m5.large")]) == Outcome(
        not_applicable="no accelerator machine is tagged AutoShutdown=true or labelled auto-shutdown=true"
    )


GCP_WATCHDOG = Resource(rule.GCP_WATCHDOG_TYPE, "gcp-watchdog", {}, "urn:gcp-watchdog")


def _tpu(name: str, label: str = "true") -> Resource:
    return Resource(
        "gcp:tpu/v2Vm:V2Vm", name, {"acceleratorType": "v5litepod-4", "labels": {"auto-shutdown": label}}
    )


def _gce(name: str, label: str = "true") -> Resource:
    return Resource(
        "gcp:compute/instance:Instance",
        name,
        {"machineType": "g2-standard-8", "labels": {"auto-shutdown": label}},
    )


def test_watchdog_required_rejects_labelled_gcp_machines_without_the_gcp_watchdog():
    outcome = _check([_tpu("tpu"), _gce("l4"), _gce("kept", "false"), WATCHDOG])
    assert outcome.violations == (
        "2 GCP accelerator VM(s) or TPU VM(s) labelled auto-shutdown=true (tpu, l4) but the stack deploys no "
        "GCP idle watchdog (inference-infra:gcp:IdleGpuWatchdog); add "
        "inference_infra.components.gcp.IdleGpuWatchdog or nothing stops them when they sit idle.",
    )


def test_watchdog_required_passes_labelled_gcp_machines_with_the_gcp_watchdog():
    assert _check([_tpu("tpu"), _gce("l4"), GCP_WATCHDOG]) == Outcome()
    assert _check(
        [_tpu("tpu"), Resource("acme:ops:Reaper", "r", {})], gcpWatchdogTypes=["acme:ops:Reaper"]
    ) == (Outcome())


def test_watchdog_required_leaves_gcp_groups_and_templates_to_themselves():
    template = Resource(
        "gcp:compute/instanceTemplate:InstanceTemplate",
        "pool",
        {"machineType": "g2-standard-8", "labels": {"auto-shutdown": "true"}},
    )
    assert _check([template]).not_applicable
    assert _check([template]).violations == ()


class _Watchdog(pulumi.ComponentResource):
    """Stands in for inference_infra.components.aws.IdleGpuWatchdog: the policy recognises the type token."""

    def __init__(self, name: str) -> None:
        super().__init__(rule.WATCHDOG_TYPE, name, None, None)
        self.fn = aws.lambda_.Function(
            f"{name}-fn",
            role="arn:aws:iam::123456789012:role/r",
            runtime="python3.12",
            handler="handler.handler",
            code=pulumi.AssetArchive({}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"function_name": self.fn.name})


def test_watchdog_required_on_captured_stacks(plan_of, tagged, run_pack):
    aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-1")  # `tagged`: AutoShutdown=true
    without = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in without.violations] == [
        "1 AWS accelerator resource(s) tagged AutoShutdown=true (gpu) but the stack deploys no idle watchdog "
        f"(inference-infra:aws:IdleGpuWatchdog); {ADVICE}"
    ]
    _Watchdog("idle")
    assert run_pack(plan_of(), rule.NAME).violations == []


SHARED = {"region": "us-west-2", "functionName": "idle-gpu-watchdog", "account": "111122223333"}


def _in(region: str, account: str | None = None, name: str = "gpu") -> Resource:
    provider = {"region": region, **({"allowedAccountIds": f'["{account}"]'} if account else {})}
    return Resource(
        "aws:ec2/instance:Instance",
        name,
        {"instanceType": "g5.xlarge", "tags": {"AutoShutdown": "true"}},
        provider=provider,
    )


def test_watchdog_required_passes_a_shared_watchdog_declared_for_the_region():
    assert _check([_in("us-west-2")], sharedWatchdogs=[SHARED]) == Outcome()
    assert _check([_in("us-west-2", "111122223333")], sharedWatchdogs=[SHARED]) == Outcome()
    by_stack = {"region": "us-west-2", "stack": "acme/platform/prod"}
    assert _check([_in("us-west-2", "444455556666")], sharedWatchdogs=[by_stack]) == Outcome()


def test_watchdog_required_rejects_instances_no_declared_watchdog_covers():
    resources = [_in("us-east-1", name="east"), _in("us-west-2", "444455556666", name="other-account")]
    assert _check(resources, sharedWatchdogs=[SHARED]).violations == (
        "2 AWS accelerator resource(s) tagged AutoShutdown=true (east, other-account) in us-east-1, "
        "us-west-2, which no idle watchdog covers: the stack deploys none "
        "(inference-infra:aws:IdleGpuWatchdog) and config sharedWatchdogs declares function "
        "idle-gpu-watchdog in us-west-2, account 111122223333; declare the watchdog of that region (and "
        "account), or add inference_infra.components.aws.IdleGpuWatchdog.",
    )


def test_watchdog_required_rejects_a_shared_watchdog_without_function_or_stack(pack, plan_of):
    from inference_infra.components.errors import InputError
    from inference_infra.components.offline_plan.policy_pack import reconcile

    with pytest.raises(InputError, match="sharedWatchdogs"):
        reconcile(pack, {rule.NAME: ("mandatory", {"sharedWatchdogs": [{"region": "us-west-2"}]})}, "test")


def _elastic_pool(min_size: int = 1) -> list[Resource]:
    """An elastic pool as the fleet renders it: a template tagging its machines AutoShutdown=true that only
    its group launches from (the watchdog skips group members)."""
    template = Resource(
        TEMPLATE,
        "pool-lt",
        {
            "id": "lt-9",
            "instanceType": "g6.xlarge",
            "tagSpecifications": [{"resourceType": "instance", "tags": {"AutoShutdown": "true"}}],
        },
    )
    group = Resource(
        ASG,
        "pool-asg",
        {"id": "pool-asg", "name": "pool-asg", "launchTemplate": {"id": "lt-9"}, "minSize": min_size},
    )
    return [template, group]


def test_watchdog_required_accepts_an_elastic_pool_that_sleeps_outside_working_hours():
    # issue #38: the watchdog skips group members, so a group-only template asks for no watchdog, and a
    # group that a scheduled action takes to 0 keeps the AutoShutdown promise itself.
    night = Resource(
        "aws:autoscaling/schedule:Schedule",
        "pool-working-hours-end",
        {"autoscalingGroupName": "pool-asg", "minSize": 0, "desiredCapacity": 0, "maxSize": -1},
    )
    assert _check([*_elastic_pool(), night]).violations == ()
    assert _check(_elastic_pool(min_size=0)).violations == ()


def test_watchdog_required_rejects_an_elastic_pool_that_never_sleeps():
    (violation,) = _check(_elastic_pool()).violations
    assert violation.startswith(
        "1 Auto Scaling group(s) tagged AutoShutdown=true (pool-asg) that never shrink"
    )
    # A template a plain instance launches from still asks for the watchdog.
    instance = Resource(INSTANCE, "one", {"launchTemplate": {"id": "lt-9"}, "instanceType": "g6.xlarge"})
    assert any("no idle watchdog" in v for v in _check([*_elastic_pool(min_size=0), instance]).violations)
