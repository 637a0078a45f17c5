"""idle-watchdog-required (stack policy): AutoShutdown=true means something stops idle machines.

The AutoShutdown tag is a promise: the idle watchdog (inference_infra.components.aws.IdleGpuWatchdog)
stops accelerator instances tagged AutoShutdown=true once they sit idle. A stack
that tags AWS accelerator instances (directly, or through a launch template's
instance tags) must deploy the watchdog. Group members are not the watchdog's:
it never stops them (the group would replace them; lambdas/idle_gpu_watchdog skips
every instance an Auto Scaling group manages), so a launch template that only Auto
Scaling groups launch from asks for no watchdog, and an Auto Scaling group tagged
AutoShutdown=true keeps the tag's promise by itself when it shrinks to zero (a
minimum of 0, or a scheduled action that takes it to 0, as an elastic pool's
working hours do); a group that cannot is a violation with or without a watchdog.
The watchdog is recognised by its component type
(`inference-infra:aws:IdleGpuWatchdog`; stack policies see component resources)
or any type listed in `watchdogTypes`.

On GCP the same promise is the label auto-shutdown=true, kept by the GCP watchdog
(inference_infra.components.gcp.IdleGpuWatchdog, type `inference-infra:gcp:IdleGpuWatchdog`, or any
type in `gcpWatchdogTypes`), which stops GPU VMs and TPU VMs. A stack with labelled GCP accelerator
VMs or TPU VMs must deploy it. Managed instance groups, their templates, GKE node pools and queued
resources are not its business (a group scales itself; the watchdog never stops group members or
queued-resource nodes), so they neither need it nor count as covered.

Many teams run one account-wide watchdog from another stack. `sharedWatchdogs` declares such
watchdogs: each names the region it watches and the function (`functionName`) or the stack that
owns it (`stack`), and may name its `account`. An AutoShutdown instance is covered when the stack
deploys a watchdog, or a declared one watches its region (the provider's region, or its
availability zone's) and, when both are known, its account (the provider's single
`allowedAccountIds` entry, or the account of the role it assumes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_LAUNCH_TEMPLATE,
    GCP_INSTANCE,
    GCP_TPU_NODE,
    GCP_TPU_VM,
    accelerator_use,
    region_of_zone,
    template_index,
)
from inference_infra.components.resources.schedules import schedule_index
from inference_infra.policy.rules._base import (
    Outcome,
    Resource,
    not_applicable,
    passed,
    rule_metadata,
    stack_policy,
)
from inference_infra.policy.rules._machines import AWS_MACHINES
from inference_infra.policy.rules._tags import auto_shutdown, instance_tags

NAME = "idle-watchdog-required"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Accelerator machines tagged AutoShutdown=true (AWS) or labelled auto-shutdown=true (GCP VMs, TPU VMs) "
    "need that cloud's idle watchdog in the stack."
)
WATCHDOG_TYPE = "inference-infra:aws:IdleGpuWatchdog"
GCP_WATCHDOG_TYPE = "inference-infra:gcp:IdleGpuWatchdog"
# What the GCP watchdog stops: single VMs and TPU VMs (not groups, templates, node pools, queued resources).
GCP_STOPPED = frozenset({GCP_INSTANCE, GCP_TPU_VM, GCP_TPU_NODE})
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "watchdogTypes": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            "default": [WATCHDOG_TYPE],
            "description": "Resource types that count as an idle watchdog (component or custom).",
        },
        "gcpWatchdogTypes": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            "default": [GCP_WATCHDOG_TYPE],
            "description": "Resource types that count as an idle watchdog for GCP VMs and TPU VMs.",
        },
        "sharedWatchdogs": {
            "type": "array",
            "default": [],
            "items": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "minLength": 1},
                    "account": {"type": "string", "pattern": "^[0-9]{12}$"},
                    "functionName": {"type": "string", "minLength": 1},
                    "stack": {"type": "string", "minLength": 1},
                },
                "required": ["region"],
                "if": {"required": ["functionName"]},  # functionName, else stack
                "else": {"required": ["stack"]},
                "additionalProperties": False,
            },
            "description": "Idle watchdogs deployed elsewhere (e.g. one per account from a platform stack): "
            "each {region, functionName or stack, account (optional)}.",
        },
    }
)
_LISTED = 5


def _template_refs(props: Mapping[str, Any]) -> set[str]:
    """The launch template ids and names a group or instance launches from."""
    mixed = props.get("mixedInstancesPolicy")
    specs = [props.get("launchTemplate")]
    if isinstance(mixed, Mapping):
        template = mixed.get("launchTemplate")
        if isinstance(template, Mapping):
            specs.append(template.get("launchTemplateSpecification"))
    keys = ("id", "name", "launchTemplateId", "launchTemplateName")
    return {s[k] for s in specs if isinstance(s, Mapping) for k in keys if isinstance(s.get(k), str)}


def _group_only_templates(resources: Sequence[Resource]) -> set[str]:
    """Ids and names of launch templates Auto Scaling groups launch from and no other machine does."""
    grouped: set[str] = set()
    other: set[str] = set()
    for r in resources:
        if r.type == AWS_AUTOSCALING_GROUP:
            grouped |= _template_refs(r.props)
        elif r.type in AWS_MACHINES and r.type != AWS_LAUNCH_TEMPLATE:
            other |= _template_refs(r.props)
    return grouped - other


def _template_of_group(group: Resource, template_of: Any) -> Mapping[str, Any] | None:
    """The launch template a group launches from (its machines carry its instance tags)."""
    for ref in sorted(_template_refs(group.props)):
        found = template_of({"id": ref}) or template_of({"name": ref})
        if found is not None:
            return found
    return None


def _shrinks_to_zero(group: Resource, resources: Sequence[Resource]) -> bool:
    """A group whose minimum is 0, or that a scheduled action takes to 0 (its own idle shutdown)."""
    if group.props.get("minSize") == 0:
        return True
    schedules_of = schedule_index(resources, lambda r: r.dependencies)
    return any(s.to_zero for s in schedules_of(group))


def check(resources: Sequence[Resource], config: Mapping[str, Any]) -> Outcome:
    template_of = template_index(resources)
    group_only = _group_only_templates(resources)
    aws, groups, gcp = [], [], []
    for r in resources:
        if r.type == AWS_LAUNCH_TEMPLATE and ({r.id, r.props.get("name")} & group_only):
            continue  # its machines are group members: the group is judged, not a watchdog's job
        if r.type in AWS_MACHINES or r.type == AWS_AUTOSCALING_GROUP:
            template = _template_of_group(r, template_of) if r.type == AWS_AUTOSCALING_GROUP else None
            tags = instance_tags(r, template)
            if accelerator_use(r.type, r.props, template_of) and auto_shutdown(tags) is True:
                if r.type != AWS_AUTOSCALING_GROUP:
                    aws.append(r)
                elif not _shrinks_to_zero(r, resources):
                    groups.append(r)
        elif r.type in GCP_STOPPED and accelerator_use(r.type, r.props) is not None:
            gcp += [r] if auto_shutdown(instance_tags(r)) is True else []
    violations = []
    if groups:
        violations.append(
            f"{len(groups)} Auto Scaling group(s) tagged AutoShutdown=true ({_names(groups)}) that never "
            "shrink to zero, and the idle watchdog never stops group members (the group would replace them); "
            "give the group a minimum of 0 or a scheduled action to 0 outside working hours (an elastic "
            "pool's elastic.schedule), or tag it AutoShutdown=false."
        )
    gcp_watchdogs = set(config.get("gcpWatchdogTypes") or [GCP_WATCHDOG_TYPE])
    if gcp and not any(r.type in gcp_watchdogs for r in resources):
        violations.append(
            f"{len(gcp)} GCP accelerator VM(s) or TPU VM(s) labelled auto-shutdown=true ({_names(gcp)}) "
            f"but the stack deploys no GCP idle watchdog ({', '.join(sorted(gcp_watchdogs))}); add "
            "inference_infra.components.gcp.IdleGpuWatchdog or nothing stops them when they sit idle."
        )
    if not aws:
        if violations:
            return Outcome(violations=tuple(violations))
        if gcp:
            return passed()
        return not_applicable(
            "no accelerator machine is tagged AutoShutdown=true or labelled auto-shutdown=true"
        )
    watchdogs = set(config["watchdogTypes"])
    if not any(r.type in watchdogs for r in resources):
        shared = list(config.get("sharedWatchdogs") or [])
        uncovered = [r for r in aws if not any(_covers(w, r) for w in shared)]
        if uncovered and not shared:
            violations.insert(
                0,
                f"{len(aws)} AWS accelerator resource(s) tagged AutoShutdown=true ({_names(aws)}) but the "
                f"stack deploys no idle watchdog ({', '.join(sorted(watchdogs))}); add "
                "inference_infra.components.aws.IdleGpuWatchdog or nothing stops them when they sit idle.",
            )
        elif uncovered:
            regions = sorted({_region(r) or "an unknown region" for r in uncovered})
            declared = "; ".join(_declared(w) for w in shared)
            violations.insert(
                0,
                f"{len(uncovered)} AWS accelerator resource(s) tagged AutoShutdown=true "
                f"({_names(uncovered)}) in {', '.join(regions)}, which no idle watchdog covers: the stack "
                f"deploys none ({', '.join(sorted(watchdogs))}) and config sharedWatchdogs declares "
                f"{declared}; declare the watchdog of that region (and account), or add "
                "inference_infra.components.aws.IdleGpuWatchdog.",
            )
    return Outcome(violations=tuple(violations)) if violations else passed()


def _region(resource: Resource) -> str | None:
    zone = resource.props.get("availabilityZone")
    if isinstance(zone, str) and zone:
        return region_of_zone(zone)
    region = resource.provider_value("region")
    return region if isinstance(region, str) and region else None


def _account(resource: Resource) -> str | None:
    """The account a resource's provider deploys to, where its config says: a single allowed account
    id, or the account of the role it assumes."""
    allowed = resource.provider_value("allowedAccountIds")
    if isinstance(allowed, list) and len(allowed) == 1 and isinstance(allowed[0], str):
        return allowed[0]
    roles = resource.provider_value("assumeRoles") or resource.provider_value("assumeRole")
    for role in roles if isinstance(roles, list) else [roles]:
        arn = role.get("roleArn") if isinstance(role, Mapping) else None
        if isinstance(arn, str) and arn.count(":") >= 5:
            return arn.split(":")[4] or None
    return None


def _covers(watchdog: Mapping[str, Any], resource: Resource) -> bool:
    if watchdog.get("region") != _region(resource):
        return False
    account = _account(resource)
    return watchdog.get("account") is None or account is None or watchdog["account"] == account


def _declared(watchdog: Mapping[str, Any]) -> str:
    what = (
        f"function {watchdog['functionName']}"
        if watchdog.get("functionName")
        else f"stack {watchdog['stack']}"
    )
    account = f", account {watchdog['account']}" if watchdog.get("account") else ""
    return f"{what} in {watchdog['region']}{account}"


def _names(items: list[Resource] | list[str]) -> str:
    names = [i if isinstance(i, str) else i.name for i in items]
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


POLICY = stack_policy(**rule_metadata(__name__), check=check)
