"""The idle window: IDLE_MINUTES of whole periods ending at the last period boundary before now.

Its periods are whole and aligned as the metric stores keep them (CloudWatch and Cloud Monitoring
both align periods to the epoch). The stores stamp a period differently: CloudWatch with its start
(`bucket_of_start`), Cloud Monitoring's aligned points with its end (`bucket_of_end`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol


class WindowSettings(Protocol):
    @property
    def metric_period_seconds(self) -> int: ...

    @property
    def window_seconds(self) -> int: ...


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    period_seconds: int

    @property
    def expected_points(self) -> int:
        return int((self.end - self.start).total_seconds()) // self.period_seconds

    def bucket_of_start(self, timestamp: datetime) -> int | None:
        """Index of the period that starts at or before `timestamp`, or None outside the window."""
        if not self.start <= timestamp < self.end:
            return None
        return int((timestamp - self.start).total_seconds()) // self.period_seconds

    def bucket_of_end(self, end_time: datetime) -> int | None:
        """Index of the period a point stamped with its period's end belongs to: bucket k holds the
        ends in (start + k*period, start + (k+1)*period]; None outside the window."""
        if not self.start < end_time <= self.end:
            return None
        return (int((end_time - self.start).total_seconds()) - 1) // self.period_seconds

    def widened(self, seconds: int) -> Window:
        """The same end, reaching back `seconds` (whole periods), when that is longer."""
        periods = -(-seconds // self.period_seconds)
        start = self.end - timedelta(seconds=periods * self.period_seconds)
        return Window(min(start, self.start), self.end, self.period_seconds)


def window_for(now: datetime, settings: WindowSettings) -> Window:
    """The idle window for a run at `now`."""
    period = settings.metric_period_seconds
    end = now - timedelta(seconds=int(now.timestamp()) % period, microseconds=now.microsecond)
    return Window(start=end - timedelta(seconds=settings.window_seconds), end=end, period_seconds=period)


def parse_utc(text: str) -> datetime | None:
    """An ISO 8601 / RFC 3339 time as an aware datetime (UTC when it names no zone; `Z` accepted on
    every Python the runtimes offer); None when it does not parse."""
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
