"""Which scaling defaults the replay supports: a grid over the judged traces (issue #39's targets).

For each pool and judged trace of benchmarks/simulate_azure_traces.py (8B on conv, conv 10x and
diurnal; 70B on conv 10x and diurnal), it replays every combination of target utilisation, scale-in
share and scale-in cooldown below with the plan's own scaler (what the stack renders), and prints per
setting: elastic cost over the SLO-aware oracle and the share of requests over the TTFT target, then
per setting the number of pool/traces that meet the target (at most 1% late, at most 1.30x the oracle,
below the static fleet) and the worst cost ratio among those within the SLO. Everything else is
ElasticArgs' defaults.

Run by hand: `.venv/bin/python benchmarks/simulate_scaling_defaults.py [--quick]` (`--quick`: 8B on
conv and diurnal only). Several minutes on 2 idle cores: each 10x replay takes a few seconds.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import simulate_azure_traces as base

from inference_infra.components.fleet.elastic import ElasticArgs
from inference_infra.components.simulate import (
    build_pool,
    read_trace,
    replay,
    scaler_settings,
    slo_oracle,
    workload,
)

UTILISATIONS = (0.5, 0.6, 0.7)
SHARES = (0.0, 0.1, 0.25, 0.5)
COOLDOWNS = (300, 900)


def main(quick: bool = False) -> int:
    runs = [
        (spec, name, peak)
        for spec in base.POOLS
        for name, peak in spec.peaks.items()
        if name in base.JUDGED and (not quick or (spec.label == "8b" and name in ("conv", "diurnal")))
    ]
    grid = list(itertools.product(UTILISATIONS, SHARES, COOLDOWNS))
    results: dict[tuple[float, float, int], list[tuple[str, float, float, bool]]] = {g: [] for g in grid}
    for spec, name, peak in runs:
        file, copies = base.TRACES[name]
        trace = read_trace(base.DATA / file).scaled(copies)
        first = build_pool(name=spec.label, model=spec.model, machine=spec.machine, peak=peak, trace=trace)
        work = workload(trace, first.service, first.slots)
        oracle = slo_oracle(work, first.ttft_target_seconds)
        started = time.perf_counter()
        for util, share, cooldown in grid:
            elastic = ElasticArgs(
                target_utilisation=util, scale_in_share=share, scale_in_cooldown_seconds=cooldown
            )
            pool = build_pool(
                name=spec.label,
                model=spec.model,
                machine=spec.machine,
                peak=peak,
                trace=trace,
                elastic=elastic,
            )
            doc = replay(trace, pool, scaler_settings(pool.plan), work=work, oracle=oracle).as_json()
            cost, miss = doc["cost"]["elastic_over_oracle"], doc["slo"]["miss_share"]
            met = (
                miss <= base.TARGET_MISS
                and cost <= base.TARGET_COST
                and doc["cost"]["elastic_usd"] < doc["cost"]["static_usd"]
            )
            results[(util, share, cooldown)].append((f"{spec.label} {name}", cost, miss, met))
            print(
                f"{spec.label:4} {name:8} util {util:.1f} share {share:4.2f} cooldown {cooldown:4d}:"
                f" {cost:6.3f}x oracle, {miss:7.2%} late{'  met' if met else ''}",
                flush=True,
            )
        print(f"  ({time.perf_counter() - started:.0f} s)", flush=True)
    print(
        "setting (util, share, cooldown): targets met of",
        len(runs),
        "| worst el/or within the SLO | late max",
    )
    ranked = sorted(
        grid,
        key=lambda g: (
            -sum(r[3] for r in results[g]),
            max((r[1] for r in results[g] if r[2] <= base.TARGET_MISS), default=99.0),
        ),
    )
    for g in ranked:
        rows = results[g]
        within = [r[1] for r in rows if r[2] <= base.TARGET_MISS]
        print(
            f"  {g[0]:.1f} {g[1]:4.2f} {g[2]:4d}: {sum(r[3] for r in rows)} met;"
            f" worst within SLO {max(within) if within else float('nan'):.3f} ({len(within)} of {len(rows)});"
            f" late max {max(r[2] for r in rows):.2%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(quick="--quick" in sys.argv[1:]))
