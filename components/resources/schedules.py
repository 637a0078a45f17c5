"""Scheduled actions of Auto Scaling groups: which group a schedule resizes, and to what (pure).

An elastic pool outside production may shrink outside working hours through scheduled actions
(`aws:autoscaling/schedule:Schedule`, one per change: e.g. "to zero at 19:00", "back at 08:00").
The policies (`nonprod-accelerators-spot-or-autoshutdown` accepts a group scheduled to zero) and
the pricing (an elastic pool's expected cost) both read them through here.

GCP managed instance groups have no scheduled actions: their autoscaler (`gcp:compute/regionAutoscaler`,
matched by its `target` self link, or by dependency while that is unknown) holds a floor
(`minReplicas`) and scaling schedules that raise it for working hours; `schedules_of(group)` returns
them as sizes too (`autoscaler_sizes`).

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
from typing import Any

from inference_infra.components.resources.links import Linked
from inference_infra.components.resources.props import UNKNOWN_VALUE, get_path
from inference_infra.components.resources.types import AWS_AUTOSCALING_GROUP, GCP_GROUP_MANAGERS

AWS_AUTOSCALING_SCHEDULE = "aws:autoscaling/schedule:Schedule"
# GCP: a managed instance group's autoscaler holds its sizes (components/gcp/elastic.py).
GCP_AUTOSCALERS = frozenset(
    {"gcp:compute/autoscaler:Autoscaler", "gcp:compute/regionAutoscaler:RegionAutoscaler"}
)
_GCE_API = "https://www.googleapis.com/compute/v1/"
UNCHANGED = -1
_CRON = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


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
    resources: Sequence[Linked], dependencies: Callable[[Linked], Sequence[str]] | None = None
) -> SchedulesOf:
    """group -> the scheduled actions that resize it. dependencies(resource) gives the URNs a
    resource depends on (used only for a schedule whose group name is not known yet); by default
    the resource's own `dependencies`."""
    if dependencies is None:
        dependencies = _dependencies
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

    gce_by_path: dict[str, list[ScheduledSize]] = {}
    for r in resources:
        if r.type not in GCP_AUTOSCALERS:
            continue
        sizes = autoscaler_sizes(r)
        target = get_path(r.props, "target")
        if isinstance(target, str) and target:
            gce_by_path.setdefault(_gce_path(target), []).extend(sizes)
        else:
            for urn in dependencies(r):
                by_urn.setdefault(urn, []).extend(sizes)

    def schedules_of(group: Linked) -> list[ScheduledSize]:
        if group.type in GCP_GROUP_MANAGERS:
            found = list(by_urn.get(group.urn, ()))
            links = {group.id, group.props.get("selfLink")} - {None}
            for link in links:
                if isinstance(link, str):
                    found += [s for s in gce_by_path.get(_gce_path(link), ()) if s not in found]
            return found
        if group.type != AWS_AUTOSCALING_GROUP:
            return []
        found: list[ScheduledSize] = list(by_urn.get(group.urn, ()))
        names = {group.id, group.props.get("name")} - {None}
        for name in names:
            if isinstance(name, str):
                found += [s for s in by_name.get(name, ()) if s not in found]
        return found

    return schedules_of


def _dependencies(resource: Linked) -> Sequence[str]:
    return resource.dependencies


def _gce_path(ref: str) -> str:
    """A GCE self link as its resource path: projects/.../name."""
    return ref.removeprefix(_GCE_API).split("?", 1)[0]


def autoscaler_sizes(resource: Linked) -> list[ScheduledSize]:
    """A GCP autoscaler's sizes, as weekly events the elastic pricing replays.

    Without scaling schedules: its floor (`minReplicas`) every day at 00:00 (named `<name>.minReplicas`),
    with `maxReplicas` as its maximum. With them: each schedule RAISES the floor to minRequiredReplicas
    for durationSec from each cron start (pulumi-gcp RegionAutoscaler scalingSchedules), so it is two
    events, the raised floor at the start and the floor again at the end (`<schedule>.end`, when the
    window ends the same day). A group whose floor is 0 reaches zero when idle outside every schedule.
    """
    policy = get_path(resource.props, "autoscalingPolicy") or {}
    policy = policy if isinstance(policy, Mapping) else {}
    name = getattr(resource, "name", "") or "autoscaler"
    floor, top = _count(policy.get("minReplicas")), _count(policy.get("maxReplicas"))
    schedules = policy.get("scalingSchedules")
    sizes = []
    for schedule in schedules if isinstance(schedules, (list, tuple)) else []:
        if not isinstance(schedule, Mapping) or schedule.get("disabled") is True:
            continue
        label = str(schedule.get("name") or name)
        required = _count(schedule.get("minRequiredReplicas"))
        cron = schedule.get("schedule") if isinstance(schedule.get("schedule"), str) else None
        zone = schedule.get("timeZone") if isinstance(schedule.get("timeZone"), str) else None
        sizes.append(ScheduledSize(label, required, top, required, cron, zone))
        end = _window_end(cron, _count(schedule.get("durationSec")))
        if end is not None:
            sizes.append(ScheduledSize(f"{label}.end", floor, top, floor, end, zone))
    if not sizes:
        sizes.append(ScheduledSize(f"{name}.minReplicas", floor, top, floor, "0 0 * * *", None))
    return sizes


def _window_end(cron: str | None, seconds: int | None) -> str | None:
    """'M H * * DOW' plus a whole number of minutes that ends the same day, as a cron; else None."""
    fields = cron_fields(cron)
    if fields is None or seconds is None or seconds % 60:
        return None
    minute, hour, dom, month, dow = fields
    if not (minute.isdigit() and hour.isdigit()) or dom != "*" or month != "*":
        return None
    end = int(hour) * 60 + int(minute) + seconds // 60
    return f"{end % 60} {end // 60} * * {dow}" if end < 24 * 60 else None


def _count(value: Any) -> int | None:
    """A whole number of machines (props that crossed the wire carry numbers as floats), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        return None
    return int(value)


def gcp_floor_is_zero(sizes: Sequence[ScheduledSize]) -> bool:
    """A managed instance group's autoscaler lets it stand at zero VMs (its minReplicas is 0)."""
    return any(s.name.endswith((".minReplicas", ".end")) and s.min_size == 0 for s in sizes)


def cron_fields(recurrence: str | None) -> tuple[str, str, str, str, str] | None:
    """A five-field cron expression's fields, or None."""
    match = _CRON.fullmatch(recurrence or "")
    return match.groups() if match else None  # type: ignore[return-value]
