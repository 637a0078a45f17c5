"""GKE readers: what a node pool, or a cluster's default node pool, runs (GPU or TPU nodes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from inference_infra.components.catalog import Cloud, instance_types
from inference_infra.components.resources.gcp import gcp_machine, guest_accelerators
from inference_infra.components.resources.props import get_path, known
from inference_infra.components.resources.types import GCP_GKE_CLUSTER, GCP_GKE_NODE_POOL
from inference_infra.components.resources.use import (
    AcceleratorUse,
    Known,
    Purchase,
    Reader,
    TemplateLookup,
    as_int,
)

# GKE TPU machine types: (family prefix, chips per node, slice-name units per chip).
_GKE_TPU = {
    "ct5lp-hightpu": ("v5litepod", 1),
    "ct5p-hightpu": ("v5p", 2),
    "ct6e-standard": ("v6e", 1),
    "ct4p-hightpu": ("v4", 2),
}


def gke_tpu_units() -> Mapping[str, tuple[str, int]]:
    """GKE TPU machine families -> (catalog slice prefix, slice-name units per chip)."""
    return dict(_GKE_TPU)


def gke_tpu_slice(machine_type: str) -> str | None:
    """'ct5lp-hightpu-4t' -> 'v5litepod-4': the catalog slice with a node's chips."""
    head, _, chips = machine_type.rpartition("-")
    if head not in _GKE_TPU or not chips.endswith("t") or not chips[:-1].isdigit():
        return None
    prefix, units = _GKE_TPU[head]
    return f"{prefix}-{int(chips[:-1]) * units}"


def gke_tpu_multi_host(machine_type: str, topology: Any) -> tuple[str, int] | None:
    """'ct5lp-hightpu-4t' with topology '4x4' -> ('v5litepod-16', 4): the catalog slice a multi-host
    node pool runs and its hosts (nodes per slice); None for a single host or an unknown topology."""
    one = gke_tpu_slice(machine_type)
    if one is None or not isinstance(topology, str):
        return None
    prefix = one.rsplit("-", 1)[0] + "-"
    for t in instance_types(Cloud.GCP):
        if t.name.startswith(prefix) and t.tpu_topology == topology and t.hosts > 1:
            return t.name, t.hosts
    return None


def _slices(nodes: int | None, hosts: int) -> int | None:
    """Whole slices of `hosts` nodes each; a slice short of hosts still bills as one (rounded up)."""
    return None if nodes is None else -(-nodes // hosts)


def _gke_node_config(
    node_config: Any, node_count: Any, autoscaling: Any, accepts: Known, zones: int = 1, topology: Any = None
) -> AcceleratorUse | None:
    """zones: how many zones the pool's nodeLocations name. GKE's nodeCount, initialNodeCount and
    min/maxNodeCount are per zone; totalMin/totalMaxNodeCount are for the whole pool. topology: the
    pool's placementPolicy.tpuTopology: a multi-host slice is priced as whole slices."""
    machine_type = known(get_path(node_config, "machineType")) or "e2-medium"
    guests = guest_accelerators(known(get_path(node_config, "guestAccelerators")))
    tpu = gke_tpu_slice(machine_type)
    if tpu and (multi := gke_tpu_multi_host(machine_type, topology)) is not None:
        use = _gke_node_config(node_config, node_count, autoscaling, accepts, zones)
        if use is None:
            return None
        name, hosts = multi
        return replace(
            use,
            machine_type=name,
            count=_slices(use.count, hosts) or 0,
            min_count=_slices(use.min_count, hosts),
            max_count=_slices(use.max_count, hosts),
        )
    if not tpu and not gcp_machine(machine_type, guests, accepts):
        return None
    spot = known(get_path(node_config, "spot")) is True or known(get_path(node_config, "preemptible")) is True
    low = known(get_path(autoscaling, "minNodeCount")) if autoscaling else None
    high = known(get_path(autoscaling, "maxNodeCount")) if autoscaling else None
    low = as_int(low, 0) * zones if low is not None else known(get_path(autoscaling, "totalMinNodeCount"))
    high = as_int(high, 0) * zones if high is not None else known(get_path(autoscaling, "totalMaxNodeCount"))
    count = as_int(node_count, 0) * zones if as_int(node_count, -1) >= 0 else as_int(low, zones)
    return AcceleratorUse(
        Cloud.GCP,
        tpu or machine_type,
        count,
        Purchase.SPOT if spot else Purchase.ON_DEMAND,
        guest_accelerators=() if tpu else guests,
        min_count=as_int(low, count) if autoscaling else None,
        max_count=as_int(high, count) if autoscaling else None,
    )


def _gke_node_pool(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    count = (
        known(get_path(props, "nodeCount"))
        if known(get_path(props, "nodeCount")) is not None
        else known(get_path(props, "initialNodeCount"))
    )
    locations = known(get_path(props, "nodeLocations"))
    zones = len(locations) if isinstance(locations, list) and locations else 1
    return _gke_node_config(
        known(get_path(props, "nodeConfig")),
        count,
        known(get_path(props, "autoscaling")),
        accepts,
        zones,
        known(get_path(props, "placementPolicy", "tpuTopology")),
    )


def _gke_cluster(props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known) -> AcceleratorUse | None:
    """The cluster's default node pool, unless the program removes it."""
    if (
        known(get_path(props, "removeDefaultNodePool")) is True
        or known(get_path(props, "enableAutopilot")) is True
    ):
        return None
    return _gke_node_config(
        known(get_path(props, "nodeConfig")), known(get_path(props, "initialNodeCount")) or 1, None, accepts
    )


READERS: dict[str, Reader] = {
    GCP_GKE_NODE_POOL: _gke_node_pool,
    GCP_GKE_CLUSTER: _gke_cluster,
}
