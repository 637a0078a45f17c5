"""A Kubernetes pool's nodes in the replay: pod start on a node already up vs node start (pure).

On Kubernetes the replay's "machine" is a pod (one engine replica) and the bill is the nodes. A pod
the pod autoscaler adds lands on a node of the pool with room when there is one, and serves after a
**pod start** (image, kept by the kubelet or pulled; weights download; engine load and warm-up).
When there is none it waits for a **node start**: the node autoscaler's reaction, the node's
provisioning, then the pod start with its image pulled. A node whose last pod left stays, billed, for
the node autoscaler's scale-down delay (Cluster Autoscaler's --scale-down-unneeded-time, 10 min by
default; Karpenter's consolidateAfter) and takes the next pod in that time; after it, it is gone,
so a pool scaled to zero pays a node start for its next request. The figures and their sources:
components/serving/cold_start.py (NODE_AUTOSCALER_REACTION, NODE_PROVISION, NODE_SCALE_DOWN_AFTER).

The pod autoscaler is replayed as the HPA KEDA renders for the pool (settings.py, `cloud="kubernetes"`:
15 s syncs, the 10% tolerance, the larger of one machine's pods per scale-up period and 100% per sync,
the scale-down stabilisation window and one machine's pods a minute). What it leaves out: a node's
removal is timed from its last pod's removal, not from the end of its drain; a spot reclaim takes one pod
(and its node only with one pod per node). A pod goes to a node that is up before one still coming up;
pods are removed from the node holding most (the ReplicaSet controller deletes doubled-up pods first).
The warm pool does not apply (no stopped nodes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from inference_infra.components.serving.cold_start import (
    IMAGE_PULL_RANGE,
    IMAGE_PULL_SPAN,
    MACHINE_BOOT_RANGE,
    MACHINE_BOOT_SPAN,
    NODE_AUTOSCALER_REACTION,
    NODE_PROVISION,
    NODE_PROVISION_SPAN,
    NODE_SCALE_DOWN_AFTER,
    ColdStart,
    NodeAutoscaler,
    node_stages,
    pod_stages,
    stage_seconds,
)

if TYPE_CHECKING:
    from inference_infra.components.simulate.replay import Pool


@dataclass(frozen=True)
class KubernetesNodes:
    """How a Kubernetes pool's pods start, and how long its empty nodes stay."""

    pod_start_seconds: float  # on a node that ran the pool (image kept when image_cached)
    pod_start_pull_seconds: float  # on a new node: the image pulled first
    node_ready_seconds: float  # a pending pod to a schedulable new node (autoscaler + provisioning)
    scale_down_after_seconds: float  # an empty node stays (billed) this long
    pods_per_node: int = 1
    autoscaler: NodeAutoscaler = NodeAutoscaler.CLUSTER_AUTOSCALER
    image_cached: bool = True  # a node that ran the pool keeps its image

    def __post_init__(self) -> None:
        problems = []
        for name in (
            "pod_start_seconds",
            "pod_start_pull_seconds",
            "node_ready_seconds",
            "scale_down_after_seconds",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not (
                isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
            ):
                problems.append(f"{name} must be a finite number of seconds >= 0, got {value!r}")
        ppn = self.pods_per_node
        if not isinstance(ppn, int) or isinstance(ppn, bool) or ppn < 1:
            problems.append(f"pods_per_node must be a whole number >= 1, got {ppn!r}")
        if problems:
            raise ValueError("KubernetesNodes: " + "; ".join(problems))

    @property
    def node_start_seconds(self) -> float:
        """A pod that needs a new node: the node's readiness, then the pod with its image pulled."""
        return self.node_ready_seconds + self.pod_start_pull_seconds


def kubernetes_nodes(
    estimate: ColdStart,
    *,
    autoscaler: NodeAutoscaler = NodeAutoscaler.CLUSTER_AUTOSCALER,
    which: str = "typical",
    image_cached: bool = True,
    pods_per_node: int = 1,
    scale_down_after_seconds: float | None = None,
) -> KubernetesNodes:
    """The pod and node starts of a pool from its cold-start estimate, at one end of their range
    (fastest | typical | slowest); the scale-down delay is the autoscaler's default unless given."""
    if which not in _ENDS:
        raise ValueError(f"which must be fastest, typical or slowest, got {which!r}")
    delay = (
        NODE_SCALE_DOWN_AFTER[autoscaler].value
        if scale_down_after_seconds is None
        else scale_down_after_seconds
    )
    pulled = stage_seconds(pod_stages(estimate, image_cached=False), which)
    return KubernetesNodes(
        pod_start_seconds=stage_seconds(pod_stages(estimate, image_cached=image_cached), which),
        pod_start_pull_seconds=pulled,
        node_ready_seconds=stage_seconds(node_stages(estimate, autoscaler), which) - pulled,
        scale_down_after_seconds=delay,
        pods_per_node=pods_per_node,
        autoscaler=autoscaler,
        image_cached=image_cached,
    )


_ENDS = ("fastest", "typical", "slowest")


def _at(which: str, typical: float, span: tuple[float, float]) -> float:
    return {"fastest": span[0], "typical": typical, "slowest": span[1]}[which]


def kubernetes_nodes_for(
    pool: Pool,
    *,
    which: str = "typical",
    autoscaler: NodeAutoscaler = NodeAutoscaler.CLUSTER_AUTOSCALER,
    image_cached: bool = True,
    pods_per_node: int = 1,
    scale_down_after_seconds: float | None = None,
) -> KubernetesNodes:
    """kubernetes_nodes() for a pool already built (`build_pool`, `pool_from_plan`) with its cold start
    at `which`: that cold start is the estimate's stages summed there, and its first two (machine boot,
    image pull) do not depend on the model, so the rest (weights, load, warm-up) is what is left."""
    if which not in _ENDS:
        raise ValueError(f"which must be fastest, typical or slowest, got {which!r}")
    pull = _at(which, IMAGE_PULL_RANGE.value, IMAGE_PULL_SPAN)
    rest = pool.cold_start_seconds - _at(which, MACHINE_BOOT_RANGE.value, MACHINE_BOOT_SPAN) - pull
    reaction, span = NODE_AUTOSCALER_REACTION[autoscaler]
    ready = _at(which, reaction.value, span) + _at(which, NODE_PROVISION.value, NODE_PROVISION_SPAN)
    delay = (
        NODE_SCALE_DOWN_AFTER[autoscaler].value
        if scale_down_after_seconds is None
        else scale_down_after_seconds
    )
    return KubernetesNodes(
        pod_start_seconds=rest if image_cached else rest + pull,
        pod_start_pull_seconds=rest + pull,
        node_ready_seconds=ready,
        scale_down_after_seconds=delay,
        pods_per_node=pods_per_node,
        autoscaler=autoscaler,
        image_cached=image_cached,
    )


def on_kubernetes(pool: Pool, nodes: KubernetesNodes) -> Pool:
    """The pool replayed as a Kubernetes pool: its machine price is per pod (a node's price over its
    pods), its starts the pod and node starts, no warm pool and no fast step (the pod autoscaler renders
    no step policy: that is an Auto Scaling group's)."""
    plan = replace(
        pool.plan,
        warm_pool_size=0,
        fast_scale_out_ratio=0.0,
        fast_scale_out_threshold=0.0,
        fast_scale_out_steps=(),
    )
    return replace(pool, plan=plan, nodes=nodes)


@dataclass
class _Node:
    ready_at: float  # when pods can be scheduled on it
    pods: int
    empty_until: float | None = None  # when the autoscaler removes it, while it is empty


class NodeState:
    """The pool's nodes while the replay runs: each node's pods, when it became schedulable, and when
    an empty one goes."""

    def __init__(self, spec: KubernetesNodes, pods: int) -> None:
        self.spec = spec
        per = spec.pods_per_node
        self.nodes = [_Node(-math.inf, min(per, pods - i)) for i in range(0, pods, per)]
        self.pod_starts: list[float] = []  # seconds, decided to serving
        self.node_starts: list[float] = []
        self.nodes_removed = 0

    def place(self, t: float) -> float:
        """A new pod decided at t: on a node with room (up first, else the one ready first) after a pod
        start, or on a new node after a node start; returns when it serves."""
        room = [n for n in self.nodes if n.pods < self.spec.pods_per_node]
        if room:
            node = min(room, key=lambda n: (n.ready_at > t, n.ready_at))
            node.pods += 1
            node.empty_until = None
            if node.ready_at <= t:
                ready = t + self.spec.pod_start_seconds
            else:  # a node still coming up: the pod pulls its image there
                ready = node.ready_at + self.spec.pod_start_pull_seconds
            self.pod_starts.append(ready - t)
            return ready
        node = _Node(t + self.spec.node_ready_seconds, 1)
        self.nodes.append(node)
        ready = node.ready_at + self.spec.pod_start_pull_seconds
        self.node_starts.append(ready - t)
        return ready

    def release(self, count: int, t: float) -> None:
        """count pods removed at t, each from the node with the most (the ReplicaSet controller deletes
        doubled-up pods first); a node left empty goes after the scale-down delay."""
        for _ in range(count):
            busy = [n for n in self.nodes if n.pods > 0]
            if not busy:
                return
            node = max(busy, key=lambda n: (n.pods, n.ready_at))
            node.pods -= 1
            if node.pods == 0:
                node.empty_until = t + self.spec.scale_down_after_seconds
        self.expire(t)

    def reclaimed(self, t: float) -> None:
        """A spot reclaim at t takes a serving pod (and, with one pod per node, its node)."""
        busy = [n for n in self.nodes if n.pods > 0 and n.ready_at <= t]
        if not busy:
            return
        node = busy[0]
        node.pods -= 1
        if self.spec.pods_per_node == 1:
            self.nodes.remove(node)
        elif node.pods == 0:
            node.empty_until = t + self.spec.scale_down_after_seconds

    def next_event(self) -> float | None:
        times = [n.empty_until for n in self.nodes if n.empty_until is not None]
        return min(times) if times else None

    def expire(self, t: float) -> None:
        kept = [n for n in self.nodes if n.empty_until is None or n.empty_until > t]
        self.nodes_removed += len(self.nodes) - len(kept)
        self.nodes = kept

    def billed(self) -> int:
        """Nodes up or provisioning, in pods' worth (the replay's machine price is per pod)."""
        return len(self.nodes) * self.spec.pods_per_node

    def summary(self) -> dict[str, Any]:
        def mean(values: list[float]) -> float | None:
            return round(sum(values) / len(values), 1) if values else None

        return {
            "autoscaler": self.spec.autoscaler.value,
            "pods_per_node": self.spec.pods_per_node,
            "image_cached": self.spec.image_cached,
            "pod_start_seconds": round(self.spec.pod_start_seconds, 1),
            "node_start_seconds": round(self.spec.node_start_seconds, 1),
            "scale_down_after_seconds": round(self.spec.scale_down_after_seconds, 1),
            "pod_starts": len(self.pod_starts),
            "node_starts": len(self.node_starts),
            "mean_start_seconds": {"pod": mean(self.pod_starts), "node": mean(self.node_starts)},
            "nodes_removed": self.nodes_removed,
        }
