"""idle-watchdog-required (stack policy): AutoShutdown=true means something stops idle machines.

The AutoShutdown tag is a promise: the idle watchdog (inference_infra.components.aws.IdleGpuWatchdog)
stops accelerator instances tagged AutoShutdown=true once they sit idle. A stack
that tags AWS accelerator instances (directly, or through a launch template's
instance tags) must deploy the watchdog. An Auto Scaling group tagged
AutoShutdown=true is a violation with or without it: the watchdog never stops
group members (the group would replace them), so the tag promises what nothing
does; scale such a group to zero on a schedule instead. The watchdog is recognised by its component type
(`inference-infra:aws:IdleGpuWatchdog`; stack policies see component resources)
or any type listed in `watchdogTypes`. The watchdog stops EC2 instances only, so
GCP machines labelled auto-shutdown=true are reported as not covered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import AWS_AUTOSCALING_GROUP, accelerator_use, template_index
from inference_infra.policy.rules._base import Outcome, Resource, not_applicable, passed, stack_policy
from inference_infra.policy.rules._machines import AWS_MACHINES, GCP_MACHINES
from inference_infra.policy.rules._tags import auto_shutdown, instance_tags

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
    aws, groups, gcp = [], [], []
    for r in resources:
        if r.type in AWS_MACHINES or r.type == AWS_AUTOSCALING_GROUP:
            if accelerator_use(r.type, r.props, template_of) and auto_shutdown(instance_tags(r)) is True:
                (groups if r.type == AWS_AUTOSCALING_GROUP else aws).append(r.name)
        elif r.type in GCP_MACHINES and accelerator_use(r.type, r.props) is not None:
            gcp += [r.name] if auto_shutdown(instance_tags(r)) is True else []
    violations = []
    if groups:
        violations.append(
            f"{len(groups)} Auto Scaling group(s) tagged AutoShutdown=true ({_names(groups)}), but the idle "
            "watchdog never stops group members (the group would replace them); scale the group to zero on a "
            "schedule instead and tag it AutoShutdown=false."
        )
    if not aws:
        if violations:
            return Outcome(violations=tuple(violations))
        if gcp:
            return not_applicable(
                f"the idle watchdog stops EC2 instances; {_names(gcp)} (GCP, labelled auto-shutdown=true) "
                "are not covered by it"
            )
        return not_applicable("no AWS accelerator instance is tagged AutoShutdown=true")
    watchdogs = set(config["watchdogTypes"])
    if not any(r.type in watchdogs for r in resources):
        violations.insert(
            0,
            f"{len(aws)} AWS accelerator resource(s) tagged AutoShutdown=true ({_names(aws)}) but the stack "
            f"deploys no idle watchdog ({', '.join(sorted(watchdogs))}); "
            "add inference_infra.components.aws.IdleGpuWatchdog or nothing stops them when they sit idle.",
        )
    return Outcome(violations=tuple(violations)) if violations else passed()


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
