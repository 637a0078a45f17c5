"""The stack's pools as their fleets plan them from the config alone, before anything is registered.

The endpoints part checks its pools against what each fleet would serve, and the observability part
prices each pool and scrapes its engine ports, from the same plan the fleets make for themselves when
they are built (`aws_stack.planned_pools`, `gcp_stack.planned_pools`): the stack plans nothing of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from inference_infra.components.fleet import FleetServing, ServedModel
    from inference_infra.infra.config import StackSettings


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


def planned_pools(
    settings: StackSettings, clouds: frozenset[str] = frozenset({"aws", "gcp"})
) -> list[PlannedPool]:
    """Every pool of the stack's fleets in `clouds`, in config order (AWS first)."""
    pools: list[PlannedPool] = []
    if "aws" in clouds and (settings.aws_gpu_fleets or settings.aws_inferentia_fleets):
        from inference_infra.infra import aws_stack

        pools += aws_stack.planned_pools(settings)
    if "gcp" in clouds and (settings.gcp_gpu_fleets or settings.tpu_vms):
        from inference_infra.infra import gcp_stack

        pools += gcp_stack.planned_pools(settings)
    return pools
