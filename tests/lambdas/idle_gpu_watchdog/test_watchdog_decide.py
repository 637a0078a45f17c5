"""The pure decision code: every skip reason, thresholds and window coverage, with the clock passed in."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from inference_infra.lambdas.idle_gpu_watchdog.decide import Reason, judge, parse_until, precheck, spot_check
from inference_infra.lambdas.idle_gpu_watchdog.instances import Instance, parse_instance
from inference_infra.lambdas.idle_gpu_watchdog.metrics import Series, window_for
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings

NOW = datetime(2026, 3, 2, 12, 7, 31, 250_000, tzinfo=UTC)
SETTINGS = Settings()  # IDLE 30 min, 5-minute periods, threshold 5 %, grace 60 min
WINDOW = window_for(NOW, SETTINGS)


def instance(**overrides: object) -> Instance:
    base = Instance(
        instance_id="i-0abc",
        instance_type="g5.xlarge",
        launch_time=NOW - timedelta(hours=3),
        tags={"AutoShutdown": "true"},
    )
    return replace(base, **overrides)


def series(values: list[float], *, start: datetime = WINDOW.start, complete: bool = True) -> Series:
    step = timedelta(seconds=WINDOW.period_seconds)
    return Series(tuple((start + n * step, v) for n, v in enumerate(values)), complete=complete)


# -- the window ---------------------------------------------------------------------------------


def test_window_ends_at_the_last_period_boundary_before_now():
    assert WINDOW.end == datetime(2026, 3, 2, 12, 5, tzinfo=UTC)
    assert WINDOW.start == datetime(2026, 3, 2, 11, 35, tzinfo=UTC)
    assert WINDOW.expected_points == 6


def test_window_uses_one_minute_periods_when_five_do_not_tile_it():
    settings = Settings.from_env({"IDLE_MINUTES": "12"})
    window = window_for(NOW, settings)
    assert window.period_seconds == 60
    assert window.expected_points == 12
    assert window.end == datetime(2026, 3, 2, 12, 7, tzinfo=UTC)


def test_window_on_an_exact_boundary_excludes_the_bucket_that_just_began():
    window = window_for(datetime(2026, 3, 2, 12, 5, tzinfo=UTC), SETTINGS)
    assert window.end == datetime(2026, 3, 2, 12, 5, tzinfo=UTC)


# -- metrics verdicts -----------------------------------------------------------------------------


def test_judge_idle_when_every_period_is_below_threshold():
    decision = judge("i-1", series([0.0, 1.0, 4.9, 0.0, 2.0, 3.0]), WINDOW, 5.0)
    assert decision.idle
    assert (decision.max_percent, decision.points, decision.expected_points) == (4.9, 6, 6)


def test_judge_busy_when_one_period_reaches_the_threshold():
    decision = judge("i-1", series([0.0, 0.0, 5.0, 0.0, 0.0, 0.0]), WINDOW, 5.0)
    assert decision.reason is Reason.BUSY
    assert "peak 5% >= 5%" in decision.detail


def test_judge_threshold_is_configurable():
    values = [8.0] * 6
    assert judge("i-1", series(values), WINDOW, 5.0).reason is Reason.BUSY
    assert judge("i-1", series(values), WINDOW, 10.0).idle


def test_judge_no_metrics_when_there_are_no_datapoints():
    decision = judge("i-1", Series(), WINDOW, 5.0)
    assert decision.reason is Reason.NO_METRICS
    assert decision.detail == "0 of 6 periods have data"


def test_judge_no_metrics_when_one_period_is_missing():
    step = timedelta(minutes=5)
    points = tuple((WINDOW.start + n * step, 0.0) for n in range(6) if n != 5)  # the newest is missing
    decision = judge("i-1", Series(points), WINDOW, 5.0)
    assert decision.reason is Reason.NO_METRICS
    assert decision.points == 5


def test_judge_busy_evidence_wins_over_missing_periods():
    decision = judge("i-1", series([0.0, 97.0]), WINDOW, 5.0)
    assert decision.reason is Reason.BUSY


def test_judge_ignores_datapoints_outside_the_window():
    before = series([0.0] * 6, start=WINDOW.start - timedelta(minutes=30))
    assert judge("i-1", before, WINDOW, 5.0).reason is Reason.NO_METRICS
    late_busy = Series((*series([0.0] * 6).points, (WINDOW.end, 99.0)))
    assert judge("i-1", late_busy, WINDOW, 5.0).idle


def test_judge_counts_periods_not_datapoints():
    step = timedelta(minutes=5)
    doubled = tuple((WINDOW.start + (n // 2) * step, 0.0) for n in range(10))  # 5 periods, 10 points
    assert judge("i-1", Series(doubled), WINDOW, 5.0).reason is Reason.NO_METRICS


def test_judge_no_metrics_when_cloudwatch_reports_partial_data():
    decision = judge("i-1", series([0.0] * 6, complete=False), WINDOW, 5.0)
    assert decision.reason is Reason.NO_METRICS
    assert "partial" in decision.detail


# -- checks before metrics --------------------------------------------------------------------------


def test_precheck_passes_an_ordinary_instance():
    assert precheck(instance(), SETTINGS, NOW) is None


def test_precheck_grace_since_last_launch_or_start():
    decision = precheck(instance(launch_time=NOW - timedelta(minutes=59)), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.GRACE
    assert precheck(instance(launch_time=NOW - timedelta(minutes=60)), SETTINGS, NOW) is None


def test_precheck_grace_zero_disables_the_grace_period():
    settings = replace(SETTINGS, grace_minutes=0)
    assert precheck(instance(launch_time=NOW), settings, NOW) is None


def test_precheck_excluded_until_a_future_time():
    tags = {"AutoShutdown": "true", "AutoShutdownExcludeUntil": "2026-03-02T18:00:00Z"}
    decision = precheck(instance(tags=tags), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.EXCLUDED
    assert "2026-03-02T18:00:00+00:00" in decision.detail


def test_precheck_expired_exclusion_no_longer_protects():
    tags = {"AutoShutdown": "true", "AutoShutdownExcludeUntil": "2026-03-02T12:00:00+00:00"}
    assert precheck(instance(tags=tags), SETTINGS, NOW) is None


def test_precheck_unparseable_exclusion_excludes():
    tags = {"AutoShutdown": "true", "AutoShutdownExcludeUntil": "next tuesday"}
    decision = precheck(instance(tags=tags), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.EXCLUDED
    assert "'next tuesday' is not ISO 8601" in decision.detail


def test_parse_until_reads_dates_zones_and_naive_times_as_utc():
    assert parse_until("2026-03-03") == datetime(2026, 3, 3, tzinfo=UTC)
    assert parse_until("2026-03-03T10:00") == datetime(2026, 3, 3, 10, tzinfo=UTC)
    assert parse_until("2026-03-03T10:00:00+02:00") == datetime(2026, 3, 3, 8, tzinfo=UTC)
    assert parse_until("tomorrow") is None


@pytest.mark.parametrize(
    "tag", ["aws:autoscaling:groupName", "aws:ec2:fleet-id", "aws:ec2spot:fleet-request-id"]
)
def test_precheck_leaves_group_and_fleet_instances_to_their_owner(tag):
    decision = precheck(instance(tags={"AutoShutdown": "true", tag: "serving"}), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.MANAGED
    assert f"{tag}=serving" in decision.detail


def test_precheck_skips_capacity_reservations_and_capacity_blocks():
    in_odcr = precheck(instance(capacity_reservation_id="cr-0123"), SETTINGS, NOW)
    in_block = precheck(instance(lifecycle="capacity-block"), SETTINGS, NOW)
    assert in_odcr is not None
    assert in_odcr.reason is Reason.RESERVED_CAPACITY
    assert in_block is not None
    assert in_block.reason is Reason.RESERVED_CAPACITY


def test_precheck_stops_reserved_capacity_when_configured():
    settings = replace(SETTINGS, stop_reserved_capacity=True)
    assert precheck(instance(capacity_reservation_id="cr-0123"), settings, NOW) is None


def test_precheck_instance_store_root_is_not_stoppable():
    decision = precheck(instance(root_device_type="instance-store"), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.NOT_STOPPABLE


def test_precheck_spot_without_request_id_is_not_stoppable():
    decision = precheck(instance(lifecycle="spot"), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.NOT_STOPPABLE


def test_precheck_exclusion_outranks_other_reasons():
    tags = {"AutoShutdownExcludeUntil": "2027-01-01", "aws:autoscaling:groupName": "g"}
    decision = precheck(instance(tags=tags, launch_time=NOW), SETTINGS, NOW)
    assert decision is not None
    assert decision.reason is Reason.EXCLUDED


# -- spot -----------------------------------------------------------------------------------------


def test_spot_check_keeps_persistent_requests_idle():
    spot = instance(lifecycle="spot", spot_request_id="sir-1")
    idle = judge(spot.instance_id, series([0.0] * 6), WINDOW, 5.0)
    assert spot_check(idle, spot, {"sir-1": "persistent"}).idle


@pytest.mark.parametrize(
    ("kinds", "words"), [({"sir-1": "one-time"}, "one-time"), ({}, "could not be found")]
)
def test_spot_check_one_time_or_unknown_request_is_not_stoppable(kinds, words):
    spot = instance(lifecycle="spot", spot_request_id="sir-1")
    idle = judge(spot.instance_id, series([0.0] * 6), WINDOW, 5.0)
    decision = spot_check(idle, spot, kinds)
    assert decision.reason is Reason.NOT_STOPPABLE
    assert words in decision.detail
    assert decision.max_percent == 0.0


def test_spot_check_leaves_busy_decisions_alone():
    spot = instance(lifecycle="spot", spot_request_id="sir-1")
    busy = judge(spot.instance_id, series([50.0] * 6), WINDOW, 5.0)
    assert spot_check(busy, spot, {}).reason is Reason.BUSY


# -- parsing DescribeInstances ------------------------------------------------------------------------


def test_parse_instance_reads_what_the_decision_needs():
    raw = {
        "InstanceId": "i-9",
        "InstanceType": "p5.48xlarge",
        "LaunchTime": NOW,
        "InstanceLifecycle": "spot",
        "SpotInstanceRequestId": "sir-9",
        "CapacityReservationId": "cr-9",
        "RootDeviceType": "ebs",
        "Tags": [
            {"Key": "AutoShutdown", "Value": "true"},
            {"Key": "aws:autoscaling:groupName", "Value": "g"},
        ],
    }
    parsed = parse_instance(raw)
    assert parsed.is_spot
    assert parsed.spot_request_id == "sir-9"
    assert parsed.on_reserved_capacity
    assert parsed.managed_by == "aws:autoscaling:groupName=g"
