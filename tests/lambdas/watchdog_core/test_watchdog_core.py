"""The watchdogs' shared core on its own: the rules both clouds rely on, without either cloud."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from inference_infra.lambdas.watchdog_core.decide import Reason, in_grace, opted_out, verdict
from inference_infra.lambdas.watchdog_core.report import JsonLog
from inference_infra.lambdas.watchdog_core.settings import Reader, SettingsError
from inference_infra.lambdas.watchdog_core.window import Window, parse_utc

NOW = datetime(2026, 12, 2, 12, 7, 30, tzinfo=UTC)
WINDOW = Window(NOW - timedelta(minutes=37, seconds=30), NOW - timedelta(minutes=7, seconds=30), 300)


def test_verdict_busy_wins_over_every_objection():
    def objections() -> Iterator[tuple[Reason, str]]:
        yield Reason.NO_METRICS, "partial"

    decision = verdict("m", peak=5.0, threshold=5.0, points=1, expected=6, objections=objections())
    assert decision.reason is Reason.BUSY
    assert decision.detail == "peak 5% >= 5%"


def test_verdict_reads_objections_only_up_to_the_first():
    read = []

    def objections() -> Iterator[tuple[Reason, str]]:
        read.append(1)
        yield Reason.NO_METRICS, "3 of 6 periods have data"
        read.append(2)
        raise AssertionError("a later objection may assume the earlier ones did not hold")

    decision = verdict("m", peak=1.0, threshold=5.0, points=3, expected=6, objections=objections())
    assert (decision.reason, decision.detail, read) == (Reason.NO_METRICS, "3 of 6 periods have data", [1])


def test_verdict_idle_only_without_objections():
    decision = verdict(
        "m", peak=4.9, threshold=5.0, points=6, expected=6, objections=iter(()), idle_suffix=" on 8 GPU(s)"
    )
    assert decision.idle
    assert decision.detail == "peak 4.9% < 5% in all 6 periods on 8 GPU(s)"
    assert (decision.max_percent, decision.points, decision.expected_points) == (4.9, 6, 6)


def test_overruled_keeps_the_evidence():
    idle = verdict("m", peak=1.0, threshold=5.0, points=6, expected=6, objections=iter(()))
    refused = idle.overruled(Reason.NOT_STOPPABLE, "stop refused: 409")
    assert (refused.key, refused.reason, refused.max_percent, refused.points) == (
        "m",
        Reason.NOT_STOPPABLE,
        1.0,
        6,
    )


def test_opted_out_until_a_future_time_or_on_a_value_that_does_not_parse():
    def check(value: str | None):
        return opted_out("m", value, tag_key="until", parse=parse_utc, unparsable="is not ISO 8601", now=NOW)

    assert check(None) is None
    assert check("2026-12-01") is None  # passed
    assert check("2026-12-03").detail == "opted out until 2026-12-03T00:00:00+00:00"
    assert check("soon").detail == "until='soon' is not ISO 8601"


def test_in_grace_counts_from_the_start_it_is_given():
    assert in_grace("m", NOW - timedelta(minutes=59), grace_minutes=60, now=NOW, what="created").detail == (
        "created 59 min ago (< 60)"
    )
    assert in_grace("m", NOW - timedelta(minutes=60), grace_minutes=60, now=NOW, what="started") is None


def test_window_buckets_by_period_start_and_by_period_end():
    first_start = WINDOW.start
    assert WINDOW.expected_points == 6
    assert WINDOW.bucket_of_start(first_start) == 0  # CloudWatch stamps a period with its start
    assert WINDOW.bucket_of_start(WINDOW.end) is None
    assert WINDOW.bucket_of_end(first_start) is None  # Monitoring stamps it with its end
    assert WINDOW.bucket_of_end(first_start + timedelta(minutes=5)) == 0
    assert WINDOW.bucket_of_end(WINDOW.end) == 5


def test_parse_utc_reads_z_offsets_and_naive_times_as_utc():
    assert parse_utc("2026-12-02T12:00:00Z") == datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert parse_utc("2026-12-02T12:00:00") == datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert parse_utc("2026-12-02T13:00:00+01:00") == datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert parse_utc("tomorrow") is None


def test_json_log_writes_severity_only_when_asked():
    plain, cloud_run = io.StringIO(), io.StringIO()
    JsonLog(plain).write("decision", "ERROR", machine="m")
    JsonLog(cloud_run, severity=True).write("decision", "ERROR", machine="m")
    assert plain.getvalue() == '{"event": "decision", "machine": "m"}\n'
    assert cloud_run.getvalue() == '{"severity": "ERROR", "event": "decision", "machine": "m"}\n'


def test_reader_rejects_a_period_that_does_not_divide_the_window_naming_the_variables():
    reader = Reader({"IDLE_MINUTES": "30", "METRIC_PERIOD_SECONDS": "420"})
    reader.period(reader.integer("IDLE_MINUTES", 30, minimum=1), 30)
    with pytest.raises(SettingsError, match=r"METRIC_PERIOD_SECONDS='420' must divide the idle window"):
        reader.raise_if_any()


def test_reader_collects_every_problem_before_raising():
    reader = Reader({"DRY_RUN": "maybe", "UTIL_THRESHOLD_PERCENT": "0", "PROJECTS": ""})
    reader.boolean("DRY_RUN", False)
    reader.percent("UTIL_THRESHOLD_PERCENT", 5.0)
    with pytest.raises(SettingsError) as raised:
        reader.raise_if_any()
    assert "DRY_RUN='maybe' must be true or false" in str(raised.value)
    assert "UTIL_THRESHOLD_PERCENT='0' must be a number above 0 and at most 100" in str(raised.value)
