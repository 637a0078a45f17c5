"""GpuFleet (GCP): Compute Engine VMs with NVIDIA GPUs for model serving.

A fleet is `count` VMs of one machine type in one zone: an accelerator-
optimized type with its GPUs built in (a3, a2, g2), or an N1 type with GPUs
attached (`accelerator_type` + `accelerator_count`). Capacity is bought one
of three ways:

- `spot`: Spot VMs, stopped (not deleted) when Compute Engine reclaims them;
- `on-demand`: standard VMs;
- `reserved`: a specific reservation (`specific_reservation_required`, so
  nothing else eats it) made by the fleet, or one made elsewhere and named
  with `GpuReservation(existing_name=...)`, consumed through reservation
  affinity. The reservation is billed whether the VMs run or not.

Every VM is a Shielded VM (Secure Boot, vTPM, integrity monitoring) without
an external IP, with project-wide SSH keys blocked and OS Login on, running
as the fleet's own least-privilege service account. Its boot script
(`startup.py`) stripes the local SSDs, mounts the model cache, prefetches
the models, starts the Ops Agent with GPU metrics (`ops_agent`) and the
engines, whose image comes from an Artifact Registry mirror when
`image_mirrors` names one (the same digest; see `mirrors.py`). The stack's cost labels
come from the stack transform; the fleet adds its own (`fleet`, `capacity`,
and `auto-shutdown` when set here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from ipaddress import ip_network

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
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.gcp.names import (
    bucket_problems,
    label_problems,
    model_uri_problems,
    name_problems,
    zone_problems,
)
from inference_infra.components.gcp.service_account import NODE_SCOPES, node_identity
from inference_infra.components.gcp.startup import (
    StartupConfig,
    node_metadata,
    render_startup_script,
    validate_startup,
)
from inference_infra.components.serving import EngineConfig, validate_engine
from inference_infra.components.tagging import bool_tag
from inference_infra.components.validation import check_types

DEFAULT_IMAGE = (
    "projects/deeplearning-platform-release/global/images/family/common-cu128-ubuntu-2204-nvidia-570"
)
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
_MIN_BOOT_DISK_GIB = 50
_N1_LOCAL_SSD_COUNTS = (*range(0, 9), 16, 24)
# Where Google's load balancer health checks come from (https://cloud.google.com/load-balancing/docs/health-checks).
_HEALTH_CHECK_RANGES = (ip_network("35.191.0.0/16"), ip_network("130.211.0.0/22"))


class Capacity(StrEnum):
    SPOT = "spot"
    ON_DEMAND = "on-demand"
    RESERVED = "reserved"


@dataclass(frozen=True, kw_only=True)
class GpuReservation:
    """Reserved capacity for a fleet (capacity='reserved'). Unset fields take the fleet's values."""

    count: int | None = None  # VMs reserved; at least the fleet's count
    zone: str | None = None
    machine_type: str | None = None
    existing_name: str | None = None  # consume this reservation instead of creating one


@dataclass(frozen=True, kw_only=True)
class GpuFleetArgs:
    machine_type: str  # "a3-highgpu-8g", "g2-standard-8", or "n1-standard-8" with accelerator_*
    zone: str
    subnetwork: pulumi.Input[str]
    capacity: Capacity
    count: int = 1
    accelerator_type: str | None = None  # N1: the GPU to attach; others: optional, must match
    accelerator_count: int | None = None  # GPUs per VM
    reservation: GpuReservation | None = None  # capacity='reserved' only; default: make one
    local_ssd_count: int = 0  # local SSDs to add (not for types that bundle their own)
    model_bucket: str | None = None  # the one bucket the nodes may read
    model_uris: Sequence[str] = ()  # gs://<model_bucket>/<folder> to prefetch at boot
    model_cache_nfs: pulumi.Input[str] | None = None  # FilestoreModelCache.nfs_target
    image: str = DEFAULT_IMAGE
    boot_disk_size_gib: int = 200
    boot_disk_type: str = "pd-balanced"
    kms_key: pulumi.Input[str] | None = None  # CMEK for boot disks; Google-managed when unset
    secure_boot: bool = True  # needs signed NVIDIA kernel modules (see README)
    network: pulumi.Input[str] | None = None  # needed with client_ranges (the firewall rule's network)
    serving_port: int = 8000
    client_ranges: Sequence[str] = ()  # private CIDRs allowed to reach serving_port; none: no rule
    # Private CIDRs of the monitoring cluster: may reach dcgm-exporter (9400), node exporter (9100)
    # and the engine's /metrics (serving_port), nothing else. None: no rule.
    monitoring_ranges: Sequence[str] = ()
    auto_shutdown: bool | None = None  # this fleet's auto-shutdown label; None: the stack's
    labels: Mapping[str, str] = field(default_factory=dict)
    project: str | None = None  # default: the gcp:project config
    engines: EngineConfig | None = (
        None  # serve model_uris[0] (components/serving); ports serving_port, +1, ...
    )
    # Upstream registry host -> LOCATION-docker.pkg.dev/PROJECT/REPOSITORY (components/gcp/mirrors.py): the
    # engines' images are pulled from there by the same digest. Needed on a network without internet egress.
    image_mirrors: Mapping[str, str] = field(default_factory=dict)
    # The Ops Agent (GPU metrics to Cloud Monitoring). Installed from packages.cloud.google.com when the
    # image lacks it; with package_downloads=False only an image that carries it runs it.
    ops_agent: bool = True
    # False on a network without internet egress: the boot installs nothing (mdadm, nfs-common, the Ops
    # Agent must be on the image) and logs the missing package instead of waiting on apt.
    package_downloads: bool = True


@dataclass(frozen=True)
class FleetShape:
    """What one VM of the fleet carries, resolved from the catalog."""

    machine_type: str
    gpu_type: str  # GCE accelerator type
    gpus: int
    bundled_local_ssds: int
    guest: bool  # GPUs attached to an N1 VM (guest_accelerators) rather than built in


def resolve_shape(args: GpuFleetArgs) -> tuple[FleetShape | None, list[Problem]]:
    """The fleet's machine shape from the catalog, or the problems that prevent it."""
    machine = args.machine_type
    if machine.startswith("n1-"):
        return _n1_shape(args)
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


def _n1_shape(args: GpuFleetArgs) -> tuple[FleetShape | None, list[Problem]]:
    problems = []
    try:
        machine = gcp_n1_machine(args.machine_type)
    except CatalogError as e:
        hint = str(e).removeprefix(f"unknown GCP N1 machine type {args.machine_type!r}; ").rstrip(".")
        return None, [
            Problem("machine_type", args.machine_type, f"is not an N1 machine type we know; {hint}")
        ]
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
                args.machine_type,
                f"is too large for {gpus} x {args.accelerator_type}: at most {shape_limits.max_vcpus} vCPUs "
                f"and {shape_limits.max_memory_gb} GB memory",
            )
        )
    return FleetShape(args.machine_type, args.accelerator_type, gpus, 0, guest=True), problems


def validate_gpu_fleet(name: str, args: GpuFleetArgs, *, project: str | None) -> list[Problem]:
    """Every problem with a fleet's input, found before any resource is registered."""
    problems = name_problems("name", name)
    shape, shape_problems = resolve_shape(args)
    problems += shape_problems
    problems += zone_problems("zone", args.zone)
    if project is None:
        problems.append(Problem("project", None, "is required: pass project or set the gcp:project config"))
    if args.count < 1:
        problems.append(Problem("count", args.count, "must be at least 1"))
    problems += _reservation_problems(args)
    if args.local_ssd_count < 0:
        problems.append(Problem("local_ssd_count", args.local_ssd_count, "must be 0 or more"))
    elif args.local_ssd_count and shape is not None and shape.bundled_local_ssds:
        problems.append(
            Problem(
                "local_ssd_count",
                args.local_ssd_count,
                f"must be 0: {args.machine_type} comes with {shape.bundled_local_ssds} local SSDs of its own",
            )
        )
    elif shape is not None and shape.guest and args.local_ssd_count not in _N1_LOCAL_SSD_COUNTS:
        problems.append(
            Problem("local_ssd_count", args.local_ssd_count, "must be 0-8, 16 or 24 on an N1 machine type")
        )
    if args.model_bucket is not None:
        problems += bucket_problems("model_bucket", args.model_bucket)
    problems += model_uri_problems("model_uris", tuple(args.model_uris), args.model_bucket)
    if args.boot_disk_size_gib < _MIN_BOOT_DISK_GIB:
        problems.append(
            Problem("boot_disk_size_gib", args.boot_disk_size_gib, f"must be at least {_MIN_BOOT_DISK_GIB}")
        )
    problems += _ingress_problems(args)
    problems += label_problems("labels", args.labels)
    problems += validate_startup(_startup_config(args, shape))
    return problems


def _reservation_problems(args: GpuFleetArgs) -> list[Problem]:
    if args.capacity is not Capacity.RESERVED:
        if args.reservation is not None:
            why = (
                "cannot be used: Spot VMs never consume reservations"
                if args.capacity is Capacity.SPOT
                else "applies only to capacity 'reserved'"
            )
            given = {k: v for k, v in dataclasses.asdict(args.reservation).items() if v is not None}
            return [Problem("reservation", given, why)]
        return []
    spec = args.reservation or GpuReservation()
    problems = []
    if spec.zone is not None and spec.zone != args.zone:
        problems.append(
            Problem(
                "reservation.zone",
                spec.zone,
                f"must be the fleet's zone {args.zone!r}: a reservation is zonal",
            )
        )
    if spec.machine_type is not None and spec.machine_type != args.machine_type:
        problems.append(
            Problem(
                "reservation.machine_type",
                spec.machine_type,
                f"must be the fleet's machine type {args.machine_type!r}: VMs consume only a reservation of "
                "their own shape",
            )
        )
    if spec.count is not None and spec.count < args.count:
        problems.append(
            Problem(
                "reservation.count",
                spec.count,
                f"must hold the whole fleet ({args.count} VMs): VMs that name a full specific reservation "
                "do not start",
            )
        )
    if spec.existing_name is not None:
        problems += name_problems("reservation.existing_name", spec.existing_name, max_length=63)
    return problems


def _ingress_problems(args: GpuFleetArgs) -> list[Problem]:
    problems = []
    if not 1 <= args.serving_port <= 65535:
        problems.append(Problem("serving_port", args.serving_port, "must be a TCP port (1-65535)"))
    if args.engines is not None:
        problems += [Problem(f"engines.{p.input}", p.value, p.allowed) for p in validate_engine(args.engines)]
        if not args.model_uris:
            problems.append(
                Problem("engines", args.engines.served_model_name, "need model_uris (the weights)")
            )
        if args.engines.first_port != args.serving_port:
            problems.append(
                Problem(
                    "engines.first_port", args.engines.first_port, f"must be serving_port {args.serving_port}"
                )
            )
    if args.client_ranges and args.network is None:
        problems.append(
            Problem("network", None, "is required with client_ranges (the firewall rule's network)")
        )
    if args.monitoring_ranges and args.network is None:
        problems.append(
            Problem("network", None, "is required with monitoring_ranges (the firewall rule's network)")
        )
    for i, cidr in enumerate(args.monitoring_ranges):
        try:
            private = ip_network(cidr, strict=True).is_private
        except ValueError:
            private = False
        if not private:
            problems.append(
                Problem(f"monitoring_ranges[{i}]", cidr, "must be a private CIDR block such as '10.8.0.0/14'")
            )
    for i, cidr in enumerate(args.client_ranges):
        try:
            block = ip_network(cidr, strict=True)
        except ValueError:
            problems.append(Problem(f"client_ranges[{i}]", cidr, "must be a CIDR block such as '10.0.0.0/8'"))
            continue
        if not block.is_private and not any(block.subnet_of(hc) for hc in _HEALTH_CHECK_RANGES):
            problems.append(
                Problem(
                    f"client_ranges[{i}]",
                    cidr,
                    "must be a private range or a Google health-check range (35.191.0.0/16, "
                    "130.211.0.0/22): serving ports are never opened to the internet "
                    "(put a load balancer in front)",
                )
            )
    return problems


def _serving_ports(args: GpuFleetArgs) -> str:
    """The firewall's port or range: one port per engine on a VM."""
    count = args.engines.engines if args.engines is not None else 1
    return str(args.serving_port) if count == 1 else f"{args.serving_port}-{args.serving_port + count - 1}"


def _startup_config(args: GpuFleetArgs, shape: FleetShape | None) -> StartupConfig:
    bundled = shape.bundled_local_ssds if shape is not None else 0
    return StartupConfig(
        local_ssd_count=bundled + max(args.local_ssd_count, 0),
        model_uris=tuple(args.model_uris),
        model_cache=args.model_cache_nfs is not None,
        ops_agent=args.ops_agent,
        gpu_metrics=args.ops_agent,
        engines=args.engines,
        image_mirrors=dict(args.image_mirrors),
        package_downloads=args.package_downloads,
        host_exporters=True,  # the stack's Prometheus scrapes 9400 and 9100 (monitoring_ranges)
        gpu_exporter=True,
    )


def _scheduling(capacity: Capacity) -> gcp.compute.InstanceSchedulingArgs:
    if capacity is Capacity.SPOT:
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


class GpuFleet(pulumi.ComponentResource):
    """Compute Engine GPU VMs (spot, on-demand or reserved) with secure defaults."""

    instances: list[gcp.compute.Instance]
    reservation: gcp.compute.Reservation | None
    service_account_email: pulumi.Output[str]
    reservation_name: str | None
    internal_ips: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuFleetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        project = args.project or gcp.config.project or None
        raise_if_invalid(
            f"GpuFleet {name!r}", check_types(args) or validate_gpu_fleet(name, args, project=project)
        )
        super().__init__("inference-infra:gcp:GpuFleet", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        shape, _ = resolve_shape(args)
        assert shape is not None  # validated above
        assert project is not None

        identity = node_identity(
            name,
            project=project,
            model_bucket=args.model_bucket,
            description=f"GPU fleet {name}: writes logs and metrics, reads the model bucket",
            parent=self,
            model_uris=tuple(args.model_uris),
        )
        self.service_account_email = identity.email
        self.reservation, self.reservation_name = self._reservation(name, args, shape, project, child)

        if args.client_ranges:
            gcp.compute.Firewall(
                f"{name}-serving",
                network=args.network,
                description=f"Serving port of GPU fleet {name}, from the named client ranges only",
                direction="INGRESS",
                source_ranges=list(args.client_ranges),
                allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[_serving_ports(args)])],
                target_service_accounts=[identity.email],
                log_config=gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA"),
                project=project,
                opts=child,
            )

        if args.monitoring_ranges:
            gcp.compute.Firewall(
                f"{name}-metrics",
                network=args.network,
                description=f"Metrics ports of GPU fleet {name}, from the monitoring cluster only",
                direction="INGRESS",
                source_ranges=list(args.monitoring_ranges),
                allows=[
                    gcp.compute.FirewallAllowArgs(
                        protocol="tcp",
                        ports=["9400", "9100", _serving_ports(args)],  # every engine's /metrics
                    )
                ],
                target_service_accounts=[identity.email],
                project=project,
                opts=child,
            )

        script = render_startup_script(_startup_config(args, shape))
        labels = {"component": "gpu-fleet", "fleet": name, "capacity": args.capacity.value, **args.labels}
        if args.auto_shutdown is not None:
            labels["auto-shutdown"] = bool_tag(args.auto_shutdown)
        depends = [*identity.grants, *([self.reservation] if self.reservation is not None else [])]
        self.instances = [
            gcp.compute.Instance(
                f"{name}-{i}",
                machine_type=args.machine_type,
                zone=args.zone,
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
                    email=identity.email, scopes=list(NODE_SCOPES)
                ),
                scheduling=_scheduling(args.capacity),
                reservation_affinity=self._affinity(args.capacity),
                metadata=node_metadata(script, model_cache_nfs=args.model_cache_nfs),
                labels=labels,
                allow_stopping_for_update=True,
                project=project,
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
            )
            for i in range(args.count)
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
            }
        )

    def _reservation(
        self, name: str, args: GpuFleetArgs, shape: FleetShape, project: str, child: pulumi.ResourceOptions
    ) -> tuple[gcp.compute.Reservation | None, str | None]:
        if args.capacity is not Capacity.RESERVED:
            return None, None
        spec = args.reservation or GpuReservation()
        if spec.existing_name is not None:
            return None, spec.existing_name
        reservation_name = f"{name}-reservation"
        reservation = gcp.compute.Reservation(
            reservation_name,
            name=reservation_name,
            zone=args.zone,
            description=f"Capacity for GPU fleet {name}; only VMs that name it may use it",
            specific_reservation_required=True,
            specific_reservation=gcp.compute.ReservationSpecificReservationArgs(
                count=spec.count or args.count,
                instance_properties=gcp.compute.ReservationSpecificReservationInstancePropertiesArgs(
                    machine_type=args.machine_type,
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

    def _affinity(self, capacity: Capacity) -> gcp.compute.InstanceReservationAffinityArgs:
        if capacity is Capacity.RESERVED:
            return gcp.compute.InstanceReservationAffinityArgs(
                type="SPECIFIC_RESERVATION",
                specific_reservation=gcp.compute.InstanceReservationAffinitySpecificReservationArgs(
                    key=RESERVATION_KEY, values=[self.reservation_name]
                ),
            )
        # Spot VMs cannot use reservations; on-demand VMs must not eat capacity held for others.
        return gcp.compute.InstanceReservationAffinityArgs(type="NO_RESERVATION")
