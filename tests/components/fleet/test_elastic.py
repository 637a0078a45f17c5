"""The elastic vocabulary: inputs checked before anything exists, and the scaling numbers on known answers."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from inference_infra.components.fleet import ElasticArgs, FleetCommonArgs, ScheduleArgs, elastic_problems
from inference_infra.components.fleet import elastic as el
from inference_infra.components.fleet.elastic import FastStep, fast_steps, percent_change, with_fast_scale_out
from inference_infra.components.planner import Quantization
from inference_infra.components.serving.cold_start import ColdStart, WeightSource
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.serving.flags import EngineConfig
from inference_infra.components.serving.model import FleetServing, ServedModel, plan_serving

MODEL = ServedModel(name="llama-3.1-8b", context_tokens=4097, concurrency=16)


def _serving(*, engines: int = 2, seqs: int = 16, weights_gib: float = 15.0, fetch_gib_s: float = 0.5):
    config = EngineConfig(
        family=EngineFamily.NVIDIA_VLLM,
        served_model_name="llama-3.1-8b",
        tensor_parallel=1,
        engines=engines,
        max_model_len=4097,
        max_num_seqs=seqs,
        memory_utilization=0.9,
        weights=Quantization.BF16,
        kv_cache=None,
    )
    start = ColdStart(
        "g5.xlarge", WeightSource.S3, weights_gib, fetch_gib_s, "test", EngineFamily.NVIDIA_VLLM
    )
    return FleetServing(config, start)


@pytest.fixture
def tpot_20ms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(el, "decode_seconds_per_token", lambda model, machine: 0.02)


def _plan(args: ElasticArgs, peak: int = 8, **kw):
    kw.setdefault("serving", _serving())
    return el.plan_scaling(args, peak=peak, model=MODEL, machine="g5.xlarge", **kw)


def test_plan_scaling_defaults_on_known_answers(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(), peak=8)
    # floor 25% of 8 = 2; max = peak; desired starts at the floor
    assert (plan.min_size, plan.max_size, plan.desired, plan.peak) == (2, 8, 2, 8)
    # 2 engines x 16 sequences = 32 in flight per machine; 70% of it tracked
    assert (plan.in_flight_per_machine, plan.target_in_flight) == (32, 22.4)
    assert (plan.scale_out_cooldown_seconds, plan.scale_in_cooldown_seconds) == (60, 300)
    # a quarter of the group a scale-in, after 5 quiet one-minute datapoints
    assert (plan.scale_in_percent, plan.scale_in_datapoints) == (25, 5)
    # 4096 tokens x 20 ms = 81.92 s -> 82 + 30 s margin
    assert plan.deregistration_delay_seconds == 112
    assert plan.longest_generation_seconds == pytest.approx(81.92)
    assert plan.warmup_seconds == _serving().grace_seconds()
    # the policies' warm-up: the slow start after InService, which is when the engines answer (the node
    # completes its launch hook then), not the grace
    start = _serving().cold_start
    assert plan.instance_warmup_seconds == _serving().slow_start_seconds() < plan.warmup_seconds
    assert plan.in_service_to_serving_seconds == 0
    assert plan.warmup_beyond_serving_seconds == plan.instance_warmup_seconds
    assert plan.expected_start_seconds == math.ceil(start.seconds)
    assert f"warm-up {plan.instance_warmup_seconds} s (grace {plan.warmup_seconds} s)" in plan.describe()


def test_plan_scaling_floor_rounds_up(tpot_20ms: None) -> None:
    assert _plan(ElasticArgs(floor_share=0.3), peak=5).min_size == 2  # ceil(1.5)
    assert _plan(ElasticArgs(floor_share=0.2), peak=5).min_size == 1  # exactly 1.0, not 2
    # A floor of 0: working hours keep one machine (a pool at zero publishes no load to wake it).
    lifted = _plan(ElasticArgs(floor_share=0.0), peak=5)
    assert lifted.min_size == lifted.desired == 1
    assert any(n.startswith("working-hours minimum 1") for n in lifted.notes)


def test_elastic_problems_rejects_a_zero_minimum_without_a_schedule() -> None:
    (problem,) = elastic_problems(ElasticArgs(min_size=0), peak=5)
    assert (problem.input, problem.value) == ("elastic.min_size", 0)
    assert "a pool at zero machines publishes no load" in problem.allowed
    # A floor of 0 is computed, not asked: lifted to 1 with a note (reserved machines may raise it).
    assert elastic_problems(ElasticArgs(floor_share=0.0), peak=5) == []
    schedule = ScheduleArgs(time_zone="Europe/Berlin")
    assert elastic_problems(ElasticArgs(min_size=0, schedule=schedule), peak=5) == []


def test_plan_scaling_keeps_reserved_machines_in_the_floor(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(), peak=8, reserved=4)
    assert plan.min_size == 4
    assert any("reserved" in note for note in plan.notes)


def test_plan_scaling_budget_caps_the_default_max_with_a_note(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(), peak=8, max_by_budget=5)
    assert plan.max_size == 5
    assert any("budget" in note and "5" in note for note in plan.notes)


def test_plan_scaling_budget_keeps_an_explicit_max_with_a_note(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(max_size=8), peak=8, max_by_budget=5)
    assert plan.max_size == 8
    assert any("kept as given" in note for note in plan.notes)


def test_plan_scaling_budget_below_the_floor_lowers_the_floor(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(min_size=4), peak=8, max_by_budget=3)
    assert (plan.min_size, plan.max_size) == (3, 3)


def test_plan_scaling_warm_pool_defaults_to_headroom_when_a_warm_start_is_half_a_cold_one(
    tpot_20ms: None,
) -> None:
    # cold: boot 120 + 15 GiB from S3 at 0.5 GiB/s (30) + load 7.5 + warm-up 90 = 247.5 s; warm: boot 60
    # + 2 x 15 GiB from EBS at 0.1 GiB/s (300) + warm-up 90 = 450 s: no gain
    slow = _plan(ElasticArgs(), serving=_serving(fetch_gib_s=0.5), warm_read_gib_s=0.1)
    assert slow.warm_pool_size == 0
    assert any("no warm pool" in n for n in slow.notes)
    # from S3 at 0.1 GiB/s (cold 120 + 150 + 7.5 + 90 = 367.5 s) vs EBS at 0.5 GiB/s: warm = restart
    # 60 + 2 x 15 / 0.5 + vLLM warm-up 90 = 210 s, faster but 57% of the cold start: no warm pool
    faster = _plan(ElasticArgs(), serving=_serving(fetch_gib_s=0.1), warm_read_gib_s=0.5)
    assert faster.warm_start_seconds == 210
    assert faster.warm_pool_size == 0
    assert any("not at most 50% of a cold start" in n for n in faster.notes)
    # EBS at 1 GiB/s: 60 + 30 + 90 = 180 s, under half of 367.5 s: the headroom max - min = 6
    fast = _plan(ElasticArgs(), serving=_serving(fetch_gib_s=0.1), warm_read_gib_s=1.0)
    assert fast.warm_start_seconds == 180
    assert fast.warm_pool_size == 6


def test_plan_scaling_warm_pool_zero_where_not_allowed(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(), serving=_serving(fetch_gib_s=0.1), warm_pool=False)
    assert plan.warm_pool_size == 0
    assert _plan(ElasticArgs(warm_pool_size=3), warm_pool=True).warm_pool_size == 3


def test_plan_scaling_drain_capped_at_the_load_balancers_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(el, "decode_seconds_per_token", lambda model, machine: 1.0)
    plan = _plan(ElasticArgs())
    assert plan.deregistration_delay_seconds == 3600
    assert any("3600" in note for note in plan.notes)


def test_plan_scaling_with_the_real_planner() -> None:
    serving, problems = plan_serving(MODEL, machine="g5.12xlarge", cloud="aws", source=WeightSource.S3)
    assert not problems
    assert serving is not None
    plan = el.plan_scaling(ElasticArgs(), peak=4, serving=serving, model=MODEL, machine="g5.12xlarge")
    tpot = el.decode_seconds_per_token(MODEL, "g5.12xlarge")
    assert 0.001 < tpot < 1
    assert plan.deregistration_delay_seconds == math.ceil(4096 * tpot) + el.DRAIN_MARGIN_SECONDS
    assert plan.in_flight_per_machine == serving.engines.engines * serving.engines.max_num_seqs
    assert plan.in_flight_per_machine >= MODEL.concurrency


def test_elastic_problems_accepts_the_defaults() -> None:
    assert elastic_problems(ElasticArgs(), peak=4) == []
    assert elastic_problems(ElasticArgs(schedule=ScheduleArgs(time_zone="Europe/Berlin")), peak=4) == []


def test_elastic_problems_rejects_min_above_max() -> None:
    problems = elastic_problems(ElasticArgs(min_size=5, max_size=3), peak=8, key="pool.elastic")
    assert [p.input for p in problems] == ["pool.elastic.min_size"]
    assert "above the maximum of 3" in problems[0].allowed


def test_elastic_problems_rejects_min_above_the_peak() -> None:
    problems = elastic_problems(ElasticArgs(min_size=5), peak=4)
    assert [p.input for p in problems] == ["elastic.min_size"]


@pytest.mark.parametrize(
    ("args", "key", "value", "allowed"),
    [
        (ElasticArgs(min_size=-1), "elastic.min_size", -1, "must be at least 0"),
        (ElasticArgs(max_size=0), "elastic.max_size", 0, "must be at least 1"),
        (ElasticArgs(floor_share=1.5), "elastic.floor_share", 1.5, "must be 0..1"),
        (ElasticArgs(target_utilisation=0), "elastic.target_utilisation", 0, "must be at least 0.05"),
        (ElasticArgs(target_utilisation=1.2), "elastic.target_utilisation", 1.2, "must be 0.05..1"),
        (
            ElasticArgs(scale_out_cooldown_seconds=-5),
            "elastic.scale_out_cooldown_seconds",
            -5,
            "must be at least 0",
        ),
        (
            ElasticArgs(scale_in_cooldown_seconds=90000),
            "elastic.scale_in_cooldown_seconds",
            90000,
            "must be 0..86400",
        ),
        (ElasticArgs(warm_pool_size=-1), "elastic.warm_pool_size", -1, "must be at least 0"),
        (ElasticArgs(scale_in_share=0.95), "elastic.scale_in_share", 0.95, "must be 0..0.9"),
        (ElasticArgs(scale_in_share=-0.1), "elastic.scale_in_share", -0.1, "must be at least 0"),
    ],
)
def test_elastic_bounds_are_check_types(args: ElasticArgs, key: str, value: object, allowed: str) -> None:
    """#32 item 8: the fields' own bounds are their arg(ge=..., le=...), checked by check_types (the fleet
    skeleton's step 0, simulate); elastic_problems keeps only what relates inputs to each other."""
    from inference_infra.components.validation import check_types

    assert [(p.input, p.value, p.allowed) for p in check_types(args, "elastic.")] == [(key, value, allowed)]


def test_elastic_problems_rejects_a_warm_pool_above_the_room() -> None:
    assert [p.input for p in elastic_problems(ElasticArgs(warm_pool_size=9), peak=4)] == [
        "elastic.warm_pool_size"
    ]


def test_elastic_problems_rejects_no_peak() -> None:
    assert [p.input for p in elastic_problems(ElasticArgs(), peak=0)] == ["elastic"]


@pytest.mark.parametrize(
    ("schedule", "key"),
    [
        (ScheduleArgs(time_zone="Mars/Olympus"), "elastic.schedule.time_zone"),
        (ScheduleArgs(time_zone="UTC", days="weekdays"), "elastic.schedule.days"),
        (ScheduleArgs(time_zone="UTC", start_hour=10, end_hour=9), "elastic.schedule.end_hour"),
        (ScheduleArgs(time_zone="UTC", off_hours_size=5), "elastic.schedule.off_hours_size"),
    ],
)
def test_elastic_problems_rejects_bad_schedule(schedule: ScheduleArgs, key: str) -> None:
    assert [p.input for p in elastic_problems(ElasticArgs(schedule=schedule), peak=4)] == [key]


@pytest.mark.parametrize("days", ["MON-FRI", "1-5", "*", "MON,WED,FRI", "SUN,SAT", "MON-WED,FRI"])
def test_schedule_problems_accepts_cron_days(days: str) -> None:
    assert el.schedule_problems(ScheduleArgs(time_zone="Europe/Berlin", days=days)) == []


def test_fleet_common_args_has_elastic_off_by_default() -> None:
    fields = FleetCommonArgs.__dataclass_fields__
    assert fields["elastic"].default is None
    assert fields["elastic"].metadata["doc"]


def test_plan_scaling_carries_the_scale_in_share_as_a_whole_percent(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(scale_in_share=0.25), peak=8)
    assert (plan.scale_in_share, plan.scale_in_percent) == (0.25, 25)
    assert "scale-in 25% a step" in plan.describe()
    assert _plan(ElasticArgs(scale_in_share=0.0)).scale_in_percent == 0


def test_elastic_problems_rejects_a_share_that_is_not_a_whole_percent() -> None:
    (problem,) = elastic_problems(ElasticArgs(scale_in_share=0.255), peak=4)
    assert problem.value == 0.255
    assert "whole percent" in problem.allowed


@pytest.mark.parametrize(
    ("percent", "machines", "cloud", "step"),
    [
        (0, 10, "aws", 1),  # share 0: one machine
        (25, 10, "aws", 2),  # PercentChangeInCapacity -2.5 rounds toward zero
        (25, 3, "aws", 1),  # -0.75: MinAdjustmentMagnitude 1
        (25, 10, "gcp", 3),  # maxScaledInReplicas 25% of 10 = 2.5, a remainder rounded up
        (25, 3, "gcp", 1),
        (90, 2, "gcp", 1),  # never the whole group
        (90, 10, "aws", 9),
        (50, 1, "aws", 1),  # the last machine (a scheduled pool may go to zero)
        (50, 0, "gcp", 0),
    ],
)
def test_scale_in_step_rounds_as_each_cloud_does(percent: int, machines: int, cloud: str, step: int) -> None:
    assert el.scale_in_step(percent, machines, cloud=cloud) == step


def test_elastic_problems_rejects_a_scale_in_share_not_in_whole_percent() -> None:
    assert [p.input for p in elastic_problems(ElasticArgs(scale_in_share=0.255), peak=4)] == [
        "elastic.scale_in_share"
    ]


def test_fast_steps_cover_the_breach_in_tenths_of_the_target_up_to_twice_it():
    threshold, steps = fast_steps(1.2, 10.0)
    assert threshold == 12.0
    # offsets from the threshold (StepAdjustment's bounds); each band adds the share that brings its
    # top back to the target: [1.2, 1.3) x the target adds 30%, ..., [1.9, 2.0) 100%, then 100%
    assert [(s.lower, s.upper, s.percent) for s in steps] == [
        (0.0, 1.0, 30),
        (1.0, 2.0, 40),
        (2.0, 3.0, 50),
        (3.0, 4.0, 60),
        (4.0, 5.0, 70),
        (5.0, 6.0, 80),
        (6.0, 7.0, 90),
        (7.0, 8.0, 100),
        (8.0, None, 100),
    ]
    assert fast_steps(2.0, 10.0) == (20.0, (FastStep(lower=0.0, upper=None, percent=100),))
    assert fast_steps(0.0, 10.0) == (0.0, ())


def test_percent_change_rounds_as_ec2_auto_scaling_with_a_minimum_of_one_machine():
    assert percent_change(10, 8) == 1  # 0.8: between 0 and 1 is one machine
    assert percent_change(30, 10) == 3
    assert percent_change(30, 9) == 2  # 2.7 rounds down
    assert percent_change(100, 6) == 6
    assert percent_change(0, 6) == 0


def test_plan_fast_step_machines_follow_the_datapoint_per_machine(tpot_20ms: None) -> None:
    plan = dataclasses.replace(_plan(ElasticArgs()), target_in_flight=10.0)
    plan = with_fast_scale_out(plan, 1.2)
    assert plan.fast_scale_out_machines(11.9, 10) == 0  # under the threshold of 12
    assert plan.fast_scale_out_machines(12.0, 10) == 3  # [1.2, 1.3): 30% of 10
    assert plan.fast_scale_out_machines(15.5, 10) == 6  # [1.5, 1.6): 60%
    assert plan.fast_scale_out_machines(50.0, 10) == 10  # the open band: 100%, the most AWS takes
    retargeted = with_fast_scale_out(dataclasses.replace(plan, target_in_flight=5.0))
    assert retargeted.fast_scale_out_threshold == 6.0
    assert with_fast_scale_out(plan, 0).fast_scale_out_steps == ()


def test_elastic_problems_refuse_a_fast_step_under_the_target():
    problems = elastic_problems(ElasticArgs(fast_scale_out_ratio=0.8), peak=4)
    assert [(p.input, p.value) for p in problems] == [("elastic.fast_scale_out_ratio", 0.8)]
    assert "0 (off) or 1 to 2" in problems[0].allowed
    assert elastic_problems(ElasticArgs(fast_scale_out_ratio=0), peak=4) == []
    assert elastic_problems(ElasticArgs(fast_scale_out_ratio=1), peak=4) == []


# -- the deficit scale-in (issue #39) ---------------------------------------------------------------------


def _after_two_firings(percent: int, machines: int, load_per_machine_after_one: float) -> float:
    """Load per machine once a step of `percent` fired twice on the same datapoint (the stale firing)."""
    total = load_per_machine_after_one * (machines - 1)
    left = machines - percent_change(percent, machines)
    left -= percent_change(percent, left)
    return total / left


def test_deficit_steps_cover_every_breach_under_the_threshold_without_a_gap():
    threshold, steps = el.deficit_steps(0.8, 11.2)
    assert threshold == 8.96
    assert steps[0].upper == 0.0
    assert steps[-1].lower is None
    for upper, lower in itertools.pairwise(steps):
        assert lower.upper == upper.lower  # contiguous: the provider's strings are the same numbers
    percents = [-s.percent for s in steps]
    assert percents == sorted(percents)
    assert percents[0] == 1
    assert max(percents) <= round(el.MAX_SCALE_IN_SHARE * 100)
    assert len(steps) <= 20  # EC2 Auto Scaling quota: step adjustments per policy


def test_deficit_steps_and_their_stale_firing_leave_the_load_at_most_at_the_threshold():
    # each band's heaviest load (its top), a large group: two firings on one datapoint let go at most the
    # deficit (the top band's one machine aside: it may go twice; test_replay holds that case)
    threshold, steps = el.deficit_steps(0.8, 10.0)
    for step in steps[1:]:
        top = threshold + step.upper
        assert _after_two_firings(-step.percent, 200, top) <= threshold + 1e-9, step


def test_deficit_steps_sized_to_the_whole_deficit_over_remove_on_a_stale_firing():
    threshold, steps = el.deficit_steps(0.8, 10.0, stale=0)
    band = steps[4]  # a load half the threshold
    assert _after_two_firings(-band.percent, 200, threshold + band.upper) > 10.0  # over the target


def test_plan_renders_deficit_steps_only_for_the_deficit_sizing(tpot_20ms: None) -> None:
    deficit = _plan(ElasticArgs(scale_in_sizing="deficit"))
    share = _plan(ElasticArgs(scale_in_sizing="share"))
    assert deficit.scale_in_steps == el.deficit_steps(el.SCALE_IN_HEADROOM, deficit.target_in_flight)[1]
    assert share.scale_in_steps == ()
    assert (deficit.scale_in_sizing, share.scale_in_sizing) == ("deficit", "share")
    # one machine just under the threshold; the lowest band's share of an idle group
    assert deficit.deficit_scale_in_machines(deficit.scale_in_threshold - 0.01, 40) == 1
    assert deficit.deficit_scale_in_machines(0.0, 40) == math.floor(
        40 * -deficit.scale_in_steps[-1].percent / 100
    )
    assert deficit.deficit_scale_in_machines(deficit.scale_in_threshold, 40) == 0
    assert share.deficit_scale_in_machines(0.0, 40) == 0


def test_with_scale_in_follows_a_changed_target(tpot_20ms: None) -> None:
    plan = _plan(ElasticArgs(scale_in_sizing="deficit"))
    moved = el.with_scale_in(dataclasses.replace(plan, target_in_flight=20.0))
    assert moved.scale_in_steps == el.deficit_steps(el.SCALE_IN_HEADROOM, 20.0)[1]
    assert el.with_scale_in(plan, "share").scale_in_steps == ()


def test_elastic_args_rejects_an_unknown_scale_in_sizing():
    from inference_infra.components.validation import check_types

    problems = check_types(ElasticArgs(scale_in_sizing="fastest"))  # type: ignore[arg-type]
    assert [p.input for p in problems] == ["scale_in_sizing"]
    assert "'deficit'" in str(problems[0])
    assert "'share'" in str(problems[0])
