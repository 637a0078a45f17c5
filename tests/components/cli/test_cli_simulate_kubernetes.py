"""`inference-infra simulate --kubernetes`: the same pool replayed on Kubernetes nodes."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.fleet.elastic import ElasticArgs
from inference_infra.components.serving.cold_start import (
    NodeAutoscaler,
    WeightSource,
    cold_start,
    weights_gib,
)
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.serving.model import ServedModel
from inference_infra.components.simulate import build_pool, read_trace
from inference_infra.components.simulate.k8s_nodes import kubernetes_nodes, kubernetes_nodes_for
from tests.components.cli.test_cli_simulate import FLAGS, flat, run, trace  # noqa: F401 (the fixture)


def test_simulate_kubernetes_replays_pod_and_node_starts(capsys, trace):  # noqa: F811
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), *FLAGS, "--kubernetes", "karpenter", "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    k8s = doc["kubernetes"]
    assert k8s["autoscaler"] == "karpenter"
    assert k8s["scale_down_after_seconds"] == 0
    assert k8s["pod_start_seconds"] < doc["scaling"]["cold_start_seconds"] < k8s["node_start_seconds"]
    # the step scales out from 2 pods on 2 nodes: every new pod needs a node
    assert (k8s["pod_starts"], k8s["node_starts"]) == (0, doc["scale"]["launches"])
    assert doc["scaling"]["warm_pool_size"] == 0
    # the pods' autoscaler is the HPA KEDA renders (15 s syncs, 30 s scrape lag), not the cloud's group
    scaling = doc["scaling"]
    assert (scaling["cloud"], scaling["period_seconds"], scaling["metric_lag_seconds"]) == (
        "kubernetes",
        15,
        30,
    )
    assert scaling["fast_scale_out"] is None
    code, out, err = run(
        capsys, "simulate", "--trace", str(trace), *FLAGS, "--kubernetes", "cluster-autoscaler"
    )
    assert code == 0, err
    assert "kubernetes (cluster-autoscaler, 1 pod(s) per node): pod start" in flat(out)


def test_simulate_kubernetes_nodes_for_a_built_pool_match_the_estimates(trace):  # noqa: F811
    model = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
    estimate = cold_start(
        weights_gib=weights_gib(model.name),
        source=WeightSource.S3,
        instance_type="g6e.xlarge",
        family=EngineFamily.NVIDIA_VLLM,
    )
    for which in ("fastest", "typical", "slowest"):
        pool = build_pool(
            name="p", model=model, machine="g6e.xlarge", peak=4, trace=read_trace(trace),
            elastic=ElasticArgs(), cold_start=which,
        )  # fmt: skip
        for autoscaler in NodeAutoscaler:
            derived = kubernetes_nodes_for(pool, which=which, autoscaler=autoscaler)
            direct = kubernetes_nodes(estimate, which=which, autoscaler=autoscaler)
            assert derived.pod_start_seconds == pytest.approx(direct.pod_start_seconds)
            assert derived.node_start_seconds == pytest.approx(direct.node_start_seconds)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kubernetes", "karpenter", "--pods-per-node", "0"], "--pods-per-node 0 must be a whole number"),
        (["--kubernetes", "karpenter", "--scale-down-after", "-5"], "--scale-down-after -5 must be 0..86400"),
        (["--kubernetes", "kubelet"], "Invalid value for '--kubernetes'"),
    ],
)
def test_simulate_kubernetes_rejects_bad_flags(capsys, trace, argv, message):  # noqa: F811
    code, _, err = run(capsys, "simulate", "--trace", str(trace), *FLAGS, *argv)
    assert code == 2, err
    assert message in flat(err)
