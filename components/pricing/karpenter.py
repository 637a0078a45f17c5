"""Karpenter NodePools priced as a range: 0 nodes until pods are pending, up to their limits.

A NodePool launches nothing by itself: Karpenter creates nodes for pods that cannot be scheduled,
and stops once the pool's `limits` are reached. So a pool whose requirements list its accelerator
types (or families) and whose limits bound every one of them (`resources.k8s.node_pool_bound`)
costs between nothing and its limits filled with its dearest type:

- minimum: $0/h at 0 nodes;
- maximum: the dearest single-type fill of its limits (the plan's `hourly_usd`, like every elastic
  pool's, so the budget policy judges the most it can cost);
- expected: one node of that type, the least it runs while it serves (nothing offline says how many
  pods will be pending), or the usage file's `hours_at_size` for the pool.

A pool without such limits is not priced (its note says no limit bounds it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from inference_infra.components.catalog import CatalogError, Cloud
from inference_infra.components.pricing.elastic import HOURS_AT_SIZE, MAX_TABLE_SIZE, HourlyRange
from inference_infra.components.resources import AcceleratorUse
from inference_infra.components.resources.k8s import node_pool_bound

PriceOne = Callable[[AcceleratorUse, "str | None"], tuple[float, str]]


def node_pool_range(
    props: Any, type_token: str, region: str | None, price_one: PriceOne
) -> tuple[HourlyRange, str] | None:
    """The pool's range and its basis; None when its limits do not bound it or no type has a price."""
    bound = node_pool_bound(type_token, props)
    if bound is None:
        return None
    best: tuple[float, str, str, int] | None = None  # (hourly at the fill, basis, type, nodes)
    for name, nodes in bound.fills:
        try:
            hourly, basis = price_one(AcceleratorUse(Cloud.AWS, name, nodes, bound.purchase), region)
        except CatalogError:  # a type without a price (sold as Capacity Blocks only): not in the bound
            continue
        if best is None or hourly > best[0]:
            best = (hourly, basis, name, nodes)
    if best is None or best[3] == 0:
        return None
    _, basis, name, nodes = best
    top = min(nodes, MAX_TABLE_SIZE)
    prices = tuple(
        0.0 if n == 0 else price_one(AcceleratorUse(Cloud.AWS, name, n, bound.purchase), region)[0]
        for n in range(top + 1)
    )
    span = HourlyRange(
        minimum=0.0,
        expected=prices[1],
        maximum=prices[top],
        min_size=0,
        max_size=top,
        expected_size=1.0,
        expected_basis=(
            "one node, the least it runs while it serves: Karpenter launches nodes for pending pods, "
            f"which the plan cannot see; give {HOURS_AT_SIZE} in a --usage-file"
        ),
        size_prices=prices,
    )
    head = (
        f"Karpenter NodePool, 0 nodes until pods are pending, up to its limits ({bound.limits}); "
        f"the dearest fill is {basis}"
    )
    return span, f"{head}; {span.describe()}"


def karpenter_types(resources: Sequence[Any]) -> list[Any]:
    """The Karpenter NodePools among resources (kept apart: the accelerator readers skip them)."""
    from inference_infra.components.resources.types import K8S_NODE_POOLS, K8S_PROVISIONER

    return [r for r in resources if r.type in K8S_NODE_POOLS or r.type == K8S_PROVISIONER]
