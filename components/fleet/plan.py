"""One plan for every fleet: what a pool decided before it registers a resource (pure).

Every fleet (AWS GpuFleet and InferentiaFleet, GCP GpuFleet, TpuVm) is planned into one `FleetPlan`:
its machine, its machines per capacity mode, what each node serves (engines, ports, cold start), its
scaling, its node boot, its notes and its problems. `plan_fleet(name, args, profile)` is the one
skeleton: the steps every fleet shares run here once, in this order, and a `FleetProfile` contributes
what is the target's own (SkyPilot's shape: one common core, a small implementation per cloud):

1. the target's input checks (name, zone, project, types, network...): `profile.input_problems`;
2. the capacity counts, against the modes the target sells and why it does not sell the others;
3. the served model's checks, once;
4. the machine: the capacity planner's pick, or the configured one checked for fit; then the target
   resolves its shape (`profile.resolve`): catalog type, N1 guest GPUs, TPU slice;
5. the serving (`plan_serving`, from the target's weight source) and the port rules
   (`serving.engines.port_problems`: reserved ports 22, 9100 and 9400, the metrics-only range at
   port + 1000, the engines' ports), the weights pin;
6. the target's remaining checks, its scaling (`plan_scaling`) and its node boot: `profile.finish`.

Cloud components only render a FleetPlan; every fleet exposes it as `.plan`, and the reference stack
keeps each fleet's plan (infra/) so that every consumer reads the same one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from inference_infra.components.catalog import Cloud
from inference_infra.components.errors import Problem
from inference_infra.components.fleet.capacity import CapacityCounts, CapacityMode
from inference_infra.components.planner.wiring import Resolution
from inference_infra.components.serving.cold_start import ColdStart
from inference_infra.components.serving.engines import further_port_problems, port_problems
from inference_infra.components.serving.flags import EngineConfig
from inference_infra.components.serving.model import FleetServing


@dataclass(frozen=True, kw_only=True)
class FleetPlan:
    """Everything one fleet decided before registering anything, or the problems that stop it."""

    target: str  # the profile's name: "aws-gpu", "aws-inferentia", "gcp-gpu", "gcp-tpu"
    machine: str | None  # the configured machine or the planner's pick (a TPU slice's accelerator type)
    counts: CapacityCounts
    serving: FleetServing | None = None  # engines with their cold start (None: the node serves nothing)
    engines: EngineConfig | None = None  # serving.engines, or the deprecated engines input as given
    scaling: Any = None  # an elastic pool's ScalingPlan (AWS) or GcpScaling (its ScalingPlan in .plan)
    boot: Any = None  # the node boot the target renders (GCP's StartupConfig; AWS renders from the plan)
    notes: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    zone: str | None = None
    shape: Any = None  # the target's resolved machine shape: GCP FleetShape, TpuSlice (None on AWS)
    resolution: Resolution | None = None  # the planner's choice or fit check
    planned: bool = False  # the capacity planner chose the machine
    default_mode: CapacityMode = CapacityMode.SPOT  # the mode of a plan without counts
    node_problems: tuple[Problem, ...] = field(
        default=(), repr=False
    )  # the serving's own (GCP's NodeServing)

    @property
    def mode(self) -> CapacityMode:
        """The one way a single-mode fleet (GCP) buys its machines."""
        modes = self.counts.modes()
        return modes[0] if modes else self.default_mode

    @property
    def cold_start(self) -> ColdStart | None:
        return self.serving.cold_start if self.serving is not None else None

    @property
    def ports(self) -> tuple[int, int] | None:
        """First and last engine port (one per tensor-parallel group on a node); None without engines."""
        if self.engines is None:
            return None
        return self.engines.ports[0], self.engines.ports[-1]

    # The previous release's field names (one release): AWS instance_type, GCP machine_type, TPU tpu
    # and planned_slice, GCP startup.
    @property
    def instance_type(self) -> str | None:
        return self.machine

    @property
    def machine_type(self) -> str | None:
        return self.machine

    @property
    def tpu(self) -> Any:
        return self.shape

    @property
    def planned_slice(self) -> bool:
        return self.planned

    @property
    def startup(self) -> Any:
        return self.boot

    @property
    def item(self) -> Any:
        """The machine's catalog row (AWS instance types; GCP through its shape)."""
        from inference_infra.components.catalog import find_instance_type

        if self.machine is None:
            return None
        return find_instance_type(self.machine, Cloud.GCP if self.target.startswith("gcp") else Cloud.AWS)

    def with_problems(self, problems: Sequence[Problem]) -> FleetPlan:
        return replace(self, problems=tuple(problems))


@runtime_checkable
class FleetProfile(Protocol):
    """What one target contributes to `plan_fleet`: its own inputs, shapes, capacity and boot."""

    name: str

    def plan(self, name: str, args: Any) -> FleetPlan:
        """The target's whole plan, through the shared steps of this module."""
        ...


def serving_port_problems(serving_port: int, engines: EngineConfig | None = None) -> list[Problem]:
    """The port rules every fleet applies to its serving_port, once: the first engine's port, then the
    node's further engines (see `serving.engines.port_problems`)."""
    problems = port_problems(serving_port, 1)
    if engines is not None and not problems:
        problems += further_port_problems(engines.first_port, engines.engines)
    return problems


def plan_fleet(name: str, args: Any, profile: FleetProfile) -> FleetPlan:
    """The one planning skeleton of every fleet (see the module docstring): `profile` is the target's."""
    return profile.plan(name, args)


__all__ = ["FleetPlan", "FleetProfile", "plan_fleet", "serving_port_problems"]
