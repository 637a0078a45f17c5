"""nonprod-accelerators-spot-or-autoshutdown: outside production, accelerators are spot
or may be stopped when idle.

A forgotten on-demand p5.48xlarge in a dev account costs over $1,300 a day.
Outside production every accelerator machine (and every template that launches
them) either runs on spot/preemptible capacity or carries AutoShutdown=true
(GCP label auto-shutdown=true), which the idle watchdog acts on. The
environment is the policy config's `environment`, else the resource's
Environment tag; a resource with neither is treated as non-production.

It is a stack policy that judges each resource on its own: an Auto Scaling group or an
instance that takes its instance type, market and tags from a launch template is
judged with that template's settings, which a resource policy cannot see.

An elastic pool (an Auto Scaling group) passes too when it can shrink to nothing by itself: its
minimum is 0 (its scaling policy takes it down when idle), or a scheduled action in the stack sets
its minimum and desired capacity to 0 (outside working hours). The idle watchdog never stops a
group's instances (the group would replace them), so for a group this is the equivalent of
AutoShutdown=true. On GCP a managed instance group passes when its autoscaler's minimum is 0: GCP's
scaling schedules only raise the minimum for working hours, so a group "scheduled to zero outside
hours" is one with minReplicas 0 and a schedule back up.

Kubernetes node capacity (policy/rules/_k8s_nodes.py): an EKS managed node group or GKE node pool
also passes when its autoscaling minimum is 0, and a Karpenter NodePool that may launch accelerator
types passes when it allows only spot capacity or removes its empty nodes (no static replicas,
consolidation not `Never`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_EKS_NODE_GROUP,
    GCP_GROUP_MANAGERS,
    Purchase,
    StackIndex,
    holder_template_lookup,
    template_index,
)
from inference_infra.components.resources.schedules import SchedulesOf, gcp_floor_is_zero, schedule_index
from inference_infra.components.tagging import ENVIRONMENT
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Outcome,
    Resource,
    judged_stack_policy,
    not_applicable,
    passed,
    rule_metadata,
)
from inference_infra.policy.rules._k8s_nodes import (
    NODE_POOL_FIX,
    check_karpenter_pool,
    is_karpenter_pool,
    pool_environment,
    scales_to_zero,
)
from inference_infra.policy.rules._machines import (
    AWS_LAUNCHERS,
    MACHINE_NOUNS,
    accelerator_machine,
    launch_template,
    machine_label,
)
from inference_infra.policy.rules._tags import (
    auto_shutdown,
    counts_as_production,
    environment_of,
    instance_tags,
)

NAME = "nonprod-accelerators-spot-or-autoshutdown"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Outside production, accelerator machines run on spot capacity or carry AutoShutdown=true."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "environment": {
            "type": "string",
            "minLength": 1,
            "description": "The stack's environment; when unset, each resource's Environment tag decides.",
        },
        "productionEnvironments": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "description": "Further environments where on-demand accelerators without AutoShutdown are "
            "fine, beside every name that starts with prod or prd (components.tagging.is_production).",
        },
    }
)


APPLIES_TO = f"{MACHINE_NOUNS}, and Karpenter NodePools that may launch them"
TemplateLookup = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]


def check(
    resource: Resource,
    config: Mapping[str, Any],
    template_of: TemplateLookup | None = None,
    schedules_of: SchedulesOf | None = None,
) -> Outcome:
    if is_karpenter_pool(resource):
        environment = pool_environment(resource, config)
        production = counts_as_production(environment, config["productionEnvironments"])
        return check_karpenter_pool(resource, environment, production)
    use = accelerator_machine(resource, template_of=template_of)
    if use is None:
        return not_applicable(f"applies to {APPLIES_TO}")
    tags = instance_tags(resource, launch_template(resource, template_of))
    environment = environment_of(resource, config)
    if environment is None and tags is not None and isinstance(tags.get(ENVIRONMENT), str):
        environment = tags.get(ENVIRONMENT) or None  # carried to the machines from the template
    if counts_as_production(environment, config["productionEnvironments"]):
        return not_applicable(f"environment {environment!r} is production")
    if use.purchase is Purchase.SPOT:
        return passed()
    if use.template and resource.props.get("instanceMarketOptions") is None:
        # A template that names no market runs nothing itself: the instances, spot requests,
        # groups and fleets that launch from it choose the market and are judged themselves.
        return not_applicable("a launch template that sets no market; its launchers are judged")
    if resource.type == AWS_AUTOSCALING_GROUP and _shrinks_to_zero(resource, schedules_of):
        return passed()
    if resource.type in NODE_POOL_FIX:
        empties = scales_to_zero(resource)
        if empties is None:
            return Outcome(
                unknown=("scalingConfig.minSize" if resource.type == AWS_EKS_NODE_GROUP else "autoscaling",)
            )
        if empties:
            return passed()
    if (
        resource.type in GCP_GROUP_MANAGERS
        and schedules_of is not None
        and gcp_floor_is_zero(schedules_of(resource))
    ):
        return passed()
    flag = auto_shutdown(tags)
    if flag is UNKNOWN:
        return Outcome(unknown=(f"{tags.field if tags else 'tags'}.AutoShutdown",))
    if flag is True:
        return passed()
    gcp = tags is not None and tags.gcp
    tag = "label auto-shutdown=true" if gcp else "tag AutoShutdown=true"
    where = f"environment {environment!r}" if environment else "an environment with no Environment tag"
    flag_name = tag.split()[0]
    if resource.type in AWS_LAUNCHERS:
        # The idle watchdog stops single instances, not a group's (the group would replace them).
        fix = (
            "outside production buy spot (a mixed-instances policy or fleet with no on-demand share, a SPOT "
            f"compute environment), or set the {flag_name} and scale the group to zero when idle"
        )
        if resource.type == AWS_AUTOSCALING_GROUP:
            fix = (
                "outside production buy spot (a mixed-instances policy with no on-demand share), give the "
                "group a minimum of 0, or a scheduled action that takes it to 0 outside working hours (the "
                "idle watchdog leaves a group's instances alone)"
            )
    elif resource.type in GCP_GROUP_MANAGERS and schedules_of is not None and schedules_of(resource):
        fix = (  # an elastic pool: a group with an autoscaler
            "outside production use Spot VMs, or an autoscaler minimum of 0 (with a scaling schedule for "
            "working hours) so the group empties when idle"
        )
    else:
        fix = f"outside production use spot capacity or set the {flag_name} so the idle watchdog can stop it"
    if resource.type in NODE_POOL_FIX:
        fix = NODE_POOL_FIX[resource.type]
    return Outcome(
        violations=(
            f"{resource.label} runs {machine_label(use)} on {use.purchase.value} capacity in {where} without "
            f"the {tag}; {fix}.",
        )
    )


def _shrinks_to_zero(resource: Resource, schedules_of: SchedulesOf | None) -> bool:
    """An Auto Scaling group whose minimum is 0, or that a scheduled action takes to 0."""
    if resource.props.get("minSize") == 0:
        return True
    return schedules_of is not None and any(s.to_zero for s in schedules_of(resource))


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterable[tuple[Resource, Outcome]]:
    """check() on every resource, with its launch template and (groups) its scheduled actions."""
    template_of = template_index(resources)
    stack = StackIndex(resources)
    schedules_of = schedule_index(resources, lambda r: r.dependencies)
    for resource in resources:
        yield (
            resource,
            check(resource, config, holder_template_lookup(template_of, stack, resource), schedules_of),
        )


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)
