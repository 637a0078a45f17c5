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

- Stopped, not terminated (a persistent Spot request with `instance-action` stop or hibernate, as
  fixed pools' Spot instances are): an Auto Scaling group never owns it (a group's Spot instances
  terminate), so after draining it the drain writes what it took out on the instance itself (tags
  `inference-infra:drained:<n>` = "<target group ARN> <port>"). When EC2 starts it again ("EC2
  Instance State-change Notification", state running) the drain registers it back into those target
  groups (the load balancer's health check admits it once its engines answer) and removes the tags.

The drain touches only groups and target groups carrying every SCOPE_TAGS tag.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .events import RUNNING, Kind, Notice
from .settings import Settings

DESCRIBE_TAGS_BATCH = 20  # elbv2 DescribeTags takes at most 20 ARNs per call
IN_SERVICE = "InService"
DRAINED_TAG = "inference-infra:drained:"  # + n: "<target group ARN> <port>" (EC2 tag values: 256 chars)
STOPPING = frozenset({"stop", "hibernate"})  # interruptions after which EC2 may start the instance again

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
    registered: list[dict[str, Any]] = field(default_factory=list)  # put back after a restart

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
            "registered": list(self.registered),
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


def drained_tags(deregistered: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The tags that remember a stopped instance's registrations (one per target group and port)."""
    return [
        {"Key": f"{DRAINED_TAG}{n}", "Value": f"{d['target_group_arn']} {d['port']}"}
        for n, d in enumerate(deregistered)
    ]


def drained_registrations(tags: Mapping[str, str]) -> list[tuple[str, str, int]]:
    """(tag key, target group ARN, port) from an instance's tags; malformed ones are left out."""
    found = []
    for key, value in sorted(tags.items()):
        if not key.startswith(DRAINED_TAG):
            continue
        arn, _, port = value.partition(" ")
        if ":targetgroup/" in arn and port.isdigit():
            found.append((key, arn, int(port)))
    return found


def run(notice: Notice, settings: Settings, *, autoscaling: Any, elbv2: Any, ec2: Any = None) -> Result:
    if notice.kind is Kind.STATE_CHANGE:
        return restore(notice, settings, elbv2=elbv2, ec2=ec2)
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
        if group is None and notice.action in STOPPING and result.deregistered and ec2 is not None:
            _remember(ec2, notice.instance_id, settings, result)
    if plan.group_action != NONE and group is not None:
        _group_action(autoscaling, notice.instance_id, group, plan.group_action, settings, result)
    return result


def _remember(ec2: Any, instance_id: str, settings: Settings, result: Result) -> None:
    """A stopping instance keeps what was taken from it, for its restart (module doc)."""
    result.reason += "; its registrations kept on the instance for its restart"
    if settings.dry_run:
        return
    try:
        ec2.create_tags(Resources=[instance_id], Tags=drained_tags(result.deregistered))
    except (ClientError, BotoCoreError) as error:
        result.failed.append(f"CreateTags {instance_id}: {_message(error)}")


def restore(notice: Notice, settings: Settings, *, elbv2: Any, ec2: Any) -> Result:
    """A Spot instance the drain took out on a stop is running again: back into its target groups."""
    result = Result(
        instance_id=notice.instance_id,
        kind=notice.kind.value,
        action=notice.action,
        group=None,
        reason="",
        dry_run=settings.dry_run,
    )
    if notice.action != RUNNING:
        result.reason = f"state {notice.action}: nothing to restore"
        return result
    reservations = ec2.describe_instances(InstanceIds=[notice.instance_id]).get("Reservations") or ()
    raw = [i for r in reservations for i in r.get("Instances", ())]
    tags = {t["Key"]: t.get("Value", "") for i in raw for t in i.get("Tags") or ()}
    found = drained_registrations(tags)
    if not found:
        result.reason = "running: the drain took nothing out of service for it"
        return result
    result.reason = "running again after a stop: registered back into the target groups it was drained from"
    scope = target_group_tags(elbv2, list(dict.fromkeys(arn for _, arn, _ in found)))
    done: list[str] = []
    for key, arn, port in found:
        if not settings.in_scope(scope.get(arn, {})):
            result.skipped_target_groups.append(arn)
            done.append(key)
            continue
        if not settings.dry_run:
            try:
                elbv2.register_targets(TargetGroupArn=arn, Targets=[{"Id": notice.instance_id, "Port": port}])
            except (ClientError, BotoCoreError) as error:
                result.failed.append(f"RegisterTargets {arn}: {_message(error)}")
                continue  # the tag stays: a retry registers it
        result.registered.append({"target_group_arn": arn, "port": port})
        done.append(key)
    if done and not settings.dry_run:
        try:
            ec2.delete_tags(Resources=[notice.instance_id], Tags=[{"Key": k} for k in done])
        except (ClientError, BotoCoreError) as error:
            result.failed.append(f"DeleteTags {notice.instance_id}: {_message(error)}")
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
