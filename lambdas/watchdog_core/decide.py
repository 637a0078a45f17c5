"""The decision both clouds make: positive evidence of idleness, or a reason to leave a machine alone.

A machine is idle only when every period of the window has a point (on every device it has) and
every point is below the threshold. One point at or above the threshold is evidence of work
(`busy`), whatever else is missing; otherwise the first objection a cloud raises (missing or
partial data: `no_metrics`; a recent start seen in the series: `grace`) keeps it running.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class Reason(StrEnum):
    NO_METRICS = "no_metrics"
    GRACE = "grace"
    BUSY = "busy"
    EXCLUDED = "excluded"
    NOT_STOPPABLE = "not_stoppable"
    RESERVED_CAPACITY = "reserved_capacity"
    MANAGED = "managed"


@dataclass(frozen=True)
class Decision:
    key: str  # the instance id (AWS) or the machine's full resource name (GCP)
    reason: Reason | None  # None: idle, to be stopped
    detail: str
    max_percent: float | None = None
    points: int | None = None
    expected_points: int | None = None

    @property
    def idle(self) -> bool:
        return self.reason is None

    def overruled(self, reason: Reason, detail: str) -> Decision:
        """The same evidence, another verdict (an idle machine that turned out not stoppable)."""
        return Decision(self.key, reason, detail, self.max_percent, self.points, self.expected_points)


def opted_out(
    key: str,
    value: str | None,
    *,
    tag_key: str,
    parse: Callable[[str], datetime | None],
    unparsable: str,
    now: datetime,
) -> Decision | None:
    """`excluded` while the opt-out tag (label) `tag_key` holds a time in the future, or a value that
    does not parse (the owner meant to opt out); None without the tag or once the time has passed."""
    if value is None:
        return None
    until = parse(value)
    if until is None:
        return Decision(key, Reason.EXCLUDED, f"{tag_key}={value!r} {unparsable}")
    if until > now:
        return Decision(key, Reason.EXCLUDED, f"opted out until {until.isoformat()}")
    return None


def in_grace(key: str, started: datetime, *, grace_minutes: int, now: datetime, what: str) -> Decision | None:
    """`grace` when the machine `what` (started, created) less than `grace_minutes` ago."""
    since = now - started
    if since >= timedelta(minutes=grace_minutes):
        return None
    minutes = max(since.total_seconds(), 0) / 60
    return Decision(key, Reason.GRACE, f"{what} {minutes:.0f} min ago (< {grace_minutes})")


def verdict(
    key: str,
    *,
    peak: float | None,
    threshold: float,
    points: int,
    expected: int,
    objections: Iterable[tuple[Reason, str]],
    idle_suffix: str = "",
) -> Decision:
    """busy when the peak reaches the threshold; else the first objection; else idle.

    `objections` is read lazily and only up to its first item, so later ones may assume the
    earlier ones did not hold.
    """
    facts = {"max_percent": peak, "points": points, "expected_points": expected}
    if peak is not None and peak >= threshold:
        return Decision(key, Reason.BUSY, f"peak {peak:g}% >= {threshold:g}%", **facts)
    for reason, detail in objections:
        return Decision(key, reason, detail, **facts)
    detail = f"peak {peak:g}% < {threshold:g}% in all {expected} periods{idle_suffix}"
    return Decision(key, None, detail, **facts)
