"""Scheduled actions of Auto Scaling groups: which group a schedule resizes, and to what (pure).

An elastic pool outside production may shrink outside working hours through scheduled actions
(`aws:autoscaling/schedule:Schedule`, one per change: e.g. "to zero at 19:00", "back at 08:00").
The policies (`nonprod-accelerators-spot-or-autoshutdown` accepts a group scheduled to zero) and
the pricing (an elastic pool's expected cost) both read them through here.

A schedule names its group by `autoscalingGroupName`. Before deploy that name is unknown when the
group is new (autonamed), so a schedule whose name is not known yet is matched through its
dependencies instead: the group it depends on. The provider reads an unset minSize, maxSize or
desiredCapacity as 0 and -1 as "leave unchanged" (pulumi-aws `autoscaling.Schedule`, its input
docs), and so does this reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inference_infra.components.resources.props import UNKNOWN_VALUE, get_path
from inference_infra.components.resources.types import AWS_AUTOSCALING_GROUP

AWS_AUTOSCALING_SCHEDULE = "aws:autoscaling/schedule:Schedule"
UNCHANGED = -1
_CRON = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


class Linked(Protocol):
    """What the index reads of a resource (a captured resource, or a stack policy's view)."""

    @property
    def type(self) -> str: ...
    @property
    def urn(self) -> str: ...
    @property
    def id(self) -> str | None: ...
    @property
    def props(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class ScheduledSize:
    """One scheduled action: the sizes it sets (UNCHANGED for -1; None when not known yet)."""

    name: str
    min_size: int | None
    max_size: int | None
    desired: int | None
    recurrence: str | None  # cron: minute hour day-of-month month day-of-week
    time_zone: str | None  # IANA; None: UTC

    @property
    def to_zero(self) -> bool:
        """It takes the group to zero machines: minimum and desired capacity both 0."""
        return self.min_size == 0 and self.desired == 0


def _size(props: Mapping[str, Any], key: str) -> int | None:
    value = props.get(key)
    if value is None:
        return 0  # the provider's default for an unset size
    if value is UNKNOWN_VALUE or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def scheduled_size(resource: Linked) -> ScheduledSize:
    props = resource.props
    recurrence, zone = props.get("recurrence"), props.get("timeZone")
    name = props.get("scheduledActionName")
    return ScheduledSize(
        name=name if isinstance(name, str) else getattr(resource, "name", ""),
        min_size=_size(props, "minSize"),
        max_size=_size(props, "maxSize"),
        desired=_size(props, "desiredCapacity"),
        recurrence=recurrence if isinstance(recurrence, str) else None,
        time_zone=zone if isinstance(zone, str) else None,
    )


SchedulesOf = Callable[[Linked], list[ScheduledSize]]


def schedule_index(
    resources: Sequence[Linked], dependencies: Callable[[Linked], Sequence[str]]
) -> SchedulesOf:
    """group -> the scheduled actions that resize it. dependencies(resource) gives the URNs a
    resource depends on (used only for a schedule whose group name is not known yet)."""
    by_name: dict[str, list[ScheduledSize]] = {}
    by_urn: dict[str, list[ScheduledSize]] = {}
    for r in resources:
        if r.type != AWS_AUTOSCALING_SCHEDULE:
            continue
        size = scheduled_size(r)
        group = get_path(r.props, "autoscalingGroupName")
        if isinstance(group, str) and group:
            by_name.setdefault(group, []).append(size)
        else:
            for urn in dependencies(r):
                by_urn.setdefault(urn, []).append(size)

    def schedules_of(group: Linked) -> list[ScheduledSize]:
        if group.type != AWS_AUTOSCALING_GROUP:
            return []
        found: list[ScheduledSize] = list(by_urn.get(group.urn, ()))
        names = {group.id, group.props.get("name")} - {None}
        for name in names:
            if isinstance(name, str):
                found += [s for s in by_name.get(name, ()) if s not in found]
        return found

    return schedules_of


def cron_fields(recurrence: str | None) -> tuple[str, str, str, str, str] | None:
    """A five-field cron expression's fields, or None."""
    match = _CRON.match(recurrence or "")
    return match.groups() if match else None  # type: ignore[return-value]
