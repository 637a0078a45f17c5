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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import (
    Purchase,
)
from inference_infra.components.tagging import ENVIRONMENT
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Outcome,
    Resource,
    not_applicable,
    passed,
    per_resource_stack_policy,
)
from inference_infra.policy.rules._machines import (
    AWS_LAUNCHERS,
    MACHINE_NOUNS,
    accelerator_machine,
    launch_template,
    machine_label,
)
from inference_infra.policy.rules._tags import auto_shutdown, environment_of, instance_tags

NAME = "nonprod-accelerators-spot-or-autoshutdown"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Outside production, accelerator machines run on spot capacity or carry AutoShutdown=true."
PRODUCTION = ["prod", "production"]
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
            "default": PRODUCTION,
            "description": "Environments where on-demand accelerators without AutoShutdown are fine.",
        },
    }
)


TemplateLookup = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]


def check(
    resource: Resource, config: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> Outcome:
    use = accelerator_machine(resource, template_of=template_of)
    if use is None:
        return not_applicable(f"applies to {MACHINE_NOUNS}")
    tags = instance_tags(resource, launch_template(resource, template_of))
    environment = environment_of(resource, config)
    if environment is None and tags is not None and isinstance(tags.get(ENVIRONMENT), str):
        environment = tags.get(ENVIRONMENT) or None  # carried to the machines from the template
    if environment in config["productionEnvironments"]:
        return not_applicable(f"environment {environment!r} is production")
    if use.purchase is Purchase.SPOT:
        return passed()
    if use.template and resource.props.get("instanceMarketOptions") is None:
        # A template that names no market runs nothing itself: the instances, spot requests,
        # groups and fleets that launch from it choose the market and are judged themselves.
        return not_applicable("a launch template that sets no market; its launchers are judged")
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
    else:
        fix = f"outside production use spot capacity or set the {flag_name} so the idle watchdog can stop it"
    return Outcome(
        violations=(
            f"{resource.label} runs {machine_label(use)} on {use.purchase.value} capacity in {where} without "
            f"the {tag}; {fix}.",
        )
    )


POLICY = per_resource_stack_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
    applies_to=MACHINE_NOUNS,
)
