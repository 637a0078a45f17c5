"""The replay's scalers held against what AWS, GCP and Kubernetes document (issue #39): the same pools,
each scaler as the stack renders it.

Rows (the stack's ElasticArgs defaults; traces as benchmarks/simulate_azure_traces.py reads them):
- `aws`: the 8B (g6e.xlarge) and 70B (p5.48xlarge) pools on EC2 Auto Scaling, with the instance warm-up
  the stack renders now (the load balancer's slow start after InService, which is when the engines
  answer) and, as `aws-grace`, with the warm-up rendered before (the cold start's health-check grace:
  600 s for the 8B pool, every dynamic scale-in blocked that long after each machine serves);
- `gcp`: the 8B pool on a2-highgpu-1g (1 x A100 40GB; an L4 does not hold 16 sequences of 8,192 tokens
  beside the weights) behind the regional autoscaler: the larger of its running
  and waiting signals' recommendations, its 10-minute stabilisation, the scale-in control;
- `k8s`: the 8B pool on g6e.xlarge as a Kubernetes pool (Cluster Autoscaler, one pod a node, the image
  kept), its pods scaled by the HPA KEDA renders (15 s syncs, the larger of one machine's pods per
  scale-up period and a Percent 100 policy per 15 s, the scale-down stabilisation window); `k8s-1m`,
  the same with the one-machine policy alone (what the pool rendered before); `k8s-deficit`, the pool
  with `scale_in_sizing="deficit"` (a Percent 50 / 60 s scaleDown policy beside one machine's pods a
  minute, issue #39).

The replay before these changes can be run on the same script from an older tree (rows it cannot
express, `aws-grace`, are skipped there): PYTHONPATH=<old tree's parent> python this file.

Columns: el/or (elastic cost over the SLO-aware oracle), st/or (the static fleet's), miss (requests over
the 2 s TTFT target, unserved or refused, of all), outs/ins (scale-outs, scale-ins), mach (fewest..most
serving), s (seconds the replay took). Targets as simulate_azure_traces.py: conv10 and diurnal miss at
most 1%, el/or at most 1.30 and below st/or; burst at least one scale-out.
Run by hand: `.venv/bin/python benchmarks/simulate_scaler_truth.py [aws aws-grace gcp k8s]` (the
scalers to run, default all; about 2 minutes on 2 idle cores).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

from inference_infra.components.fleet.elastic import ElasticArgs
from inference_infra.components.serving.model import ServedModel
from inference_infra.components.simulate import (
    Autoscaler,
    build_pool,
    read_trace,
    replay,
    scaler_settings,
    slo_oracle,
    workload,
)
from inference_infra.components.simulate.k8s_nodes import kubernetes_nodes_for, on_kubernetes

DATA = Path(__file__).resolve().parent / "data"
TRACES = {"conv10": ("AzureLLMInferenceTrace_conv.csv", 10), "diurnal": ("conv_diurnal.csv", 10),
          "burst": ("conv_burst.csv", 10)}  # fmt: skip
JUDGED = ("conv10", "diurnal")
MODEL_8B = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
MODEL_70B = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64)
PEAKS_8B = {"conv10": 48, "diurnal": 48, "burst": 96}
PEAKS_70B = {"conv10": 12, "diurnal": 12, "burst": 24}
# (label, model, machine, peaks, scaler's cloud, variant)
ROWS = (
    ("8b", MODEL_8B, "g6e.xlarge", PEAKS_8B, "aws", "aws"),
    ("8b", MODEL_8B, "g6e.xlarge", PEAKS_8B, "aws", "aws-grace"),
    ("70b", MODEL_70B, "p5.48xlarge", PEAKS_70B, "aws", "aws"),
    ("70b", MODEL_70B, "p5.48xlarge", PEAKS_70B, "aws", "aws-grace"),
    ("8b", MODEL_8B, "a2-highgpu-1g", PEAKS_8B, "gcp", "gcp"),
    ("8b", MODEL_8B, "g6e.xlarge", PEAKS_8B, "kubernetes", "k8s"),
    ("8b", MODEL_8B, "g6e.xlarge", PEAKS_8B, "kubernetes", "k8s-1m"),
    ("8b", MODEL_8B, "g6e.xlarge", PEAKS_8B, "kubernetes", "k8s-deficit"),
)


def main(only: set[str] | None = None) -> int:
    traces = {name: read_trace(DATA / file).scaled(copies) for name, (file, copies) in TRACES.items()}
    print(f"{'pool':4} {'scaler':9} {'trace':8} {'el/or':>6} {'st/or':>6} {'miss':>7} {'outs':>4} {'ins':>4}"
          f" {'mach':>7} {'s':>5}  target")  # fmt: skip
    shared: dict[tuple[str, str, str], tuple] = {}
    for label, model, machine, peaks, cloud, variant in ROWS:
        if only and variant not in only:
            continue
        for name, trace in traces.items():
            if variant.endswith("-deficit") and "scale_in_sizing" not in ElasticArgs.__dataclass_fields__:
                continue  # the tree before issue #39's deficit scale-in
            elastic = (
                ElasticArgs(scale_in_sizing="deficit")  # type: ignore[call-arg]
                if variant.endswith("-deficit")
                else ElasticArgs()
            )
            pool = build_pool(
                name=label, model=model, machine=machine, peak=peaks[name], trace=trace, elastic=elastic
            )
            if variant == "aws-grace":
                if not hasattr(pool.plan, "instance_warmup_seconds"):
                    continue  # the tree before issue #39's warm-up: it renders the grace already
                pool = replace(
                    pool, plan=replace(pool.plan, instance_warmup_seconds=pool.plan.warmup_seconds)
                )
            overrides = {}
            if variant.startswith("k8s"):
                pool = on_kubernetes(pool, kubernetes_nodes_for(pool))
            if variant == "k8s-1m":
                if "hpa_scale_up_percent" not in Autoscaler.__dataclass_fields__:
                    continue  # the tree before: it renders the one-machine policy alone
                overrides["hpa_scale_up_percent"] = 0
            key = (label, machine, name)
            if key not in shared:
                work = workload(trace, pool.service, pool.slots)
                shared[key] = (work, slo_oracle(work, pool.ttft_target_seconds))
            work, oracle = shared[key]
            started = time.perf_counter()
            scaler = scaler_settings(pool.plan, cloud=cloud, **overrides)
            doc = replay(trace, pool, scaler, work=work, oracle=oracle).as_json()
            seconds = time.perf_counter() - started
            cost, slo, scale = doc["cost"], doc["slo"], doc["scale"]
            el, st = cost["elastic_over_oracle"], cost["static_over_oracle"]
            if name in JUDGED:
                met = slo["met"] and el <= 1.30 and el < st
                verdict = "met" if met else ("SLO met" if slo["met"] else "missed")
            else:
                verdict = "met" if scale["scale_outs"] >= 1 else "missed"
            print(
                f"{label:4} {variant:9} {name:8} {el:6.3f} {st:6.3f} {slo['miss_share']:7.2%}"
                f" {scale['scale_outs']:4} {scale['scale_ins']:4}"
                f" {scale['min_machines']:>3}..{scale['max_machines']:<3} {seconds:5.1f}  {verdict}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    # optional: the scalers to run, e.g. `gcp k8s`
    raise SystemExit(main(set(sys.argv[1:]) or None))
