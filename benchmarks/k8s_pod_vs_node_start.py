"""Pod start vs node start: one pool replayed on VMs and on Kubernetes (`simulate.k8s_nodes`).

The pool: Llama 3.1 8B bf16 on g6e.xlarge (as benchmarks/simulate_azure_traces.py's `8b`), planned by
`simulate.build_pool` with the chosen settings (target 0.6, a scale-in sized to the load once per
300 s), weights from S3. It is replayed three ways on two traces of benchmarks/data/:

- `vm`: the elastic group as planned (its cold start, its warm pool);
- `k8s-ca`: a Kubernetes pool, one pod per node, nodes by the Cluster Autoscaler (an empty node kept
  10 min, --scale-down-unneeded-time's default);
- `k8s-karp`: the same with Karpenter (empty nodes removed at once, consolidateAfter 0s).

Each once with the pool's floor and once scaled to zero (min_size 0: the fleets refuse it without a
schedule, as a pool of zero machines publishes no load; the replay counts waiting requests as the
load, as a KEDA trigger on a metric outside the pods would). It prints the starts (pod and
node, typical seconds, serving.cold_start), then per run: cost over the SLO-aware oracle, the share of
requests over the 2 s TTFT target, and the launches that were pod starts and node starts.

Run by hand: `.venv/bin/python benchmarks/k8s_pod_vs_node_start.py` (about a minute on 2 idle cores).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from inference_infra.components.fleet.elastic import ElasticArgs
from inference_infra.components.serving.cold_start import (
    NodeAutoscaler,
    WeightSource,
    cold_start,
    weights_gib,
)
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.serving.model import ServedModel
from inference_infra.components.simulate import (
    build_pool,
    read_trace,
    replay,
    scaler_settings,
    slo_oracle,
    workload,
)
from inference_infra.components.simulate.k8s_nodes import kubernetes_nodes, on_kubernetes

DATA = Path(__file__).resolve().parent / "data"
MODEL = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
MACHINE = "g6e.xlarge"
TRACES = {"conv": ("AzureLLMInferenceTrace_conv.csv", 1, 6), "diurnal": ("conv_diurnal.csv", 10, 48)}


def main() -> None:
    estimate = cold_start(
        weights_gib=weights_gib(MODEL.name),
        source=WeightSource.S3,
        instance_type=MACHINE,
        family=EngineFamily.NVIDIA_VLLM,
    )
    ca = kubernetes_nodes(estimate, autoscaler=NodeAutoscaler.CLUSTER_AUTOSCALER)
    karpenter = kubernetes_nodes(estimate, autoscaler=NodeAutoscaler.KARPENTER)
    print(
        f"{MODEL.name} on {MACHINE}: VM cold start {estimate.seconds:.0f} s; pod start (image kept) "
        f"{ca.pod_start_seconds:.0f} s; node start {ca.node_start_seconds:.0f} s (Cluster Autoscaler), "
        f"{karpenter.node_start_seconds:.0f} s (Karpenter)"
    )
    print(f"{'trace':8} {'floor':6} {'run':9} {'el/or':>6} {'miss':>7} {'pod':>4} {'node':>5} {'launch':>6}")
    for name, (file, copies, peak) in TRACES.items():
        trace = read_trace(DATA / file).scaled(copies)
        for floor in ("plan", "zero"):
            elastic = ElasticArgs(target_utilisation=0.6, scale_in_cooldown_seconds=300)
            pool = build_pool(
                name="8b", model=MODEL, machine=MACHINE, peak=peak, trace=trace, elastic=elastic
            )
            if floor == "zero":  # the fleets refuse min 0 without a schedule; the replay takes it
                pool = replace(pool, plan=replace(pool.plan, min_size=0, desired=0))
            assert round(pool.cold_start_seconds) == round(estimate.seconds), (
                "the pool's cold start is the estimate's"
            )
            work = workload(trace, pool.service, pool.slots)
            oracle = slo_oracle(work, pool.ttft_target_seconds)
            scaler = scaler_settings(pool.plan, scale_in_share=1.0)
            for label, variant in (
                ("vm", pool),
                ("k8s-ca", on_kubernetes(pool, ca)),
                ("k8s-karp", on_kubernetes(pool, karpenter)),
            ):
                result = replay(trace, variant, scaler, work=work, oracle=oracle)
                doc = result.as_json()
                k8s = doc.get("kubernetes") or {}
                print(
                    f"{name:8} {floor:6} {label:9} {doc['cost']['elastic_over_oracle'] or 0:6.2f}"
                    f" {doc['slo']['miss_share']:7.2%} {k8s.get('pod_starts', '-'):>4}"
                    f" {k8s.get('node_starts', '-'):>5}"
                    f" {doc['scale']['launches']:6}"
                )
    print(
        "el/or: elastic cost over the SLO-aware oracle; miss: requests over the 2 s TTFT target, never served"
        " or refused, of all; pod/node: launches that were pod starts / node starts (Kubernetes only)."
    )


if __name__ == "__main__":
    main()
