"""Pure decisions: may this machine be stopped, and is it idle? The clock is passed in.

The AWS watchdog's rules (`lambdas/idle_gpu_watchdog/decide.py`), in GCP's terms. A machine is idle
only on positive evidence: every device (GPU, or TPU worker) has a point in every period of the
window and every point is below the threshold. One point at or above the threshold is evidence of
work (`busy`), whatever else is missing; missing points without such a point mean `no_metrics`.

Checks that need no metrics run first, so their machines cost nothing in the query:

1. `excluded`: the opt-out label (EXCLUDE_TAG_KEY) holds a time in the future. Label values allow
   only lowercase letters, digits, `-` and `_`, so the time is written `2026-12-01` (midnight UTC),
   `2026-12-01t18-00` or `2026-12-01t18-00-00` (UTC). A value that does not parse also excludes:
   the owner meant to opt out.
2. `managed`: a managed instance group created the VM (metadata `created-by`): stopping it would
   make the group recreate or repair it.
3. `reserved_capacity`: the VM consumes a reservation (or is bound to one), or the TPU node runs on
   reserved capacity: billed whether it runs or not (unless STOP_RESERVED_CAPACITY).
4. `not_stoppable`: a TPU node created by a queued resource or part of a multislice, or a Spot
   (preemptible) TPU node (the TPU API's stop is not relied on for them); a VM with local SSDs when
   DISCARD_LOCAL_SSD is false; after the metrics, a stop the API refused.
5. `grace`: a VM started less than GRACE_MINUTES ago (`lastStartTimestamp`: the last start); a TPU
   node created less than GRACE_MINUTES ago or, as TPU nodes carry no start time, whose series has a
   gap in the last GRACE_MINUTES (it was stopped or down, so it started again recently).

A preempted or terminated Spot VM is never a candidate: only RUNNING VMs and READY nodes are listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

from ..watchdog_core.decide import Decision, Reason, in_grace, opted_out, verdict
from .machines import Kind, Machine
from .metrics import Evidence, Window
from .settings import Settings

__all__ = ["Decision", "Reason", "judge", "parse_until", "precheck"]

_UNTIL_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:t(\d{2})-(\d{2})(?:-(\d{2}))?z?)?$")


def parse_until(value: str) -> datetime | None:
    """A label-safe UTC time (`2026-12-01`, `2026-12-01t18-00[-00]`), or None when it does not parse."""
    match = _UNTIL_RE.fullmatch(value.strip().lower())
    if match is None:
        return None
    parts = [int(p) if p else 0 for p in match.groups()]
    try:
        return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]
    except ValueError:
        return None


def precheck(machine: Machine, settings: Settings, now: datetime) -> Decision | None:
    """The reason to leave a machine alone without looking at its metrics, or None."""
    key = machine.key
    label = settings.exclude_tag_key
    raw_until = machine.labels.get(label)
    if excluded := opted_out(
        key, raw_until, tag_key=label, parse=parse_until, unparsable="is not a UTC time", now=now
    ):
        return excluded
    if machine.kind is Kind.VM and machine.created_by:
        return Decision(key, Reason.MANAGED, f"created by {machine.created_by}")
    if machine.on_reserved_capacity and not settings.stop_reserved_capacity:
        what = machine.reservation or f"{machine.provisioning} capacity"
        return Decision(key, Reason.RESERVED_CAPACITY, f"runs on {what}, billed whether running or not")
    if (why := _not_stoppable(machine, settings)) is not None:
        return Decision(key, Reason.NOT_STOPPABLE, why)
    what = "started" if machine.kind is Kind.VM else "created"
    return in_grace(key, machine.started, grace_minutes=settings.grace_minutes, now=now, what=what)


def _not_stoppable(machine: Machine, settings: Settings) -> str | None:
    if machine.kind is Kind.TPU:
        if machine.created_by:
            return f"created by the queued resource {machine.created_by}"
        if machine.multislice:
            return "part of a multislice"
        if machine.is_spot:
            return "a Spot (preemptible) TPU node"
        return None
    if machine.local_ssds and not settings.discard_local_ssd:
        return f"{machine.local_ssds} local SSD(s) and DISCARD_LOCAL_SSD=false"
    return None


def judge(
    machine: Machine, evidence: Evidence, window: Window, threshold: float, grace: Window | None = None
) -> Decision:
    """idle (reason None), busy, no_metrics or (TPU) grace, from one machine's series.

    `window` is the idle window; `grace`, for TPU nodes, the longer window that must have no gap.
    """
    expected_devices = max(machine.devices, 1)
    per_device = {d: _buckets(points, window) for d, points in evidence.devices.items()}
    values = [v for buckets in per_device.values() for v in buckets.values()]
    present = {d for d, buckets in per_device.items() if buckets}
    covered = min((len(b) for b in per_device.values()), default=0) if len(present) >= expected_devices else 0
    expected = window.expected_points
    unit = "GPU" if machine.kind is Kind.VM else "worker"

    def objections() -> Iterator[tuple[Reason, str]]:
        if not evidence.complete:
            yield Reason.NO_METRICS, "Cloud Monitoring reported partial results"
        if len(present) < expected_devices:
            yield Reason.NO_METRICS, f"{len(present)} of {expected_devices} {unit}(s) have data"
        if covered < expected:
            yield Reason.NO_METRICS, f"{covered} of {expected} periods have data on every {unit}"
        if grace is not None and grace.expected_points > expected:
            gaps = min(len(_buckets(points, grace)) for points in evidence.devices.values())
            if gaps < grace.expected_points:
                yield (
                    Reason.GRACE,
                    f"series has gaps in the last {grace.expected_points * grace.period_seconds // 60} min "
                    f"({gaps} of {grace.expected_points} periods): a recent start",
                )

    return verdict(
        machine.key,
        peak=max(values) if values else None,
        threshold=threshold,
        points=covered,
        expected=expected,
        objections=objections(),
        idle_suffix=f" on {len(present)} {unit}(s)",
    )


def _buckets(points: list[tuple[datetime, float]], window: Window) -> dict[int, float]:
    out: dict[int, float] = {}
    for end_time, value in points:
        bucket = window.bucket_of_end(end_time)
        if bucket is not None:
            out[bucket] = max(value, out.get(bucket, value))
    return out
