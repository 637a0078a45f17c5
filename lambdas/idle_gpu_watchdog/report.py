"""What a run tells the world: its result, JSON log lines, a summary metric and an SNS message."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from .decide import Decision, Reason
from .instances import Instance

SNS_SUBJECT_MAX = 100
SNS_LISTED_IDS = 50


class JsonLog:
    """One JSON object per line on a stream (stdout in Lambda, so CloudWatch Logs Insights parses it)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def write(self, event: str, **fields: Any) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(json.dumps({"event": event, **fields}, default=_jsonable) + "\n")
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
        """The handler's return value (docs/reference.md), `failed` and the estimated saving included."""
        return {
            "checked": self.checked,
            "idle": list(self.idle),
            "stopped": list(self.stopped),
            "dry_run": self.dry_run,
            "skipped": {reason.value: list(self.skipped.get(reason, ())) for reason in Reason},
            "failed": list(self.failed),
            "estimated_hourly_saving_usd": round(self.estimated_hourly_saving_usd, 4),
        }


def summary_metric_data(result: RunResult, now: datetime) -> list[dict[str, Any]]:
    """PutMetricData items; the DryRun dimension keeps rehearsals apart from real stops."""
    dimensions = [{"Name": "DryRun", "Value": "true" if result.dry_run else "false"}]
    figures = [
        ("InstancesChecked", float(result.checked), "Count"),
        ("InstancesIdle", float(len(result.idle)), "Count"),
        ("InstancesStopped", float(len(result.stopped)), "Count"),
        ("StopFailures", float(len(result.failed)), "Count"),
        ("EstimatedHourlySavingUSD", round(result.estimated_hourly_saving_usd, 4), "None"),
    ]
    return [
        {"MetricName": name, "Dimensions": dimensions, "Timestamp": now, "Value": value, "Unit": unit}
        for name, value, unit in figures
    ]


def needs_notice(result: RunResult) -> bool:
    """Publish only when something was (or would have been) stopped, or a stop failed."""
    return bool(result.idle or result.failed)


def sns_message(result: RunResult, *, function: str, region: str | None) -> tuple[str, str]:
    """(subject, body) for the SNS summary."""
    verb = "would stop" if result.dry_run else "stopped"
    count = len(result.idle) if result.dry_run else len(result.stopped)
    subject = f"Idle GPU watchdog {verb} {count} instance(s), ~${result.estimated_hourly_saving_usd:,.2f}/h"
    if result.failed:
        subject += f", {len(result.failed)} failed"
    lines = [
        f"{function} ({region or 'unknown region'}) checked {result.checked} tagged running instance(s).",
        f"{'DRY RUN: nothing was stopped. ' if result.dry_run else ''}"
        f"{verb.capitalize()}: {count}; estimated hourly saving ${result.estimated_hourly_saving_usd:,.2f}.",
        "",
    ]
    listed = result.idle if result.dry_run else result.stopped
    lines += _listing(verb.capitalize(), listed)
    lines += _listing("Failed to stop (see the function's log)", result.failed)
    skipped = {r.value: len(ids) for r, ids in result.skipped.items() if ids}
    if skipped:
        lines.append("Left running: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
    return subject[:SNS_SUBJECT_MAX], "\n".join(lines)


def _listing(title: str, ids: list[str]) -> list[str]:
    if not ids:
        return []
    shown = ids[:SNS_LISTED_IDS]
    more = f" (and {len(ids) - len(shown)} more)" if len(ids) > len(shown) else ""
    return [f"{title}{more}:", *(f"  {i}" for i in shown), ""]


def decision_fields(
    decision: Decision, instance: Instance, *, action: str, error: str | None, saving: float | None
) -> Mapping[str, Any]:
    """The fields of one decision's log line."""
    fields: dict[str, Any] = {
        "instance_id": decision.instance_id,
        "instance_type": instance.instance_type,
        "action": action,
        "reason": decision.reason.value if decision.reason is not None else "idle",
        "detail": decision.detail,
        "launch_time": instance.launch_time.isoformat(),
        "lifecycle": instance.lifecycle or "on-demand",
    }
    if decision.expected_points is not None:
        fields.update(
            max_percent=decision.max_percent, points=decision.points, expected_points=decision.expected_points
        )
    if saving is not None:
        fields["hourly_usd"] = saving
    if error:
        fields["error"] = error
    return fields
