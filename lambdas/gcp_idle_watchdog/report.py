"""What a run tells the world: its result, JSON log lines and a Pub/Sub notice.

Log lines are JSON objects on stdout with a `severity`, which Cloud Run's logging agent turns into
structured Cloud Logging entries (jsonPayload), so each stop is logged with its evidence and a
log-based metric or alert can count them. The notice is one Pub/Sub message per run that stopped
(or would have stopped) something or failed to, listing every such machine, like the AWS watchdog's
SNS summary.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, TextIO

from ..watchdog_core import report as core
from ..watchdog_core.report import RunResult, needs_notice
from .decide import Decision
from .machines import Machine

__all__ = [
    "LISTED",
    "PUBSUB_ENDPOINT",
    "JsonLog",
    "RunResult",
    "decision_fields",
    "needs_notice",
    "notice",
    "publish",
]

LISTED = core.LISTED
PUBSUB_ENDPOINT = "https://pubsub.googleapis.com"


class JsonLog(core.JsonLog):
    """One JSON object per line with its `severity` (stdout on Cloud Run, where each becomes a
    structured log entry)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream, severity=True)


def notice(result: RunResult, *, function: str) -> tuple[str, dict[str, str]]:
    """(body, attributes) of the Pub/Sub message."""
    lines = [
        core.notice_subject(result, "machine"),
        f"{function} checked {result.checked} labelled running machine(s).",
        *core.notice_lines(result),
    ]
    attributes = {
        "stopped": str(len(result.stopped)),
        "failed": str(len(result.failed)),
        "dry_run": "true" if result.dry_run else "false",
    }
    return "\n".join(lines), attributes


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
    notes = {}
    if machine.on_reserved_capacity:  # said on every line, above all when STOP_RESERVED_CAPACITY stops it
        notes = {
            "reservation": machine.reservation or machine.provisioning,
            "reservation_note": "billed whether the machine runs or not",
        }
    return core.decision_fields(
        decision,
        names={"machine": decision.key, "kind": machine.kind.value, "machine_type": machine.machine_type},
        action=action,
        facts={"started": machine.started.isoformat(), "provisioning": machine.provisioning},
        notes=notes,
        error=error,
        saving=saving,
    )
