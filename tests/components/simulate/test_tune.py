"""`--tune`: the cheapest settings within the SLO on a synthetic trace with a known answer."""

from __future__ import annotations

import itertools

from inference_infra.components.simulate import Trace, replay
from inference_infra.components.simulate.tune import MIN_SHARES, reactive_bound, slo_floor, tune
from tests.components.simulate.test_replay import pool, scaler, steady


def test_tune_finds_the_headroom_a_step_faster_than_a_cold_start_takes():
    # 1/s (10 in flight) for 20 minutes, then 2.5/s (25: three machines of 10) for 20: the step lands
    # faster than a scale-out (3 datapoints + a 300 s cold start), so only headroom or a minimum that
    # already holds 25 keep it on time
    trace = Trace.of(steady(1, 0, 1200) + steady(2.5, 1200, 2400))
    base = pool(max_size=6)
    own = replay(trace, base, scaler()).as_json()
    assert own["slo"]["met"] is False  # min 1 at target 7 per machine: the step queues
    found = tune(trace, base, scaler())
    assert found.best.meets
    assert found.best.setting.min_size >= 3  # 25 in flight need 3 machines before the step
    # holding three all along is what a step faster than any cold start takes here: the static fleet
    assert found.best.cost_usd <= found.static_usd + 1e-6
    assert round(found.start.miss_share, 6) == own["slo"]["miss_share"]
    # the frontier: cheapest first, each run missing fewer requests than every cheaper one
    frontier = found.frontier()
    assert [p.cost_usd for p in frontier] == sorted(p.cost_usd for p in frontier)
    assert all(b.miss_share < a.miss_share for a, b in itertools.pairwise(frontier))
    assert found.best in frontier
    doc = found.as_json()
    assert doc["found"] is True
    assert doc["best"]["meets_slo"] is True
    assert doc["runs"] == len(found.points) >= 10


def test_tune_says_when_no_setting_meets_the_slo():
    # 20/s for two minutes needs 20 machines; the pool's maximum is 3
    trace = Trace.of(steady(1, 0, 600) + steady(20, 600, 720) + steady(1, 720, 1200))
    found = tune(trace, pool(max_size=3), scaler())
    assert not found.best.meets
    assert found.as_json()["found"] is False
    assert "NO setting searched keeps 1% or fewer" in found.table()
    # not even the maximum from the first second holds it: no minimum is an SLO floor
    assert found.slo_floor is None
    assert found.as_json()["reactive_bound"]["slo_floor"] is None
    assert "SLO floor: none" in found.table()


def test_reactive_bound_says_when_no_scaling_setting_can_meet_the_slo_from_the_minimum():
    # 3/s from the first second (30 in flight: 3 machines of 10) on a pool that starts at its minimum
    # of 1: the first datapoint is seen at 60 s, the maximum serves at 60 + 300 s, and until then two
    # thirds of the arrivals wait; going to the maximum at once is the most any load-driven policy can do
    trace = Trace.of(steady(3, 0, 1800))
    base = pool(max_size=6)
    bound = reactive_bound(trace, base, scaler())
    assert bound > 0.1
    # a lower bound on what every setting with this minimum misses: the pool's own, and the search's
    found = tune(trace, base, scaler())
    assert found.reactive_bound_miss_share == bound
    assert bound <= found.start.miss_share + 1e-9
    assert all(bound <= p.miss_share + 1e-9 for p in found.points if p.setting.min_size == 1)
    assert "no scaling setting meets the SLO from this minimum" in found.table()
    assert found.as_json()["reactive_bound"] == {
        "min_size": 1,
        "miss_share": round(bound, 6),
        "meets_slo": False,
        "slo_floor": found.slo_floor,
    }


def test_reactive_bound_meets_the_slo_on_a_load_that_starts_within_the_minimum():
    # 0.5/s (5 in flight) all along: the minimum of one machine holds it, nothing waits
    calm = Trace.of(steady(0.5, 0, 1800))
    assert reactive_bound(calm, pool(max_size=6), scaler()) == 0.0


def test_tune_searches_the_scale_in_sizing_and_finds_the_deficit_cheaper_after_a_fall():
    # 40 in flight (6 machines) for 20 minutes, then 5 for an hour, with a target that lets the first
    # scale-out queue (900 s): what is left to choose is how fast the pool lets go. The share sizing
    # (its cooldown from each activity's end) keeps machines the deficit step lets go at once.
    trace = Trace.of(steady(4, 0, 1200) + steady(0.5, 1200, 4800))
    found = tune(trace, pool(target_seconds=900, max_size=6), scaler())
    sizings = {p.setting.scale_in_sizing for p in found.points}
    assert sizings == {"deficit", "share"}
    assert {p.setting.scale_in_cooldown_seconds for p in found.points} >= {60, 120, 300, 600}
    assert found.best.meets
    assert found.best.setting.scale_in_sizing == "deficit"
    cheapest_share = min(p.cost_usd for p in found.points if p.setting.scale_in_sizing == "share" and p.meets)
    assert found.best.cost_usd < cheapest_share
    assert found.as_json()["best"]["scale_in_sizing"] == "deficit"


def test_slo_floor_is_the_lowest_minimum_whose_reactive_bound_keeps_the_slo():
    # 3/s from the first second: 30 in flight, three machines of 10 slots. From two, a third of the
    # arrivals wait until the maximum serves (the first datapoint at 60 s + a 300 s cold start)
    trace = Trace.of(steady(3, 0, 1800))
    base = pool(max_size=20)
    floor = slo_floor(trace, base, scaler())
    assert floor == 3

    def bound(minimum):
        return reactive_bound(trace, pool(max_size=20, min_size=minimum), scaler())

    assert bound(floor) <= 0.01 < bound(floor - 1)


def test_tune_searches_the_slo_floor_a_grid_of_shares_steps_over():
    # the same load on a pool of at most 20: the shares of the maximum give minimums 0, 2, 4, 6...,
    # never 3; two misses the SLO whatever the other settings, four holds a machine it does not need
    trace = Trace.of(steady(3, 0, 1800))
    base = pool(max_size=20)
    assert 3 not in {round(20 * share) for share in MIN_SHARES}
    found = tune(trace, base, scaler())
    assert found.slo_floor == 3
    assert found.best.meets
    assert found.best.setting.min_size == 3
    cheapest_on_the_shares = min(
        p.cost_usd for p in found.points if p.meets and p.setting.min_size in {0, 2, 4, 6, 8, 10}
    )
    assert found.best.cost_usd < cheapest_on_the_shares
    assert found.as_json()["reactive_bound"]["slo_floor"] == 3
    assert "SLO floor: the lowest minimum whose reactive bound keeps the SLO: 3" in found.table()


def test_neighbours_are_one_axis_a_step_away():
    from inference_infra.components.simulate.tune import Setting, neighbours

    best = Setting(0.85, 0, 12, 0.25, 1.0, "deficit", 300)
    found = neighbours(best, 48, aws=True)
    moved = [{k for k, v in n.as_json().items() if v != best.as_json()[k]} for n in found]
    assert all(len(m) == 1 for m in moved)  # one axis each
    got = {(next(iter(m)), n.as_json()[next(iter(m))]) for m, n in zip(moved, found, strict=True)}
    assert got == {
        ("min_size", 11),
        ("min_size", 13),
        ("target_utilisation", 0.8),
        ("target_utilisation", 0.9),
        ("scale_in_share", 0.1),
        ("scale_in_share", 0.5),
        ("scale_in_cooldown_seconds", 120),
        ("scale_in_cooldown_seconds", 600),
        ("fast_scale_out_ratio", 0.0),
        ("fast_scale_out_ratio", 1.2),
        ("scale_in_sizing", "share"),
    }
    # GCP and Kubernetes: no fast step or sizing to move; Kubernetes keeps its stabilisation window
    assert not {n.scale_in_sizing for n in neighbours(best, 48, aws=False)} - {"deficit"}
    assert {n.scale_in_cooldown_seconds for n in neighbours(best, 48, aws=False, cooldowns=False)} == {300}


def test_tune_says_how_many_of_the_best_settings_neighbours_keep_the_slo():
    # the step trace of the headroom test: the best holds three machines from the start; one fewer
    # misses the step, so at least that neighbour is outside the SLO and the answer says so
    trace = Trace.of(steady(1, 0, 1200) + steady(2.5, 1200, 2400))
    found = tune(trace, pool(max_size=6), scaler())
    assert found.best.meets
    assert found.neighbours
    fewer = [p for p in found.neighbours if p.setting.min_size == found.best.setting.min_size - 1]
    assert fewer
    assert not fewer[0].meets
    doc = found.as_json()["neighbours"]
    assert doc["runs"] == len(found.neighbours)
    assert doc["within_slo"] == sum(p.meets for p in found.neighbours) < len(found.neighbours)
    assert doc["worst"]["miss_share"] == round(max(p.miss_share for p in found.neighbours), 6)
    assert "keep the SLO; the worst: target_utilisation" in found.table()
