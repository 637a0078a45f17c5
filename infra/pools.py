"""A pool of the stack as its fleet planned it: the one FleetPlan the stack keeps for it.

The cloud parts plan each fleet once (`aws_stack.fleet_plans`, `gcp_stack.fleet_plans`) and build it
from that plan; `plans.planned_pools` hands the same plans to the endpoints and observability parts.
This module imports no part of the stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from inference_infra.components.fleet import FleetServing, ServedModel
    from inference_infra.components.fleet.plan import FleetPlan


@dataclass(frozen=True)
class PlannedPool:
    """A fleet of the stack (AWS GPU or Inferentia pool, GCP GPU fleet, TPU VM) as it plans itself."""

    name: str
    cloud: Literal["aws", "gcp"]
    accelerator: Literal["nvidia", "neuron", "tpu"]
    machine: str | None  # the configured machine or the planner's pick; None when it cannot plan
    nodes: int  # machines (slices) in every capacity mode
    serving: FleetServing | None  # what each node serves (engines, ports, cold start); None: nothing
    serves_model: bool  # the config gives the fleet a model (even if it cannot serve it yet)
    latency: str | None = None  # the serving SLO class (GPU and Inferentia pools)
    usd_per_million_tokens: float | None = None  # the planner's estimate, where it chose the machine
    model: ServedModel | None = None  # the model and traffic the fleet was planned for
    plan: FleetPlan | None = None  # the fleet's one plan, as the stack keeps it
    kubernetes: bool = False  # a KubernetesServingPool (scraped by its PodMonitor, not by EC2 discovery)
