"""Pure decisions: may this instance be stopped, and is it idle? The clock is passed in.

An instance is idle only on positive evidence: every period bucket of the
window has a datapoint and every datapoint is below the threshold. One
datapoint at or above the threshold is evidence of work (`busy`), whatever
else is missing; missing buckets without such a datapoint mean `no_metrics`.

Checks that need no metrics run first, so their instances cost no query:

1. `excluded`: the opt-out tag (EXCLUDE_TAG_KEY) holds a time in the future
   (ISO 8601; a date alone means midnight UTC; no zone means UTC). A value that
   does not parse also excludes: the owner meant to opt out.
2. `managed`: an Auto Scaling group or EC2/Spot Fleet owns the instance;
   stopping it would make the group replace it (or mark it unhealthy).
3. `reserved_capacity`: it runs in a capacity reservation or Capacity Block,
   which is billed whether it runs or not (unless STOP_RESERVED_CAPACITY).
4. `not_stoppable`: instance-store root volume, or a Spot instance without a
   Spot request id; after the metrics, idle Spot instances whose request is not
   `persistent` (a one-time request's instance cannot be stopped).
5. `grace`: launched or started less than GRACE_MINUTES ago (EC2's LaunchTime
   is the last launch or start).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime

from ..watchdog_core.decide import Decision, Reason, in_grace, opted_out, verdict
from ..watchdog_core.window import parse_utc
from .instances import Instance
from .metrics import Series, Window
from .settings import Settings

__all__ = ["Decision", "Reason", "judge", "parse_until", "precheck", "spot_check"]


def parse_until(value: str) -> datetime | None:
    """An ISO 8601 time (UTC when it names no zone), or None when it does not parse."""
    return parse_utc(value.strip())


def precheck(instance: Instance, settings: Settings, now: datetime) -> Decision | None:
    """The reason to leave an instance alone without looking at its metrics, or None."""
    iid = instance.instance_id
    tag_key = settings.exclude_tag_key
    raw_until = instance.tags.get(tag_key)
    if excluded := opted_out(
        iid, raw_until, tag_key=tag_key, parse=parse_until, unparsable="is not ISO 8601", now=now
    ):
        return excluded
    if (owner := instance.managed_by) is not None:
        return Decision(iid, Reason.MANAGED, f"owned by {owner}")
    if instance.on_reserved_capacity and not settings.stop_reserved_capacity:
        what = instance.capacity_reservation_id or "a Capacity Block"
        return Decision(iid, Reason.RESERVED_CAPACITY, f"runs in {what}, billed whether running or not")
    if instance.root_device_type != "ebs":
        return Decision(iid, Reason.NOT_STOPPABLE, f"root device is {instance.root_device_type}")
    if instance.is_spot and not instance.spot_request_id:
        return Decision(iid, Reason.NOT_STOPPABLE, "Spot instance without a Spot request id")
    return in_grace(iid, instance.launch_time, grace_minutes=settings.grace_minutes, now=now, what="started")


def judge(instance_id: str, series: Series, window: Window, threshold_percent: float) -> Decision:
    """idle (reason None), busy or no_metrics, from the datapoints of one instance."""
    in_window = [(window.bucket_of_start(ts), value) for ts, value in series.points]
    values = [value for bucket, value in in_window if bucket is not None]
    buckets = {bucket for bucket, _ in in_window if bucket is not None}
    expected = window.expected_points

    def objections() -> Iterator[tuple[Reason, str]]:
        if not series.complete:
            yield Reason.NO_METRICS, "CloudWatch returned partial data"
        if len(buckets) < expected:
            yield Reason.NO_METRICS, f"{len(buckets)} of {expected} periods have data"

    return verdict(
        instance_id,
        peak=max(values) if values else None,
        threshold=threshold_percent,
        points=len(buckets),
        expected=expected,
        objections=objections(),
    )


def spot_check(decision: Decision, instance: Instance, request_types: Mapping[str, str]) -> Decision:
    """An idle Spot instance stays idle only when its request is persistent (stoppable)."""
    if not decision.idle or not instance.is_spot:
        return decision
    kind = request_types.get(instance.spot_request_id or "")
    if kind == "persistent":
        return decision
    what = f"a {kind} Spot request" if kind else "a Spot request that could not be found"
    return decision.overruled(
        Reason.NOT_STOPPABLE, f"idle, but runs on {what}; only persistent Spot requests can be stopped"
    )
