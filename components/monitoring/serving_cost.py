"""Cost in the loop: live tokens per second, USD per million tokens and tokens per dollar per pool.

A pool's price is what the plan prices it at: its instance type's catalog
on-demand price (reference region) times its node count, rendered into the
rules as one constant series per pool. The planner's own estimate for the pool
(`inference-infra size`'s `usd_per_million_tokens`) is rendered beside it, so
the dashboard can put the measured figure next to the planned one.

Tokens are vLLM's generated tokens (`vllm:generation_tokens_total`), the figure
the planner's tokens/s estimate is about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inference_infra.components.catalog import instance_type
from inference_infra.components.errors import Problem
from inference_infra.components.monitoring.promql import num

COST_GROUP = "inference-infra-serving-cost"
POOL_PRICE_SERIES = "inference_infra:pool_price_usd_per_hour"
POOL_PLANNED_SERIES = "inference_infra:pool_planned_usd_per_million_tokens"
POOL_TOKENS_SERIES = "pool:vllm_generation_tokens:rate5m"
POOL_USD_PER_MTOK_SERIES = "pool:inference_infra_usd_per_million_tokens:rate5m"
POOL_TOKENS_PER_USD_SERIES = "pool:inference_infra_tokens_per_usd:rate5m"


@dataclass(frozen=True, kw_only=True)
class PoolCost:
    pool: str
    usd_per_hour: float  # the whole pool: per-node catalog price times nodes
    planned_usd_per_million_tokens: float | None = None  # the planner's estimate, when the plan has one
    basis: str = ""  # e.g. "2 x p5.48xlarge on-demand us-east-1 (catalog)"


def pool_cost(
    pool: str, cloud: str, type_name: str, nodes: int, planned_usd_per_million_tokens: float | None = None
) -> PoolCost:
    """A pool's price from the catalog's public lookup (reference region on-demand)."""
    item = instance_type(type_name, cloud)
    per_node = item.hourly_usd[item.reference_region]
    return PoolCost(
        pool=pool,
        usd_per_hour=per_node * nodes,
        planned_usd_per_million_tokens=planned_usd_per_million_tokens,
        basis=f"{nodes} x {type_name} on-demand {item.reference_region} (catalog)",
    )


def validate_pool_costs(pools: Sequence[PoolCost], where: str = "pool_costs") -> list[Problem]:
    problems: list[Problem] = []
    for p in pools:
        if not p.pool or '"' in p.pool or "\\" in p.pool:
            problems.append(Problem(f"{where}.pool", p.pool, "must be a pool name without quotes"))
        if (
            isinstance(p.usd_per_hour, bool)
            or not isinstance(p.usd_per_hour, (int, float))
            or p.usd_per_hour <= 0
        ):
            problems.append(Problem(f"{where}[{p.pool}].usd_per_hour", p.usd_per_hour, "must be above 0"))
        planned = p.planned_usd_per_million_tokens
        if planned is not None and (
            isinstance(planned, bool) or not isinstance(planned, (int, float)) or planned <= 0
        ):
            problems.append(
                Problem(f"{where}[{p.pool}].planned_usd_per_million_tokens", planned, "must be above 0")
            )
    return problems


def serving_cost_rules(pools: Sequence[PoolCost], engine_job: str = "vllm") -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for p in sorted(pools, key=lambda p: p.pool):
        rules.append(
            {
                "record": POOL_PRICE_SERIES,
                "expr": f"vector({num(p.usd_per_hour)})",
                "labels": {"pool": p.pool},
            }
        )
        if p.planned_usd_per_million_tokens is not None:
            rules.append(
                {
                    "record": POOL_PLANNED_SERIES,
                    "expr": f"vector({num(p.planned_usd_per_million_tokens)})",
                    "labels": {"pool": p.pool},
                }
            )
    rules.append(
        {
            "record": POOL_TOKENS_SERIES,
            "expr": f'sum by (pool) (rate(vllm:generation_tokens_total{{job="{engine_job}"}}[5m]))',
        }
    )
    # A pool that generated nothing has no cost per token (not infinity): `> 0` drops it.
    rules.append(
        {
            "record": POOL_USD_PER_MTOK_SERIES,
            "expr": f"{POOL_PRICE_SERIES}\n/ on (pool) (3600 * ({POOL_TOKENS_SERIES} > 0))\n* 1e6",
        }
    )
    rules.append(
        {
            "record": POOL_TOKENS_PER_USD_SERIES,
            "expr": f"3600 * {POOL_TOKENS_SERIES}\n/ on (pool) {POOL_PRICE_SERIES}",
        }
    )
    return rules
