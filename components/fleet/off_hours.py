"""Working hours of an elastic pool as scheduled actions, and when its endpoint sleeps (pure).

A non-production pool with `elastic.schedule` shrinks to `off_hours_size` (0: nothing runs)
outside working hours. On AWS that is two Auto Scaling scheduled actions on the group, each in the
schedule's time zone (`aws.autoscaling.Schedule`'s `time_zone`, an IANA name, so daylight saving is
the zone's; the recurrence is Unix cron, minute hour day month day-of-week with Sunday 0, per
https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scheduled-scaling.html, read
2026-11-25): at `end_hour` the minimum and desired capacity drop to `off_hours_size`; at
`start_hour` they come back to the pool's minimum (desired at least 1: the day starts with a machine
warming up, even for a pool whose minimum is 0). The maximum is left alone (-1) so target tracking
keeps its room in working hours.

While a pool is at zero its endpoint answers 503 with `Retry-After` (docs/reference.md, "Pools
asleep"): the listener rule is switched to a small responder at `end_hour` and back once the
morning's machines have had their warm-up (`start_hour` + the cold start, rounded up to the minute).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from inference_infra.components.fleet.elastic import ScheduleArgs

UNCHANGED = -1
_DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_DAY = {name: n for n, name in enumerate(_DAY_NAMES)}


@dataclass(frozen=True)
class ScheduledAction:
    """One Auto Scaling scheduled action: a cron recurrence (minute hour day month day-of-week, in
    time_zone) and the sizes it sets (UNCHANGED leaves one alone)."""

    name: str
    recurrence: str
    time_zone: str
    min_size: int
    desired: int
    max_size: int = UNCHANGED


@dataclass(frozen=True)
class OffHoursPlan:
    actions: tuple[ScheduledAction, ...]
    asleep_cron: str  # EventBridge Scheduler cron(...) when the endpoint starts answering 503
    awake_cron: str  # ... when it goes back to the pool
    time_zone: str
    awake_delay_seconds: int  # after start_hour: the pool's warm-up, rounded up to the minute


def day_set(field: str) -> list[int] | None:
    """A cron day-of-week field (*, MON-FRI, 1-5, MON,WED,FRI; 0 and 7 are Sunday) as sorted day
    numbers (Sunday 0), or None when it cannot be read."""
    field = field.strip().upper()
    if field in ("*", "?"):
        return list(range(7))
    days: set[int] = set()
    for part in field.split(","):
        ends = part.split("-")
        if len(ends) > 2:
            return None
        values = [_day(e) for e in ends]
        if None in values:
            return None
        first, last = values[0], values[-1]
        assert first is not None
        assert last is not None
        days.update(range(first, last + 1) if first <= last else [*range(first, 7), *range(0, last + 1)])
    return sorted(days)


def _day(text: str) -> int | None:
    if text in _DAY:
        return _DAY[text]
    return int(text) % 7 if re.fullmatch(r"[0-7]", text) else None


def day_field(days: list[int], *, numeric: bool = False) -> str:
    """Day numbers as a cron list: names for EventBridge Scheduler ('MON,TUE'; its numbers start at
    1 for Sunday), Unix numbers for Auto Scaling recurrences ('1,2', Sunday 0)."""
    return ",".join(str(d) if numeric else _DAY_NAMES[d] for d in sorted(set(days)))


def _at(days: list[int], minutes: int) -> tuple[list[int], int, int]:
    """Days and (hour, minute) of a moment `minutes` after midnight of each day (may roll over)."""
    shift, rest = divmod(minutes, 24 * 60)
    return [(d + shift) % 7 for d in days], rest // 60, rest % 60


def off_hours_plan(schedule: ScheduleArgs, *, min_size: int, warmup_seconds: int) -> OffHoursPlan:
    """The scheduled actions and switch times of a pool with working hours (inputs already valid)."""
    days = day_set(schedule.days)
    if days is None:
        raise ValueError(f"days {schedule.days!r} is not a cron day-of-week field")
    off_days, off_hour, off_minute = _at(days, schedule.end_hour * 60)
    on_days, on_hour, on_minute = _at(days, schedule.start_hour * 60)
    delay_minutes = math.ceil(max(warmup_seconds, 0) / 60)
    awake_days, awake_hour, awake_minute = _at(days, schedule.start_hour * 60 + delay_minutes)
    zone = schedule.time_zone
    actions = (
        ScheduledAction(
            "working-hours-start",
            f"{on_minute} {on_hour} * * {day_field(on_days, numeric=True)}",
            zone,
            min_size=min_size,
            desired=max(
                min_size, 1
            ),  # the day starts with a warm machine, even for a pool whose minimum is 0
        ),
        ScheduledAction(
            "working-hours-end",
            f"{off_minute} {off_hour} * * {day_field(off_days, numeric=True)}",
            zone,
            min_size=schedule.off_hours_size,
            desired=schedule.off_hours_size,
        ),
    )
    return OffHoursPlan(
        actions=actions,
        asleep_cron=f"cron({off_minute} {off_hour} ? * {day_field(off_days)} *)",
        awake_cron=f"cron({awake_minute} {awake_hour} ? * {day_field(awake_days)} *)",
        time_zone=zone,
        awake_delay_seconds=delay_minutes * 60,
    )
