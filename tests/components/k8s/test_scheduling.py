"""The node/pod contract of Kubernetes serving pools: pods tolerate exactly their nodes' taints."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.k8s import scheduling


@pytest.mark.parametrize("family", list(AcceleratorFamily))
def test_pods_tolerate_exactly_their_nodes_taints(family: AcceleratorFamily) -> None:
    taints = scheduling.node_taints("llama-8b", family)
    tolerated = {(t["key"], t["value"], t["effect"]) for t in scheduling.tolerations("llama-8b", family)}
    assert tolerated == {(t.key, t.value, t.effect) for t in taints}
    assert scheduling.node_selector("llama-8b", family) == scheduling.node_labels("llama-8b", family)


def test_another_pool_does_not_tolerate_this_pools_nodes() -> None:
    family = AcceleratorFamily.NVIDIA_GPU
    mine = {t.key: t.value for t in scheduling.node_taints("a", family)}
    theirs = {t["key"]: t["value"] for t in scheduling.tolerations("b", family)}
    assert mine[scheduling.POOL_TAINT] != theirs[scheduling.POOL_TAINT]
