"""One plan for every fleet: what a pool decided before it registers a resource (pure).

Every fleet (AWS GpuFleet and InferentiaFleet, GCP GpuFleet, TpuVm) is planned into one `FleetPlan`:
its machine, its machines per capacity mode, what each node serves (engines, ports, cold start), its
scaling, its node boot, its notes and its problems. `plan_fleet(name, args, profile)` is the one
skeleton: the steps every fleet shares run here once, in this order, and a `FleetProfile` contributes
what is the target's own (SkyPilot's shape: one common core, a small implementation per cloud):

0. the inputs' types and documented bounds (check_types' `type_problems`), for every target alike: a
   wrong type or a value above its `le` stops the plan; a value below its `ge` is reported with the
   rest (one message per input, in check_types' words) and the steps computing from it are skipped;
1. the name and the target's own inputs (`profile.input_problems`: name, zone, project, network...),
   the capacity counts against the modes the target sells and why not (`capacity_problems` on
   `profile.capacity_offer`; a refused count leaves the plan without machines, on every target);
2. the served model's checks (`served_model_problems`), once;
3. the machine (`choose_machine`): the capacity planner's pick, or the configured one checked for fit,
   asked as `profile.machine_query` says (prices, region, hosts); then the target resolves its shape
   (`profile.resolve`: catalog type, N1 guest GPUs, TPU slice) and checks its reservation
   (`profile.reservation_problems`);
4. the port rules (`serving_port_problems`: reserved ports 22, 9100 and 9400, the metrics-only range
   at port + 1000, the engines' ports), once;
5. the serving: `plan_serving` from the target's weight source (`profile.weight_source`, present when
   `profile.weights` says so), or the engines given the previous release's way, checked once
   (`given_engine_problems`);
6. the weights' inputs and pin (`profile.weights_problems`: S3 digest, GCS manifest pins);
7. the target's remaining checks (`profile.checks`), the scaling (`plan_scaling`, read by the target's
   scaler: `profile.scaler`) and the node boot (`profile.boot`).

A profile has no method named like a shared step and calls none (tests/components/fleet/test_plan.py
counts each shared step once per plan).

Cloud components only render a FleetPlan; every fleet exposes it as `.plan`, and the reference stack
keeps each fleet's plan (infra/) so that every consumer reads the same one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.errors import Problem
from inference_infra.components.fleet.capacity import (
    COUNT_INPUTS,
    CapacityCounts,
    CapacityInputs,
    CapacityMode,
    capacity_problems,
    machine_bound,
    machine_limit,
    resolve_counts,
)
from inference_infra.components.fleet.elastic import WARM_CACHE_READ_GIB_S, plan_scaling
from inference_infra.components.planner.wiring import Resolution
from inference_infra.components.serving.cold_start import ColdStart, WeightSource, with_precompiled
from inference_infra.components.serving.engines import further_port_problems, port_problems
from inference_infra.components.serving.flags import EngineConfig, validate_engine
from inference_infra.components.serving.model import (
    FleetServing,
    choose_machine,
    plan_serving,
    served_model_problems,
)
from inference_infra.components.validation import type_problems


@dataclass(frozen=True, kw_only=True)
class FleetPlan:
    """Everything one fleet decided before registering anything, or the problems that stop it."""

    target: str  # the profile's name: "aws-gpu", "aws-inferentia", "gcp-gpu", "gcp-tpu", "k8s-eks-gpu", ...
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
    capacity_refused: bool = False  # step 1 refused the counts: no machines planned, no pool sized from them

    @property
    def mode(self) -> CapacityMode:
        """The one way a single-mode fleet (GCP) buys its machines."""
        modes = self.counts.modes()
        return modes[0] if modes else self.default_mode

    @property
    def cold_start(self) -> ColdStart | None:
        return self.serving.cold_start if self.serving is not None else None

    @property
    def hosts_per_replica(self) -> int:
        """Machines one replica spans: its engine's pipeline-parallel stages (1 without engines)."""
        return self.engines.pipeline_parallel if self.engines is not None else 1

    @property
    def machines(self) -> int:
        """Machines the counts ask for: replicas times the machines one spans."""
        return self.counts.total * self.hosts_per_replica

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
        on_gcp = self.target.startswith(("gcp", "k8s-gke"))  # k8s targets: components/k8s/pool_profile.py
        return find_instance_type(self.machine, Cloud.GCP if on_gcp else Cloud.AWS)

    def with_problems(self, problems: Sequence[Problem]) -> FleetPlan:
        return replace(self, problems=tuple(problems))


@runtime_checkable
class FleetProfile(Protocol):
    """What one target contributes to `plan_fleet`: its own inputs, shapes, capacity, weights and boot.

    A profile has no method named like a shared step (tests/components/fleet/test_plan.py checks it):
    the skeleton runs those, once per plan, in one order.
    """

    name: str  # "aws-gpu", "aws-inferentia", "gcp-gpu", "gcp-tpu"
    cloud: Cloud
    family: AcceleratorFamily
    weight_source: WeightSource
    default_mode: CapacityMode  # the mode of a plan without counts
    machine_key: str  # the input naming the machine ("instance_type", "machine_type", "accelerator_type")

    def zone(self, args: Any) -> str | None:
        """The zone the fleet runs in (the args' own, else the provider's default); None on AWS."""
        ...

    def subject(self, name: str) -> str:
        """How the notes name the fleet."""
        ...

    def input_problems(self, name: str, args: Any, zone: str | None) -> list[Problem]:
        """The target's own input checks that need no machine (name, zone, project, network...)."""
        ...

    def capacity_offer(self, args: Any) -> CapacityOffer:
        """The counts to plan and the capacity modes the target sells for them (and why not the others);
        the skeleton checks them (`capacity_problems`) and resolves the counts."""
        ...

    def machine_query(self, args: Any, counts: CapacityCounts, zone: str | None) -> MachineQuery | None:
        """What the machine choice asks the planner; None: the target resolves its machine alone."""
        ...

    weights_rule: str  # why engines given the previous release's way need the target's weights

    def key(self, name: str) -> str:
        """The name of an input in the problems (a stack passes its config keys)."""
        ...

    def resolve(self, args: Any, machine: str | None, planned: bool) -> tuple[str | None, Any, list[Problem]]:
        """(machine, shape, problems): the machine's shape (GCP FleetShape, TpuSlice; None on AWS) from
        the machine chosen or checked (`planned`: the planner's pick), or what the args name."""
        ...

    def reservation_problems(
        self, args: Any, counts: CapacityCounts, zone: str | None, machine: str | None
    ) -> list[Problem]:
        """The reservation check: the reserved machines have a reservation that fits them."""
        ...

    def node_machine(self, args: Any, machine: str | None, shape: Any, problems: list[Problem]) -> str | None:
        """The machine a node serves on, or None when its nodes serve nothing (no engine planned)."""
        ...

    def weights(self, args: Any, subject: str) -> tuple[bool, str | None]:
        """(the node has the weights to serve, the note saying why not)."""
        ...

    def given_serving(self, args: Any, machine: str) -> FleetServing | None:
        """The serving of engines given the previous release's way (their cold start when known)."""
        ...

    def serving_notes(self, subject: str, serving: FleetServing | None) -> list[str]:
        """The notes of the planned serving (GCP: its cold start)."""
        ...

    def scaling_inputs(self, args: Any, plan: FleetPlan) -> ScalingInputs:
        """What `plan_scaling` needs from the target beyond the plan: warm pool, budget."""
        ...

    def notes(self, name: str, args: Any, plan: FleetPlan) -> list[str]:
        """The target's closing notes (GCP: no Ops Agent)."""
        ...

    def weights_problems(self, args: Any) -> list[Problem]:
        """The weights source's inputs and its pin (a SHA-256 manifest digest)."""
        ...

    def checks(self, name: str, args: Any, plan: FleetPlan) -> list[Problem]:
        """The target's remaining checks, on the planned machine and serving."""
        ...

    def scaler(self, name: str, args: Any, plan: FleetPlan) -> tuple[Any, list[str]]:
        """An elastic pool's scaling from `plan_scaling`'s ScalingPlan (the target's scaler), its notes."""
        ...

    def boot(self, name: str, args: Any, plan: FleetPlan) -> tuple[Any, list[Problem]]:
        """The node boot the target renders (GCP's StartupConfig; None on AWS) and its problems."""
        ...


@dataclass(frozen=True, kw_only=True)
class CapacityOffer:
    """What a target sells one fleet (`FleetProfile.capacity_offer`): the counts to plan (`inputs`, the
    args' own or the target's default), the modes it offers, why not the others, why it buys one mode
    only (None: it mixes them), the machines a reservation holds, and at most how many machines."""

    inputs: CapacityInputs
    supported: Collection[CapacityMode]
    why_not: Mapping[CapacityMode, str] = field(default_factory=dict)
    single_mode: str | None = None
    reservation_slots: int = 0
    most: int | None = None  # None: max_machines; else this many at most, with `most_why`
    most_why: str = ""


@dataclass(frozen=True)
class MachineQuery:
    """What a target asks the machine choice: the machine named, prices and the hosts a model may span."""

    named: str | None
    spot_only: bool = False
    region: str | None = None
    max_hosts: int | None = None
    # Machines one replica spans (None: the fewest up to max_replica_hosts that serve the model); 1 on
    # every VM fleet, which renders no multi-host engine (Kubernetes GPU pools: a LeaderWorkerSet group).
    hosts_per_replica: int | None = 1
    max_replica_hosts: int = 1


@dataclass(frozen=True)
class ScalingInputs:
    """What `plan_scaling` needs from a target beyond the plan: its warm pool and budget."""

    warm_pool: bool = False
    max_by_budget: int | None = None
    warm_read_gib_s: float = WARM_CACHE_READ_GIB_S  # a warm machine's weights read back (AWS: its gp3 volume)


def serving_port_problems(serving_port: int, engines: EngineConfig | None = None) -> list[Problem]:
    """The port rules every fleet applies to its serving_port, once: the first engine's port, then the
    node's further engines (see `serving.engines.port_problems`)."""
    problems = port_problems(serving_port, 1)
    if engines is not None and not problems:
        problems += further_port_problems(engines.first_port, engines.engines)
    return problems


def given_engine_problems(args: Any, weights_rule: str | None) -> list[Problem]:
    """The previous release's engines input, checked the same way on every target: the engine's own
    checks (its port by the port rules), not with a model, weights on the node, its first port."""
    engines: EngineConfig = args.engines
    problems = [
        Problem(f"engines.{p.input}", p.value, p.allowed)
        for p in validate_engine(engines)
        if p.input != "serving_port"  # the port rules say it once for every fleet
    ]
    if args.model is not None:
        problems.append(
            Problem(
                "engines",
                engines.served_model_name,
                "is the previous release's input: give model (the component plans the engines) or "
                "engines, not both",
            )
        )
    if weights_rule is not None:
        problems.append(Problem("engines", engines.served_model_name, weights_rule))
    if engines.first_port != args.serving_port:
        problems.append(
            Problem("engines.first_port", engines.first_port, f"must be serving_port {args.serving_port}")
        )
    return problems


def spot_share(counts: CapacityCounts) -> float | None:
    """The share of a mixed fleet's machines priced at the spot rate (spot and preemptible), for the
    planner to rank machines at the fleet's blended rate; None unless spot mixes with another mode
    (on-demand, reserved: the plan's cost table prices those at the on-demand rate)."""
    spare = counts.spot + counts.preemptible
    if counts.total == 0 or spare in (0, counts.total):
        return None
    return spare / counts.total


def plan_fleet(name: str, args: Any, profile: FleetProfile) -> FleetPlan:
    """The one planning skeleton of every fleet (see the module docstring): `profile` is the target's."""
    zone = profile.zone(args)
    subject = profile.subject(name)
    # 0. types and bounds (arg(ge=..., le=...)) of every input, nested ones too: a wrong type or a value
    # above its bound stops the plan; a value below its floor is reported with everything else, and the
    # steps that would compute from it are skipped (one message per input, check_types' words)
    blocking, floors = type_problems(args)
    if blocking:
        return FleetPlan(
            target=profile.name,
            machine=None,
            counts=CapacityCounts(),
            problems=tuple(_keyed(blocking, profile)),
            zone=zone,
            default_mode=profile.default_mode,
        )
    # 1. the name and the target's own inputs; the capacity against the modes it sells
    refused = {p.input for p in floors}
    problems = list(profile.input_problems(name, args, zone)) + floors
    counts, found = CapacityCounts(), []
    if not refused & CAPACITY_INPUTS:
        counts, found = _capacity(profile.capacity_offer(args))
    capacity_refused = bool(found) or bool(refused & CAPACITY_INPUTS)
    problems += found
    # 2. the served model, once
    model_problems: list[Problem] = [p for p in floors if p.input.startswith("model.")]
    if args.model is not None and not model_problems:
        model_problems = served_model_problems(args.model)
        problems += model_problems
    # 3. the machine: the planner's pick or the configured one checked for fit, then the target's shape
    notes: list[str] = []
    resolution, machine, shape, planned = None, None, None, False
    query = profile.machine_query(args, counts, zone) if not model_problems else None
    if query is not None:
        resolution = choose_machine(
            args.model,
            query.named,
            cloud=profile.cloud,
            family=profile.family,
            spot_only=query.spot_only,
            max_hosts=query.max_hosts,
            machine_key=profile.machine_key,
            model_key="model",
            region=query.region,
            spot_share=spot_share(counts),
            hosts_per_replica=query.hosts_per_replica,
            max_replica_hosts=query.max_replica_hosts,
        )
        problems += resolution.problems
        planned = resolution.choice is not None
        if resolution.note:
            notes.append(f"{subject}: {resolution.note}" if subject else resolution.note)
    shape_problems: list[Problem] = []
    if not model_problems and (resolution is None or not resolution.problems):
        named = resolution.instance_type if resolution is not None else None
        machine, shape, shape_problems = profile.resolve(args, named, planned)
        problems += shape_problems
    problems += profile.reservation_problems(args, counts, zone, machine)
    problems += _machine_bound_problems(args, counts, resolution)
    # 4. the port rules, once (the further engines' ports: plan_serving, or the engines given below)
    port = serving_port_problems(args.serving_port)
    problems += port
    # 5. the serving: plan_serving from the target's weight source, or the engines given
    node = profile.node_machine(args, machine, shape, shape_problems)
    hosts = resolution.hosts_per_replica if resolution is not None else 1
    serving, engines, found, found_notes = _serve(args, profile, node, subject, port_ok=not port, hosts=hosts)
    problems += found
    notes += found_notes
    # 6. the weights pin
    problems += profile.weights_problems(args)
    plan = FleetPlan(
        target=profile.name,
        machine=machine,
        counts=counts,
        serving=serving,
        engines=engines,
        zone=zone,
        shape=shape,
        resolution=resolution,
        planned=planned,
        default_mode=profile.default_mode,
        capacity_refused=capacity_refused,
    )
    # 7. the target's remaining checks, the scaling (plan_scaling) and the node boot
    problems += profile.checks(name, args, plan)
    scaling = None
    if not problems and args.elastic is not None and serving is not None and args.model is not None:
        inputs = profile.scaling_inputs(args, plan)
        scaling_plan = plan_scaling(
            args.elastic,
            peak=counts.total,
            serving=serving,
            model=args.model,
            machine=node,
            reserved=counts.reserved,
            max_by_budget=inputs.max_by_budget,
            warm_pool=inputs.warm_pool,
            warm_read_gib_s=inputs.warm_read_gib_s,
        )
        plan = replace(plan, scaling=scaling_plan)
        scaling, found_notes = profile.scaler(name, args, plan)
        notes += found_notes
    plan = replace(plan, scaling=scaling)
    boot, found = profile.boot(name, args, plan) if node is not None else (None, [])
    problems += found
    notes += profile.notes(name, args, plan)
    problems = _one_per_input(problems, floors)
    return replace(plan, boot=boot, notes=tuple(notes), problems=tuple(_keyed(problems, profile)))


def _machine_bound_problems(
    args: Any, counts: CapacityCounts, resolution: Resolution | None
) -> list[Problem]:
    """The fleet's `max_machines` (capacity_problems bounds the counts as given) against what the counts
    become: replicas times the hosts each spans, and the elastic pool's maximum and warm pool; the stack
    file applies the same bounds before anything is planned (infra/stack_bounds.py)."""
    limit = machine_limit(args)
    bound = machine_bound(limit)
    problems: list[Problem] = []
    hosts = resolution.hosts_per_replica if resolution is not None else 1
    if hosts > 1 and counts.total * hosts > limit:
        problems.append(
            Problem(
                "hosts_per_replica",
                hosts,
                f"makes {counts.total:,} replicas {counts.total * hosts:,} machines; {bound}",
            )
        )
    elastic = getattr(args, "elastic", None)
    for key in ("max_size", "warm_pool_size"):
        value = getattr(elastic, key, None) if elastic is not None else None
        if isinstance(value, int) and value > limit:
            problems.append(Problem(f"elastic.{key}", value, bound))
    return problems


def _one_per_input(problems: list[Problem], floors: list[Problem]) -> list[Problem]:
    """One message per input, as `validation.input_problems` keeps them: where a later check names an
    input below its floor again, its message (which says more: the port rules on serving_port 0); else
    check_types'. Within a nested input's section (elastic.min_size) no other problem is kept: the
    section's checks computed from the refused value."""
    others = [p for p in problems if p not in floors]
    named = {p.input for p in others}
    kept = [f for f in floors if f.input not in named]
    sections = tuple({f.input.rsplit(".", 1)[0] + "." for f in kept if "." in f.input})
    return [p for p in problems if p in kept or (p in others and not p.input.startswith(sections))]


# The capacity inputs (CapacityArgs): a floor refused among them leaves the plan without machines.
CAPACITY_INPUTS = frozenset({*COUNT_INPUTS.values(), "count", "max_spot", "max_machines"})


def _capacity(offer: CapacityOffer) -> tuple[CapacityCounts, list[Problem]]:
    """Step 1's capacity: the counts checked against what the target sells, then resolved; no machines
    at all when a count is refused (every target alike: nothing is planned from a refused count)."""
    problems = capacity_problems(
        offer.inputs,
        supported=offer.supported,
        why_not=offer.why_not,
        single_mode=offer.single_mode,
        reservation_slots=offer.reservation_slots,
    )
    if problems:
        return CapacityCounts(), problems
    counts, _ = resolve_counts(offer.inputs, offer.reservation_slots)
    if offer.most is not None and counts.total > offer.most:
        used = ", ".join(f"{COUNT_INPUTS[m]}={counts.of(m)}" for m in counts.modes())
        return CapacityCounts(), [Problem("capacity", used, offer.most_why)]
    return counts, []


def _serve(
    args: Any, profile: FleetProfile, node: str | None, subject: str, *, port_ok: bool, hosts: int = 1
) -> tuple[FleetServing | None, EngineConfig | None, list[Problem], list[str]]:
    """Step 5: (serving, engines, problems, notes) of a node of machine `node` (None: it serves nothing).

    The engines given the previous release's way are checked once (`given_engine_problems` and their
    further ports); a model is planned by `plan_serving` from the target's weight source when the node
    has the weights and the serving port is allowed (the port rules said why not)."""
    if node is None:
        return None, None, [], []
    has_weights, why_not = profile.weights(args, subject)
    if args.engines is not None:
        engines: EngineConfig = args.engines
        problems = given_engine_problems(args, None if has_weights else profile.weights_rule)
        problems += further_port_problems(engines.first_port, engines.engines)
        serving = profile.given_serving(args, node) if args.model is None else None
        return serving, engines, problems, []
    if args.model is None or not port_ok:
        return None, None, [], []
    if not has_weights:
        return None, None, [], [why_not] if why_not else []
    serving, problems = plan_serving(
        args.model,
        machine=node,
        cloud=profile.cloud,
        source=profile.weight_source,
        first_port=args.serving_port,
        families={profile.family},
        hosts_per_replica=hosts,
    )
    if serving is not None and serving.cold_start.neuron is not None:
        # Neuron: the cold start of the case the weights declare (precompiled artifacts or compile on node).
        precompiled = bool(getattr(args.weights, "neuron_precompiled", False))
        serving = replace(serving, cold_start=with_precompiled(serving.cold_start, precompiled))
    engines = serving.engines if serving is not None else None
    return serving, engines, problems, profile.serving_notes(subject, serving)


def _keyed(problems: Sequence[Problem], profile: FleetProfile) -> list[Problem]:
    """The problems named with the target's input names (a stack passes its config keys)."""
    return [Problem(profile.key(p.input), p.value, p.allowed) for p in problems]


__all__ = [
    "FleetPlan",
    "FleetProfile",
    "MachineQuery",
    "ScalingInputs",
    "given_engine_problems",
    "plan_fleet",
    "serving_port_problems",
]
