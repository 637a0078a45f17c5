"""Take one Spot instance out of service before EC2 reclaims it: decide in pure code, act after.

What happens (docs/reference.md, "Spot drain"):

- Interruption warning (two minutes left): the instance leaves every target group of the stack
  that holds it (the load balancer sends it no new request at once; requests in flight keep
  running for the target group's deregistration delay or until the instance goes, whichever is
  first). If an Auto Scaling group owns it, it is then detached with the desired capacity kept,
  so the group starts its replacement now rather than after EC2 has terminated the instance.
- Rebalance recommendation (elevated risk, no deadline yet): a group with capacity rebalancing
  on replaces the instance itself (launches first, then drains and terminates the old one through
  its lifecycle hooks), so the drain leaves it alone. In a group without it, the instance leaves
  its target groups and is marked unhealthy, so the group replaces it while it can still finish
  its requests. An instance outside any group is left serving: nothing would replace it, and
  draining early would only lose capacity (its interruption warning drains it).

The drain touches only groups and target groups carrying every SCOPE_TAGS tag.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .events import Kind, Notice
from .settings import Settings

DESCRIBE_TAGS_BATCH = 20  # elbv2 DescribeTags takes at most 20 ARNs per call
IN_SERVICE = "InService"

# Group actions
DETACH = "detach"
SET_UNHEALTHY = "set_unhealthy"
NONE = "none"


@dataclass(frozen=True)
class Group:
    """The Auto Scaling group that owns the instance, as the drain needs it."""

    name: str
    instance_state: str  # the instance's LifecycleState in the group
    target_group_arns: tuple[str, ...] = ()
    capacity_rebalance: bool = False
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    deregister: bool
    group_action: str
    reason: str


def decide(notice: Notice, group: Group | None, settings: Settings) -> Plan:
    """What to do about one notice (pure)."""
    if group is not None and not settings.in_scope(group.tags):
        return Plan(False, NONE, f"group {group.name} does not carry the scope tags")
    in_service = group is not None and group.instance_state == IN_SERVICE
    if notice.kind is Kind.INTERRUPTION:
        if group is None:
            return Plan(True, NONE, "interruption: drained from its target groups (no Auto Scaling group)")
        if not in_service:
            return Plan(True, NONE, f"interruption: drained; in state {group.instance_state}, not detached")
        return Plan(True, DETACH, "interruption: drained and detached so the group replaces it now")
    if group is None:
        return Plan(False, NONE, "rebalance: no Auto Scaling group would replace it; left serving")
    if group.capacity_rebalance:
        return Plan(False, NONE, f"rebalance: group {group.name} rebalances its capacity itself")
    if not settings.replace_on_rebalance:
        return Plan(False, NONE, "rebalance: REPLACE_ON_REBALANCE is false; left serving")
    if not in_service:
        return Plan(False, NONE, f"rebalance: in state {group.instance_state}; left to the group")
    return Plan(True, SET_UNHEALTHY, "rebalance: drained and marked unhealthy so the group replaces it")


@dataclass
class Result:
    instance_id: str
    kind: str
    action: str | None
    group: str | None
    reason: str
    dry_run: bool
    deregistered: list[dict[str, Any]] = field(default_factory=list)  # {"target_group_arn", "port"}
    skipped_target_groups: list[str] = field(default_factory=list)  # out of scope
    group_action: str = NONE
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "kind": self.kind,
            "instance_action": self.action,
            "group": self.group,
            "reason": self.reason,
            "dry_run": self.dry_run,
            "deregistered": list(self.deregistered),
            "skipped_target_groups": list(self.skipped_target_groups),
            "group_action": self.group_action,
            "failed": list(self.failed),
        }


class DrainError(RuntimeError):
    """A drain step failed; the invocation fails so EventBridge/Lambda retry it (every step is idempotent)."""


def find_group(autoscaling: Any, instance_id: str) -> Group | None:
    found = autoscaling.describe_auto_scaling_instances(InstanceIds=[instance_id]).get("AutoScalingInstances")
    if not found:
        return None
    name, state = found[0]["AutoScalingGroupName"], found[0].get("LifecycleState", "")
    groups = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name]).get("AutoScalingGroups")
    if not groups:
        return None
    raw = groups[0]
    arns = list(raw.get("TargetGroupARNs") or ())
    for source in raw.get("TrafficSources") or ():  # groups attached with the newer traffic-source API
        ident = source.get("Identifier", "")
        if ":targetgroup/" in ident and ident not in arns:
            arns.append(ident)
    return Group(
        name=name,
        instance_state=state,
        target_group_arns=tuple(arns),
        capacity_rebalance=bool(raw.get("CapacityRebalance")),
        tags={t["Key"]: t.get("Value", "") for t in raw.get("Tags") or ()},
    )


def target_group_tags(elbv2: Any, arns: Sequence[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for start in range(0, len(arns), DESCRIBE_TAGS_BATCH):
        chunk = list(arns[start : start + DESCRIBE_TAGS_BATCH])
        for item in elbv2.describe_tags(ResourceArns=chunk).get("TagDescriptions", ()):
            out[item["ResourceArn"]] = {t["Key"]: t.get("Value", "") for t in item.get("Tags") or ()}
    return out


def all_target_groups(elbv2: Any) -> list[str]:
    arns: list[str] = []
    for page in elbv2.get_paginator("describe_target_groups").paginate():
        arns += [
            tg["TargetGroupArn"] for tg in page.get("TargetGroups", ()) if tg.get("TargetType") == "instance"
        ]
    return arns


def registrations(elbv2: Any, arn: str, instance_id: str) -> list[dict[str, Any]]:
    """The instance's registrations in a target group ({"Id", "Port"}; one per port it serves)."""
    health = elbv2.describe_target_health(TargetGroupArn=arn).get("TargetHealthDescriptions", ())
    return [
        {"Id": d["Target"]["Id"], "Port": d["Target"]["Port"]}
        for d in health
        if d["Target"]["Id"] == instance_id and "Port" in d["Target"]
    ]


def run(notice: Notice, settings: Settings, *, autoscaling: Any, elbv2: Any) -> Result:
    group = find_group(autoscaling, notice.instance_id)
    plan = decide(notice, group, settings)
    result = Result(
        instance_id=notice.instance_id,
        kind=notice.kind.value,
        action=notice.action,
        group=group.name if group else None,
        reason=plan.reason,
        dry_run=settings.dry_run,
    )
    if plan.deregister:
        candidates = list(group.target_group_arns) if group else all_target_groups(elbv2)
        _deregister(elbv2, notice.instance_id, candidates, settings, result)
    if plan.group_action != NONE and group is not None:
        _group_action(autoscaling, notice.instance_id, group, plan.group_action, settings, result)
    return result


def _deregister(
    elbv2: Any, instance_id: str, arns: Iterable[str], settings: Settings, result: Result
) -> None:
    arns = list(dict.fromkeys(arns))
    tags = target_group_tags(elbv2, arns) if arns else {}
    for arn in arns:
        if not settings.in_scope(tags.get(arn, {})):
            result.skipped_target_groups.append(arn)
            continue
        targets = registrations(elbv2, arn, instance_id)
        if not targets:
            continue
        if not settings.dry_run:
            try:
                elbv2.deregister_targets(TargetGroupArn=arn, Targets=targets)
            except (ClientError, BotoCoreError) as error:
                result.failed.append(f"DeregisterTargets {arn}: {_message(error)}")
                continue
        result.deregistered += [{"target_group_arn": arn, "port": t["Port"]} for t in targets]


def _group_action(
    autoscaling: Any, instance_id: str, group: Group, action: str, settings: Settings, result: Result
) -> None:
    result.group_action = action
    if settings.dry_run:
        return
    try:
        if action == DETACH:
            autoscaling.detach_instances(
                InstanceIds=[instance_id],
                AutoScalingGroupName=group.name,
                ShouldDecrementDesiredCapacity=False,
            )
        else:
            autoscaling.set_instance_health(
                InstanceId=instance_id, HealthStatus="Unhealthy", ShouldRespectGracePeriod=False
            )
    except (ClientError, BotoCoreError) as error:
        name = "DetachInstances" if action == DETACH else "SetInstanceHealth"
        result.failed.append(f"{name} {group.name}: {_message(error)}")


def _message(error: Exception) -> str:
    if isinstance(error, ClientError):
        err = error.response.get("Error", {})
        return f"{err.get('Code', '')}: {err.get('Message', '')}".strip()
    return f"{type(error).__name__}: {error}"
