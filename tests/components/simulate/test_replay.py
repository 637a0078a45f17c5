"""The replay's scaling math on synthetic traces with known answers.

A fixed service (every request holds a slot for exactly HOLD seconds, first token after PREFILL)
keeps the arithmetic checkable by hand: at r requests per second, r x HOLD requests are in flight.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from inference_infra.components.fleet.elastic import ScalingPlan, ScheduleArgs
from inference_infra.components.simulate import Autoscaler, Pool, Trace, replay
from inference_infra.components.simulate.replay import most_in_flight_per_minute, working

HOLD = 10.0  # seconds a request holds a slot
PREFILL = 0.05  # seconds to first token once admitted
SLOTS = 10  # slots per machine
COLD = 300.0  # cold start, seconds
WARM = 60  # warm start, seconds
PRICE = 3.6  # USD per machine-hour: 0.001 USD per machine-second


@dataclass
class FixedService:
    """A machine whose requests all take the same time (duck-types ServiceModel)."""

    max_model_len: int = 8192
    tpot_seconds: float = 0.01
    mean_context_tokens: float = 1000.0
    machine: str = "test.machine"
    spec: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(name="test-model"))
    slots: int = SLOTS

    def prefill_seconds(self, prompt_tokens: int) -> float:
        return PREFILL

    def service_seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        return HOLD


def plan(**changes) -> ScalingPlan:
    base = ScalingPlan(
        min_size=1,
        max_size=6,
        desired=1,
        in_flight_per_machine=SLOTS,
        target_in_flight=7.0,
        scale_out_cooldown_seconds=60,
        scale_in_cooldown_seconds=900,
        warmup_seconds=int(COLD * 1.5),
        warm_start_seconds=WARM,
        warm_pool_size=0,
        deregistration_delay_seconds=60,
        schedule=None,
    )
    return replace(base, **changes)


def pool(target_seconds: float = 0.1, **changes) -> Pool:
    return Pool(
        name="test",
        plan=plan(**changes),
        service=FixedService(),  # type: ignore[arg-type]
        usd_per_hour=PRICE,
        price_basis="test",
        ttft_target_seconds=target_seconds,
        latency="interactive",
        cold_start_seconds=COLD,
    )


def steady(rate: float, start: float, end: float) -> list[tuple[float, int, int]]:
    """`rate` requests per second, evenly spaced, in [start, end)."""
    n = round((end - start) * rate)
    return [(start + k / rate, 1000, 100) for k in range(n)]


def step_trace() -> Trace:
    # 1 request/s (10 in flight: 2 machines at 7 per machine) for 10 minutes, then 4/s (40: 6 machines)
    return Trace.of(steady(1, 0, 600) + steady(4, 600, 1800))


def test_replay_step_scales_out_after_three_periods_and_a_cold_start():
    result = replay(step_trace(), pool(), Autoscaler(start_size=2))
    doc = result.as_json()
    # periods ending at 660, 720, 780 s want more than 2 machines: the third one launches 4 (max 6)
    assert [(x.decided_s, x.ready_s, x.warm) for x in result.launches] == [(780.0, 1080.0, False)] * 4
    assert doc["scale"]["time_to_scale_seconds"]["mean"] == COLD
    assert doc["scale"]["scale_outs"] == 1
    assert doc["scale"]["max_machines"] == 6
    # before the scale-out lands the queue grows by 4 - 2 requests a second for 480 s
    assert doc["queue"]["max"] == pytest.approx(2 * 480, abs=4)
    # the oracle: 10 in flight (2 machines) then 40 (4 machines)
    oracle = [m["oracle_machines"] for m in doc["timeline"]]
    assert oracle[1:9] == [1] * 8
    assert oracle[11:29] == [4] * 18
    assert doc["cost"]["static_machines"] == 4


def test_replay_warm_pool_serves_first_then_cold_starts():
    result = replay(step_trace(), pool(warm_pool_size=2), Autoscaler(start_size=2))
    launches = sorted((x.seconds, x.warm) for x in result.launches)
    assert launches == [(WARM, True), (WARM, True), (COLD, False), (COLD, False)]
    doc = result.as_json()["scale"]
    assert (doc["warm_launches"], doc["cold_launches"]) == (2, 2)
    assert doc["time_to_scale_seconds"]["warm"] == WARM
    assert doc["time_to_scale_seconds"]["cold"] == COLD


def test_replay_empty_warm_pool_takes_the_cold_start():
    # two warm machines are used by the first scale-out; the second one finds the pool empty
    trace = Trace.of(steady(1, 0, 600) + steady(2, 600, 1500) + steady(5.5, 1500, 2700))
    result = replay(trace, pool(warm_pool_size=2, max_size=8), Autoscaler(start_size=2))
    first, second = result.launches[:2], result.launches[2:]
    assert all(x.warm and x.seconds == WARM for x in first)
    assert second
    # the refills take a cold start (300 s after 780 s); a launch before they land is cold
    assert all(x.seconds == (WARM if x.warm else COLD) for x in second)
    assert any(not x.warm for x in second)


def test_replay_ramp_follows_the_load_with_the_target_headroom():
    # 0.5/s rising by 0.5/s every 10 minutes to 3/s: each step adds 5 in flight, which the 30% headroom
    # holds while the next machine comes (3 periods + a 300 s cold start = 480 s < 600 s)
    rows = []
    for k in range(6):
        rows += steady(0.5 * (k + 1), 600 * k, 600 * (k + 1))
    rows += steady(3, 3600, 4800)
    result = replay(Trace.of(rows), pool(max_size=10), Autoscaler(start_size=1))
    doc = result.as_json()
    # 3/s x 10 s = 30 in flight: ceil(30 / 7) = 5 machines at the end
    assert doc["timeline"][-3]["machines_serving"] == 5
    assert doc["scale"]["max_machines"] == 5
    assert doc["ttft"]["waited"] == 0
    assert doc["scale"]["launches"] == 4


def test_replay_burst_above_max_reports_requests_over_target():
    # 20/s for two minutes needs 200 slots = 20 machines; max is 3
    rows = steady(1, 0, 600) + steady(20, 600, 720) + steady(1, 720, 1800)
    result = replay(Trace.of(rows), pool(max_size=3), Autoscaler(start_size=2))
    doc = result.as_json()
    assert doc["scale"]["capped_periods"] >= 1
    assert doc["scale"]["max_machines"] == 3
    assert doc["ttft"]["over_target"] > 0
    assert doc["ttft"]["over_target"] == doc["ttft"]["over_target_from_waiting"]  # PREFILL is in budget
    assert doc["ttft"]["oracle_over_target"] == 0
    assert doc["queue"]["max"] > 0


def test_replay_idle_period_scales_to_zero_and_back_with_a_cold_start():
    rows = [*steady(1, 0, 300), (3600.0, 1000, 100)]
    result = replay(Trace.of(rows), pool(min_size=0, desired=0), Autoscaler(start_size=2))
    doc = result.as_json()
    assert doc["scale"]["min_machines"] == 0
    serving = [m["machines_serving"] for m in doc["timeline"]]
    # load ends at 310 s: from the datapoint at 360 s one machine fewer would carry it under 0.8 x 7;
    # after 15 such datapoints (1,200 s) one machine goes, the last one 900 s later, with nothing in flight
    assert serving[:20] == [2] * 20
    assert serving[20:35] == [1] * 15
    assert serving[35:60] == [0] * 25
    # the late request arrives to no machine: 3 periods wanting 1 (3660, 3720, 3780 s), then a cold start
    last = result.ttft_seconds[-1]
    assert last == pytest.approx(3780 - 3600 + COLD + PREFILL)
    assert result.launches[-1].decided_s == 3780.0


def test_replay_scale_in_is_one_machine_per_cooldown_after_a_quiet_cooldown():
    # 40 in flight on 6 machines, then 5: 5 / (machines - 1) stays under 0.8 x 7 down to 2 machines
    rows = steady(4, 0, 600) + steady(0.5, 600, 6000)
    default = replay(Trace.of(rows), pool(), Autoscaler(start_size=6))
    serving = [m.serving_machine_s / 60 for m in default.timeline]
    # quiet from the datapoint at 660 s; the 15th (900 s) at 1,500 s; then one every 900 s, down to
    # the last machine, which the load keeps
    drops = [minute for minute in range(1, len(serving)) if serving[minute] < serving[minute - 1]]
    assert drops == [25, 40, 55, 70, 85]
    assert serving[85:] == [1] * (len(serving) - 85)
    slow = replay(Trace.of(rows), pool(scale_in_cooldown_seconds=1800), Autoscaler(start_size=6))
    serving = [m.serving_machine_s / 60 for m in slow.timeline]
    # 30 quiet datapoints: the first at 2,400 s, the next 1,800 s later
    drops = [minute for minute in range(1, len(serving)) if serving[minute] < serving[minute - 1]]
    assert drops == [40, 70, 100]
    assert slow.as_json()["cost"]["elastic_usd"] > default.as_json()["cost"]["elastic_usd"]


def test_replay_scale_in_keeps_a_machine_the_load_needs():
    # 0.5/s = 5 in flight: on 2 machines, 5 / 1 = 5 < 5.6 lets one go; on 1 it stays (load in flight)
    result = replay(Trace.of(steady(0.5, 0, 3600)), pool(min_size=0), Autoscaler(start_size=2))
    assert result.as_json()["scale"]["min_machines"] == 1


def test_replay_scale_out_cooldown_spaces_scale_outs():
    rows = steady(1, 0, 300) + steady(2, 300, 600) + steady(3, 600, 900) + steady(4, 900, 1500)
    spaced = replay(Trace.of(rows), pool(scale_out_cooldown_seconds=600), Autoscaler(start_size=2))
    times = sorted({x.decided_s for x in spaced.launches})
    assert all(b - a >= 600 for a, b in itertools.pairwise(times))


def test_replay_costs_machine_seconds_at_the_price():
    # constant 0.5/s: 5 in flight, one machine all along; the static fleet and the oracle are one machine
    result = replay(Trace.of(steady(0.5, 0, 1200)), pool(), Autoscaler(start_size=1))
    doc = result.as_json()
    minutes = math.ceil((1200 - 2 + HOLD) / 60)
    assert doc["cost"]["window_s"] == minutes * 60
    assert doc["cost"]["elastic_usd"] == pytest.approx(minutes * 60 * 0.001)
    assert doc["cost"]["static_usd"] == pytest.approx(minutes * 60 * 0.001)
    assert doc["cost"]["oracle_usd"] == pytest.approx(minutes * 60 * 0.001)
    assert doc["ttft"]["over_target"] == 0
    assert doc["ttft"]["p99_seconds"] == PREFILL


def test_replay_leaves_out_requests_longer_than_the_engine_admits():
    rows = [(0.0, 8100, 100), (1.0, 1000, 100)]
    doc = replay(Trace.of(rows), pool(), Autoscaler(start_size=1)).as_json()
    assert doc["trace"]["rejected_too_long"] == 1
    assert doc["ttft"]["served"] == 1
    assert any("--max-model-len 8192" in n for n in doc["notes"])


def test_replay_schedule_drops_to_the_off_hours_size():
    # Berlin is UTC+1 in November: working hours end at 19:00 local = 18:00 UTC. The trace starts at
    # 17:30 UTC; the scheduled action at 18:00 UTC sets the pool to the off-hours size, zero
    start = datetime(2026, 11, 24, 17, 30, tzinfo=UTC)  # a Tuesday
    schedule = ScheduleArgs(time_zone="Europe/Berlin", start_hour=8, end_hour=19, off_hours_size=0)
    trace = Trace.of(steady(0.2, 0, 2400), start=start)
    result = replay(trace, pool(schedule=schedule), Autoscaler(start_size=1))
    serving = [m.serving_machine_s / 60 for m in result.timeline]
    assert serving[:30] == [1] * 30
    assert serving[30] == 0
    assert result.as_json()["ttft"]["waited"] > 0  # requests after 18:00 UTC wait for a cold start
    assert working(schedule, trace, 0.0)
    assert not working(schedule, trace, 1800.0)


def test_replay_is_deterministic():
    a = replay(step_trace(), pool(warm_pool_size=1), Autoscaler(start_size=2)).as_json()
    b = replay(step_trace(), pool(warm_pool_size=1), Autoscaler(start_size=2)).as_json()
    assert a == b


def test_replay_starts_at_the_size_the_early_load_needs():
    # 40 in flight from the start: ceil(40 / 7) = 6 machines, no queue
    result = replay(Trace.of(steady(4, 0, 1200)), pool(min_size=1, max_size=8))
    assert result.timeline[0].serving_machine_s == 6 * 60
    assert result.as_json()["queue"]["max"] == 0


def test_most_in_flight_per_minute_counts_requests_spanning_a_minute():
    # one request from 50 s to 130 s: in flight in minutes 0, 1 and 2
    assert most_in_flight_per_minute([50.0], [130.0], 3) == [1, 1, 1]
    # two overlapping, one after: 2 at most in minute 0
    assert most_in_flight_per_minute([0.0, 5.0, 30.0], [10.0, 20.0, 40.0], 1) == [2]
