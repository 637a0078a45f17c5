"""`--tune` held out: another diurnal day, the robust pick, and the picks replayed on another trace.

The pool is test_replay's: every request holds one of 10 slots for 10 s, so r requests a second keep
10 r in flight and need ceil(r) machines; a scale-out takes a datapoint and a 300 s cold start.
"""

from __future__ import annotations

import collections
import hashlib
import importlib.util
from pathlib import Path

import pytest

from inference_infra.components.simulate import Trace, read_trace
from inference_infra.components.simulate.tune import (
    Point,
    Setting,
    neighbours,
    robust_pick,
    tune,
    validate,
)
from tests.components.simulate.test_replay import pool, scaler, steady

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data"
DAY2_SHA256 = "90673014fb1b9fe6180b6a021b854c920c58e936aecc94b660702a2a9271d883"  # benchmarks/data/README.md
DAY1_SHA256 = "99001884d8e40cce051024597906808904a25379273c2a9c586a9cc780c23ce6"


def _recipe():
    spec = importlib.util.spec_from_file_location("make_traces", DATA / "make_traces.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_make_traces_writes_another_diurnal_day_with_its_seed(tmp_path):
    recipe = _recipe()
    assert _sha(DATA / "conv_diurnal_day2.csv") == DAY2_SHA256
    assert (DATA / "conv_diurnal_day2.csv").stat().st_size < 1_000_000
    recipe.main(["--seed", str(recipe.SEED_DAY2), "--out", str(tmp_path / "day2.csv")])
    assert _sha(tmp_path / "day2.csv") == DAY2_SHA256
    # the same recipe: the first day's seed rebuilds the first day
    recipe.main(["--seed", str(recipe.SEED), "--out", str(tmp_path / "day1.csv")])
    assert _sha(tmp_path / "day1.csv") == DAY1_SHA256
    assert recipe.SEED_DAY2 != recipe.SEED


def test_make_traces_rejects_a_seed_without_a_file(tmp_path):
    with pytest.raises(SystemExit) as e:
        _recipe().main(["--seed", "7"])
    assert e.value.code == 2


def test_second_diurnal_day_has_the_first_days_curve_with_other_draws():
    day1 = read_trace(DATA / "conv_diurnal.csv")
    day2 = read_trace(DATA / "conv_diurnal_day2.csv")
    assert 3 * 3600 - 60 < day2.duration_s < 3 * 3600
    tens = collections.Counter(int(r.arrival_s // 600) for r in day2.requests)
    assert 4 < tens[8] / tens[0] < 8  # 2x at the ends, 10x in the middle, as day 1
    assert abs(len(day2.requests) - len(day1.requests)) < 0.02 * len(day1.requests)
    # other draws: the minutes' counts differ, so it is not day 1 again
    per_minute = [collections.Counter(int(r.arrival_s // 60) for r in t.requests) for t in (day1, day2)]
    assert sum(per_minute[0][m] != per_minute[1][m] for m in range(180)) > 120


def _point(minimum: int, meets: bool = True, **changes) -> Point:
    s = Setting(0.7, 0, minimum, 0.25, 0.0, "share", 300)
    s = Setting(**{**s.as_json(), **changes})
    return Point(s, float(minimum), 0.0 if meets else 0.5, None, 0)


def test_robust_pick_is_the_cheapest_within_the_slo_whose_neighbours_all_keep_it():
    # every setting with a minimum of 3 or more keeps the SLO, below 3 none: the cheapest point (3) has
    # a neighbour (2) that misses, 4 is the cheapest whose every neighbour keeps it
    calls: list[Setting] = []

    def run(s: Setting) -> Point:
        calls.append(s)
        return _point(
            s.min_size, s.min_size >= 3, **{k: v for k, v in s.as_json().items() if k != "min_size"}
        )

    points = (_point(3), _point(4), _point(5), _point(1, meets=False))
    found = robust_pick(points, run, 10, aws=False)
    assert found.point == _point(4)
    assert (found.checked, found.candidates) == (2, 3)
    assert all(p.meets for p in found.neighbours)
    assert len(found.neighbours) == len(neighbours(_point(4).setting, 10, aws=False))
    # the candidate that failed cost one replay: its machine fewer, replayed first, missed
    assert calls[0].min_size == 2
    assert len(calls) == 1 + len(found.neighbours)
    assert found.as_json()["point"]["min_size"] == 4
    assert "robust pick (the cheapest within the SLO whose" in found.line()


def test_robust_pick_says_when_none_within_its_bound_qualifies():
    def run(s: Setting) -> Point:
        return _point(s.min_size, s.min_size >= 3)

    found = robust_pick((_point(3), _point(4)), run, 10, aws=False, bound=1)
    assert found.point is None
    assert (found.checked, found.candidates) == (1, 2)
    assert found.as_json()["found"] is False
    assert "robust pick: none - of the 1 cheapest settings within the SLO (of 2" in found.line()
    assert found.as_json()["bound"] == 1
    assert "at most 1 checked" in found.line()


def step() -> Trace:
    # 1/s (one machine) for 20 minutes, then 2.5/s (three) for 20: faster than a scale-out
    return Trace.of(steady(1, 0, 1200) + steady(2.5, 1200, 2400), source="step")


def test_tune_reports_a_robust_pick_a_machine_above_the_ridge():
    found = tune(step(), pool(max_size=6), scaler())
    # the best holds the three machines the step needs from the start; two miss it
    assert found.best.setting.min_size == 3
    assert not next(p for p in found.neighbours if p.setting.min_size == 2).meets
    robust = found.robust
    assert robust is not None
    assert robust.point is not None
    # four: its machine fewer (three) still holds the step, and so does every other neighbour
    assert robust.point.setting.min_size == 4
    assert robust.point.meets
    assert all(p.meets for p in robust.neighbours)
    assert robust.point.cost_usd > found.best.cost_usd
    doc = found.as_json()["robust"]
    assert doc["found"] is True
    assert doc["point"]["min_size"] == 4
    assert doc["checked"] <= doc["bound"]
    assert "robust pick (the cheapest within the SLO whose" in found.table()


def test_validate_replays_the_picks_on_a_trace_the_search_did_not_see():
    # tuned on a calm half hour (0.5/s: one machine holds it), judged on the step: one machine and
    # the robust pick's two both miss the step to three; what is tuned is an answer about the calm
    calm = Trace.of(steady(0.5, 0, 2400), source="calm")
    base = pool(max_size=6)
    found = tune(calm, base, scaler())
    assert found.best.meets
    assert found.best.setting.min_size == 1
    assert found.robust.point.setting.min_size == 2
    held = validate(found, step(), base, scaler())
    by = {c.label: c for c in held.checks}
    assert list(by) == ["robust", "best", "start"]  # the robust pick leads
    assert all(c.tuned.meets for c in held.checks)
    assert not any(c.held_out.meets for c in held.checks)
    assert by["best"].held_out.miss_share > 0.2
    doc = held.as_json()
    assert doc["trace"] == "step"
    assert doc["settings"]["best"]["meets_slo"] is False
    assert doc["settings"]["best"]["tuned_miss_share"] == 0.0
    # cost against the held-out trace's own oracle, not the tuned one's
    assert doc["settings"]["best"]["elastic_over_oracle"] == pytest.approx(
        by["best"].held_out.cost_usd / held.oracle_usd, rel=1e-5
    )
    assert held.oracle_usd != found.oracle_usd
    assert "SLO NOT MET (tuned: 0.00% missed" in held.table()


def test_validate_on_the_trace_tuned_on_gives_the_tuned_figures():
    calm = Trace.of(steady(0.5, 0, 2400), source="calm")
    found = tune(calm, pool(max_size=6), scaler())
    held = validate(found, calm, pool(max_size=6), scaler())
    for c in held.checks:
        assert (c.held_out.cost_usd, c.held_out.miss_share) == (c.tuned.cost_usd, c.tuned.miss_share)
    assert held.oracle_usd == found.oracle_usd


def test_robust_pick_says_when_no_setting_keeps_the_slo():
    found = robust_pick((_point(1, meets=False),), lambda s: _point(s.min_size, False), 10, aws=False)
    assert found.point is None
    assert (found.checked, found.candidates) == (0, 0)
    assert found.line() == "  robust pick: none - no setting searched keeps the SLO"


@pytest.mark.parametrize(("which", "start", "end"), [("first", 0, 1800), ("second", 1800, 3600)])
def test_make_traces_writes_convs_half_hours_as_the_benchmark_splits_them(tmp_path, which, start, end):
    recipe = _recipe()
    recipe.main(["--half", which, "--out", str(tmp_path / f"{which}.csv")])
    written = read_trace(tmp_path / f"{which}.csv").requests
    conv = read_trace(DATA / "AzureLLMInferenceTrace_conv.csv")
    cut = conv.window(start, end).requests  # simulate_azure_traces.py's hold-out
    assert len(written) == len(cut) == sum(start <= r.arrival_s < end for r in conv.requests)
    assert [(r.prompt_tokens, r.output_tokens) for r in written] == [
        (r.prompt_tokens, r.output_tokens) for r in cut
    ]
    assert max(abs(a.arrival_s - b.arrival_s) for a, b in zip(written, cut, strict=True)) < 0.002


def test_make_traces_rejects_a_seed_and_a_half_together(tmp_path):
    with pytest.raises(SystemExit) as e:
        _recipe().main(["--seed", "7", "--half", "first", "--out", str(tmp_path / "x.csv")])
    assert e.value.code == 2
