"""The 503 a sleeping pool answers with (pure; the clock is passed in).

An ALB invokes a Lambda target synchronously with the request and turns the returned document
(`statusCode`, `statusDescription`, `headers`, `body`, `isBase64Encoded`) into the HTTP response
(https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html,
"Respond to the load balancer", read 2026-11-25). A fixed-response action cannot set headers, which
is why a Lambda answers here.

`Retry-After` is in seconds (RFC 9110 section 10.2.3): until working hours start plus the pool's
warm-up when the pool sleeps on schedule; the warm-up alone when the pool is due to be up (it is
starting, or scaled to zero by its policy), so a client that honours it comes back once a machine
can answer.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

_DAY = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}


@dataclass(frozen=True)
class Hours:
    """Working hours, as the component renders them into the environment."""

    time_zone: str
    days: tuple[int, ...]  # Sunday 0
    start_hour: int
    end_hour: int
    warmup_seconds: int
    pool: str

    @classmethod
    def from_env(cls, env: dict[str, str] | object) -> Hours:
        get = env.get  # type: ignore[attr-defined]
        problems = []
        zone = get("TIME_ZONE") or ""
        try:
            ZoneInfo(zone)
        except (ValueError, KeyError, OSError):
            problems.append(f"TIME_ZONE={zone!r} must be an IANA time zone")
        days = tuple(sorted({int(d) for d in (get("DAYS") or "").split(",") if d.strip().isdigit()}))
        if not days or any(d > 6 for d in days):
            problems.append(f"DAYS={get('DAYS')!r} must be day numbers 0-6 (Sunday 0), comma-separated")
        numbers = {}
        for name, low, high in (("START_HOUR", 0, 23), ("END_HOUR", 1, 24), ("WARMUP_SECONDS", 0, 86400)):
            raw = get(name) or ""
            numbers[name] = int(raw) if raw.isdigit() else -1
            if not low <= numbers[name] <= high:
                problems.append(f"{name}={raw!r} must be a whole number {low}-{high}")
        if problems:
            raise ValueError("invalid pool-asleep environment: " + "; ".join(problems) + ".")
        return cls(
            time_zone=zone,
            days=days,
            start_hour=numbers["START_HOUR"],
            end_hour=numbers["END_HOUR"],
            warmup_seconds=numbers["WARMUP_SECONDS"],
            pool=get("POOL_NAME") or "the pool",
        )


def next_start(now: datetime, hours: Hours) -> datetime | None:
    """When working hours next begin (now if they have), or None when now is inside them."""
    zone = ZoneInfo(hours.time_zone)
    local = now.astimezone(zone)
    if local.isoweekday() % 7 in hours.days and hours.start_hour <= local.hour < hours.end_hour:
        return None
    for ahead in range(8):
        day = (local + timedelta(days=ahead)).date()
        if day.isoweekday() % 7 not in hours.days:
            continue
        start = datetime(day.year, day.month, day.day, hours.start_hour, tzinfo=zone)
        if start >= local:
            return start
    raise AssertionError("a week always holds a working day")


def retry_after_seconds(now: datetime, hours: Hours) -> int:
    start = next_start(now, hours)
    wait = 0.0 if start is None else (start - now).total_seconds()
    return max(math.ceil(wait) + hours.warmup_seconds, 1)


def response(now: datetime, hours: Hours) -> dict[str, object]:
    seconds = retry_after_seconds(now, hours)
    start = next_start(now, hours)
    when = (
        f"it starts at {start.isoformat()} and serves about {hours.warmup_seconds} s later"
        if start is not None
        else f"it is starting; a machine serves in about {hours.warmup_seconds} s"
    )
    body = {
        "error": {
            "type": "pool_asleep",
            "message": f"{hours.pool} is scaled to zero outside working hours; {when}.",
            "retry_after_seconds": seconds,
        }
    }
    return {
        "statusCode": 503,
        "statusDescription": "503 Service Unavailable",
        "isBase64Encoded": False,
        "headers": {
            "Content-Type": "application/json",
            "Retry-After": str(seconds),
            "Cache-Control": "no-store",
        },
        "body": json.dumps(body),
    }
