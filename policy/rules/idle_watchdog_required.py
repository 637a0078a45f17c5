"""idle-watchdog-required (stack policy): AutoShutdown=true means something stops idle machines.

The AutoShutdown tag is a promise: the idle watchdog (components.aws.IdleGpuWatchdog)
stops accelerator instances tagged AutoShutdown=true once they sit idle. A stack
that tags AWS accelerator instances (directly, through a launch template's
instance tags, or an Auto Scaling group's propagated tags) must deploy the
watchdog. The watchdog is recognised by its component type
(`inference-infra:aws:IdleGpuWatchdog`; stack policies see component resources)
or any type listed in `watchdogTypes`. The watchdog stops EC2 instances only, so
GCP machines labelled auto-shutdown=true are reported as not covered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from components.inventory import AWS_AUTOSCALING_GROUP, accelerator_use
from components.offline_plan.pricing import template_index
from policy.rules._base import Outcome, Resource, not_applicable, passed, stack_policy
from policy.rules._machines import AWS_MACHINES, GCP_MACHINES
from policy.rules._tags import auto_shutdown, instance_tags

NAME = "idle-watchdog-required"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "A stack with AWS accelerator instances tagged AutoShutdown=true deploys the idle GPU watchdog."
WATCHDOG_TYPE = "inference-infra:aws:IdleGpuWatchdog"
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "watchdogTypes": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            "default": [WATCHDOG_TYPE],
            "description": "Resource types that count as an idle watchdog (component or custom).",
        }
    }
)
_LISTED = 5


def check(resources: Sequence[Resource], config: Mapping[str, Any]) -> Outcome:
    template_of = template_index(resources)
    aws, gcp = [], []
    for r in resources:
        if r.type in AWS_MACHINES or r.type == AWS_AUTOSCALING_GROUP:
            if accelerator_use(r.type, r.props, template_of) and auto_shutdown(instance_tags(r)) is True:
                aws.append(r.name)
        elif r.type in GCP_MACHINES and accelerator_use(r.type, r.props) is not None:
            gcp += [r.name] if auto_shutdown(instance_tags(r)) is True else []
    if not aws:
        if gcp:
            return not_applicable(
                f"the idle watchdog stops EC2 instances; {_names(gcp)} (GCP, labelled auto-shutdown=true) "
                "are not covered by it"
            )
        return not_applicable("no AWS accelerator instance is tagged AutoShutdown=true")
    watchdogs = set(config["watchdogTypes"])
    if any(r.type in watchdogs for r in resources):
        return passed()
    return Outcome(
        violations=(
            f"{len(aws)} AWS accelerator resource(s) tagged AutoShutdown=true ({_names(aws)}) but the stack "
            f"deploys no idle watchdog ({', '.join(sorted(watchdogs))}); add components.aws.IdleGpuWatchdog "
            "or nothing stops them when they sit idle.",
        )
    )


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


POLICY = stack_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
