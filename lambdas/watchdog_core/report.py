"""What a run tells the world, in the words both clouds share: the result the entry point returns,
JSON log lines, the text of the run's notice and the fields of each decision's log line."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from .decide import Decision, Reason

LISTED = 50  # machines named per list in a notice


class JsonLog:
    """One JSON object per line on a stream (stdout by default, where CloudWatch Logs Insights and
    Cloud Logging parse it). With `severity`, each line starts with a `severity` field, which Cloud
    Run's logging agent turns into the entry's severity; without it the severity is not written."""

    def __init__(self, stream: TextIO | None = None, *, severity: bool = False) -> None:
        self._stream = stream
        self._severity = severity

    def write(self, event: str, severity: str = "INFO", **fields: Any) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        head = {"severity": severity} if self._severity else {}
        stream.write(json.dumps({**head, "event": event, **fields}, default=_jsonable) + "\n")
        stream.flush()


def _jsonable(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


@dataclass
class RunResult:
    checked: int
    idle: list[str]
    stopped: list[str]
    dry_run: bool
    skipped: dict[Reason, list[str]]
    failed: list[str] = field(default_factory=list)
    estimated_hourly_saving_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The entry point's return value (docs/reference.md), `failed` and the estimated saving included."""
        return {
            "checked": self.checked,
            "idle": list(self.idle),
            "stopped": list(self.stopped),
            "dry_run": self.dry_run,
            "skipped": {reason.value: list(self.skipped.get(reason, ())) for reason in Reason},
            "failed": list(self.failed),
            "estimated_hourly_saving_usd": round(self.estimated_hourly_saving_usd, 4),
        }


def needs_notice(result: RunResult) -> bool:
    """Notify only when something was (or would have been) stopped, or a stop failed."""
    return bool(result.idle or result.failed)


def notice_subject(result: RunResult, noun: str) -> str:
    """`Idle GPU watchdog stopped 3 instance(s), ~$4.02/h, 1 failed`."""
    verb, count = _verb(result)
    subject = f"Idle GPU watchdog {verb} {count} {noun}(s), ~${result.estimated_hourly_saving_usd:,.2f}/h"
    if result.failed:
        subject += f", {len(result.failed)} failed"
    return subject


def notice_lines(result: RunResult) -> list[str]:
    """The notice's body after its first line: the count, then what was stopped, what failed, and
    how many were left running for each reason."""
    verb, count = _verb(result)
    lines = [
        f"{'DRY RUN: nothing was stopped. ' if result.dry_run else ''}"
        f"{verb.capitalize()}: {count}; estimated hourly saving ${result.estimated_hourly_saving_usd:,.2f}.",
        "",
    ]
    lines += _listing(verb.capitalize(), result.idle if result.dry_run else result.stopped)
    lines += _listing("Failed to stop (see the function's log)", result.failed)
    skipped = {r.value: len(keys) for r, keys in result.skipped.items() if keys}
    if skipped:
        lines.append("Left running: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
    return lines


def _verb(result: RunResult) -> tuple[str, int]:
    if result.dry_run:
        return "would stop", len(result.idle)
    return "stopped", len(result.stopped)


def _listing(title: str, keys: list[str]) -> list[str]:
    if not keys:
        return []
    shown = keys[:LISTED]
    more = f" (and {len(keys) - len(shown)} more)" if len(keys) > len(shown) else ""
    return [f"{title}{more}:", *(f"  {k}" for k in shown), ""]


def decision_fields(
    decision: Decision,
    *,
    names: Mapping[str, Any],
    action: str,
    facts: Mapping[str, Any],
    notes: Mapping[str, Any] | None = None,
    error: str | None,
    saving: float | None,
) -> dict[str, Any]:
    """One decision's log line: `names` (which machine), what was done and why, `facts` about the
    machine, the metric evidence, `notes`, then the hourly price and the error, when there are."""
    fields: dict[str, Any] = {
        **names,
        "action": action,
        "reason": decision.reason.value if decision.reason is not None else "idle",
        "detail": decision.detail,
        **facts,
    }
    if decision.expected_points is not None:
        fields.update(
            max_percent=decision.max_percent, points=decision.points, expected_points=decision.expected_points
        )
    fields.update(notes or {})
    if saving is not None:
        fields["hourly_usd"] = saving
    if error:
        fields["error"] = error
    return fields
