"""What a run tells the world: its result, JSON log lines and a Pub/Sub notice.

Log lines are JSON objects on stdout with a `severity`, which Cloud Run's logging agent turns into
structured Cloud Logging entries (jsonPayload), so each stop is logged with its evidence and a
log-based metric or alert can count them. The notice is one Pub/Sub message per run that stopped
(or would have stopped) something or failed to, listing every such machine, like the AWS watchdog's
SNS summary.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from .decide import Decision, Reason
from .machines import Machine

LISTED = 50
PUBSUB_ENDPOINT = "https://pubsub.googleapis.com"


class JsonLog:
    """One JSON object per line (stdout on Cloud Run, where each becomes a structured log entry)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def write(self, event: str, severity: str = "INFO", **fields: Any) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(json.dumps({"severity": severity, "event": event, **fields}, default=_jsonable) + "\n")
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
        """The handler's return value: the AWS watchdog's shape (docs/reference.md)."""
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
    """Publish only when something was (or would have been) stopped, or a stop failed."""
    return bool(result.idle or result.failed)


def notice(result: RunResult, *, function: str) -> tuple[str, dict[str, str]]:
    """(body, attributes) of the Pub/Sub message."""
    verb = "would stop" if result.dry_run else "stopped"
    count = len(result.idle) if result.dry_run else len(result.stopped)
    subject = f"Idle GPU watchdog {verb} {count} machine(s), ~${result.estimated_hourly_saving_usd:,.2f}/h"
    if result.failed:
        subject += f", {len(result.failed)} failed"
    lines = [
        subject,
        f"{function} checked {result.checked} labelled running machine(s).",
        f"{'DRY RUN: nothing was stopped. ' if result.dry_run else ''}"
        f"{verb.capitalize()}: {count}; estimated hourly saving ${result.estimated_hourly_saving_usd:,.2f}.",
        "",
    ]
    lines += _listing(verb.capitalize(), result.idle if result.dry_run else result.stopped)
    lines += _listing("Failed to stop (see the function's log)", result.failed)
    skipped = {r.value: len(ids) for r, ids in result.skipped.items() if ids}
    if skipped:
        lines.append("Left running: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
    attributes = {
        "stopped": str(len(result.stopped)),
        "failed": str(len(result.failed)),
        "dry_run": "true" if result.dry_run else "false",
    }
    return "\n".join(lines), attributes


def _listing(title: str, keys: list[str]) -> list[str]:
    if not keys:
        return []
    shown = keys[:LISTED]
    more = f" (and {len(keys) - len(shown)} more)" if len(keys) > len(shown) else ""
    return [f"{title}{more}:", *(f"  {k}" for k in shown), ""]


def publish(session: Any, topic: str, body: str, attributes: Mapping[str, str], *, endpoint: str) -> None:
    """Pub/Sub `topics.publish` over REST with an authorised requests session; raises on failure."""
    message = {"data": base64.b64encode(body.encode()).decode(), "attributes": dict(attributes)}
    response = session.post(f"{endpoint}/v1/{topic}:publish", json={"messages": [message]}, timeout=30)
    if response.status_code >= 400:
        raise RuntimeError(f"Pub/Sub publish to {topic}: HTTP {response.status_code} {response.text[:300]}")


def decision_fields(
    decision: Decision, machine: Machine, *, action: str, error: str | None, saving: float | None
) -> Mapping[str, Any]:
    """The fields of one decision's log line: the machine, what was done, and the evidence."""
    fields: dict[str, Any] = {
        "machine": decision.key,
        "kind": machine.kind.value,
        "machine_type": machine.machine_type,
        "action": action,
        "reason": decision.reason.value if decision.reason is not None else "idle",
        "detail": decision.detail,
        "started": machine.started.isoformat(),
        "provisioning": machine.provisioning,
    }
    if decision.expected_points is not None:
        fields.update(
            max_percent=decision.max_percent, points=decision.points, expected_points=decision.expected_points
        )
    if machine.on_reserved_capacity:  # said on every line, above all when STOP_RESERVED_CAPACITY stops it
        fields["reservation"] = machine.reservation or machine.provisioning
        fields["reservation_note"] = "billed whether the machine runs or not"
    if saving is not None:
        fields["hourly_usd"] = saving
    if error:
        fields["error"] = error
    return fields
