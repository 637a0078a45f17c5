"""Elastic pools priced as a range: what the pool costs per hour at its minimum, as expected, and at
its maximum, with the basis of each (issue #25, item 6).

An elastic pool (an Auto Scaling group or managed instance group of accelerators with a minimum and
a maximum) runs anywhere between the two, so one figure would mislead: the plan reports three.

- minimum: the fewest machines it can run, the lowest of its own minimum and of any size a
  scheduled action sets (0 for a pool that sleeps outside working hours);
- maximum: the most, the highest of its maximum and of any scheduled maximum;
- expected: from the usage file's hours at each size when given (`hours_at_size`, see
  `pricing.usage`); else, when scheduled actions resize the group on a weekly cron, the week
  replayed minute by minute (each action's desired size, raised to the minimum it sets, holds
  until the next action; the week wraps); else the group's desired capacity,
  and never zero by omission: a pool whose minimum and desired capacity are 0 with nothing saying
  when it runs expects one machine (the least it runs while it serves at all), and says so.

The plan's `hourly_usd` of such an item stays its maximum, so `accelerator-spend-budget` judges
the most the stack can cost unless told otherwise (its `elasticPools` config).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from inference_infra.components.catalog import Cloud
from inference_infra.components.errors import InputError
from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_EKS_NODE_GROUP,
    GCP_GKE_NODE_POOL,
    GCP_GROUP_MANAGERS,
    AcceleratorUse,
)
from inference_infra.components.resources.schedules import UNCHANGED, ScheduledSize, cron_fields
from inference_infra.components.units import HOURS_PER_MONTH

MINUTES_PER_WEEK = 7 * 24 * 60
MAX_TABLE_SIZE = 1000  # machines: sizes priced one by one up to this
_DAYS = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

PriceOne = Callable[[AcceleratorUse, "str | None"], tuple[float, str]]


@dataclass(frozen=True)
class HourlyRange:
    """An elastic pool's hourly cost: minimum, expected, maximum, and how each was found."""

    minimum: float
    expected: float
    maximum: float
    min_size: int
    max_size: int
    expected_size: float  # machines on average
    expected_basis: str
    size_prices: tuple[float, ...]  # USD/hour at 0, 1, ..., max_size machines (for a usage file)

    def describe(self) -> str:
        return (
            f"elastic {self.min_size}..{self.max_size} machines: ${self.minimum:,.2f}/h at {self.min_size}, "
            f"expected ${self.expected:,.2f}/h ({self.expected_basis}), ${self.maximum:,.2f}/h at "
            f"{self.max_size}"
        )

    def with_hours(self, hours: Mapping[int, float], where: str) -> HourlyRange:
        """The expected cost from hours per month at each size (the rest of the month at the minimum)."""
        shares = hours_to_shares(hours, self.min_size, self.max_size)
        expected = sum(share * self.size_prices[size] for size, share in shares.items())
        machines = sum(share * size for size, share in shares.items())
        listed = ", ".join(f"{hours[s]:g} h at {s}" for s in sorted(hours))
        return replace(
            self, expected=expected, expected_size=machines, expected_basis=f"{where}: {listed} per month"
        )


HOURS_AT_SIZE = "hours_at_size"  # the usage-file key of an elastic pool


def pool_hours(value: Any, low: int, high: int, where: str) -> dict[int, float]:
    """A usage file's `hours_at_size` ({machines: hours per month}) checked against the pool's bounds.
    InputError (naming the key, the value and what is allowed) when it cannot be used."""
    key = f"{where}.{HOURS_AT_SIZE}"
    if not isinstance(value, Mapping) or not value:
        raise InputError(
            f"{key} = {value!r}; must map machine counts ({low}..{high}) to hours per month, e.g. "
            f"{{{low}: 400, {high}: 50}}."
        )
    hours: dict[int, float] = {}
    for size, h in value.items():
        count = int(size) if isinstance(size, int) or (isinstance(size, str) and size.isdigit()) else None
        if isinstance(size, bool) or count is None or not low <= count <= high:
            raise InputError(f"{key}: size {size!r} is not a machine count the pool can run ({low}..{high}).")
        if isinstance(h, bool) or not isinstance(h, (int, float)) or h < 0:
            raise InputError(f"{key}.{size} = {h!r}; must be a non-negative number of hours per month.")
        hours[count] = hours.get(count, 0.0) + float(h)
    total = sum(hours.values())
    if total > HOURS_PER_MONTH + 1e-9:
        raise InputError(
            f"{key} adds up to {total:g} hours; a month has {HOURS_PER_MONTH} (the hours not listed are "
            f"spent at the minimum, {low})."
        )
    return hours


def hours_to_shares(hours: Mapping[int, float], low: int, high: int) -> dict[int, float]:
    total = float(sum(hours.values()))
    shares = {size: h / HOURS_PER_MONTH for size, h in hours.items() if h}
    rest = max(HOURS_PER_MONTH - total, 0.0) / HOURS_PER_MONTH
    if rest:
        shares[low] = shares.get(low, 0.0) + rest
    return shares


# The elastic pools' resources: groups that scale themselves on their own policies and schedules.
# EKS managed node groups and GKE node pools are ranges too (issue #34, item 8): a cluster autoscaler
# sizes them between their bounds. Batch environments keep their desired-size price (with their bounds
# in the basis): the Batch scheduler sizes them from work the plan cannot see.
ELASTIC_TYPES = frozenset({AWS_AUTOSCALING_GROUP, *GCP_GROUP_MANAGERS, AWS_EKS_NODE_GROUP, GCP_GKE_NODE_POOL})
# Node groups and pools whose reader fills a missing bound with 0: a range only with a maximum.
_BOUND_BY_READER = frozenset({AWS_EKS_NODE_GROUP, GCP_GKE_NODE_POOL})


def is_elastic(type_token: str, use: AcceleratorUse) -> bool:
    return (
        type_token in ELASTIC_TYPES
        and use.max_count is not None
        and use.min_count is not None
        and not use.reservation
        and (type_token not in _BOUND_BY_READER or use.max_count >= max(use.count, 1))
    )


def price_range(
    use: AcceleratorUse,
    region: str | None,
    price_one: PriceOne,
    schedules: Sequence[ScheduledSize] = (),
    reserved: int = 0,
) -> HourlyRange:
    """The range of an elastic use (is_elastic); CatalogError when its type cannot be priced."""
    low, high = int(use.min_count or 0), int(use.max_count or 0)
    floors = [s.min_size for s in schedules if s.min_size is not None and s.min_size != UNCHANGED]
    # A GCP group its autoscaler sizes has no minimum of its own (its use says 0): the autoscaler's
    # floor, or the lowest its schedules leave it at, is the minimum (issue #38: a pool whose autoscaler
    # minimum is 1 was priced at 0).
    low = min(floors) if use.cloud is Cloud.GCP and floors else min([low, *floors])
    for s in schedules:
        if s.max_size is not None and s.max_size != UNCHANGED:
            high = max(high, s.max_size)
    top = min(high, MAX_TABLE_SIZE)
    # Machines that run in a capacity reservation of the stack are billed there (priced with it).
    prices = tuple(
        0.0 if n <= reserved else price_one(use.at_count(n - reserved), region)[0] for n in range(top + 1)
    )
    desired = min(max(use.count, low), top)
    shares = week_shares(schedules, low=low, high=top)
    if shares is not None:
        listed = ", ".join(f"{share * 168:.0f} h/week at {size}" for size, share in sorted(shares.items()))
        basis = f"scheduled actions replayed over a week: {listed}"
    elif desired == 0 and top > 0:  # nothing says when it runs: not free, at least one machine
        shares = {1: 1.0}
        basis = (
            "no schedule or usage file says when it runs, so one machine, the least it runs while it "
            f"serves (its minimum and desired capacity are 0); give {HOURS_AT_SIZE} in a --usage-file"
        )
    else:
        shares, basis = {desired: 1.0}, f"its desired capacity, {desired}"
    if reserved:
        basis += f"; the first {reserved} run in a capacity reservation, priced there"
    return HourlyRange(
        minimum=prices[min(low, top)],
        expected=sum(share * prices[size] for size, share in shares.items()),
        maximum=prices[top],
        min_size=low,
        max_size=top,
        expected_size=sum(share * size for size, share in shares.items()),
        expected_basis=basis,
        size_prices=prices,
    )


def week_shares(schedules: Sequence[ScheduledSize], *, low: int, high: int) -> dict[int, float] | None:
    """size -> share of a week, from weekly cron schedules (minute hour * * days); None when there is
    none the reader understands. Local time throughout (a daylight-saving shift moves both ends)."""
    events: list[tuple[int, int]] = []  # (minute of the week, desired size)
    for s in schedules:
        moments = _weekly_minutes(s.recurrence)
        if moments is None or (s.desired is None and s.min_size is None):
            return None  # a one-off or non-weekly action, or sizes not known: no week to replay
        # The size the action sets: its desired capacity, raised to the minimum it sets (a group is
        # never below its minimum); an action that sets neither leaves the size as it was.
        sizes = [v for v in (s.desired, s.min_size) if v is not None and v != UNCHANGED]
        if not sizes:
            continue
        size = max(sizes)
        events += [(m, min(max(size, low), high)) for m in moments]
    if not events:
        return None
    events.sort()
    shares: dict[int, float] = {}
    size = events[-1][1]  # the last action of the week holds until the first one (the week wraps)
    start = 0
    for minute, next_size in events:
        shares[size] = shares.get(size, 0.0) + (minute - start) / MINUTES_PER_WEEK
        size, start = next_size, minute
    shares[size] = shares.get(size, 0.0) + (MINUTES_PER_WEEK - start) / MINUTES_PER_WEEK
    return {k: v for k, v in shares.items() if v > 0}


def _weekly_minutes(recurrence: str | None) -> list[int] | None:
    """Minutes of the week (Sunday 00:00 = 0) a 'M H * * DOW' cron fires at; None otherwise."""
    fields = cron_fields(recurrence)
    if fields is None:
        return None
    minute, hour, dom, month, dow = fields
    if dom != "*" or month != "*" or not minute.isdigit() or not hour.isdigit():
        return None
    days = _days(dow)
    if days is None:
        return None
    return sorted(day * 1440 + int(hour) * 60 + int(minute) for day in days)


def _days(field: str) -> list[int] | None:
    if field in ("*", "?"):
        return list(range(7))
    out: set[int] = set()
    for part in field.upper().split(","):
        ends = part.split("-")
        values = [_day(e) for e in ends]
        if any(v is None for v in values) or len(values) > 2:
            return None
        first, last = values[0], values[-1]
        if first <= last:
            out.update(range(first, last + 1))
        else:  # SAT-MON wraps
            out.update(list(range(first, 7)) + list(range(0, last + 1)))
    return sorted(out)


def _day(text: str) -> int | None:
    if text in _DAYS:
        return _DAYS[text]
    if text.isdigit() and 0 <= int(text) <= 7:
        return int(text) % 7
    return None
