"""GpuFleet (GCP): Compute Engine VMs with NVIDIA GPUs that serve a model.

A fleet is VMs of one machine type in one zone: an accelerator-optimized type
with its GPUs built in (a3, a2, g2), or an N1 type with GPUs attached
(`accelerator_type` + `accelerator_count`). Given a `model` (and no machine
type) the capacity planner picks the machine; with both it checks the fit.

Capacity, in the vocabulary every fleet shares (`components.fleet`): `spot=`,
`on_demand=` or `reserved=` VMs, or `count=` along `capacity_order`. A GCP
fleet buys all its VMs one way (see `SINGLE_MODE`):

- spot: Spot VMs, stopped (not deleted) when Compute Engine reclaims them;
- on-demand: standard VMs, which never eat a reservation (`NO_RESERVATION`);
- reserved: a specific reservation (`specific_reservation_required`, so
  nothing else eats it), made by the fleet (`reservation=GpuReservation()`)
  or made elsewhere (`GpuReservation(existing_name=...)`), consumed through
  reservation affinity. The reservation is billed whether the VMs run or not.

With `model` and `weights=GcsWeights(...)` the fleet plans its own engines
(`components.serving.model.plan_serving`: tensor-parallel groups on ports
`serving_port`, +1, ..., flags checked against the pinned vLLM, cold start)
and exposes them as `serving`, `engines` and `cold_start`; `endpoint_pool()`
hands them to a `GcpInferenceEndpoint`.

Every VM is a Shielded VM (Secure Boot, vTPM, integrity monitoring) without
an external IP, with project-wide SSH keys blocked and OS Login on, running
as the fleet's own least-privilege service account. Its boot script
(`startup.py`) stripes the local SSDs, mounts the model cache, fetches each
weights folder by its pinned manifest and verifies it (`inference-weights.service`),
starts the Ops Agent with GPU metrics (`ops_agent`), the host exporters and
the engines (bound to the verified weights, their API key read from Secret
Manager at start, on a bridge network that cannot reach the metadata server),
whose images come from an Artifact Registry mirror when `image_mirrors` names
one (the same digest; see `mirrors.py`). Only a load balancer reaches the
engines' API ports; the monitoring cluster reaches their metrics-only ports.
With `internet_egress=False` the fleet refuses itself unless that boot needs
nothing from the internet. The stack's cost labels come from the stack
transform; the fleet adds its own (`fleet`, `capacity`, and `auto-shutdown`
when set here) and `tags`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.catalog import (
    AcceleratorFamily,
    CatalogError,
    Cloud,
    accelerator,
    gcp_guest_accelerator,
    gcp_n1_machine,
    instance_type,
)
from inference_infra.components.catalog.gcp_n1_gpus import N1_GPU_LIMITS, n1_gpu_limits
from inference_infra.components.catalog.placements import gpu_zone_problems
from inference_infra.components.endpoints.routing import EndpointPool
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.fleet import (
    CapacityCounts,
    CapacityMode,
    ScalingPlan,
    elastic_problems,
)
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.gcp.elastic import (
    AUTOHEAL_INTERVAL_SECONDS,
    AUTOHEAL_UNHEALTHY_THRESHOLD,
    ENGINE_PORT_NAME,
    GcpScaling,
    LoadSignal,
    autoscaling_policy,
    elastic_gpu_problems,
    plan_gcp_scaling,
    region_of,
    reserved_zone_problems,
    retry_after_seconds,
)
from inference_infra.components.gcp.fleet_common import (
    HEALTH_CHECK_RANGES,
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
from inference_infra.components.gcp.gpu_fleet_args import DEFAULT_IMAGE as DEFAULT_IMAGE
from inference_infra.components.gcp.gpu_fleet_args import GpuFleetArgs, GpuReservation
from inference_infra.components.gcp.names import name_problems, zone_problems
from inference_infra.components.gcp.service_account import node_identity, node_scopes
from inference_infra.components.gcp.startup import (
    StartupConfig,
    node_metadata,
    render_startup_script,
)
from inference_infra.components.serving import HEALTH_PATH, EngineConfig
from inference_infra.components.serving.host_images import image_driver_problem

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
_N1_LOCAL_SSD_COUNTS = (*range(0, 9), 16, 24)
SUPPORTED_MODES = (CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND)
WHY_NOT = {
    CapacityMode.PREEMPTIBLE: "preemptible VMs are the older form of Spot VMs (the same discount, but "
    "stopped after 24 hours); use spot",
}
SINGLE_MODE = (
    "a GCP fleet's VMs carry one capacity label, which the serving alerts and cost reports group by, and "
    "Compute Engine does not fall back between provisioning models for plain VMs; make one GpuFleet per mode"
)


# `Capacity`, the previous release's name of `components.fleet.CapacityMode`, warns and names it.
__getattr__ = capacity_mode_alias(__name__, "Capacity")


@dataclass(frozen=True)
class FleetShape:
    """What one VM of the fleet carries, resolved from the catalog."""

    machine_type: str
    gpu_type: str  # GCE accelerator type
    gpus: int
    bundled_local_ssds: int
    guest: bool  # GPUs attached to an N1 VM (guest_accelerators) rather than built in


GpuFleetPlan = FleetPlan  # the previous release's name (one release): the one fleet plan


def reservation_slots(args: GpuFleetArgs) -> int:
    """VMs the reservation holds for `count`: its count, else the whole fleet (it is made to fit)."""
    if args.reservation is None:
        return 0
    return args.reservation.count if args.reservation.count is not None else (args.count or 0)


def resolve_shape(args: GpuFleetArgs, machine: str | None = None) -> tuple[FleetShape | None, list[Problem]]:
    """The fleet's machine shape from the catalog (`machine`: the planner's pick), or its problems."""
    machine = machine or args.machine_type
    if machine is None:
        return None, [Problem("machine_type", None, "is required unless model is set")]
    if machine.startswith("n1-"):
        return _n1_shape(args, machine)
    try:
        item = instance_type(machine, Cloud.GCP)
    except CatalogError as e:
        hint = str(e).removeprefix(f"unknown gcp accelerator instance type {machine!r}; ").rstrip(".")
        allowed = f"must be a GCP GPU machine type (a3/a2/g2) or n1-* with GPUs attached; {hint}"
        return None, [Problem("machine_type", machine, allowed)]
    device = accelerator(item.accelerator)
    if device.family is not AcceleratorFamily.NVIDIA_GPU:
        return None, [
            Problem(
                "machine_type", machine, "is a TPU slice; use inference_infra.components.gcp.TpuVm for TPUs"
            )
        ]
    problems = []
    built_in = device.gcp_accelerator_type or device.key
    if args.accelerator_type is not None and args.accelerator_type != built_in:
        problems.append(
            Problem(
                "accelerator_type",
                args.accelerator_type,
                f"does not match {machine}, which comes with {item.accelerator_count} x {built_in} "
                "(leave it unset)",
            )
        )
    if args.accelerator_count is not None and args.accelerator_count != item.accelerator_count:
        problems.append(
            Problem(
                "accelerator_count",
                args.accelerator_count,
                f"does not match {machine}, which has {item.accelerator_count} GPUs (leave it unset)",
            )
        )
    shape = FleetShape(machine, built_in, item.accelerator_count, item.local_nvme_disks, guest=False)
    return shape, problems


def _n1_shape(args: GpuFleetArgs, machine_type: str) -> tuple[FleetShape | None, list[Problem]]:
    problems = []
    try:
        machine = gcp_n1_machine(machine_type)
    except CatalogError as e:
        hint = str(e).removeprefix(f"unknown GCP N1 machine type {machine_type!r}; ").rstrip(".")
        return None, [Problem("machine_type", machine_type, f"is not an N1 machine type we know; {hint}")]
    known = ", ".join(row.accelerator_type for row in N1_GPU_LIMITS)
    if args.accelerator_type is None:
        return None, [
            Problem("accelerator_type", None, f"is required with an N1 machine type; one of {known}")
        ]
    limits = n1_gpu_limits(args.accelerator_type)
    try:
        gcp_guest_accelerator(args.accelerator_type)
    except CatalogError:
        limits = None
    if limits is None:
        return None, [
            Problem("accelerator_type", args.accelerator_type, f"is not an N1 GPU we know; one of {known}")
        ]
    gpus = args.accelerator_count if args.accelerator_count is not None else limits.counts[0]
    shape_limits = limits.shapes.get(gpus)
    if shape_limits is None:
        counts = ", ".join(map(str, limits.counts))
        problems.append(
            Problem(
                "accelerator_count", gpus, f"is not a valid count of {args.accelerator_type}: one of {counts}"
            )
        )
    elif machine.vcpus > shape_limits.max_vcpus or machine.memory_gib > shape_limits.max_memory_gb:
        problems.append(
            Problem(
                "machine_type",
                machine_type,
                f"is too large for {gpus} x {args.accelerator_type}: at most {shape_limits.max_vcpus} vCPUs "
                f"and {shape_limits.max_memory_gb} GB memory",
            )
        )
    return FleetShape(machine_type, args.accelerator_type, gpus, 0, guest=True), problems


@dataclass(frozen=True)
class GcpGpuProfile(GcpNodeProfile):
    """What GCP GPU fleets contribute to the one fleet skeleton (components/fleet/plan.py): one capacity
    mode per fleet (spot, preemptible, on-demand or reserved), machine shapes (a3/a2/g2, N1 with guest
    GPUs), the zonal reservation check, GCS weights, its managed-instance-group scaling and startup script.
    `project` and `default_zone` come from GcpNodeProfile."""

    name: str = "gcp-gpu"
    family: AcceleratorFamily = AcceleratorFamily.NVIDIA_GPU
    default_mode: CapacityMode = CapacityMode.SPOT
    machine_key: str = "machine_type"

    def subject(self, name: str) -> str:
        return f"GCP GpuFleet {name!r}"

    def input_problems(self, name: str, args: GpuFleetArgs, zone: str | None) -> list[Problem]:
        problems = gcp_place_problems(name, zone, self.project)
        problems += ingress_problems(args)
        problems += node_input_problems(args)
        return problems  # local_ssd_count's and boot_disk_size_gib's bounds: check_types (step 0)

    def capacity_offer(self, args: GpuFleetArgs) -> fleet_plan.CapacityOffer:
        return fleet_plan.CapacityOffer(
            inputs=args,
            supported=SUPPORTED_MODES,
            why_not=WHY_NOT,
            single_mode=SINGLE_MODE,
            reservation_slots=reservation_slots(args),
        )

    def machine_query(
        self, args: GpuFleetArgs, counts: CapacityCounts, zone: str | None
    ) -> fleet_plan.MachineQuery | None:
        return fleet_plan.MachineQuery(
            args.machine_type,
            spot_only=counts.modes() == [CapacityMode.SPOT],
            region=region_of(zone) if zone else None,  # priced where the fleet runs (#35)
        )

    def resolve(
        self, args: GpuFleetArgs, machine: str | None, planned: bool
    ) -> tuple[str | None, Any, list[Problem]]:
        if machine is None:
            return None, None, []  # the machine choice named the problem
        shape, problems = resolve_shape(args, machine)
        return machine, shape, problems

    def reservation_problems(
        self, args: GpuFleetArgs, counts: CapacityCounts, zone: str | None, machine: str | None
    ) -> list[Problem]:
        return _reservation_problems(args, counts, zone, machine)

    def node_machine(
        self, args: GpuFleetArgs, machine: str | None, shape: Any, problems: list[Problem]
    ) -> str | None:
        return shape.machine_type if shape is not None else None

    def checks(self, name: str, args: GpuFleetArgs, plan: FleetPlan) -> list[Problem]:
        counts, zone, shape = plan.counts, plan.zone, plan.shape
        problems = []
        if plan.machine is not None:  # offered where it is placed (catalog/placements.py)
            placed = [("zone", zone)] if zone else []
            for key, where in [*placed, *((f"zones[{i}]", z) for i, z in enumerate(args.zones))]:
                if isinstance(where, str) and not zone_problems(key, where):
                    problems += gpu_zone_problems(key, where, plan.machine)
        if args.elastic is None and args.zones:
            problems.append(Problem("zones", list(args.zones), "applies only to elastic pools (set elastic)"))
        if args.elastic is not None:
            if not plan.capacity_refused:  # a refused count already has its problem
                problems += elastic_problems(args.elastic, peak=counts.total, key="elastic")
            if args.elastic.warm_pool_size:
                problems.append(
                    Problem(
                        "elastic.warm_pool_size",
                        args.elastic.warm_pool_size,
                        "is not offered on GCP: a new VM fetches its weights at boot (local SSDs come back "
                        "empty), so a stopped VM would start no faster; leave it unset",
                    )
                )
            if counts.reserved:
                problems += reserved_zone_problems(tuple(args.zones), zone)
        if shape is None:
            return problems
        problems += _local_ssd_problems(args, shape)
        if plan.engines is not None and (why := image_driver_problem(args.image, plan.engines.family)):
            problems.append(Problem("image", args.image, why))
        if args.elastic is not None:
            problems += elastic_gpu_problems(
                engines=plan.engines,
                zone=zone,
                zones=tuple(args.zones),
                network=args.network,
                serves=plan.serving is not None and args.model is not None,
            )
        return problems

    def scaling_inputs(self, args: GpuFleetArgs, plan: FleetPlan) -> fleet_plan.ScalingInputs:
        # No warm pool on GCP (see elastic.warm_pool_size); the reserved VMs stay the floor (billed anyway).
        return fleet_plan.ScalingInputs(warm_pool=False)

    def scaler(self, name: str, args: GpuFleetArgs, plan: FleetPlan) -> tuple[Any, list[str]]:
        if plan.zone is None or plan.serving is None or args.model is None or plan.machine is None:
            return None, []
        subject = self.subject(name)
        scaling = plan_gcp_scaling(
            plan.scaling,
            serving=plan.serving,
            model=args.model,
            machine=plan.shape.machine_type,
            zone=plan.zone,
            zones=tuple(args.zones),
            ops_agent=args.ops_agent,
        )
        notes = [f"{subject}: {note}" for note in scaling.notes]
        notes.append(f"{subject}: {scaling.describe()}")
        return scaling, notes

    def startup(self, name: str, args: GpuFleetArgs, plan: FleetPlan) -> StartupConfig | None:
        if plan.shape is None:
            return None
        return _startup_config(name, args, plan.shape, plan.engines, plan.scaling)

    def notes(self, name: str, args: GpuFleetArgs, plan: FleetPlan) -> list[str]:
        if args.ops_agent:
            return []
        return [
            f"{self.subject(name)}: ops_agent False: no Ops Agent, so no GPU metrics "
            "(agent.googleapis.com/gpu) in Cloud Monitoring; the engines' /metrics stay for Prometheus"
        ]


def plan_gpu_fleet(
    name: str, args: GpuFleetArgs, *, project: str | None, zone: str | None = None
) -> FleetPlan:
    """The previous release's name (one release): `fleet.plan.plan_fleet` with GCP's GPU profile."""
    return fleet_plan.plan_fleet(name, args, GcpGpuProfile(project, zone))


def validate_gpu_fleet(
    name: str, args: GpuFleetArgs, *, project: str | None, zone: str | None = None
) -> list[Problem]:
    """Every problem with a fleet's input, found before any resource is registered."""
    return list(plan_gpu_fleet(name, args, project=project, zone=zone).problems)


def _local_ssd_problems(args: GpuFleetArgs, shape: FleetShape) -> list[Problem]:
    if args.local_ssd_count and shape.bundled_local_ssds:
        return [
            Problem(
                "local_ssd_count",
                args.local_ssd_count,
                f"must be 0: {shape.machine_type} comes with {shape.bundled_local_ssds} local SSDs of its "
                "own",
            )
        ]
    if shape.guest and args.local_ssd_count not in _N1_LOCAL_SSD_COUNTS:
        return [
            Problem("local_ssd_count", args.local_ssd_count, "must be 0-8, 16 or 24 on an N1 machine type")
        ]
    return []


def _reservation_problems(
    args: GpuFleetArgs, counts: CapacityCounts, zone: str | None, machine: str | None
) -> list[Problem]:
    if not counts.reserved:
        if args.reservation is not None and counts.total:
            why = (
                "cannot be used: Spot VMs never consume reservations"
                if counts.spot
                else "applies only to reserved VMs (on-demand VMs never consume one: NO_RESERVATION)"
            )
            given = {k: v for k, v in dataclasses.asdict(args.reservation).items() if v is not None}
            return [Problem("reservation", given, why)]
        return []
    spec = args.reservation
    if spec is None:
        return [
            Problem(
                "reserved",
                counts.reserved,
                "needs a reservation: reservation=GpuReservation() makes one for the fleet, "
                "GpuReservation(existing_name=...) consumes one made elsewhere",
            )
        ]
    problems = []
    if spec.zone is not None and zone is not None and spec.zone != zone:
        problems.append(
            Problem(
                "reservation.zone", spec.zone, f"must be the fleet's zone {zone!r}: a reservation is zonal"
            )
        )
    if spec.machine_type is not None and machine is not None and spec.machine_type != machine:
        problems.append(
            Problem(
                "reservation.machine_type",
                spec.machine_type,
                f"must be the fleet's machine type {machine!r}: VMs consume only a reservation of "
                "their own shape",
            )
        )
    if spec.count is not None and spec.count < counts.reserved:
        problems.append(
            Problem(
                "reservation.count",
                spec.count,
                f"must hold the whole fleet ({counts.reserved} VMs): VMs that name a full specific "
                "reservation do not start",
            )
        )
    if spec.existing_name is not None:
        problems += name_problems("reservation.existing_name", spec.existing_name, max_length=63)
    return problems


def _startup_config(
    name: str,
    args: GpuFleetArgs,
    shape: FleetShape,
    engines: EngineConfig | None,
    scaling: GcpScaling | None = None,
) -> StartupConfig:
    engine_load = scaling is not None and scaling.signal is LoadSignal.ENGINE_LOAD
    return node_startup(
        name,
        args,
        engines,
        local_ssd_count=shape.bundled_local_ssds + max(args.local_ssd_count, 0),
        ops_agent=args.ops_agent,
        gpu_metrics=args.ops_agent,
        host_exporters=True,  # the stack's Prometheus scrapes 9400 and 9100 (monitoring_cidr_blocks)
        gpu_exporter=True,
        engine_load_pool=name if engine_load else None,  # the group's name, which its autoscaler filters on
    )


def _template_scheduling(mode: CapacityMode) -> gcp.compute.InstanceTemplateSchedulingArgs:
    if mode is CapacityMode.SPOT:
        # In a managed instance group a preempted Spot VM is deleted and the group recreates it when
        # capacity returns (its target size is unchanged); a stopped VM would only hold its disk.
        return gcp.compute.InstanceTemplateSchedulingArgs(
            provisioning_model="SPOT",
            preemptible=True,
            automatic_restart=False,
            on_host_maintenance="TERMINATE",
            instance_termination_action="DELETE",
        )
    return gcp.compute.InstanceTemplateSchedulingArgs(
        provisioning_model="STANDARD",
        preemptible=False,
        automatic_restart=True,
        on_host_maintenance="TERMINATE",
    )


def _scheduling(mode: CapacityMode) -> gcp.compute.InstanceSchedulingArgs:
    if mode is CapacityMode.SPOT:
        return gcp.compute.InstanceSchedulingArgs(
            provisioning_model="SPOT",
            preemptible=True,
            automatic_restart=False,
            on_host_maintenance="TERMINATE",  # GPUs cannot live-migrate
            instance_termination_action="STOP",  # keep the disk; restart when capacity returns
        )
    return gcp.compute.InstanceSchedulingArgs(
        provisioning_model="STANDARD",
        preemptible=False,
        automatic_restart=True,
        on_host_maintenance="TERMINATE",
    )


class GpuFleet(GcpNode):
    """Compute Engine GPU VMs (spot, on-demand or reserved) that serve a model, with secure defaults."""

    instances: list[gcp.compute.Instance]
    reservation: gcp.compute.Reservation | None
    service_account_email: pulumi.Output[str]
    reservation_name: str | None
    internal_ips: pulumi.Output[list[str]]
    machine_type: str  # as given, or the capacity planner's pick for the model

    def __init__(
        self,
        name: str,
        args: GpuFleetArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        plan: FleetPlan | None = None,
    ) -> None:
        """`plan`: the fleet's plan made already from these args (a stack that keeps its plans, made
        with stand-ins for the network's ids); its node boot is rendered again from the real args."""
        project = self._begin("GpuFleet", name, args, plan, GcpGpuProfile, opts)
        plan = self.plan
        child = pulumi.ResourceOptions(parent=self)
        shape, startup = plan.shape, plan.startup
        assert shape is not None
        assert startup is not None
        assert plan.zone is not None
        self.machine_type = shape.machine_type

        identity = node_identity(
            name,
            project=project,
            model_bucket=args.weight_bucket,
            description=f"GPU fleet {name}: writes logs and metrics, reads the model bucket",
            parent=self,
            model_uris=args.weight_uris,
            api_key_secret=api_key_secret_id(name, args, project) if self._serves(args) else None,
            metrics=args.ops_agent,  # only the Ops Agent writes metrics (GPU, and an elastic pool's load)
        )
        self.service_account_email = identity.email
        self.reservation, self.reservation_name = self._reservation(name, args, plan, project, child)

        if args.monitoring_cidr_blocks:
            gcp.compute.Firewall(
                f"{name}-metrics",
                network=args.network,
                description=f"Metrics ports of GPU fleet {name}, from the monitoring cluster only",
                direction="INGRESS",
                source_ranges=list(args.monitoring_cidr_blocks),
                allows=[
                    gcp.compute.FirewallAllowArgs(
                        protocol="tcp",
                        # dcgm-exporter, node exporter and each engine's metrics-only port; never an API port
                        ports=["9400", "9100", *metrics_port_range(self.engines, args.serving_port)],
                    )
                ],
                target_service_accounts=[identity.email],
                project=project,
                opts=child,
            )

        script = render_startup_script(startup)
        labels = node_labels(args, self.mode, component="gpu-fleet", fleet=name)
        depends = [*identity.grants, *([self.reservation] if self.reservation is not None else [])]
        self.scaling = plan.scaling
        self.scaling_plan: ScalingPlan | None = plan.scaling.plan if plan.scaling is not None else None
        self.instance_group: pulumi.Output[str] | None = None
        self.group_manager: gcp.compute.RegionInstanceGroupManager | None = None
        self.autoscaler: gcp.compute.RegionAutoscaler | None = None
        if plan.scaling is not None:
            self.instances = []
            self.internal_ips = pulumi.Output.from_input([])
            self._elastic(name, args, plan, plan.scaling, script, labels, identity.email, depends, project)
            self.register_outputs(
                {
                    "instance_group": self.instance_group,
                    "service_account_email": self.service_account_email,
                    "reservation_name": self.reservation_name,
                    "machine_type": self.machine_type,
                }
            )
            return
        self.instances = [
            gcp.compute.Instance(
                f"{name}-{i}",
                machine_type=shape.machine_type,
                zone=plan.zone,
                description=f"inference-infra GPU fleet {name}, VM {i}",
                boot_disk=gcp.compute.InstanceBootDiskArgs(
                    initialize_params=gcp.compute.InstanceBootDiskInitializeParamsArgs(
                        image=args.image, size=args.boot_disk_size_gib, type=args.boot_disk_type
                    ),
                    kms_key_self_link=args.kms_key,
                ),
                scratch_disks=[
                    gcp.compute.InstanceScratchDiskArgs(interface="NVME") for _ in range(args.local_ssd_count)
                ],
                guest_accelerators=(
                    [gcp.compute.InstanceGuestAcceleratorArgs(type=shape.gpu_type, count=shape.gpus)]
                    if shape.guest
                    else None
                ),
                network_interfaces=[
                    # No access_configs: no external IP. Egress goes through Cloud NAT.
                    gcp.compute.InstanceNetworkInterfaceArgs(subnetwork=args.subnetwork, nic_type="GVNIC")
                ],
                shielded_instance_config=gcp.compute.InstanceShieldedInstanceConfigArgs(
                    enable_secure_boot=args.secure_boot, enable_vtpm=True, enable_integrity_monitoring=True
                ),
                service_account=gcp.compute.InstanceServiceAccountArgs(
                    email=identity.email, scopes=node_scopes(api_key=self._serves(args))
                ),
                scheduling=_scheduling(self.mode),
                reservation_affinity=self._affinity(self.mode),
                metadata=node_metadata(script, model_cache_nfs=args.model_cache_nfs),
                labels=labels,
                allow_stopping_for_update=True,
                project=project,
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
            )
            for i in range(plan.counts.total)
        ]
        self.internal_ips = pulumi.Output.all(
            *[vm.network_interfaces.apply(lambda nics: nics[0].network_ip) for vm in self.instances]
        )
        self.register_outputs(
            {
                "instance_names": [vm.name for vm in self.instances],
                "internal_ips": self.internal_ips,
                "service_account_email": self.service_account_email,
                "reservation_name": self.reservation_name,
                "machine_type": self.machine_type,
            }
        )

    def _elastic(
        self,
        name: str,
        args: GpuFleetArgs,
        plan: GpuFleetPlan,
        scaling: GcpScaling,
        script: str,
        labels: dict[str, str],
        email: pulumi.Output[str],
        depends: list[pulumi.Resource],
        project: str,
    ) -> None:
        """The pool as a regional managed instance group from an instance template, and its autoscaler."""
        shape = plan.shape
        assert shape is not None
        assert plan.zone is not None
        assert self.engines is not None
        child = pulumi.ResourceOptions(parent=self)
        region = region_of(plan.zone)
        port = self.engines.ports[0]  # one engine per VM (checked)
        # Auto-named (no name): a changed template is a new one, made before the old one goes.
        template = gcp.compute.InstanceTemplate(
            f"{name}-template",
            machine_type=shape.machine_type,
            description=f"inference-infra GPU fleet {name}: one serving VM",
            instance_description=f"inference-infra GPU fleet {name}",
            disks=[
                gcp.compute.InstanceTemplateDiskArgs(
                    boot=True,
                    auto_delete=True,
                    source_image=args.image,
                    disk_size_gb=args.boot_disk_size_gib,
                    disk_type=args.boot_disk_type,
                    disk_encryption_key=(
                        gcp.compute.InstanceTemplateDiskDiskEncryptionKeyArgs(kms_key_self_link=args.kms_key)
                        if args.kms_key is not None
                        else None
                    ),
                ),
                *[
                    gcp.compute.InstanceTemplateDiskArgs(
                        type="SCRATCH",
                        disk_type="local-ssd",
                        disk_size_gb=375,
                        interface="NVME",
                        auto_delete=True,
                    )
                    for _ in range(args.local_ssd_count)
                ],
            ],
            guest_accelerators=(
                [gcp.compute.InstanceTemplateGuestAcceleratorArgs(type=shape.gpu_type, count=shape.gpus)]
                if shape.guest
                else None
            ),
            network_interfaces=[
                # No access_configs: no external IP.
                gcp.compute.InstanceTemplateNetworkInterfaceArgs(subnetwork=args.subnetwork, nic_type="GVNIC")
            ],
            shielded_instance_config=gcp.compute.InstanceTemplateShieldedInstanceConfigArgs(
                enable_secure_boot=args.secure_boot, enable_vtpm=True, enable_integrity_monitoring=True
            ),
            service_account=gcp.compute.InstanceTemplateServiceAccountArgs(
                email=email, scopes=node_scopes(api_key=self._serves(args))
            ),
            scheduling=_template_scheduling(self.mode),
            reservation_affinity=self._template_affinity(self.mode),
            metadata=node_metadata(script, model_cache_nfs=args.model_cache_nfs),
            labels=labels,
            project=project,
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
        )
        # Autohealing: Google's probers reach the engine's /health (and nothing else) on the fleet's VMs.
        gcp.compute.Firewall(
            f"{name}-autohealing",
            network=args.network,
            description=f"Health checks of GPU fleet {name}'s managed instance group (autohealing)",
            direction="INGRESS",
            source_ranges=[str(r) for r in HEALTH_CHECK_RANGES],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(port)])],
            target_service_accounts=[email],
            project=project,
            opts=child,
        )
        check = gcp.compute.HealthCheck(
            f"{name}-autohealing",
            description=f"GPU fleet {name}: recreate a VM whose engine stops answering {HEALTH_PATH}",
            check_interval_sec=AUTOHEAL_INTERVAL_SECONDS,
            timeout_sec=10,
            healthy_threshold=2,
            unhealthy_threshold=AUTOHEAL_UNHEALTHY_THRESHOLD,
            http_health_check=gcp.compute.HealthCheckHttpHealthCheckArgs(port=port, request_path=HEALTH_PATH),
            project=project,
            opts=child,
        )
        zones = len(scaling.zones)
        reserved = self.mode is CapacityMode.RESERVED
        self.group_manager = gcp.compute.RegionInstanceGroupManager(
            f"{name}-group",
            name=name,  # the autoscaler's metric filter names the group (POOL_LABEL)
            base_instance_name=name,
            region=region,
            distribution_policy_zones=list(scaling.zones),
            description=f"inference-infra GPU fleet {name}: {scaling.describe()}",
            versions=[
                gcp.compute.RegionInstanceGroupManagerVersionArgs(
                    name="serving", instance_template=template.self_link_unique
                )
            ],
            named_ports=[
                gcp.compute.RegionInstanceGroupManagerNamedPortArgs(name=ENGINE_PORT_NAME, port=port)
            ],
            auto_healing_policies=gcp.compute.RegionInstanceGroupManagerAutoHealingPoliciesArgs(
                health_check=check.id, initial_delay_sec=scaling.initialization_seconds
            ),
            # A new template replaces VMs one zone's worth at a time, each counted ready only after a cold
            # start; reserved VMs cannot surge (the reservation holds exactly the pool), so they go first.
            update_policy=gcp.compute.RegionInstanceGroupManagerUpdatePolicyArgs(
                type="PROACTIVE",
                minimal_action="REPLACE",
                replacement_method="SUBSTITUTE",
                instance_redistribution_type="NONE",
                max_surge_fixed=0 if reserved else zones,
                max_unavailable_fixed=zones if reserved else 0,
                min_ready_sec=scaling.initialization_seconds,
            ),
            wait_for_instances=False,
            project=project,
            opts=child,
        )
        self.instance_group = self.group_manager.instance_group
        self.autoscaler = gcp.compute.RegionAutoscaler(
            f"{name}-autoscaler",
            region=region,
            target=self.group_manager.self_link,
            description=f"GPU fleet {name}: {scaling.describe()}",
            autoscaling_policy=autoscaling_policy(scaling, name),
            project=project,
            opts=child,
        )

    def endpoint_pool(self, name: str | None = None) -> EndpointPool:
        """This fleet as a GcpInferenceEndpoint pool: its model, engine ports, VMs, zone and account.

        `name` (default: the fleet's name) is the pool's name in routes and the X-Model-Pool header.
        """
        from inference_infra.components.gcp.endpoint import GcpPoolBackend

        if self.engines is None:
            raise InputError(
                f"GpuFleet {self._name!r} serves no model: give it model and weights=GcsWeights(...) to put "
                "it behind an endpoint"
            )
        if self.scaling is not None and self.instance_group is not None:
            scaling = self.scaling
            backend = GcpPoolBackend(
                zone=self.zone,
                instance_group=self.instance_group,
                service_account_email=self.service_account_email,
                max_rate_per_instance=(
                    scaling.rate_per_instance if scaling.signal is LoadSignal.LOAD_BALANCER else None
                ),
                draining_seconds=scaling.plan.deregistration_delay_seconds,
                retry_after_seconds=retry_after_seconds(scaling),
            )
            return endpoint_pool_of(name or self._name, self.engines, self.cold_start, backend)
        backend = GcpPoolBackend(
            zone=self.zone,
            instances=[vm.self_link for vm in self.instances],
            instance_ips=[vm.network_interfaces.apply(lambda n: n[0].network_ip) for vm in self.instances],
            service_account_email=self.service_account_email,
        )
        return endpoint_pool_of(name or self._name, self.engines, self.cold_start, backend)

    def _reservation(
        self, name: str, args: GpuFleetArgs, plan: GpuFleetPlan, project: str, child: pulumi.ResourceOptions
    ) -> tuple[gcp.compute.Reservation | None, str | None]:
        if self.mode is not CapacityMode.RESERVED or args.reservation is None:
            return None, None
        shape = plan.shape
        assert shape is not None
        spec = args.reservation
        if spec.existing_name is not None:
            return None, spec.existing_name
        reservation_name = f"{name}-reservation"
        reservation = gcp.compute.Reservation(
            reservation_name,
            name=reservation_name,
            zone=plan.zone,
            description=f"Capacity for GPU fleet {name}; only VMs that name it may use it",
            specific_reservation_required=True,
            specific_reservation=gcp.compute.ReservationSpecificReservationArgs(
                count=spec.count or plan.counts.reserved,
                instance_properties=gcp.compute.ReservationSpecificReservationInstancePropertiesArgs(
                    machine_type=shape.machine_type,
                    guest_accelerators=(
                        [
                            gcp.compute.ReservationSpecificReservationInstancePropertiesGuestAcceleratorArgs(
                                accelerator_type=shape.gpu_type, accelerator_count=shape.gpus
                            )
                        ]
                        if shape.guest
                        else None
                    ),
                    local_ssds=[
                        gcp.compute.ReservationSpecificReservationInstancePropertiesLocalSsdArgs(
                            disk_size_gb=375, interface="NVME"
                        )
                        for _ in range(args.local_ssd_count)
                    ]
                    or None,
                ),
            ),
            project=project,
            opts=child,
        )
        return reservation, reservation_name

    def _template_affinity(self, mode: CapacityMode) -> gcp.compute.InstanceTemplateReservationAffinityArgs:
        if mode is CapacityMode.RESERVED:
            return gcp.compute.InstanceTemplateReservationAffinityArgs(
                type="SPECIFIC_RESERVATION",
                specific_reservation=gcp.compute.InstanceTemplateReservationAffinitySpecificReservationArgs(
                    key=RESERVATION_KEY, values=[self.reservation_name]
                ),
            )
        return gcp.compute.InstanceTemplateReservationAffinityArgs(type="NO_RESERVATION")

    def _affinity(self, mode: CapacityMode) -> gcp.compute.InstanceReservationAffinityArgs:
        if mode is CapacityMode.RESERVED:
            return gcp.compute.InstanceReservationAffinityArgs(
                type="SPECIFIC_RESERVATION",
                specific_reservation=gcp.compute.InstanceReservationAffinitySpecificReservationArgs(
                    key=RESERVATION_KEY, values=[self.reservation_name]
                ),
            )
        # Spot VMs cannot use reservations; on-demand VMs must not eat capacity held for others.
        return gcp.compute.InstanceReservationAffinityArgs(type="NO_RESERVATION")


__all__ = [
    "DEFAULT_IMAGE",
    "RESERVATION_KEY",
    "FleetShape",
    "GcpGpuProfile",
    "GcsWeights",
    "GpuFleet",
    "GpuFleetArgs",
    "GpuFleetPlan",
    "GpuReservation",
    "plan_gpu_fleet",
    "resolve_shape",
    "validate_gpu_fleet",
]
