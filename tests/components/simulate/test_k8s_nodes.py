"""A Kubernetes pool in the replay: a pod on a node already up starts faster than one that needs a
node, an empty node stays billed for the scale-down delay, and a pool scaled to zero pays a node start.

The replay's arithmetic uses the fixed service of test_replay.py (a slot held HOLD seconds, first token
PREFILL after admission) and round start times, so every figure is checkable by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.serving.cold_start import (
    NODE_AUTOSCALER_REACTION,
    NODE_PROVISION,
    NODE_SCALE_DOWN_AFTER,
    NodeAutoscaler,
    WeightSource,
    cold_start,
    node_stages,
    pod_stages,
    stage_seconds,
)
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.simulate import Trace, replay
from inference_infra.components.simulate.k8s_nodes import KubernetesNodes, kubernetes_nodes, on_kubernetes
from tests.components.simulate.test_replay import COLD, PREFILL, pool, scaler, steady, step_trace

POD = 100.0  # pod start on a node that is up, image kept
PULL = 160.0  # pod start with the image pulled
READY = 140.0  # pending pod to a schedulable new node: POD + READY + PULL... node start = READY + PULL = COLD


def nodes(**changes) -> KubernetesNodes:
    base = KubernetesNodes(
        pod_start_seconds=POD,
        pod_start_pull_seconds=PULL,
        node_ready_seconds=READY,
        scale_down_after_seconds=600,
    )
    return replace(base, **changes)


def test_k8s_cold_start_pod_start_is_shorter_than_node_start_and_sourced():
    estimate = cold_start(
        weights_gib=15.0, source=WeightSource.S3, instance_type="g6e.xlarge", family=EngineFamily.NVIDIA_VLLM
    )
    cached = stage_seconds(pod_stages(estimate, image_cached=True))
    pulled = stage_seconds(pod_stages(estimate, image_cached=False))
    for autoscaler in NodeAutoscaler:
        node = stage_seconds(node_stages(estimate, autoscaler))
        reaction = NODE_AUTOSCALER_REACTION[autoscaler][0].value
        assert node == pytest.approx(reaction + NODE_PROVISION.value + pulled)
        assert cached < pulled < node
        # a VM's cold start boots a machine; a pod on a node that is up does not
        assert cached < estimate.seconds
    # the image pull is the one stage a cached image saves
    assert pulled - cached == pytest.approx(estimate.stages()[1].typical)
    for figure in (
        NODE_PROVISION,
        *NODE_SCALE_DOWN_AFTER.values(),
        *(f for f, _ in NODE_AUTOSCALER_REACTION.values()),
    ):
        assert figure.source
        assert figure.as_of.isoformat() == "2026-12-02"
    assert "cluster-autoscaler-1.36.1" in NODE_PROVISION.source
    assert NODE_SCALE_DOWN_AFTER[NodeAutoscaler.CLUSTER_AUTOSCALER].value == 600


def test_k8s_nodes_from_the_estimate_at_either_end_of_the_range():
    estimate = cold_start(
        weights_gib=15.0, source=WeightSource.S3, instance_type="g6e.xlarge", family=EngineFamily.NVIDIA_VLLM
    )
    fast = kubernetes_nodes(estimate, which="fastest", autoscaler=NodeAutoscaler.KARPENTER)
    slow = kubernetes_nodes(estimate, which="slowest")
    assert fast.pod_start_seconds < slow.pod_start_seconds
    assert fast.node_start_seconds < slow.node_start_seconds
    assert fast.scale_down_after_seconds == 0  # Karpenter's consolidateAfter default
    assert slow.scale_down_after_seconds == 600
    assert slow.node_start_seconds == pytest.approx(
        stage_seconds(node_stages(estimate, NodeAutoscaler.CLUSTER_AUTOSCALER), "slowest")
    )


def test_k8s_nodes_rejects_negative_or_fractional_settings():
    with pytest.raises(
        ValueError, match=r"pod_start_seconds must be a finite number of seconds >= 0, got -1"
    ):
        nodes(pod_start_seconds=-1)
    with pytest.raises(ValueError, match=r"pods_per_node must be a whole number >= 1, got 0"):
        nodes(pods_per_node=0)
    with pytest.raises(ValueError, match="which must be fastest, typical or slowest"):
        kubernetes_nodes(
            cold_start(
                weights_gib=1,
                source=WeightSource.S3,
                instance_type="g6e.xlarge",
                family=EngineFamily.NVIDIA_VLLM,
            ),
            which="median",
        )


def test_k8s_replay_scale_out_needs_new_nodes_with_one_pod_per_node():
    # two pods on two nodes; the scale-out at 780 s adds four pods, each on a new node
    result = replay(step_trace(), on_kubernetes(pool(), nodes()), scaler(2))
    assert [(x.decided_s, x.ready_s) for x in result.launches] == [(780.0, 780.0 + READY + PULL)] * 4
    k8s = result.as_json()["kubernetes"]
    assert (k8s["pod_starts"], k8s["node_starts"]) == (0, 4)


def test_k8s_replay_scale_out_lands_on_room_of_nodes_already_up():
    # four pods per node: the two starting pods leave room for two more on their node (pod starts);
    # the other two need a second node, the second of them lands on it while it comes up
    result = replay(step_trace(), on_kubernetes(pool(), nodes(pods_per_node=4)), scaler(2))
    starts = sorted(x.seconds for x in result.launches)
    assert starts == [POD, POD, READY + PULL, READY + PULL]
    k8s = result.as_json()["kubernetes"]
    assert (k8s["pod_starts"], k8s["node_starts"]) == (3, 1)
    assert k8s["mean_start_seconds"] == {"pod": round((2 * POD + READY + PULL) / 3, 1), "node": READY + PULL}


def _idle_then_one_request(delay: float):
    # load until 310 s on two pods; one goes at 1,200 s, the last at 2,100 s (test_replay's idle test);
    # one request at 3,600 s: three periods wanting one machine, then a start decided at 3,780 s
    rows = [*steady(1, 0, 300), (3600.0, 1000, 100)]
    elastic = pool(min_size=0, desired=0)
    return replay(Trace.of(rows), on_kubernetes(elastic, nodes(scale_down_after_seconds=delay)), scaler(2))


def test_k8s_replay_scale_to_zero_pays_a_node_start_once_the_node_is_gone():
    gone = _idle_then_one_request(600.0)  # the last node goes at 2,700 s
    assert gone.launches[-1].decided_s == 3780.0
    assert gone.ttft_seconds[-1] == pytest.approx(3780 - 3600 + READY + PULL + PREFILL)
    kept = _idle_then_one_request(3600.0)  # the last node stays until 5,700 s: the pod starts on it
    assert kept.ttft_seconds[-1] == pytest.approx(3780 - 3600 + POD + PREFILL)
    assert gone.ttft_seconds[-1] - kept.ttft_seconds[-1] == pytest.approx(READY + PULL - POD)
    assert (gone.kubernetes["node_starts"], kept.kubernetes["pod_starts"]) == (1, 1)


def test_k8s_replay_bills_empty_nodes_until_the_autoscaler_removes_them():
    # node start == the VM cold start, so the two replays differ only in the empty nodes' 600 s each
    k8s = _idle_then_one_request(600.0)
    rows = [*steady(1, 0, 300), (3600.0, 1000, 100)]
    vm = replay(Trace.of(rows), pool(min_size=0, desired=0), scaler(2))
    assert READY + PULL == COLD
    assert k8s.ttft_seconds == vm.ttft_seconds
    assert k8s.elastic_machine_s - vm.elastic_machine_s == pytest.approx(2 * 600)
    assert k8s.kubernetes["nodes_removed"] == 2


def test_k8s_replay_leaves_a_vm_pool_unchanged():
    assert "kubernetes" not in replay(step_trace(), pool(), scaler(2)).as_json()


def test_k8s_replay_has_no_fast_step_the_pod_autoscaler_renders_none():
    from tests.components.simulate.test_replay import fast_plan

    k8s_pool = on_kubernetes(pool(**fast_plan()), nodes())
    assert k8s_pool.plan.fast_scale_out_steps == ()
    result = replay(step_trace(), k8s_pool, scaler(2))
    # target tracking alone: its third datapoint (780 s), not the fast step's first (660 s)
    assert {x.decided_s for x in result.launches} == {780.0}
    assert result.as_json()["scaling"]["fast_scale_out"] is None
