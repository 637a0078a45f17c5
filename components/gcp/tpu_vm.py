"""TpuVm: a Cloud TPU VM slice (v5e, v5p, v6e; v4 too) that serves a model.

The slice is named by its accelerator type (`v5litepod-8`) or by generation
and topology (`v5e` + `2x4`); either is checked against the catalog, and the
runtime (software) version against the generation, so a v5e slice with a v4
runtime is an error before anything is created. The runtime defaults to the
generation's PyTorch/JAX base image. Given a `model` and no slice, the
capacity planner picks the cheapest single-host slice that holds it.

Capacity, in the vocabulary every fleet shares (`components.fleet`): a TpuVm
is one slice, bought one way: `on_demand=1`, `spot=1`, `preemptible=1` (the
older form of spot, 24-hour limit) or `reserved=1` (from a TPU reservation
of the project), or `count=1` along `capacity_order`. With no count at all it
is one on-demand slice. With `queued=True` the slice is requested as a queued
resource (`tpu.V2QueuedResource`) that waits in line for capacity instead of
failing when none is free. The provider's queued resource (pulumi-gcp 10.x)
describes only the node's type, runtime and network, so a queued slice is
on-demand, runs as the project's default service account, without a boot
script, Shielded VM settings, labels or data disks: the component refuses
those inputs with `queued=True` rather than drop them, and asks for
`secure_boot=False` to accept the trade.

A direct slice runs as its own least-privilege service account with narrow
scopes, has no external IPs, blocks project-wide SSH keys, uses OS Login,
carries the cost labels, can attach data disks (read-only on multi-host
slices) and runs the same boot script as the GPU fleets (model cache mount,
weights fetched by their pinned manifests and verified and, with `model` and
`weights`, the engines it plans for itself on `serving_port`, +1, ...; no
local SSD on TPU VMs). As on GPU VMs, the engines run on a Docker bridge
network whose packets to the metadata server the node rejects, so they cannot
fetch the slice's service account token; they get the slice's description
(accelerator type, topology, bounds, worker) as environment instead
(`components/serving/tpu_env.py`). A model on a multi-host slice is refused
(see `multi_host_engine_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    accelerator,
    instance_types,
)
from inference_infra.components.catalog.placements import tpu_zone_problems
from inference_infra.components.catalog.tpu_runtimes import (
    TPU_SOFTWARE,
    TpuSoftware,
    runtime_problem,
    tpu_software,
    tpu_software_by_generation,
)
from inference_infra.components.endpoints.routing import EndpointPool
from inference_infra.components.errors import InputError, Problem, did_you_mean
from inference_infra.components.fleet import (
    COUNT_INPUTS,
    CapacityArgs,
    CapacityCounts,
    CapacityMode,
)
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import CapacityOffer, FleetPlan, MachineQuery, ScalingInputs
from inference_infra.components.gcp.fleet_common import (
    GcpNode,
    GcpNodeProfile,
    GcsWeights,
    api_key_secret_id,
    capacity_mode_alias,
    endpoint_pool_of,
    gcp_place_problems,
    ingress_problems,
    metrics_port_range,
    node_input_problems,
    node_labels,
    node_startup,
)
from inference_infra.components.gcp.names import zone_problems
from inference_infra.components.gcp.service_account import node_identity, node_scopes
from inference_infra.components.gcp.startup import (
    StartupConfig,
    node_metadata,
    render_startup_script,
)
from inference_infra.components.gcp.tpu_vm_args import TpuDataDisk, TpuVmArgs
from inference_infra.components.serving import EngineConfig, EngineFamily, engine_image
from inference_infra.components.serving.tpu_env import TpuHost

# Why a queued slice is on-demand only, and refuses what a direct slice takes.
QUEUED_WHY = "cannot be set on a queued resource (pulumi-gcp's V2QueuedResource has no field for it)"
QUEUED_MODES = {
    mode: "a queued slice is on-demand: pulumi-gcp's V2QueuedResource node has no field for spot, "
    "preemptible or reserved scheduling; drop queued for a direct slice"
    for mode in (CapacityMode.SPOT, CapacityMode.PREEMPTIBLE, CapacityMode.RESERVED)
}
# A TpuVm with no count at all is one on-demand slice.
DEFAULT_CAPACITY = CapacityArgs(on_demand=1)


# `TpuScheduling`, the previous release's name of `components.fleet.CapacityMode`, warns and names it.
__getattr__ = capacity_mode_alias(__name__, "TpuScheduling")


@dataclass(frozen=True)
class TpuSlice:
    """The slice a TpuVm asks for, resolved from the catalog."""

    item: InstanceType  # catalog entry (name = accelerator type)
    software: TpuSoftware
    runtime_version: str

    @property
    def multi_host(self) -> bool:
        return self.item.hosts > 1


TpuVmPlan = FleetPlan  # the previous release's name (one release): the one fleet plan


def _tpu_slices() -> list[InstanceType]:
    return [
        i
        for i in instance_types(Cloud.GCP)
        if accelerator(i.accelerator).family is AcceleratorFamily.GOOGLE_TPU
    ]


def resolve_slice(args: TpuVmArgs, named: str | None = None) -> tuple[TpuSlice | None, list[Problem]]:
    """The slice from the catalog (`named`: the planner's pick when the args name none), or its problems."""
    slices = _tpu_slices()
    accelerator_type = named or args.accelerator_type
    by_topology = args.generation is not None or args.topology is not None
    if (accelerator_type is None) == (not by_topology):
        return None, [
            Problem(
                "accelerator_type",
                accelerator_type,
                "give either accelerator_type (e.g. 'v5litepod-8') or generation and topology, not both"
                if by_topology
                else "is required unless model is set (or give generation and topology)",
            )
        ]
    if accelerator_type is not None:
        item = next((s for s in slices if s.name == accelerator_type), None)
        if item is None:
            names = [s.name for s in slices]
            return None, [
                Problem(
                    "accelerator_type",
                    accelerator_type,
                    f"is not a TPU slice in the catalog{did_you_mean(accelerator_type, names)}",
                )
            ]
        software = tpu_software(item.accelerator)
    else:
        software = tpu_software_by_generation(args.generation or "")
        if software is None:
            known = ", ".join(s.generation for s in TPU_SOFTWARE)
            return None, [Problem("generation", args.generation, f"must be one of {known}")]
        candidates = [s for s in slices if s.accelerator == software.accelerator]
        item = next((s for s in candidates if s.tpu_topology == args.topology), None)
        if item is None:
            allowed = ", ".join(f"{s.tpu_topology} ({s.name})" for s in candidates)
            return None, [
                Problem(
                    "topology", args.topology, f"is not a {software.generation} topology; one of {allowed}"
                )
            ]
    if software is None:  # a catalog TPU without a software row
        return None, [
            Problem("accelerator_type", item.name, "has no runtime table; add it to tpu_runtimes.py")
        ]
    runtime = args.runtime_version or software.default_runtime
    tpu = TpuSlice(item=item, software=software, runtime_version=runtime)
    why = runtime_problem(software, runtime, multi_host=tpu.multi_host)
    problems = [] if why is None else [Problem("runtime_version", runtime, why)]
    return tpu, problems


def single_host_slices(item: InstanceType) -> list[str]:
    """The slices of the same TPU generation that fit on one host (those that can serve a model)."""
    return [s.name for s in _tpu_slices() if s.accelerator == item.accelerator and s.hosts == 1]


def multi_host_engine_problem(key: str, model: str, item: InstanceType) -> Problem:
    """A model on a multi-host slice is refused: the pinned vLLM TPU build has no supported mode for it."""
    image = engine_image(EngineFamily.TPU_VLLM)
    return Problem(
        key,
        model,
        f"cannot be served on {item.name}, a slice of {item.hosts} hosts: the pinned vLLM TPU build "
        f"({image.repository}, vLLM {image.engine_version} with vllm-project/tpu-inference) serves one model "
        "across hosts only as a Ray cluster (`ray start --head` on one host, the others joining it, then "
        "`vllm serve --tensor-parallel-size <all chips>` on the head), which tpu-inference scripts for "
        "TPU v7x only (scripts/multihost/run_cluster.sh, .buildkite/scripts/run_multihost.sh) and whose "
        "release feature table lists multi-host as failing or untested (README, 2026-08-20); the stack "
        "does not render an unsupported mode. Serve the model on a single-host slice "
        f"({', '.join(single_host_slices(item))}), or leave the model unset so the slice boots and caches "
        "the weights without an engine",
    )


def _capacity_offer(args: TpuVmArgs) -> CapacityOffer:
    """One slice, bought one way; with no count at all, one on-demand slice."""
    given = args.count is not None or any(getattr(args, n) for n in COUNT_INPUTS.values())
    return CapacityOffer(
        inputs=args if given else DEFAULT_CAPACITY,
        supported=(CapacityMode.ON_DEMAND,) if args.queued else tuple(CapacityMode),
        why_not=QUEUED_MODES if args.queued else {},
        most=1,
        most_why="must be one slice: a TpuVm is one slice (make one TpuVm per slice)",
    )


def _slice_query(args: TpuVmArgs, counts: CapacityCounts, zone: str | None) -> MachineQuery | None:
    """What the planner is asked for the model's slice; None without a model (resolve_slice alone)."""
    if args.model is None:
        return None
    named = args.accelerator_type
    if named is None and (args.generation is not None or args.topology is not None):
        found, _ = resolve_slice(args)
        if found is None:
            return None  # resolve_slice names the bad generation or topology
        named = found.item.name
    return MachineQuery(
        named,
        spot_only=bool(counts.modes())
        and set(counts.modes()) <= {CapacityMode.SPOT, CapacityMode.PREEMPTIBLE},
        max_hosts=1,  # a served model runs on one host: the pinned vLLM TPU build serves no multi-host slice
        region=zone.rsplit("-", 1)[0] if zone else None,  # priced where the slice runs (#35)
    )


# TPU pools stay fixed. A TPU VM is not a Compute Engine instance, so it cannot join a managed instance
# group and no autoscaler drives it; the one way to change a slice count is to create and delete slices
# (or queued resources) from outside. A schedule of queued resources would give timed sizes, but a
# queued slice waits for capacity for as long as it takes, runs as the project's default service
# account (components/gcp/tpu_vm.py, queued) and, at best, starts a whole slice after a multi-minute
# provisioning plus the weights' cold start: no load-following, and a morning start that may never
# come. A TPU slice is also the unit of a model's tensor parallelism, so a pool of one slice has no
# size between itself and zero. The elastic GPU pools (managed instance groups) carry the varying load.
TPU_NOT_ELASTIC = (
    "is not offered on TPU VMs: a TPU VM cannot join a managed instance group, so no autoscaler can size "
    "it; TPU pools stay fixed at their counts. Put the traffic that varies on an elastic GPU fleet "
    "(GpuFleet with elastic) and leave elastic unset here"
)


@dataclass(frozen=True)
class GcpTpuProfile(GcpNodeProfile):
    """What TPU VMs contribute to the one fleet skeleton (components/fleet/plan.py): one capacity mode per
    slice (spot, on-demand or reserved), slice resolution (accelerator type, or generation and topology,
    or the planner's pick), queued resources, GCS weights, no elastic scaling, the startup script.
    `project` and `default_zone` come from GcpNodeProfile."""

    name: str = "gcp-tpu"
    family: AcceleratorFamily = AcceleratorFamily.GOOGLE_TPU
    default_mode: CapacityMode = CapacityMode.ON_DEMAND
    machine_key: str = "accelerator_type"

    def subject(self, name: str) -> str:
        return f"TpuVm {name!r}"

    def input_problems(self, name: str, args: TpuVmArgs, zone: str | None) -> list[Problem]:
        problems = gcp_place_problems(name, zone, self.project)
        if args.network is None:
            problems.append(Problem("network", None, "is required: the VPC of the slice's subnetwork"))
        if args.elastic is not None:
            problems.append(Problem("elastic", "set", TPU_NOT_ELASTIC))
        problems += ingress_problems(args)
        problems += node_input_problems(args)
        if args.queued:
            problems += _queued_problems(args)
        return problems

    def capacity_offer(self, args: TpuVmArgs) -> CapacityOffer:
        return _capacity_offer(args)

    def machine_query(self, args: TpuVmArgs, counts: CapacityCounts, zone: str | None) -> MachineQuery | None:
        return _slice_query(args, counts, zone)

    def resolve(
        self, args: TpuVmArgs, machine: str | None, planned: bool
    ) -> tuple[str | None, Any, list[Problem]]:
        tpu, problems = resolve_slice(args, machine if planned else None)
        return (tpu.item.name if tpu is not None else None), tpu, problems

    def reservation_problems(
        self, args: TpuVmArgs, counts: CapacityCounts, zone: str | None, machine: str | None
    ) -> list[Problem]:
        return []  # a reserved slice consumes the project's TPU reservation in its zone (no spec)

    def node_machine(
        self, args: TpuVmArgs, machine: str | None, shape: Any, problems: list[Problem]
    ) -> str | None:
        if shape is None or args.queued:
            return None  # a queued slice runs no boot script
        if shape.multi_host and (args.model is not None or args.engines is not None):
            return None  # a multi-host slice serves no model (checks says why); without one it boots
        return shape.item.name

    def checks(self, name: str, args: TpuVmArgs, plan: FleetPlan) -> list[Problem]:
        tpu = plan.shape
        if tpu is None:
            return []
        problems = _disk_problems(args, tpu)
        if plan.zone and not zone_problems("zone", plan.zone):  # offered there (catalog/placements.py)
            problems += tpu_zone_problems("zone", plan.zone, tpu.item.name, tpu.item.accelerator)
        if tpu.multi_host and args.model is not None:
            problems.append(multi_host_engine_problem("model", args.model.name, tpu.item))
        elif tpu.multi_host and args.engines is not None:
            problems.append(multi_host_engine_problem("engines", args.engines.served_model_name, tpu.item))
        return problems

    def scaling_inputs(self, args: TpuVmArgs, plan: FleetPlan) -> ScalingInputs:
        return ScalingInputs()  # never reached: elastic is refused (TPU_NOT_ELASTIC)

    def scaler(self, name: str, args: TpuVmArgs, plan: FleetPlan) -> tuple[Any, list[str]]:
        return None, []

    def startup(self, name: str, args: TpuVmArgs, plan: FleetPlan) -> StartupConfig | None:
        if plan.machine is None:
            return None
        return _startup_config(name, args, plan.engines, plan.machine)

    def notes(self, name: str, args: TpuVmArgs, plan: FleetPlan) -> list[str]:
        return []


def plan_tpu_vm(name: str, args: TpuVmArgs, *, project: str | None, zone: str | None = None) -> FleetPlan:
    """The previous release's name (one release): `components.fleet.plan.plan_fleet` with the TPU profile."""
    return fleet_plan.plan_fleet(name, args, GcpTpuProfile(project, zone))


def validate_tpu_vm(
    name: str, args: TpuVmArgs, *, project: str | None, zone: str | None = None
) -> list[Problem]:
    """Every problem with a slice's input, found before any resource is registered."""
    return list(plan_tpu_vm(name, args, project=project, zone=zone).problems)


def _startup_config(
    name: str, args: TpuVmArgs, engines: EngineConfig | None, accelerator_type: str
) -> StartupConfig:
    return node_startup(
        name,
        args,
        engines,
        ops_agent=False,  # TPU metrics reach Cloud Monitoring without an agent
        # The engines' containers get the slice as environment: they cannot reach the metadata server.
        tpu=TpuHost(accelerator_type=accelerator_type, node_name=name) if engines is not None else None,
    )


def _queued_problems(args: TpuVmArgs) -> list[Problem]:
    problems = []
    for input_name, value in (
        ("data_disks", list(args.data_disks)),
        ("weights", args.weights),
        ("tags", dict(args.tags)),
        ("client_cidr_blocks", list(args.client_cidr_blocks)),
        ("monitoring_cidr_blocks", list(args.monitoring_cidr_blocks)),
    ):
        if value:
            problems.append(Problem(input_name, value, QUEUED_WHY))
    if args.model is not None:
        problems.append(
            Problem(
                "model", args.model.name, f"{QUEUED_WHY}: a queued slice runs no boot script, so no engine"
            )
        )
    if args.engines is not None:
        problems.append(Problem("engines", args.engines.served_model_name, QUEUED_WHY))
    if args.model_cache_nfs is not None:
        problems.append(Problem("model_cache_nfs", "(set)", QUEUED_WHY))
    if args.kms_key is not None:
        problems.append(Problem("kms_key", "(set)", QUEUED_WHY))
    if args.auto_shutdown is not None:
        problems.append(Problem("auto_shutdown", args.auto_shutdown, QUEUED_WHY))
    if args.image_mirrors:
        problems.append(
            Problem(
                "image_mirrors",
                dict(args.image_mirrors),
                "cannot be used on a queued resource (it runs no boot script and no engine)",
            )
        )
    reason = (args.accept_default_service_account or "").strip()
    if len(reason) < 10:
        problems.append(
            Problem(
                "accept_default_service_account",
                args.accept_default_service_account,
                "must give the reason (10+ characters) for running a queued slice as the project's Compute "
                "Engine default service account, which pulumi-gcp's V2QueuedResource cannot replace with "
                "the fleet's own least-privilege account; or drop queued for a direct slice",
            )
        )
    if args.secure_boot:
        problems.append(
            Problem(
                "secure_boot",
                True,
                f"{QUEUED_WHY}; set secure_boot=False to accept a queued slice without Secure Boot",
            )
        )
    return problems


def _disk_problems(args: TpuVmArgs, tpu: TpuSlice) -> list[Problem]:
    problems = []
    allowed = tpu.software.data_disk_types
    if len(args.data_disks) > tpu.software.max_disks - 1:
        problems.append(
            Problem(
                "data_disks",
                len(args.data_disks),
                f"is too many for TPU {tpu.software.generation}: at most {tpu.software.max_disks - 1}",
            )
        )
    for i, disk in enumerate(args.data_disks):
        where = f"data_disks[{i}]"  # size_gib within its arg() bounds: check_types (the skeleton's step 0)
        if disk.disk_type is not None and disk.disk_type not in allowed:
            problems.append(
                Problem(
                    f"{where}.disk_type",
                    disk.disk_type,
                    f"is not attachable to TPU {tpu.software.generation}; one of {', '.join(allowed)}",
                )
            )
        if tpu.multi_host and not disk.read_only:
            problems.append(
                Problem(
                    f"{where}.read_only",
                    False,
                    f"must be True: {tpu.item.name} has {tpu.item.hosts} hosts, "
                    "which share data disks read-only",
                )
            )
    return problems


def _scheduling(mode: CapacityMode) -> gcp.tpu.V2VmSchedulingConfigArgs | None:
    if mode is CapacityMode.SPOT:
        return gcp.tpu.V2VmSchedulingConfigArgs(spot=True)
    if mode is CapacityMode.PREEMPTIBLE:
        return gcp.tpu.V2VmSchedulingConfigArgs(preemptible=True)
    if mode is CapacityMode.RESERVED:
        return gcp.tpu.V2VmSchedulingConfigArgs(reserved=True)
    return None


class TpuVm(GcpNode):
    """A Cloud TPU VM slice, created directly or through a queued resource, that serves a model."""

    vm: gcp.tpu.V2Vm | None
    queued_resource: gcp.tpu.V2QueuedResource | None
    service_account_email: pulumi.Output[str] | None
    accelerator_type: str  # as given, or the capacity planner's pick for the model
    runtime_version: str

    def __init__(
        self,
        name: str,
        args: TpuVmArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        plan: FleetPlan | None = None,
    ) -> None:
        """`plan`: the fleet's plan made already from these args (a stack that keeps its plans, made
        with stand-ins for the network's ids); its node boot is rendered again from the real args."""
        project = self._begin("TpuVm", name, args, plan, GcpTpuProfile, opts)
        plan = self.plan
        tpu = plan.tpu
        assert tpu is not None  # validated above
        assert plan.zone is not None
        self.accelerator_type = tpu.item.name
        self.runtime_version = tpu.runtime_version
        self.vm = None
        self.queued_resource = None
        self.service_account_email = None
        if args.queued:
            self.queued_resource = self._queued(name, args, tpu, plan.zone, project)
            outputs = {"queued_resource": self.queued_resource.name}
        else:
            self.vm = self._vm(name, args, plan, tpu, project)
            outputs = {"tpu_name": self.vm.name, "service_account_email": self.service_account_email}
        self.register_outputs(
            {**outputs, "accelerator_type": self.accelerator_type, "runtime_version": self.runtime_version}
        )

    def endpoint_pool(self, name: str | None = None) -> EndpointPool:
        """This slice as a GcpInferenceEndpoint pool: its model, engine ports, address, zone and account.

        `name` (default: the slice's name) is the pool's name in routes and the X-Model-Pool header.
        """
        from inference_infra.components.gcp.endpoint import GcpPoolBackend

        if self.engines is None or self.vm is None:
            why = (
                "is a queued slice, whose node address the queued resource does not report"
                if self.vm is None
                else "serves no model: give it model and weights=GcsWeights(...)"
            )
            raise InputError(f"TpuVm {self._name!r} {why}; it cannot be an endpoint pool")
        address = self.vm.network_endpoints.apply(lambda eps: eps[0].ip_address if eps else "")
        backend = GcpPoolBackend(
            zone=self.zone, tpu_ips=[address], service_account_email=self.service_account_email
        )
        return endpoint_pool_of(name or self._name, self.engines, self.cold_start, backend)

    def _queued(
        self, name: str, args: TpuVmArgs, tpu: TpuSlice, zone: str, project: str
    ) -> gcp.tpu.V2QueuedResource:
        return gcp.tpu.V2QueuedResource(
            f"{name}-queued",
            zone=zone,
            tpu=gcp.tpu.V2QueuedResourceTpuArgs(
                node_specs=[
                    gcp.tpu.V2QueuedResourceTpuNodeSpecArgs(
                        parent=f"projects/{project}/locations/{zone}",
                        node_id=name,
                        node=gcp.tpu.V2QueuedResourceTpuNodeSpecNodeArgs(
                            accelerator_type=tpu.item.name,
                            runtime_version=tpu.runtime_version,
                            description=f"inference-infra TPU {name} (queued)",
                            network_config=gcp.tpu.V2QueuedResourceTpuNodeSpecNodeNetworkConfigArgs(
                                network=args.network,
                                subnetwork=args.subnetwork,
                                enable_external_ips=False,
                                can_ip_forward=False,
                            ),
                        ),
                    )
                ]
            ),
            project=project,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _vm(self, name: str, args: TpuVmArgs, plan: TpuVmPlan, tpu: TpuSlice, project: str) -> gcp.tpu.V2Vm:
        child = pulumi.ResourceOptions(parent=self)
        identity = node_identity(
            name,
            project=project,
            model_bucket=args.weight_bucket,
            description=f"TPU {name}: writes logs and metrics, reads the model bucket",
            parent=self,
            model_uris=args.weight_uris,
            api_key_secret=api_key_secret_id(name, args, project) if self._serves(args) else None,
        )
        self.service_account_email = identity.email
        disks = [
            gcp.compute.Disk(
                f"{name}-data-{i}",
                zone=plan.zone,
                size=disk.size_gib,
                type=disk.disk_type or tpu.software.data_disk_types[0],
                disk_encryption_key=(
                    gcp.compute.DiskDiskEncryptionKeyArgs(kms_key_self_link=args.kms_key)
                    if args.kms_key is not None
                    else None
                ),
                labels={"component": "tpu-vm", "tpu": name},
                project=project,
                opts=child,
            )
            for i, disk in enumerate(args.data_disks)
        ]
        self._firewalls(name, args, identity.email, project)
        by_type = args.accelerator_type is not None or plan.planned_slice
        assert plan.startup is not None
        script = render_startup_script(plan.startup)
        labels = node_labels(args, self.mode, component="tpu-vm", tpu=name)
        return gcp.tpu.V2Vm(
            f"{name}-tpu",
            zone=plan.zone,
            description=f"inference-infra TPU {name}",
            accelerator_type=tpu.item.name if by_type else None,
            accelerator_config=(
                None
                if by_type
                else gcp.tpu.V2VmAcceleratorConfigArgs(type=tpu.software.config_type, topology=args.topology)
            ),
            runtime_version=tpu.runtime_version,
            network_config=gcp.tpu.V2VmNetworkConfigArgs(
                network=args.network,
                subnetwork=args.subnetwork,
                enable_external_ips=False,
                can_ip_forward=False,
            ),
            scheduling_config=_scheduling(self.mode),
            service_account=gcp.tpu.V2VmServiceAccountArgs(
                email=identity.email, scopes=node_scopes(api_key=self._serves(args))
            ),
            shielded_instance_config=gcp.tpu.V2VmShieldedInstanceConfigArgs(
                enable_secure_boot=args.secure_boot
            ),
            metadata=node_metadata(script, model_cache_nfs=args.model_cache_nfs),
            data_disks=[
                gcp.tpu.V2VmDataDiskArgs(
                    source_disk=d.id, mode="READ_ONLY" if spec.read_only else "READ_WRITE"
                )
                for d, spec in zip(disks, args.data_disks, strict=True)
            ],
            labels=labels,
            project=project,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(identity.grants)),
        )

    def _firewalls(self, name: str, args: TpuVmArgs, email: pulumi.Output[str], project: str) -> None:
        """Who may call and scrape the slice's engines (a slice without engines opens nothing)."""
        if self.engines is None:
            return
        if args.monitoring_cidr_blocks:
            gcp.compute.Firewall(
                f"{name}-metrics",
                network=args.network,
                description=f"Engine metrics of TPU {name}, from the monitoring cluster only",
                direction="INGRESS",
                source_ranges=list(args.monitoring_cidr_blocks),
                allows=[
                    gcp.compute.FirewallAllowArgs(
                        protocol="tcp", ports=metrics_port_range(self.engines, args.serving_port)
                    )
                ],
                target_service_accounts=[email],
                log_config=gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA"),
                project=project,
                # The reference stack made this rule at the top of the stack before 0.2.0: the alias keeps
                # that resource (no replacement) now that the slice owns it.
                opts=pulumi.ResourceOptions(
                    parent=self, aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]
                ),
            )


__all__ = [
    "GcpTpuProfile",
    "GcsWeights",
    "TpuDataDisk",
    "TpuSlice",
    "TpuVm",
    "TpuVmArgs",
    "TpuVmPlan",
    "multi_host_engine_problem",
    "plan_tpu_vm",
    "resolve_slice",
    "single_host_slices",
    "validate_tpu_vm",
]
