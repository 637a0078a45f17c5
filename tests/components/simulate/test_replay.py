"""The replay's scaling math on synthetic traces with known answers.

A fixed service (every request holds a slot for exactly HOLD seconds, first token after PREFILL)
keeps the arithmetic checkable by hand: at r requests per second, r x HOLD requests are in flight.
The tests of the scaler's timing set `metric_lag_seconds=0` (LAG0) so the datapoint a decision reads is
the period just ended; the lag has its own test.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from inference_infra.components.fleet.elastic import ScalingPlan, ScheduleArgs, deficit_steps, fast_steps
from inference_infra.components.simulate import Autoscaler, Pool, Trace, replay
from inference_infra.components.simulate.replay import working

HOLD = 10.0  # seconds a request holds a slot
PREFILL = 0.05  # seconds to first token once admitted
SLOTS = 10  # slots per machine
COLD = 300.0  # cold start, seconds
WARM = 60  # warm start, seconds
PRICE = 3.6  # USD per machine-hour: 0.001 USD per machine-second


def scaler(start_size: int | None = None, **changes) -> Autoscaler:
    """The AWS autoscaler with no metric lag (the module doc)."""
    return Autoscaler(start_size=start_size, metric_lag_seconds=0, **changes)


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
    result = replay(step_trace(), pool(), scaler(2))
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
    result = replay(step_trace(), pool(warm_pool_size=2), scaler(2))
    launches = sorted((x.seconds, x.warm) for x in result.launches)
    assert launches == [(WARM, True), (WARM, True), (COLD, False), (COLD, False)]
    doc = result.as_json()["scale"]
    assert (doc["warm_launches"], doc["cold_launches"]) == (2, 2)
    assert doc["time_to_scale_seconds"]["warm"] == WARM
    assert doc["time_to_scale_seconds"]["cold"] == COLD


def test_replay_empty_warm_pool_takes_the_cold_start():
    # two warm machines are used by the first scale-out; the second one finds the pool empty
    trace = Trace.of(steady(1, 0, 600) + steady(2, 600, 1500) + steady(5.5, 1500, 2700))
    result = replay(trace, pool(warm_pool_size=2, max_size=8), scaler(2))
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
    result = replay(Trace.of(rows), pool(max_size=10), scaler(1))
    doc = result.as_json()
    # 3/s x 10 s = 30 in flight: ceil(30 / 7) = 5 machines at the end
    assert doc["timeline"][-3]["machines_serving"] == 5
    assert doc["scale"]["max_machines"] == 5
    assert doc["ttft"]["waited"] == 0
    assert doc["scale"]["launches"] == 4


def test_replay_burst_above_max_reports_requests_over_target():
    # 20/s for two minutes needs 200 slots = 20 machines; max is 3
    rows = steady(1, 0, 600) + steady(20, 600, 720) + steady(1, 720, 1800)
    result = replay(Trace.of(rows), pool(max_size=3), scaler(2))
    doc = result.as_json()
    assert doc["scale"]["capped_periods"] >= 1
    assert doc["scale"]["max_machines"] == 3
    assert doc["ttft"]["over_target"] > 0
    assert doc["ttft"]["over_target"] == doc["ttft"]["over_target_from_waiting"]  # PREFILL is in budget
    assert doc["ttft"]["oracle_over_target"] == 0
    assert doc["queue"]["max"] > 0


def test_replay_idle_period_scales_to_zero_and_back_with_a_cold_start():
    rows = [*steady(1, 0, 300), (3600.0, 1000, 100)]
    result = replay(Trace.of(rows), pool(min_size=0, desired=0), scaler(2))
    doc = result.as_json()
    assert doc["scale"]["min_machines"] == 0
    serving = [m["machines_serving"] for m in doc["timeline"]]
    # load ends at 310 s: from the datapoint at 360 s one machine fewer would carry it under 0.8 x 7;
    # after 15 such datapoints (1,200 s) one machine goes; its activity completes after its drain (nothing
    # in flight) and the termination hook's 120 s, and the cooldown of 900 s starts then: the last one
    # goes at 2,220 s, with nothing in flight
    assert serving[:20] == [2] * 20
    assert serving[20:37] == [1] * 17
    assert serving[37:60] == [0] * 23
    # the late request arrives to no machine: 3 periods wanting 1 (3660, 3720, 3780 s), then a cold start
    last = result.ttft_seconds[-1]
    assert last == pytest.approx(3780 - 3600 + COLD + PREFILL)
    assert result.launches[-1].decided_s == 3780.0


def test_replay_scale_in_is_one_machine_per_cooldown_after_a_quiet_cooldown():
    # 40 in flight on 6 machines, then 5: 5 / (machines - 1) stays under 0.8 x 7 down to 2 machines
    rows = steady(4, 0, 600) + steady(0.5, 600, 6000)
    default = replay(Trace.of(rows), pool(), scaler(6))
    serving = [m.serving_machine_s / 60 for m in default.timeline]
    # quiet from the datapoint at 660 s; the 15th (900 s) at 1,500 s; then one every 900 s, down to
    # the last machine, which the load keeps
    drops = [minute for minute in range(1, len(serving)) if serving[minute] < serving[minute - 1]]
    # each cooldown starts when the scale-in completes: the machine drained (at once: the 5 in flight
    # fit the others) and its termination hook's 120 s (fleet.elastic.TERMINATION_HOOK_SECONDS)
    assert drops == [25, 42, 59, 76, 93]
    assert serving[93:] == [1] * (len(serving) - 93)
    slow = replay(Trace.of(rows), pool(scale_in_cooldown_seconds=1800), scaler(6))
    serving = [m.serving_machine_s / 60 for m in slow.timeline]
    # 30 quiet datapoints: the first at 2,400 s, the next 1,800 s after it completes (120 s later)
    drops = [minute for minute in range(1, len(serving)) if serving[minute] < serving[minute - 1]]
    assert drops == [40, 72]  # the third would be at 6,240 s, after the trace (6,000 s)
    assert slow.as_json()["cost"]["elastic_usd"] > default.as_json()["cost"]["elastic_usd"]


def test_replay_scale_in_keeps_a_machine_the_load_needs():
    # 0.5/s = 5 in flight: on 2 machines, 5 / 1 = 5 < 5.6 lets one go; on 1 it stays (load in flight)
    result = replay(Trace.of(steady(0.5, 0, 3600)), pool(min_size=0), scaler(2))
    assert result.as_json()["scale"]["min_machines"] == 1


def test_replay_scale_out_cooldown_does_not_space_aws_target_tracking():
    # AWS: target tracking and step policies scale out without waiting for a cooldown (EC2 Auto Scaling
    # User Guide, "Scaling cooldowns", read 2026-12-02; the group's default cooldown holds simple policies
    # only), so a 600 s scale_out_cooldown_seconds changes nothing on AWS (the HPA's scaleUp period is the
    # Kubernetes test's); the second rise at 600 s is answered 60 s after the first scale-out
    rows = steady(1, 0, 300) + steady(2, 300, 600) + steady(3, 600, 900) + steady(4, 900, 1500)
    spaced = replay(Trace.of(rows), pool(scale_out_cooldown_seconds=600), scaler(2))
    unspaced = replay(Trace.of(rows), pool(scale_out_cooldown_seconds=60), scaler(2))
    times = sorted({x.decided_s for x in spaced.launches})
    assert times == sorted({x.decided_s for x in unspaced.launches}) == [480.0, 660.0]


def test_replay_costs_machine_seconds_at_the_price():
    # constant 0.5/s: 5 in flight, one machine all along; the static fleet and the oracle are one machine
    result = replay(Trace.of(steady(0.5, 0, 1200)), pool(), scaler(1))
    doc = result.as_json()
    minutes = math.ceil((1200 - 2 + HOLD) / 60)
    assert doc["cost"]["window_s"] == minutes * 60
    assert doc["cost"]["elastic_usd"] == pytest.approx(minutes * 60 * 0.001)
    assert doc["cost"]["static_usd"] == pytest.approx(minutes * 60 * 0.001)
    assert doc["cost"]["oracle_usd"] == pytest.approx(minutes * 60 * 0.001)
    assert doc["ttft"]["over_target"] == 0
    assert doc["ttft"]["p99_seconds"] == PREFILL


def test_replay_counts_requests_longer_than_the_engine_admits_as_refused_misses():
    rows = [(0.0, 8100, 100), (1.0, 1000, 100)]
    doc = replay(Trace.of(rows), pool(), scaler(1)).as_json()
    assert doc["trace"]["refused"] == doc["ttft"]["refused"] == 1
    assert doc["ttft"]["served"] == 1
    # in the denominator, and a miss: one of two requests got no first token
    assert doc["trace"]["requests"] == 2
    assert doc["slo"]["misses"] == 1
    assert doc["slo"]["miss_share"] == 0.5
    assert doc["slo"]["met"] is False
    assert any("--max-model-len 8192" in n and "misses" in n for n in doc["notes"])


def test_replay_schedule_drops_to_the_off_hours_size():
    # Berlin is UTC+1 in November: working hours end at 19:00 local = 18:00 UTC. The trace starts at
    # 17:30 UTC; the scheduled action at 18:00 UTC sets the pool to the off-hours size, zero
    start = datetime(2026, 11, 24, 17, 30, tzinfo=UTC)  # a Tuesday
    schedule = ScheduleArgs(time_zone="Europe/Berlin", start_hour=8, end_hour=19, off_hours_size=0)
    trace = Trace.of(steady(0.2, 0, 2400), start=start)
    result = replay(trace, pool(schedule=schedule), scaler(1))
    serving = [m.serving_machine_s / 60 for m in result.timeline]
    assert serving[:30] == [1] * 30
    assert serving[30] == 0
    assert result.as_json()["ttft"]["waited"] > 0  # requests after 18:00 UTC wait for a cold start
    assert working(schedule, trace, 0.0)
    assert not working(schedule, trace, 1800.0)


def test_replay_is_deterministic():
    a = replay(step_trace(), pool(warm_pool_size=1), scaler(2)).as_json()
    b = replay(step_trace(), pool(warm_pool_size=1), scaler(2)).as_json()
    assert a == b


# --- item 1: the pool starts at its minimum, and a look-ahead passes where the honest replay fails ---


def burst_after_quiet() -> Trace:
    # 0.5/s (5 in flight: one machine) for 20 minutes, then 4/s (40 in flight: 6 machines) for 10
    return Trace.of(steady(0.5, 0, 1200) + steady(4, 1200, 1800))


def test_replay_starts_at_the_pools_minimum():
    result = replay(Trace.of(steady(4, 0, 1200)), pool(min_size=1, max_size=8), scaler())
    assert result.timeline[0].serving_machine_s == 1 * 60
    doc = result.as_json()
    assert doc["scaling"]["start_size"] == 1
    assert doc["queue"]["max"] > 0  # 40 in flight on 10 slots: it queues until it scales out


def test_replay_honest_start_misses_the_slo_where_a_look_ahead_start_passes():
    trace = burst_after_quiet()
    honest = replay(trace, pool(min_size=1, max_size=6), scaler()).as_json()
    # a pool that knew the burst (started at its peak, 6) keeps every request on time
    ahead = replay(trace, pool(min_size=1, max_size=6), scaler(6)).as_json()
    assert ahead["slo"]["met"] is True
    assert ahead["ttft"]["over_target"] == 0
    # the honest pool sees the burst only through its datapoints, then waits a cold start
    assert honest["slo"]["met"] is False
    assert honest["cost"]["elastic_over_oracle_meets_slo"] is False
    assert honest["slo"]["miss_share"] > 0.01
    assert honest["scale"]["scale_outs"] >= 1


def test_replay_counts_requests_never_served_as_late():
    # a cold start longer than the replay's horizon (the window and 7 days): the request never runs
    never = replace(pool(min_size=0, desired=0), cold_start_seconds=9 * 86400.0)
    doc = replay(Trace.of([(0.0, 1000, 100)]), never, scaler(0)).as_json()
    assert doc["ttft"]["served"] == 0
    assert doc["ttft"]["unserved"] == 1
    assert doc["ttft"]["over_target"] == 1
    assert doc["slo"]["met"] is False


# --- item 2: the two references --------------------------------------------------------------------


def test_oracle_queues_within_the_target_and_never_below_the_running_requests():
    # 10 in flight at 1/s: one machine of 10 slots, each arrival taking the slot the request 10 s
    # before frees; then 40 in flight: 4 machines
    doc = replay(step_trace(), pool(), scaler(2)).as_json()
    oracle = [m["oracle_machines"] for m in doc["timeline"]]
    assert oracle[1:9] == [1] * 8
    assert oracle[11:29] == [4] * 18
    assert doc["ttft"]["oracle_over_target"] == 0
    assert doc["cost"]["static_machines"] == 4


def test_oracle_lets_a_burst_wait_up_to_the_target():
    # 20 requests at once on 10-slot machines, holding 10 s: with a 15 s target the second ten may wait
    # for the first ten (10 s + PREFILL), so one machine is enough; with 1 s it takes two
    rows = [(0.0, 1000, 100)] * 20
    patient = replay(Trace.of(rows), pool(target_seconds=15.0), scaler(2)).as_json()
    strict = replay(Trace.of(rows), pool(target_seconds=1.0), scaler(2)).as_json()
    assert patient["timeline"][0]["oracle_machines"] == 1
    assert strict["timeline"][0]["oracle_machines"] == 2
    assert patient["ttft"]["oracle_over_target"] == strict["ttft"]["oracle_over_target"] == 0


def test_lower_bound_is_the_work_in_machine_seconds():
    # 1,200 requests holding 10 s each on 10-slot machines: 1,200 machine-seconds
    doc = replay(Trace.of(steady(1, 0, 1200)), pool(), scaler(1)).as_json()
    assert doc["cost"]["lower_bound_machine_hours"] == pytest.approx(1200 / 3600, abs=1e-4)
    assert doc["cost"]["lower_bound_usd"] <= doc["cost"]["oracle_usd"] <= doc["cost"]["elastic_usd"]
    assert doc["cost"]["oracle_over_lower_bound"] >= 1


# --- item 3: prefill is limited per engine ---------------------------------------------------------


@dataclass
class SlowPrefill(FixedService):
    """One engine a machine that prefills one prompt a second (a prompt-heavy load)."""

    engines: int = 1

    def prefill_seconds(self, prompt_tokens: int) -> float:
        return 1.0

    def prefill_lane_seconds(self, prompt_tokens: int) -> float:
        return 1.0


def test_replay_prompts_arriving_together_wait_for_the_engines_prefill():
    slow = replace(pool(target_seconds=5.0), service=SlowPrefill())
    result = replay(Trace.of([(0.0, 4000, 10)] * 10), slow, scaler(1))
    # ten free slots, but one prefill: first tokens at 1, 2, ..., 10 s
    assert sorted(result.ttft_seconds) == pytest.approx([float(k) for k in range(1, 11)])
    doc = result.as_json()
    assert doc["ttft"]["over_target"] == 5
    assert doc["ttft"]["waited"] == 9  # waited for the prefill, not for a slot
    # two engines (or two machines) halve the wait: the oracle takes two machines for a 5 s target
    assert doc["timeline"][0]["oracle_machines"] == 2


# --- item 5: the scaler's lag, its scale-in share, GCP, spot ---------------------------------------


def test_replay_metric_lag_delays_the_scale_out_by_the_lag():
    lagged = replay(step_trace(), pool(), Autoscaler(start_size=2, metric_lag_seconds=60))
    # the third datapoint over the target (780 s) is seen one period later
    assert {x.decided_s for x in lagged.launches} == {840.0}
    assert lagged.as_json()["scaling"]["metric_lag_seconds"] == 60


def test_replay_scale_in_share_removes_a_share_of_a_large_pool_at_once():
    # 40 in flight on 6 machines, then 5
    rows = steady(4, 0, 600) + steady(0.5, 600, 6000)
    one = replay(Trace.of(rows), pool(), scaler(6))
    share = replay(Trace.of(rows), pool(), scaler(6, scale_in_share=0.5))
    first_one = [m.serving_machine_s / 60 for m in one.timeline]
    first_share = [m.serving_machine_s / 60 for m in share.timeline]
    # the first scale-in, at minute 25: one machine, or half of six
    assert (first_one[24], first_one[25]) == (6, 5)
    assert (first_share[24], first_share[25]) == (6, 3)
    assert share.as_json()["cost"]["elastic_usd"] < one.as_json()["cost"]["elastic_usd"]
    assert min(first_share) == 1  # never below what the load needs


def test_replay_gcp_scales_out_on_one_datapoint_and_in_after_its_stabilisation():
    gcp = replay(step_trace(), pool(), scaler(2, cloud="gcp"))
    # the first datapoint of the 4/s load (660 s) wants 6: GCP acts on it
    assert {x.decided_s for x in gcp.launches} == {660.0}
    rows = steady(4, 0, 600) + steady(0.5, 600, 3000)
    down = replay(Trace.of(rows), pool(scale_in_cooldown_seconds=60), scaler(6, cloud="gcp"))
    serving = [m.serving_machine_s / 60 for m in down.timeline]
    # the last datapoint that wants 6 is at 600 s (it reads 540-600 s; the one at 660 s reads the drain,
    # a mean of ~8 in flight: 2); it holds the pool at 6 for the 600 s after it, to 1,200 s
    first_drop = next(k for k in range(1, len(serving)) if serving[k] < serving[k - 1])
    assert first_drop == 20


def test_replay_spot_interruptions_requeue_the_drained_requests_and_replace_the_machine():
    spot = scaler(4, interruptions_per_machine_hour=2.0, seed=7)
    a = replay(Trace.of(steady(3, 0, 1800)), pool(), spot).as_json()
    b = replay(Trace.of(steady(3, 0, 1800)), pool(), spot).as_json()
    assert a == b  # seeded
    assert a["scale"]["interruptions"] >= 1
    assert a["ttft"]["requeued"] >= 1
    assert a["scale"]["cold_launches"] >= a["scale"]["interruptions"]
    assert a["ttft"]["unserved"] == 0


def test_replay_aws_scale_in_step_is_all_or_nothing_as_the_rendered_alarm():
    # 20 in flight (2/s x 10 s) on 6 machines; quiet under 0.8 x 7 = 5.6 per machine left.
    rows = steady(2, 0, 5400)
    one = replay(Trace.of(rows), pool(), scaler(6))
    half = replay(Trace.of(rows), pool(), scaler(6, scale_in_share=0.5))
    # one machine a step: 20/5 and 20/4 are quiet, 20/3 is not: the pool settles at 4
    assert one.as_json()["scale"]["min_machines"] == 4
    # half of six leaves 3 (20/3 = 6.7 per machine): the alarm never fires, the pool stays at 6
    assert half.as_json()["scale"]["min_machines"] == 6
    assert half.scale_ins == 0


def test_replay_gcp_scale_in_control_holds_the_window_peak_less_the_share():
    # 40 in flight on 6 VMs, then 5: the recommendation drops to 1 or 2 and the stabilisation (600 s)
    # holds 6 to 1,200 s. The scale-in control keeps the group at least the peak recommendation of its
    # window less maxScaledInReplicas (Compute API AutoscalingPolicyScaleInControl); a window no longer
    # than the stabilisation (the cooldown alone, as rendered before) would bind nothing: 6 to 2 at once.
    rows = steady(4, 0, 600) + steady(0.5, 600, 4200)

    def drops(window: int) -> list[tuple[int, float]]:
        down = replay(
            Trace.of(rows),
            pool(scale_in_cooldown_seconds=window),
            scaler(6, cloud="gcp", scale_in_share=0.25),
        )
        serving = [m.serving_machine_s / 60 for m in down.timeline]
        assert min(serving) == 1
        return [
            (k, serving[k - 1] - serving[k]) for k in range(1, len(serving)) if serving[k] < serving[k - 1]
        ]

    # the rendered window is the stabilisation (600 s) plus the cooldown (fleet.elastic.gcp_scale_in_window):
    # 6 - ceil(0.25 x 6) = 4 when the stabilisation lets go (minute 20), the rest once the 6 leaves the
    # window, a cooldown later
    assert drops(900) == [(20, 2), (35, 3)]
    assert drops(300) == [(20, 2), (25, 3)]
    assert drops(60) == [(20, 2), (21, 3)]


def fast_plan(ratio: float = 1.0) -> dict:
    """A plan's fast step (fleet.elastic.fast_steps) at `ratio` x the test plan's target of 7."""
    threshold, steps = fast_steps(ratio, 7.0)
    return {
        "fast_scale_out_ratio": ratio,
        "fast_scale_out_threshold": threshold,
        "fast_scale_out_steps": steps,
    }


def test_replay_fast_step_scales_out_after_one_datapoint_then_tracking_sizes_the_rest():
    result = replay(step_trace(), pool(**fast_plan()), scaler(2))
    # the period ending at 660 s is far over 2 x the target per machine: the open step adds 100% of
    # the 2 serving (AWS's most a percent step takes); at 720 s the same step counts the 2 starting and
    # launches none; target tracking's third datapoint (780 s) sizes the pool to 6
    assert [(x.decided_s, x.ready_s) for x in result.launches] == [(660.0, 960.0)] * 2 + [(780.0, 1080.0)] * 2
    doc = result.as_json()
    assert (doc["scale"]["scale_outs"], doc["scale"]["fast_scale_outs"]) == (2, 1)
    assert doc["scaling"]["fast_scale_out"]["threshold_in_flight"] == 7.0
    assert doc["scaling"]["fast_scale_out"]["steps"][-1] == {"lower": 7.0, "upper": None, "percent": 100}
    # two machines two minutes earlier: fewer requests wait than with target tracking alone
    alone = replay(step_trace(), pool(**fast_plan()), scaler(2, fast_scale_out=False))
    assert alone.as_json()["scaling"]["fast_scale_out"] is None
    assert [x.decided_s for x in alone.launches] == [780.0] * 4
    assert result.over_target() < alone.over_target()


def test_replay_fast_step_stays_quiet_under_its_threshold():
    # 1 request/s is 10 in flight: 5 per machine on 2, under the 7 x 1.2 = 8.4 threshold
    result = replay(Trace.of(steady(1, 0, 1200)), pool(**fast_plan(1.2)), scaler(2))
    assert result.launches == []
    assert result.fast_scale_outs == 0


def test_replay_fast_step_adds_its_bands_share_of_a_large_pool():
    # 6 requests/s is 60 in flight, 7.5 per machine on 8 (1.07 x the target): the band [1.0, 1.1) adds
    # 10% of 8 = 0.8, rounded to one machine (EC2 Auto Scaling's percent rounding). The first minute
    # averages 6.9 (the first 10 s fill up), under the threshold: the step fires on the second.
    trace = Trace.of(steady(6, 0, 900))
    result = replay(trace, pool(max_size=20, min_size=8, desired=8, **fast_plan(1.0)), scaler(8))
    assert [x.decided_s for x in result.launches] == [120.0]
    assert result.fast_scale_outs == 1


def test_replay_gcp_has_no_fast_step_its_autoscaler_acts_on_each_datapoint():
    result = replay(step_trace(), pool(**fast_plan()), scaler(2, cloud="gcp"))
    assert result.fast_scale_outs == 0
    assert result.as_json()["scaling"]["fast_scale_out"] is None
    assert {x.decided_s for x in result.launches} == {660.0}


# -- the scalers held against their documented behaviour (issue #39) ---------------------------------------


def _drops(result) -> list[int]:
    serving = [m.serving_machine_s / 60 for m in result.timeline]
    return [k for k in range(1, len(serving)) if serving[k] < serving[k - 1]]


def test_replay_aws_instance_warmup_beyond_serving_blocks_scale_in():
    # 14 in flight wants 2 machines: one launches at 180 s (3 datapoints) and serves at 480 s; the load
    # falls to 2 in flight at 900 s. AWS blocks every dynamic scale-in while a machine is in its warm-up
    # (EC2 Auto Scaling User Guide, "Set the default instance warmup", read 2026-12-02), which starts at
    # InService: a warm-up equal to the InService-to-serving estimate ends when the machine serves, a
    # grace-long one (as rendered before) 900 s later.
    rows = steady(1.4, 0, 900) + steady(0.2, 900, 4000)
    kw = {"scale_in_cooldown_seconds": 300, "max_size": 2}
    expected = replay(
        Trace.of(rows), pool(instance_warmup_seconds=60, in_service_to_serving_seconds=60, **kw), scaler(1)
    )
    grace = replay(
        Trace.of(rows), pool(instance_warmup_seconds=960, in_service_to_serving_seconds=60, **kw), scaler(1)
    )
    assert [x.ready_s for x in expected.launches] == [480.0]
    # quiet from the datapoint at 960 s, five in a row (300 s): one machine goes at 1,200 s
    assert _drops(expected) == [20]
    # warm-up until 480 + 900 = 1,380 s: the first tick after it, 1,380 s (minute 23)
    assert _drops(grace) == [23]
    assert grace.elastic_machine_s - expected.elastic_machine_s == pytest.approx(180)


def test_replay_gcp_recommends_the_larger_of_its_two_signals_not_their_sum():
    # 2 machines (20 slots) meet 4/s (40 in flight): over 600-660 s 20 run and the queue grows 2/s, a
    # mean of ~60 waiting. The autoscaler's two signals (running, waiting; components/gcp/elastic.py)
    # recommend ceil(20 / 7) = 3 and ceil(60 / 7) = 9; it takes the larger, 9, not the sum's 11 (as the
    # replay had it before).
    result = replay(step_trace(), pool(max_size=20), scaler(2, cloud="gcp"))
    first = [x for x in result.launches if x.decided_s == 660.0]
    assert len(first) == 9 - 2


def test_replay_kubernetes_follows_the_rendered_hpa_one_machine_per_scale_up_period():
    # the pool's HPA (components/k8s/pool_manifests.py): syncs every 15 s, acts on one reading, adds at
    # most one machine's pods per scale_out_cooldown_seconds (60 s), however large the shortfall
    hpa = scaler(2, cloud="kubernetes", period_seconds=15, stabilisation_seconds=300)
    result = replay(step_trace(), pool(), hpa)
    decided = [x.decided_s for x in result.launches]
    assert decided == [615.0, 675.0, 735.0, 795.0]
    # scale-down: the largest recommendation of the 300 s window, then at most one machine a minute
    rows = steady(4, 0, 600) + steady(0.5, 600, 3000)
    down = replay(
        Trace.of(rows), pool(), scaler(6, cloud="kubernetes", period_seconds=15, stabilisation_seconds=300)
    )
    drops = _drops(down)
    assert len(drops) == 5
    assert all(b - a == 1 for a, b in itertools.pairwise(drops))


def test_replay_kubernetes_percent_scale_up_policy_lifts_the_one_machine_limit():
    # a Percent 100 policy per sync period beside the rendered one: the HPA takes the larger limit, so 2
    # machines may add 2 at once (the recommendation is 6, max 6): 4 machines in two syncs, not four minutes
    hpa = scaler(
        2, cloud="kubernetes", period_seconds=15, stabilisation_seconds=300, hpa_scale_up_percent=100
    )
    result = replay(step_trace(), pool(), hpa)
    by_time: dict[float, int] = {}
    for launch in result.launches:
        by_time[launch.decided_s] = by_time.get(launch.decided_s, 0) + 1
    assert by_time == {615.0: 2, 630.0: 2}


def test_replay_kubernetes_percent_scale_down_policy_lets_half_go_a_minute():
    # 5 in flight on 6 machines (the recommendation: 1); after the 300 s stabilisation the one-machine
    # policy lets one go a minute, the Percent 50 policy half the replicas at the minute's start
    rows = steady(0.5, 0, 2400)
    base = {"cloud": "kubernetes", "period_seconds": 15, "stabilisation_seconds": 300}
    one = replay(Trace.of(rows), pool(), scaler(6, **base))
    half = replay(Trace.of(rows), pool(), scaler(6, hpa_scale_down_percent=50, **base))
    served_one, served_half = _serving(one), _serving(half)
    first = next(k for k, n in enumerate(served_half) if n < 6)
    assert next(k for k, n in enumerate(served_one) if n < 6) == first  # the same window holds both
    # 6 x 0.5 = 3, then 3 x 0.5 = 1.5 truncated to 1 (the HPA's int32 conversion): the recommendation
    assert served_half[first : first + 3] == [3, 1, 1]
    assert served_one[first : first + 3] == [5, 4, 3]
    assert half.elastic_machine_s < one.elastic_machine_s


def test_replay_gcp_keeps_a_start_size_above_the_minimum_for_its_stabilisation_period():
    # the autoscaler held the pool at 6 before the trace; a light load (1 machine's worth) lets it go
    # only once 6 leaves the 600 s stabilisation window, not at the first datapoint
    rows = steady(0.5, 0, 2400)
    result = replay(Trace.of(rows), pool(scale_in_cooldown_seconds=60), scaler(6, cloud="gcp"))
    assert _drops(result)[0] == 10


# -- the deficit scale-in (AWS step policy, fleet.elastic.deficit_steps; issue #39) -------------------------


def deficit_plan(stale: int = 1) -> dict:
    """A plan's deficit scale-in at the default headroom (0.8 x 7 = 5.6 per machine were one gone)."""
    return {
        "scale_in_sizing": "deficit",
        "scale_in_steps": deficit_steps(0.8, 7.0, stale=stale)[1],
        "scale_in_cooldown_seconds": 120,  # two quiet datapoints before the alarm is in ALARM
        "max_size": 20,
    }


def _serving(result) -> list[int]:
    return [round(m.serving_machine_s / 60) for m in result.timeline]


def test_replay_deficit_scale_in_lets_go_its_bands_share_each_minute_in_alarm():
    # 20 in flight on 12 machines. Bands a tenth of the target (0.7) wide under 5.6; a band with top b
    # lets go 1 - sqrt(b / 5.6) (the stale guard), at least one machine. Without lag each datapoint
    # already shows the last step; the policy picks the band of the Average of the alarm's two-datapoint
    # window (test_replay_aws_step_rules.py):
    #   120 s: 20 / 11 = 1.8 per machine were one gone (both), band top 2.1: 38% of 12 = 4 go -> 8
    #   180 s: (1.8 + 20 / 7 = 2.9) / 2 = 2.3, top 2.8: 29% of 8 = 2 -> 6
    #   240 s: (2.9 + 20 / 5 = 4.0) / 2 = 3.4, top 3.5: 20% of 6 = 1 -> 5
    #   300 s: (4.0 + 20 / 4 = 5.0) / 2 = 4.5, top 4.9: 6% of 5 = 1 -> 4
    #   360 s: 20 / 3 = 6.7, over 5.6: the alarm is OK, 4 machines (5 per machine) stay.
    result = replay(Trace.of(steady(2, 0, 1800)), pool(**deficit_plan()), scaler(12))
    assert _serving(result)[:8] == [12, 12, 8, 6, 5, 4, 4, 4]
    assert result.as_json()["scale"]["min_machines"] == 4
    assert result.scale_ins == 4


def test_replay_deficit_scale_in_is_faster_and_cheaper_than_one_share_per_cooldown():
    rows = steady(2, 0, 1800)
    deficit = replay(Trace.of(rows), pool(**deficit_plan()), scaler(12))
    share = replay(
        Trace.of(rows),
        pool(max_size=20, scale_in_cooldown_seconds=120),
        scaler(12, scale_in_share=0.25),
    )
    assert share.elastic_machine_s > deficit.elastic_machine_s
    assert deficit.miss_share() == share.miss_share() == 0.0


def test_replay_deficit_steps_without_the_stale_guard_over_remove_on_a_stale_datapoint():
    # With the 60 s lag the datapoint seen a minute after a step is the one before it, and the alarm,
    # still in ALARM, invokes the step policy again on it (once a minute). 20 in flight on 12 machines
    # (1.8 per machine were one gone):
    # - steps sized to the whole deficit (stale=0): 62% of 12 = 7 go at 180 s (-> 5), then again 62% of 5
    #   = 3 on the stale datapoint at 240 s (-> 2): 10 in flight per machine, over the target of 7, and
    #   the pool scales out again;
    # - the plan's steps (stale=1): 38% of 12 = 4 (-> 8), 38% of 8 = 3 on the stale datapoint (-> 5),
    #   then fresh datapoints: 20 / 7 = 2.9 lets one go (-> 4), 20 / 4 = 5.0 one more (-> 3: 6.7 per
    #   machine, the top band's one machine twice; under the target, nothing scales out).
    rows = steady(2, 0, 1800)
    lagged = Autoscaler(start_size=12, metric_lag_seconds=60)
    whole = replay(Trace.of(rows), pool(**deficit_plan(stale=0)), lagged)
    guarded = replay(Trace.of(rows), pool(**deficit_plan()), lagged)
    assert _serving(whole)[2:5] == [12, 5, 2]
    assert whole.scale_outs >= 1
    assert _serving(guarded)[2:8] == [12, 8, 5, 4, 3, 3]
    assert guarded.as_json()["scale"]["min_machines"] == 3
    assert guarded.scale_outs == 0


def test_replay_deficit_scale_in_waits_for_a_machine_in_its_warmup():
    # the same load with a machine launching: no dynamic scale-in while one starts or warms up
    rows = steady(2, 0, 600) + steady(8, 600, 700) + steady(2, 700, 3000)
    result = replay(
        Trace.of(rows),
        pool(instance_warmup_seconds=300, in_service_to_serving_seconds=0, **deficit_plan()),
        scaler(12),
    )
    # the spike (80 in flight) launches 16 machines at 780 s, serving at 1,080 s; their warm-up ends at
    # 1,380 s, and the load back at 20 in flight lets go the first share only then (the bands of the
    # alarm window's Average after it: 10, 7, 5, 4)
    assert {(x.decided_s, x.ready_s) for x in result.launches} == {(780.0, 1080.0)}
    drops = [k * 60 for k in _drops(result)]
    assert next(t for t in drops if t > 780) == 1380
    assert _serving(result)[22:29] == [20, 10, 7, 5, 4, 4, 4]
