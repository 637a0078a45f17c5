"""TpuVm: a Cloud TPU VM slice (v5e, v5p, v6e; v4 too) for model serving.

The slice is named by its accelerator type (`v5litepod-8`) or by generation
and topology (`v5e` + `2x4`); either is checked against the catalog, and the
runtime (software) version against the generation, so a v5e slice with a v4
runtime is an error before anything is created. The runtime defaults to the
generation's PyTorch/JAX base image.

Capacity: on-demand, `spot`, `preemptible`, or `reserved` (a TPU
reservation of the project). With `queued=True` the slice is requested as a
queued resource (`tpu.V2QueuedResource`) that waits in line for capacity
instead of failing when none is free. The provider's queued resource
(pulumi-gcp 10.x) describes only the node's type, runtime and network, so a
queued node runs as the project's default service account, without a boot
script, Shielded VM settings, labels or data disks: the component refuses
those inputs with `queued=True` rather than drop them, and asks for
`secure_boot=False` to accept the trade.

A direct slice runs as its own least-privilege service account with narrow
scopes, has no external IPs, blocks project-wide SSH keys, uses OS Login,
carries the cost labels, can attach data disks (read-only on multi-host
slices) and runs the same boot script as the GPU fleets (model cache mount
and model prefetch; no local SSD on TPU VMs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    accelerator,
    instance_types,
)
from inference_infra.components.catalog.tpu_runtimes import (
    TPU_SOFTWARE,
    TpuSoftware,
    runtime_problem,
    tpu_software,
    tpu_software_by_generation,
)
from inference_infra.components.errors import Problem, did_you_mean, raise_if_invalid
from inference_infra.components.gcp.mirrors import mirror_problems
from inference_infra.components.gcp.names import (
    bucket_problems,
    label_problems,
    model_uri_problems,
    name_problems,
    zone_problems,
)
from inference_infra.components.gcp.service_account import NODE_SCOPES, node_identity
from inference_infra.components.gcp.startup import StartupConfig, node_metadata, render_startup_script
from inference_infra.components.serving import EngineConfig, EngineFamily, engine_image, validate_engine
from inference_infra.components.tagging import bool_tag
from inference_infra.components.validation import check_types


class TpuScheduling(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    PREEMPTIBLE = "preemptible"
    RESERVED = "reserved"


@dataclass(frozen=True, kw_only=True)
class TpuDataDisk:
    size_gib: int
    disk_type: str | None = None  # default: the generation's first supported type
    read_only: bool = False  # multi-host slices attach data disks read-only


@dataclass(frozen=True, kw_only=True)
class TpuVmArgs:
    zone: str
    network: pulumi.Input[str]
    subnetwork: pulumi.Input[str]
    accelerator_type: str | None = None  # slice name, e.g. "v5litepod-8"; or generation + topology
    generation: str | None = None  # "v5e", "v5p", "v6e", "v4"
    topology: str | None = None  # chips per dimension, e.g. "2x4" (v5e) or "2x2x1" (v5p)
    runtime_version: str | None = None  # default: the generation's PyTorch/JAX base image
    scheduling: TpuScheduling = TpuScheduling.ON_DEMAND
    queued: bool = False  # request through a queued resource (see the module docstring)
    data_disks: Sequence[TpuDataDisk] = ()
    model_bucket: str | None = None
    model_uris: Sequence[str] = ()
    model_cache_nfs: pulumi.Input[str] | None = None
    kms_key: pulumi.Input[str] | None = None  # CMEK for data disks
    secure_boot: bool = True
    # A queued slice runs as the Compute Engine default service account (the provider's queued resource
    # has no service-account field). Refused unless this names why that is accepted.
    accept_default_service_account: str | None = None
    auto_shutdown: bool | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    project: str | None = None
    engines: EngineConfig | None = None  # serve model_uris[0] (components/serving) on ports 8000, 8001, ...
    # Upstream registry host -> LOCATION-docker.pkg.dev/PROJECT/REPOSITORY (components/gcp/mirrors.py).
    image_mirrors: Mapping[str, str] = field(default_factory=dict)
    package_downloads: bool = True  # False without internet egress: nfs-common must be on the runtime image


@dataclass(frozen=True)
class TpuSlice:
    """The slice a TpuVm asks for, resolved from the catalog."""

    item: InstanceType  # catalog entry (name = accelerator type)
    software: TpuSoftware
    runtime_version: str

    @property
    def multi_host(self) -> bool:
        return self.item.hosts > 1


def _tpu_slices() -> list[InstanceType]:
    return [
        i
        for i in instance_types(Cloud.GCP)
        if accelerator(i.accelerator).family is AcceleratorFamily.GOOGLE_TPU
    ]


def resolve_slice(args: TpuVmArgs) -> tuple[TpuSlice | None, list[Problem]]:
    slices = _tpu_slices()
    by_topology = args.generation is not None or args.topology is not None
    if (args.accelerator_type is None) == (not by_topology):
        return None, [
            Problem(
                "accelerator_type",
                args.accelerator_type,
                "give either accelerator_type (e.g. 'v5litepod-8') or generation and topology, not both",
            )
        ]
    if args.accelerator_type is not None:
        item = next((s for s in slices if s.name == args.accelerator_type), None)
        if item is None:
            names = [s.name for s in slices]
            return None, [
                Problem(
                    "accelerator_type",
                    args.accelerator_type,
                    f"is not a TPU slice in the catalog{did_you_mean(args.accelerator_type, names)}",
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


def validate_tpu_vm(name: str, args: TpuVmArgs, *, project: str | None) -> list[Problem]:
    problems = name_problems("name", name)
    tpu, slice_problems = resolve_slice(args)
    problems += slice_problems
    problems += zone_problems("zone", args.zone)
    if args.engines is not None:
        if tpu is not None and tpu.multi_host:
            problems.append(multi_host_engine_problem("engines", args.engines.served_model_name, tpu.item))
        problems += [Problem(f"engines.{p.input}", p.value, p.allowed) for p in validate_engine(args.engines)]
        if not args.model_uris:
            problems.append(
                Problem("engines", args.engines.served_model_name, "need model_uris (the weights)")
            )
    if project is None:
        problems.append(Problem("project", None, "is required: pass project or set the gcp:project config"))
    if args.queued:
        problems += _queued_problems(args)
    if tpu is not None:
        problems += _disk_problems(args, tpu)
    if args.model_bucket is not None:
        problems += bucket_problems("model_bucket", args.model_bucket)
    problems += model_uri_problems("model_uris", tuple(args.model_uris), args.model_bucket)
    problems += label_problems("labels", args.labels)
    problems += mirror_problems(args.image_mirrors)
    if args.queued and args.image_mirrors:
        problems.append(
            Problem(
                "image_mirrors",
                dict(args.image_mirrors),
                "cannot be used on a queued resource (it runs no boot script and no engine)",
            )
        )
    return problems


def _queued_problems(args: TpuVmArgs) -> list[Problem]:
    why = "cannot be set on a queued resource (pulumi-gcp's V2QueuedResource has no field for it)"
    problems = []
    if args.scheduling is not TpuScheduling.ON_DEMAND:
        problems.append(Problem("scheduling", args.scheduling.value, f"{why}; queued slices are on-demand"))
    for input_name, value in (
        ("data_disks", list(args.data_disks)),
        ("model_bucket", args.model_bucket),
        ("model_uris", list(args.model_uris)),
        ("labels", dict(args.labels)),
    ):
        if value:
            problems.append(Problem(input_name, value, why))
    if args.model_cache_nfs is not None:
        problems.append(Problem("model_cache_nfs", "(set)", why))
    if args.kms_key is not None:
        problems.append(Problem("kms_key", "(set)", why))
    if args.auto_shutdown is not None:
        problems.append(Problem("auto_shutdown", args.auto_shutdown, why))
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
                f"{why}; set secure_boot=False to accept a queued slice without Secure Boot",
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
        where = f"data_disks[{i}]"
        if disk.size_gib < 10:
            problems.append(Problem(f"{where}.size_gib", disk.size_gib, "must be at least 10"))
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


def _scheduling(scheduling: TpuScheduling) -> gcp.tpu.V2VmSchedulingConfigArgs | None:
    if scheduling is TpuScheduling.SPOT:
        return gcp.tpu.V2VmSchedulingConfigArgs(spot=True)
    if scheduling is TpuScheduling.PREEMPTIBLE:
        return gcp.tpu.V2VmSchedulingConfigArgs(preemptible=True)
    if scheduling is TpuScheduling.RESERVED:
        return gcp.tpu.V2VmSchedulingConfigArgs(reserved=True)
    return None


class TpuVm(pulumi.ComponentResource):
    """A Cloud TPU VM slice, created directly or through a queued resource."""

    vm: gcp.tpu.V2Vm | None
    queued_resource: gcp.tpu.V2QueuedResource | None
    service_account_email: pulumi.Output[str] | None
    accelerator_type: str
    runtime_version: str

    def __init__(self, name: str, args: TpuVmArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        project = args.project or gcp.config.project or None
        raise_if_invalid(f"TpuVm {name!r}", check_types(args) or validate_tpu_vm(name, args, project=project))
        super().__init__("inference-infra:gcp:TpuVm", name, None, opts)
        tpu, _ = resolve_slice(args)
        assert tpu is not None  # validated above
        assert project is not None
        self.accelerator_type = tpu.item.name
        self.runtime_version = tpu.runtime_version
        self.vm = None
        self.queued_resource = None
        self.service_account_email = None
        if args.queued:
            self.queued_resource = self._queued(name, args, tpu, project)
            outputs = {"queued_resource": self.queued_resource.name}
        else:
            self.vm = self._vm(name, args, tpu, project)
            outputs = {"tpu_name": self.vm.name, "service_account_email": self.service_account_email}
        self.register_outputs(
            {**outputs, "accelerator_type": self.accelerator_type, "runtime_version": self.runtime_version}
        )

    def _queued(self, name: str, args: TpuVmArgs, tpu: TpuSlice, project: str) -> gcp.tpu.V2QueuedResource:
        return gcp.tpu.V2QueuedResource(
            f"{name}-queued",
            zone=args.zone,
            tpu=gcp.tpu.V2QueuedResourceTpuArgs(
                node_specs=[
                    gcp.tpu.V2QueuedResourceTpuNodeSpecArgs(
                        parent=f"projects/{project}/locations/{args.zone}",
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

    def _vm(self, name: str, args: TpuVmArgs, tpu: TpuSlice, project: str) -> gcp.tpu.V2Vm:
        child = pulumi.ResourceOptions(parent=self)
        identity = node_identity(
            name,
            project=project,
            model_bucket=args.model_bucket,
            description=f"TPU {name}: writes logs and metrics, reads the model bucket",
            parent=self,
            model_uris=tuple(args.model_uris),
        )
        self.service_account_email = identity.email
        disks = [
            gcp.compute.Disk(
                f"{name}-data-{i}",
                zone=args.zone,
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
        by_type = args.accelerator_type is not None
        script = render_startup_script(
            StartupConfig(
                model_uris=tuple(args.model_uris),
                model_cache=args.model_cache_nfs is not None,
                ops_agent=False,  # TPU metrics reach Cloud Monitoring without an agent
                engines=args.engines,
                image_mirrors=dict(args.image_mirrors),
                package_downloads=args.package_downloads,
            )
        )
        labels = {
            "component": "tpu-vm",
            "tpu": name,
            "capacity": args.scheduling.value,
            **args.labels,
        }
        if args.auto_shutdown is not None:
            labels["auto-shutdown"] = bool_tag(args.auto_shutdown)
        return gcp.tpu.V2Vm(
            f"{name}-tpu",
            zone=args.zone,
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
            scheduling_config=_scheduling(args.scheduling),
            service_account=gcp.tpu.V2VmServiceAccountArgs(email=identity.email, scopes=list(NODE_SCOPES)),
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
