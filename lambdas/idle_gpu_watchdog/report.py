"""What a run tells the world: its result, JSON log lines, a summary metric and an SNS message.

The result, the log and the notice's text are the shared core's (`lambdas/watchdog_core/report.py`);
here are what only AWS has: the PutMetricData figures and the SNS subject and body.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..watchdog_core import report as core
from ..watchdog_core.report import JsonLog, RunResult, needs_notice
from .decide import Decision
from .instances import Instance

__all__ = [
    "SNS_LISTED_IDS",
    "SNS_SUBJECT_MAX",
    "JsonLog",
    "RunResult",
    "decision_fields",
    "needs_notice",
    "sns_message",
    "summary_metric_data",
]

SNS_SUBJECT_MAX = 100
SNS_LISTED_IDS = core.LISTED


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


def sns_message(result: RunResult, *, function: str, region: str | None) -> tuple[str, str]:
    """(subject, body) for the SNS summary."""
    subject = core.notice_subject(result, "instance")
    lines = [
        f"{function} ({region or 'unknown region'}) checked {result.checked} tagged running instance(s).",
        *core.notice_lines(result),
    ]
    return subject[:SNS_SUBJECT_MAX], "\n".join(lines)


def decision_fields(
    decision: Decision, instance: Instance, *, action: str, error: str | None, saving: float | None
) -> Mapping[str, Any]:
    """The fields of one decision's log line."""
    return core.decision_fields(
        decision,
        names={"instance_id": decision.key, "instance_type": instance.instance_type},
        action=action,
        facts={
            "launch_time": instance.launch_time.isoformat(),
            "lifecycle": instance.lifecycle or "on-demand",
        },
        error=error,
        saving=saving,
    )
