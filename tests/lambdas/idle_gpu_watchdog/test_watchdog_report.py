"""What a run reports: the return value, the summary metric, the SNS message, the JSON log lines."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from inference_infra.lambdas.idle_gpu_watchdog.decide import Reason
from inference_infra.lambdas.idle_gpu_watchdog.report import (
    SNS_SUBJECT_MAX,
    JsonLog,
    RunResult,
    needs_notice,
    sns_message,
    summary_metric_data,
)

NOW = datetime(2026, 3, 2, 12, 5, tzinfo=UTC)


def result(**overrides: object) -> RunResult:
    values = {
        "checked": 3,
        "idle": ["i-1"],
        "stopped": ["i-1"],
        "dry_run": False,
        "skipped": {Reason.BUSY: ["i-2"], Reason.GRACE: ["i-3"]},
        "estimated_hourly_saving_usd": 1.006,
    }
    return RunResult(**{**values, **overrides})


def test_run_result_has_the_spec_shape_with_every_reason():
    out = result().as_dict()
    assert set(out) >= {"checked", "idle", "stopped", "dry_run", "skipped"}
    assert set(out["skipped"]) >= {"no_metrics", "grace", "busy", "excluded", "not_stoppable"}
    assert out["skipped"]["busy"] == ["i-2"]
    assert out["skipped"]["excluded"] == []
    json.dumps(out)  # a Lambda return value must be JSON


def test_summary_metric_data_separates_dry_runs():
    data = {d["MetricName"]: d for d in summary_metric_data(result(dry_run=True), NOW)}
    assert data["InstancesStopped"]["Value"] == 1.0
    assert data["EstimatedHourlySavingUSD"]["Value"] == 1.006
    assert data["InstancesChecked"]["Dimensions"] == [{"Name": "DryRun", "Value": "true"}]
    assert {d["Timestamp"] for d in data.values()} == {NOW}


def test_sns_message_lists_what_was_stopped():
    subject, body = sns_message(result(), function="watchdog", region="us-east-1")
    assert subject == "Idle GPU watchdog stopped 1 instance(s), ~$1.01/h"
    assert "  i-1" in body
    assert "Left running: busy 1, grace 1" in body


def test_sns_message_in_dry_run_says_nothing_was_stopped():
    subject, body = sns_message(result(dry_run=True, stopped=[]), function="watchdog", region=None)
    assert subject.startswith("Idle GPU watchdog would stop 1 instance(s)")
    assert "DRY RUN: nothing was stopped." in body


def test_sns_message_stays_within_limits_for_thousands_of_instances():
    ids = [f"i-{n:017x}" for n in range(5000)]
    subject, body = sns_message(
        result(
            checked=5000, idle=ids, stopped=ids[:4000], failed=ids[4000:], estimated_hourly_saving_usd=5e5
        ),
        function="a-long-function-name-for-the-idle-gpu-watchdog",
        region="ap-southeast-2",
    )
    assert len(subject) <= SNS_SUBJECT_MAX
    assert "(and 3950 more)" in body
    assert "(and 950 more)" in body
    assert len(body.encode()) < 256 * 1024


def test_needs_notice_only_when_something_happened():
    assert needs_notice(result())
    assert not needs_notice(result(idle=[], stopped=[]))
    assert needs_notice(result(idle=["i-1"], stopped=[], failed=["i-1"]))


def test_json_log_writes_one_object_per_line():
    stream = io.StringIO()
    log = JsonLog(stream)
    log.write("decision", instance_id="i-1", launch_time=NOW)
    log.write("summary", checked=1)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines == [
        {"event": "decision", "instance_id": "i-1", "launch_time": "2026-03-02T12:05:00+00:00"},
        {"event": "summary", "checked": 1},
    ]
