"""Replay the public Azure LLM inference traces of 2023 against an elastic pool (`inference-infra simulate`).

The traces (benchmarks/data/, README.md there: URL, commit, SHA-256, licence CC-BY 4.0) are one hour
of a conversation service (19,366 requests) and one of a coding service (8,819 requests) sampled on
2023-11-16. Each is replayed against pools planned by the fleets' own code (`simulate.build_pool`:
the planner's engines and service times, `fleet.elastic.plan_scaling`, the catalog's price) and
compared with a static fleet sized for the busiest minute and with the oracle (each minute exactly
the machines it needs, no cold start). It prints, per run: cost over the oracle's, requests over the
pool's TTFT target (all, and those late only because they waited), scale-outs, time to scale, and the
time the replay took. It checks the issue's target on the conv trace (cost within 15% of the
oracle's, at most 1% of requests over the TTFT target) and that a one-hour trace replays in under
10 s, and says which runs meet the target; it exits 1 only when a replay is too slow.

The pools:
- `llama-8b`: the prod stack's pool (Llama 3.1 8B bf16, 8,192-token context, 16 sequences per
  machine) on the planner's pick, g6e.xlarge (1 x L40S, on-demand us-east-1), with the pool's
  default elastic settings; with the interactive TTFT budget and with the batch one (the serving
  alerts' `monitoring.serving.BUDGETS`: p99 2 s and 10 s at this commit);
- the same pool at 10 times the volume (`--scale 10`: each request ten times at its own time, the
  same shape; burstier than ten times as many independent users, so a harder test);
- both with `target_utilisation` 0.8 instead of the default 0.7 (the change this benchmark argues
  for: at 0.7 the AWS pool's scale-in alarm, one machine fewer under 0.8 x the target, never lets a
  machine of the 10x pool go, so it costs what the static fleet does);
- Llama 3.1 8B fp8 on p5.4xlarge (1 x H100), interactive.

Run by hand: `.venv/bin/python benchmarks/simulate_azure_traces.py` (about 30 s).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from inference_infra.components.fleet.elastic import ElasticArgs
from inference_infra.components.planner import Quantization
from inference_infra.components.serving.model import ServedModel
from inference_infra.components.simulate import Autoscaler, Trace, build_pool, read_trace, replay
from inference_infra.components.simulate.pool import peak_for_trace

DATA = Path(__file__).resolve().parent / "data"
TRACES = ("conv", "code")
TARGET_COST = 1.15  # elastic cost / the oracle's, at most (issue #25)
TARGET_LATE = 0.01  # share of requests over the TTFT target, at most (issue #25)
MAX_REPLAY_S = 10.0  # a one-hour trace replays in under 10 s (issue #25)

LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
LLAMA_8B_FP8 = replace(LLAMA_8B, quantization=Quantization.FP8)


@dataclass(frozen=True)
class Run:
    label: str
    model: ServedModel
    machine: str
    latency: str
    copies: int = 1
    elastic: ElasticArgs = field(default_factory=ElasticArgs)
    warm_pool: bool = True


TUNED = ElasticArgs(target_utilisation=0.8)  # the default this benchmark argues for (docs/reference.md)
RUNS = (
    Run("llama-8b g6e.xlarge interactive", LLAMA_8B, "g6e.xlarge", "interactive"),
    Run("llama-8b g6e.xlarge interactive, target 0.8", LLAMA_8B, "g6e.xlarge", "interactive", elastic=TUNED),
    Run("llama-8b g6e.xlarge batch", LLAMA_8B, "g6e.xlarge", "batch"),
    Run("llama-8b g6e.xlarge interactive x10", LLAMA_8B, "g6e.xlarge", "interactive", copies=10),
    Run(
        "llama-8b g6e.xlarge interactive x10, target 0.8",
        LLAMA_8B,
        "g6e.xlarge",
        "interactive",
        copies=10,
        elastic=TUNED,
    ),
    Run("llama-8b fp8 p5.4xlarge interactive", LLAMA_8B_FP8, "p5.4xlarge", "interactive"),
)


def run_one(trace: Trace, run: Run) -> tuple[dict, float]:
    trace = trace.scaled(run.copies)
    started = time.perf_counter()
    peak = peak_for_trace(model=run.model, machine=run.machine, cloud="aws", trace=trace)
    pool = build_pool(
        name=run.label,
        model=run.model,
        machine=run.machine,
        peak=peak,
        trace=trace,
        elastic=run.elastic,
        latency=run.latency,
        warm_pool=run.warm_pool,
    )
    doc = replay(trace, pool, Autoscaler()).as_json()
    return doc, time.perf_counter() - started


def main() -> int:
    print(f"{'trace':5} {'pool':46} {'req':>7} {'el/or':>6} {'st/or':>6} {'late':>7} {'waited':>7} "
          f"{'noWait':>7} {'outs':>4} {'tts s':>6} {'mach':>7} {'s':>5}  target")  # fmt: skip
    too_slow = []
    for name in TRACES:
        started = time.perf_counter()
        trace = read_trace(DATA / f"AzureLLMInferenceTrace_{name}.csv")
        read_s = time.perf_counter() - started
        for run in RUNS:
            doc, seconds = run_one(trace, run)
            c, t, s = doc["cost"], doc["ttft"], doc["scale"]
            total = read_s + seconds
            if run.copies == 1 and total >= MAX_REPLAY_S:
                too_slow.append((name, run.label, total))
            met = c["elastic_over_oracle"] <= TARGET_COST and t["over_target_share"] <= TARGET_LATE
            verdict = ("met" if met else "missed") if name == "conv" else "-"
            tts = s["time_to_scale_seconds"]["mean"]
            print(
                f"{name:5} {run.label:46} {doc['trace']['requests']:>7,} {c['elastic_over_oracle']:>6.3f}"
                f" {c['static_over_oracle']:>6.3f} {t['over_target_share']:>7.2%}"
                f" {t['over_target_from_waiting_share']:>7.2%} {t['oracle_over_target_share']:>7.2%}"
                f" {s['scale_outs']:>4} {tts if tts is not None else '-':>6}"
                f" {s['min_machines']:>3}..{s['max_machines']:<3} {total:>5.2f}"
                f"  {verdict}",
                flush=True,
            )
    print(
        "el/or, st/or: elastic and static cost over the oracle's; late: TTFT over the pool's target (waited:"
        " late only because of a queue; noWait: late with no queue, the machine's prefill); tts: mean time"
        " to scale; mach: fewest..most machines serving; s: trace read + plan + replay, seconds. Target"
        f" (conv): el/or <= {TARGET_COST}, late <= {TARGET_LATE:.0%}."
    )
    for name, label, seconds in too_slow:
        print(f"TOO SLOW: {name} {label}: {seconds:.1f} s >= {MAX_REPLAY_S} s", file=sys.stderr)
    return 1 if too_slow else 0


if __name__ == "__main__":
    sys.exit(main())
