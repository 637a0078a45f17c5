"""`simulate --tune`: the cheapest scaling settings that keep a pool within its SLO on a given trace.

It searches the settings of the pool that decide how much headroom the traffic gets and how fast it
is let go: `target_utilisation` (how full a machine runs before the pool scales out), the warm pool
(stopped machines that start in a warm start instead of a cold one), the minimum (machines kept however
quiet), the scale-in share (machines one share-sized scale-in lets go), the scale-in cooldown (quiet
time before a scale-in) and, on AWS, the fast scale-out ratio (the step policy on one datapoint; GCP's
autoscaler acts on each datapoint already) and the scale-in sizing (deficit: the step policy letting go
the share the load is under the threshold; share: the simple policy; GCP and Kubernetes size their
scale-in from the load already). The search is coordinate
descent from the pool's own settings: each setting in turn over its grid with the others held, keeping
the best, two passes. "Best" is the cheapest run with at most 1% of requests missing the TTFT target;
while no run meets that, the one with the fewest misses. Every run is kept: the answer prints the cost-
lateness frontier (the runs no other run beats on both) and where the pool's own settings fall.

The trace, the machine and the target fix the work and the SLO-aware oracle, so they are computed once
for the whole search.

The reactive bound (`reactive_bound`): the pool jumps to its maximum at the first datapoint its scaler
sees (no policy driven by the load can add machines sooner or more) and never scales in. When even that
misses more than 1% from the pool's minimum, no scaling setting can meet the SLO on this trace: only a
higher minimum (or a schedule) can, and the answer says so.

The SLO floor (`slo_floor`): the lowest minimum from which the reactive bound keeps the SLO, found by
bisection (more machines from the start never miss more). Below it no setting of the others can meet
the SLO, so the minimum's grid holds it and the two minimums above it: a grid of shares of the maximum
alone steps over it (conv at 10x on the 8B pool, 2026-12-02: the floor is 30 of 48, the grid's nearest
were 29, which no setting holds within 1%, and 36, 1.34x the oracle at best, where 30 gives 1.17x). The
utilisation's grid is in steps of 0.05: the cheapest point within the SLO moves by more than the
target's own step between neighbours (8B diurnal: 0.85 within the SLO at 1.26x, 0.8 and 0.9 not).

The answer is what this one trace rewarded, so it says how sharp it is: the best setting's neighbours
(`neighbours`: one machine more and fewer in the minimum, 0.05 more and less utilisation, the next
value on each side of every other axis it searched, one axis at a time) are replayed, and the table
and `--json` give how many keep the SLO and the worst of them. A best point whose neighbours miss is
a ridge of this trace, not a setting to deploy with its margin unchecked.

The robust pick (`robust`): the cheapest setting within the SLO whose neighbours all keep it too. The
runs within the SLO are checked cheapest first, at most ROBUST_CANDIDATES of them (each check replays
up to a dozen neighbours, stopping at the first that misses, so a candidate that fails costs a replay
or two); when none of those qualifies the answer says so rather than searching on. The bound is 40,
not a handful: the search leaves many settings at the same cost (every utilisation at a minimum the
load never leaves costs the same), and the cheapest handful are often all one minimum whose machine
fewer misses (conv's first half on 8b, 2026-12-02: the six cheapest were all at min 4). The pick
costs more than the best point, or the same when the best is not on a ridge; it is the point with a
margin of one grid step on every axis, on this trace. The table leads with it: replayed on a trace
the search did not see (benchmarks/simulate_azure_traces.py --tune-judged, 2026-12-02: 8b and 70b,
diurnal day 1 -> day 2 and conv's first half hour -> its second, at 1x and 10x) the best setting
missed the SLO on 3 of the 6 (8b diurnal 3.72%, 70b conv 10x 4.19%, 70b diurnal 1.27%) and the robust
pick on none (at most 0.55%); it costs more (diurnal day 2: 1.65x and 1.50x the oracle where the best
cost 1.31x and 1.30x). The best is still printed: it is what this trace needed.

Another trace (`validate`): the best setting, the robust pick and the pool's own settings replayed on
a trace the search did not see (`simulate --tune --validate TRACE`), each against that trace's own
SLO-aware oracle. The pool is the same (what is deployed does not know tomorrow's traffic); the work
and the oracle are the other trace's. benchmarks/data/README.md says what each committed hold-out
varies and what it does not.

What the search finds is what this trace needed: a trace with a burst faster
than any cold start tells you the headroom (or the warm pool) that burst takes, not a law.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from inference_infra.components.fleet.elastic import (
    METRIC_PERIOD_SECONDS,
    with_fast_scale_out,
    with_scale_in,
)
from inference_infra.components.simulate.references import slo_oracle
from inference_infra.components.simulate.replay import SLO_MISS_SHARE, Pool, replay
from inference_infra.components.simulate.settings import Autoscaler
from inference_infra.components.simulate.trace import Trace
from inference_infra.components.simulate.workload import workload

UTILISATIONS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
MIN_SHARES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75)  # of the maximum
SCALE_IN_SHARES = (0.0, 0.1, 0.25, 0.5)
FAST_RATIOS = (0.0, 1.0, 1.2, 1.5)  # AWS only
SIZINGS = ("deficit", "share")  # AWS only
SCALE_IN_COOLDOWNS = (60, 120, 300, 600)
PASSES = 2
FLOOR_STEPS = 3  # the SLO floor and the minimums just above it, in the minimum's grid
ROBUST_CANDIDATES = 40  # runs within the SLO whose neighbours the robust pick replays, cheapest first


@dataclass(frozen=True)
class Setting:
    target_utilisation: float
    warm_pool_size: int
    min_size: int
    scale_in_share: float
    fast_scale_out_ratio: float = 0.0
    scale_in_sizing: str = "share"
    scale_in_cooldown_seconds: int = 300

    def as_json(self) -> dict[str, Any]:
        return {
            "target_utilisation": self.target_utilisation,
            "warm_pool_size": self.warm_pool_size,
            "min_size": self.min_size,
            "scale_in_share": self.scale_in_share,
            "fast_scale_out_ratio": self.fast_scale_out_ratio,
            "scale_in_sizing": self.scale_in_sizing,
            "scale_in_cooldown_seconds": self.scale_in_cooldown_seconds,
        }


@dataclass(frozen=True)
class Point:
    setting: Setting
    cost_usd: float
    miss_share: float
    elastic_over_oracle: float | None
    scale_outs: int

    @property
    def meets(self) -> bool:
        return self.miss_share <= SLO_MISS_SHARE

    def key(self) -> tuple[bool, float]:
        return (not self.meets, self.cost_usd if self.meets else self.miss_share)

    def as_json(self) -> dict[str, Any]:
        return {
            **self.setting.as_json(),
            "cost_usd": round(self.cost_usd, 4),
            "miss_share": round(self.miss_share, 6),
            "meets_slo": self.meets,
            "elastic_over_oracle": self.elastic_over_oracle,
            "scale_outs": self.scale_outs,
        }


@dataclass(frozen=True)
class Tuning:
    pool: str
    trace: str
    requests: int
    oracle_usd: float
    static_usd: float
    lower_bound_usd: float
    start: Point  # the pool's own settings
    best: Point
    points: tuple[Point, ...]
    reactive_bound_miss_share: float | None = None  # the pool at max from the first datapoint (module doc)
    slo_floor: int | None = None  # the lowest minimum whose reactive bound keeps the SLO (None: none does)
    neighbours: tuple[Point, ...] = ()  # the best setting's neighbours, one axis a step away (module doc)
    robust: Robust | None = None  # the cheapest within the SLO whose neighbours all keep it (module doc)

    def frontier(self) -> list[Point]:
        """Runs no other run beats on both cost and misses, cheapest first."""
        ordered = sorted(self.points, key=lambda p: (p.cost_usd, p.miss_share))
        kept: list[Point] = []
        for p in ordered:
            if not kept or p.miss_share < kept[-1].miss_share:
                kept.append(p)
        return kept

    def as_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "trace": self.trace,
            "requests": self.requests,
            "allowed_miss_share": SLO_MISS_SHARE,
            "oracle_usd": round(self.oracle_usd, 4),
            "static_usd": round(self.static_usd, 4),
            "lower_bound_usd": round(self.lower_bound_usd, 4),
            "found": self.best.meets,
            "best": self.best.as_json(),
            "start": self.start.as_json(),
            "frontier": [p.as_json() for p in self.frontier()],
            "runs": len(self.points),
            "neighbours": self._neighbours_json(),
            "robust": self.robust.as_json() if self.robust is not None else None,
            "reactive_bound": {
                "min_size": self.start.setting.min_size,
                "miss_share": _round(self.reactive_bound_miss_share),
                "meets_slo": self._bound_meets(),
                "slo_floor": self.slo_floor,
            },
        }

    def _neighbours_json(self) -> dict[str, Any]:
        worst = max(self.neighbours, key=lambda p: p.miss_share, default=None)
        return {
            "runs": len(self.neighbours),
            "within_slo": sum(p.meets for p in self.neighbours),
            "worst": worst.as_json() if worst is not None else None,
        }

    def _bound_meets(self) -> bool | None:
        if self.reactive_bound_miss_share is None:
            return None
        return self.reactive_bound_miss_share <= SLO_MISS_SHARE

    def table(self) -> str:
        b, s = self.best, self.start
        head = (
            f"{self.pool}: tuned on {self.trace} ({self.requests:,} requests, {len(self.points)} runs);"
            f" oracle ${self.oracle_usd:,.2f}, static ${self.static_usd:,.2f},"
            f" lower bound ${self.lower_bound_usd:,.2f}"
        )
        verdict = (
            f"  cheapest within the SLO (at most {SLO_MISS_SHARE:.0%} of requests over the TTFT target): "
            if b.meets
            else f"  NO setting searched keeps {SLO_MISS_SHARE:.0%} or fewer over the TTFT target;"
            " the fewest: "
        )
        # the robust pick leads: on another day it kept the SLO where the best did not (module doc)
        lines = [head, *([self.robust.line()] if self.robust is not None else []), verdict + _describe(b)]
        if self.neighbours:
            kept = sum(p.meets for p in self.neighbours)
            worst = max(self.neighbours, key=lambda p: p.miss_share)
            lines.append(
                f"  its neighbours (one setting a step away): {kept} of {len(self.neighbours)} keep the SLO;"
                f" the worst: {_describe(worst)}"
            )
        lines += ["  the pool's own settings: " + _describe(s), "  frontier:"]
        lines += [f"    {_describe(p)}" for p in self.frontier()]
        if self.reactive_bound_miss_share is not None:
            bound = self.reactive_bound_miss_share
            lines.append(
                f"  reactive bound: the maximum from the first datapoint, from the minimum of"
                f" {self.start.setting.min_size}: {bound:.2%} missed"
                + (
                    f" - more than {SLO_MISS_SHARE:.0%}: no scaling setting meets the SLO from this"
                    " minimum; only a higher minimum (or a schedule) can"
                    if bound > SLO_MISS_SHARE
                    else ""
                )
            )
            lines.append(
                f"  SLO floor: the lowest minimum whose reactive bound keeps the SLO: {self.slo_floor}"
                if self.slo_floor is not None
                else "  SLO floor: none - even the maximum from the first datapoint misses more than"
                f" {SLO_MISS_SHARE:.0%}"
            )
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Robust:
    """The robust pick (module doc): `point` is None when none of the `checked` cheapest runs within
    the SLO (of `candidates`) has every neighbour within it too."""

    point: Point | None
    checked: int
    candidates: int
    neighbours: tuple[Point, ...] = ()  # the pick's, all within the SLO
    bound: int = ROBUST_CANDIDATES  # at most this many candidates checked

    def as_json(self) -> dict[str, Any]:
        return {
            "found": self.point is not None,
            "point": self.point.as_json() if self.point is not None else None,
            "checked": self.checked,
            "candidates": self.candidates,
            "bound": self.bound,
            "neighbours": len(self.neighbours),
        }

    def line(self) -> str:
        if self.point is None and not self.candidates:
            return "  robust pick: none - no setting searched keeps the SLO"
        if self.point is None:
            return (
                f"  robust pick: none - of the {self.checked} cheapest settings within the SLO (of"
                f" {self.candidates}; at most {self.bound} checked), each has a neighbour that misses"
            )
        return (
            f"  robust pick (the cheapest within the SLO whose {len(self.neighbours)} neighbours all keep it;"
            f" {self.checked} of {self.candidates} checked): {_describe(self.point)}"
        )


@dataclass(frozen=True)
class Check:
    label: str  # "best", "robust", "start"
    tuned: Point  # on the trace tuned on
    held_out: Point  # the same setting on the other trace


@dataclass(frozen=True)
class Validation:
    """The tuned settings replayed on another trace (module doc, `validate`)."""

    trace: str
    requests: int
    oracle_usd: float
    static_usd: float
    checks: tuple[Check, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "requests": self.requests,
            "allowed_miss_share": SLO_MISS_SHARE,
            "oracle_usd": round(self.oracle_usd, 4),
            "static_usd": round(self.static_usd, 4),
            "settings": {
                c.label: {
                    **c.held_out.as_json(),
                    "tuned_miss_share": round(c.tuned.miss_share, 6),
                    "tuned_elastic_over_oracle": c.tuned.elastic_over_oracle,
                }
                for c in self.checks
            },
        }

    def table(self) -> str:
        names = {"best": "best", "robust": "robust pick", "start": "the pool's own"}
        lines = [
            f"  validated on {self.trace} ({self.requests:,} requests; its oracle ${self.oracle_usd:,.2f},"
            f" static ${self.static_usd:,.2f}):"
        ]
        for c in self.checks:
            h = c.held_out
            ratio = f"{h.elastic_over_oracle:.2f}x its oracle" if h.elastic_over_oracle is not None else "-"
            verdict = "keeps the SLO" if h.meets else "SLO NOT MET"
            lines.append(
                f"    {names[c.label]:15} ${h.cost_usd:,.2f} ({ratio}), {h.miss_share:.2%} missed: {verdict}"
                f" (tuned: {c.tuned.miss_share:.2%} missed, {_ratio(c.tuned)})"
            )
        return "\n".join(lines) + "\n"


def _ratio(p: Point) -> str:
    return f"{p.elastic_over_oracle:.2f}x" if p.elastic_over_oracle is not None else "-"


def _describe(p: Point) -> str:
    s = p.setting
    ratio = f"{p.elastic_over_oracle:.2f}x the oracle" if p.elastic_over_oracle is not None else "-"
    return (
        f"target_utilisation {s.target_utilisation:g}, warm pool {s.warm_pool_size}, min {s.min_size},"
        f" scale-in {s.scale_in_sizing} (share {s.scale_in_share:g}) after {s.scale_in_cooldown_seconds} s,"
        f" fast {s.fast_scale_out_ratio:g}:"
        f" ${p.cost_usd:,.2f} ({ratio}), {p.miss_share:.2%} missed"
    )


def _apply(pool: Pool, s: Setting) -> Pool:
    plan = replace(
        pool.plan,
        min_size=s.min_size,
        desired=s.min_size,
        target_in_flight=round(pool.plan.in_flight_per_machine * s.target_utilisation, 2),
        warm_pool_size=s.warm_pool_size,
        scale_in_cooldown_seconds=s.scale_in_cooldown_seconds,
        scale_in_datapoints=max(1, s.scale_in_cooldown_seconds // METRIC_PERIOD_SECONDS),
    )
    # the fast step's and the scale-in's bands follow the target, as a stack renders them
    plan = with_scale_in(plan, s.scale_in_sizing)
    return replace(pool, plan=with_fast_scale_out(plan, s.fast_scale_out_ratio))


def reactive_bound(
    trace: Trace, pool: Pool, scaler: Autoscaler, *, work: Any = None, oracle: Any = None
) -> float:
    """Share of requests missed when the pool goes to its maximum at the first datapoint its scaler
    sees and never scales in (module doc): what no load-driven policy from the pool's minimum beats.

    Replayed as GCP's autoscaler (it launches its whole recommendation on one datapoint) with a target
    so small that every datapoint recommends the maximum; the period, the metric lag, the starts and the
    warm pool are the pool's.
    """
    plan = replace(pool.plan, target_in_flight=1e-6, fast_scale_out_steps=(), scale_in_steps=())
    jump = replace(scaler, cloud="gcp", start_size=None, interruptions_per_machine_hour=0.0)
    return replay(trace, replace(pool, plan=plan), jump, work=work, oracle=oracle).miss_share()


def slo_floor(
    trace: Trace, pool: Pool, scaler: Autoscaler, *, work: Any = None, oracle: Any = None
) -> int | None:
    """The lowest minimum from which the reactive bound misses at most the allowed share (module doc),
    by bisection over 0..max; None when even the maximum from the start misses more."""

    def keeps(minimum: int) -> bool:
        floored = replace(pool, plan=replace(pool.plan, min_size=minimum, desired=minimum))
        return reactive_bound(trace, floored, scaler, work=work, oracle=oracle) <= SLO_MISS_SHARE

    low, high = 0, pool.plan.max_size
    if not keeps(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if keeps(middle):
            high = middle
        else:
            low = middle + 1
    return low


def tune(trace: Trace, pool: Pool, scaler: Autoscaler, *, passes: int = PASSES) -> Tuning:
    """Search the pool's scaling settings on `trace` (module doc)."""
    plan = pool.plan
    work = workload(trace, pool.service, pool.slots)
    oracle = slo_oracle(work, pool.ttft_target_seconds)
    high = plan.max_size
    floor = slo_floor(trace, pool, scaler, work=work, oracle=oracle)
    near = set() if floor is None else {min(high, floor + k) for k in range(FLOOR_STEPS)}
    mins = sorted(
        {min(high, math.ceil(high * share - 1e-9)) for share in MIN_SHARES} | {plan.min_size} | near
    )
    warm_allowed = plan.warm_pool_size > 0
    seen: dict[Setting, Point] = {}
    refs: dict[str, float] = {}

    def run(s: Setting) -> Point:
        if s not in seen:
            seen[s] = _measure(trace, pool, scaler, s, work, oracle, refs)
        return seen[s]

    start_util = round(plan.target_in_flight / plan.in_flight_per_machine, 2)
    aws = scaler.cloud == "aws" and scaler.fast_scale_out
    own_fast = plan.fast_scale_out_ratio if aws else 0.0
    own_sizing = plan.scale_in_sizing if aws else "share"
    current = Setting(
        start_util,
        plan.warm_pool_size,
        plan.min_size,
        scaler.scale_in_share,
        own_fast,
        own_sizing,
        plan.scale_in_cooldown_seconds,
    )
    start = run(current)
    best = start
    for _ in range(passes):
        moved = False
        for axis in (
            "target_utilisation",
            "warm_pool_size",
            "min_size",
            "scale_in_share",
            "fast_scale_out_ratio",
            "scale_in_sizing",
            "scale_in_cooldown_seconds",
        ):
            for value in _grid(axis, current, high, mins, warm_allowed, aws, scaler.cloud != "kubernetes"):
                candidate = replace(current, **{axis: value})
                if candidate.warm_pool_size > high - candidate.min_size and candidate.warm_pool_size:
                    candidate = replace(candidate, warm_pool_size=high - candidate.min_size)
                point = run(candidate)
                if point.key() < best.key():
                    best, current, moved = point, candidate, True
        if not moved:
            break
    cooldowns = scaler.cloud != "kubernetes"
    near = tuple(run(n) for n in _fitting(neighbours(best.setting, high, aws=aws, cooldowns=cooldowns), high))
    robust = robust_pick(tuple(seen.values()), run, high, aws=aws, cooldowns=cooldowns)
    return Tuning(
        pool=pool.name,
        trace=trace.source,
        requests=work.requests,
        oracle_usd=refs["oracle_usd"],
        static_usd=refs["static_usd"],
        lower_bound_usd=refs["lower_bound_usd"],
        start=start,
        best=best,
        points=tuple(seen.values()),
        reactive_bound_miss_share=reactive_bound(trace, pool, scaler, work=work, oracle=oracle),
        slo_floor=floor,
        neighbours=near,
        robust=robust,
    )


def _measure(
    trace: Trace, pool: Pool, scaler: Autoscaler, s: Setting, work: Any, oracle: Any, refs: dict[str, float]
) -> Point:
    """One setting replayed from the pool's minimum; `refs` takes the trace's references."""
    result = replay(
        trace,
        _apply(pool, s),
        replace(scaler, start_size=None, scale_in_share=s.scale_in_share),
        work=work,
        oracle=oracle,
    )
    cost = result.cost()
    refs.update(cost)
    ratio = cost["elastic_usd"] / cost["oracle_usd"] if cost["oracle_usd"] else None
    return Point(
        s,
        cost["elastic_usd"],
        result.miss_share(),
        round(ratio, 6) if ratio is not None else None,
        result.scale_outs,
    )


def _fitting(settings: list[Setting], high: int) -> list[Setting]:
    """The settings whose warm pool fits beside their minimum within the maximum."""
    return [n for n in settings if not (n.warm_pool_size and n.warm_pool_size > high - n.min_size)]


def robust_pick(
    points: tuple[Point, ...],
    run: Callable[[Setting], Point],
    high: int,
    *,
    aws: bool,
    cooldowns: bool = True,
    bound: int = ROBUST_CANDIDATES,
) -> Robust:
    """The cheapest of `points` within the SLO whose neighbours `run` finds all within it too, checking
    at most `bound` candidates cheapest first (module doc)."""
    within = sorted((p for p in points if p.meets), key=lambda p: (p.cost_usd, p.miss_share))
    for checked, candidate in enumerate(within[:bound], start=1):
        near: list[Point] = []
        for n in _fitting(neighbours(candidate.setting, high, aws=aws, cooldowns=cooldowns), high):
            near.append(run(n))
            if not near[-1].meets:
                break
        else:
            return Robust(candidate, checked, len(within), tuple(near), bound)
    return Robust(None, min(bound, len(within)), len(within), (), bound)


def validate(tuning: Tuning, trace: Trace, pool: Pool, scaler: Autoscaler) -> Validation:
    """The best setting, the robust pick and the pool's own settings of `tuning` replayed on `trace`,
    a trace the search did not see, each against `trace`'s own oracle (module doc)."""
    work = workload(trace, pool.service, pool.slots)
    oracle = slo_oracle(work, pool.ttft_target_seconds)
    refs: dict[str, float] = {}
    picks = [("best", tuning.best), ("start", tuning.start)]
    if tuning.robust is not None and tuning.robust.point is not None:
        picks.insert(0, ("robust", tuning.robust.point))
    checks = tuple(
        Check(label, tuned, _measure(trace, pool, scaler, tuned.setting, work, oracle, refs))
        for label, tuned in picks
    )
    return Validation(
        trace=trace.source,
        requests=work.requests,
        oracle_usd=refs["oracle_usd"],
        static_usd=refs["static_usd"],
        checks=checks,
    )


def _beside(grid: tuple[Any, ...], value: Any) -> list[Any]:
    """The grid's values next to `value` on each side (its nearest where it is off the grid)."""
    ordered = sorted(set(grid) | {value})
    i = ordered.index(value)
    return [ordered[j] for j in (i - 1, i + 1) if 0 <= j < len(ordered)]


def neighbours(best: Setting, high: int, *, aws: bool, cooldowns: bool = True) -> list[Setting]:
    """The settings one step from `best` on one axis each (module doc)."""
    moves: list[tuple[str, Any]] = [
        ("min_size", m) for m in (best.min_size - 1, best.min_size + 1) if 0 <= m <= high
    ]
    moves += [
        ("target_utilisation", round(u, 2))
        for u in (best.target_utilisation - 0.05, best.target_utilisation + 0.05)
        if 0.05 <= u <= 1.0
    ]
    moves += [("scale_in_share", v) for v in _beside(SCALE_IN_SHARES, best.scale_in_share)]
    if cooldowns:
        moves += [
            ("scale_in_cooldown_seconds", v)
            for v in _beside(SCALE_IN_COOLDOWNS, best.scale_in_cooldown_seconds)
        ]
    if aws:
        moves += [("fast_scale_out_ratio", v) for v in _beside(FAST_RATIOS, best.fast_scale_out_ratio)]
        moves += [("scale_in_sizing", v) for v in SIZINGS if v != best.scale_in_sizing]
    return [replace(best, **{axis: value}) for axis, value in moves]


def _round(value: float | None) -> float | None:
    return round(value, 6) if value is not None else None


def _grid(
    axis: str,
    current: Setting,
    high: int,
    mins: list[int],
    warm_allowed: bool,
    aws: bool,
    cooldowns: bool = True,
) -> list[Any]:
    if axis == "fast_scale_out_ratio":
        return list(FAST_RATIOS) if aws else [0.0]
    if axis == "scale_in_sizing":
        return list(SIZINGS) if aws else ["share"]
    if axis == "scale_in_cooldown_seconds":
        # Kubernetes: the HPA's stabilisation window is the scaler's (settings.scaler_settings), kept
        return (
            sorted(set(SCALE_IN_COOLDOWNS) | {current.scale_in_cooldown_seconds})
            if cooldowns
            else [current.scale_in_cooldown_seconds]
        )
    if axis == "target_utilisation":
        return list(UTILISATIONS)
    if axis == "warm_pool_size":
        return sorted({0, high - current.min_size}) if warm_allowed else [0]
    if axis == "min_size":
        return mins
    return list(SCALE_IN_SHARES)
