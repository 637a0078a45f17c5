"""Where a Kubernetes serving pool's pods land: the node labels and taints its nodes carry (pure).

One contract between the node capacity (EKS managed node groups, Karpenter NodePools, GKE node pools)
and the pool's workload (its Deployment or LeaderWorkerSet): the nodes carry `node_labels` and
`node_taints`, the pods select `node_selector` and tolerate `tolerations`. Both sides read this module,
so a pool's pods can only land on its own nodes and nothing else lands there.

The accelerator taints are the ones the platforms put on their own accelerator nodes, so a pool's
pods also tolerate a node the platform tainted: GKE taints GPU node pools `nvidia.com/gpu=present:
NoSchedule` and TPU node pools `google.com/tpu=present:NoSchedule` (cloud.google.com/kubernetes-engine
/docs/how-to/gpus and .../tpus, read 2026-12-02); EKS taints nothing, so the node group sets the
same keys (`aws.amazon.com/neuron` for Inferentia, as the Neuron device plugin's own examples do).
"""

from __future__ import annotations

from dataclasses import dataclass

from inference_infra.components.catalog import AcceleratorFamily

POOL_LABEL = "inference-infra.dev/pool"  # the pool's name, on its nodes and on its pods
FAMILY_LABEL = "inference-infra.dev/accelerator-family"  # AcceleratorFamily's value
POOL_TAINT = "inference-infra.dev/pool"  # NoSchedule: only this pool's pods land on its nodes

ACCELERATOR_TAINTS: dict[AcceleratorFamily, str] = {
    AcceleratorFamily.NVIDIA_GPU: "nvidia.com/gpu",
    AcceleratorFamily.AWS_NEURON: "aws.amazon.com/neuron",
    AcceleratorFamily.GOOGLE_TPU: "google.com/tpu",
}

# The extended resource a pod requests for one device (what the device plugins advertise).
ACCELERATOR_RESOURCES: dict[AcceleratorFamily, str] = {
    AcceleratorFamily.NVIDIA_GPU: "nvidia.com/gpu",
    AcceleratorFamily.AWS_NEURON: "aws.amazon.com/neuron",
    AcceleratorFamily.GOOGLE_TPU: "google.com/tpu",
}


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str = "NoSchedule"

    def manifest(self) -> dict[str, str]:
        """The taint as a Node (and Karpenter NodePool) spec writes it."""
        return {"key": self.key, "value": self.value, "effect": self.effect}

    def toleration(self) -> dict[str, str]:
        """The toleration a pod needs to land on a node with this taint."""
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


def node_labels(pool: str, family: AcceleratorFamily) -> dict[str, str]:
    """The labels a pool's nodes carry."""
    return {POOL_LABEL: pool, FAMILY_LABEL: family.value}


def node_taints(pool: str, family: AcceleratorFamily) -> tuple[Taint, ...]:
    """The taints a pool's nodes carry: the pool's own and the accelerator's."""
    return (Taint(POOL_TAINT, pool), Taint(ACCELERATOR_TAINTS[family], "present"))


def node_selector(pool: str, family: AcceleratorFamily) -> dict[str, str]:
    """The node selector of a pool's pods (the same labels its nodes carry)."""
    return node_labels(pool, family)


def tolerations(pool: str, family: AcceleratorFamily) -> list[dict[str, str]]:
    """The tolerations of a pool's pods: exactly its nodes' taints."""
    return [taint.toleration() for taint in node_taints(pool, family)]
