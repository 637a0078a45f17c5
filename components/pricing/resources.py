"""Fixed hourly cost of the resources around the accelerators: volumes, file shares, network.

Each reader takes one captured resource and returns the pieces it bills
whether or not traffic flows (a volume's GiB-months, a NAT gateway's hours);
what depends on traffic or bytes stored is left to the usage module. Rates come
from `inference_infra.components.catalog.resources` (dated, with sources). A
figure the catalog has no row for, or a size the program leaves to the cloud
(an AMI's root volume), is reported as not priced, with the reason, rather
than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from inference_infra.components.catalog import Cloud
from inference_infra.components.catalog.resources import resource_rate
from inference_infra.components.pricing.fargate import (
    FargateNotPricedError,
    fargate_capacity,
    price_fargate_service,
)
from inference_infra.components.pricing.sagemaker import SERVERLESS_NOT_PRICED
from inference_infra.components.resources import TemplateLookup, get_path, machine_use, region_of_zone
from inference_infra.components.resources.types import (
    AWS_AUTOSCALING_GROUP,
    AWS_ECS_SERVICE,
    AWS_ECS_TASK_DEFINITION,
    AWS_EFS,
    AWS_EIP,
    AWS_EKS_NODE_GROUP,
    AWS_INSTANCE,
    AWS_LOAD_BALANCERS,
    AWS_NAT_GATEWAY,
    AWS_SAGEMAKER_ENDPOINT_CONFIG,
    AWS_SPOT_REQUEST,
    AWS_VOLUME,
    AWS_VPC_ENDPOINT,
    GCP_ADDRESSES,
    GCP_DISK,
    GCP_FILESTORE,
    GCP_FORWARDING_RULES,
    GCP_GKE_NODE_POOL,
    GCP_INSTANCE,
    GCP_REGION_DISK,
    GCP_ROUTER_NAT,
    GCP_TPU_VM,
)
from inference_infra.components.units import HOURS_PER_MONTH

STORAGE = "storage"
NETWORK = "network"

LOCAL_SSD_GIB = 375  # one GCP local SSD disk


@dataclass(frozen=True)
class Charge:
    """One fixed charge of a resource: USD per hour and the sentence that says how."""

    hourly_usd: float
    basis: str
    category: str


class NotPricedError(Exception):
    """A billable resource the catalog cannot price; the message says why."""


class UnsizedError(NotPricedError):
    """A billable volume whose size the program leaves to an image; listed apart, not as a warning."""


class _Resource:
    """What a reader needs of a resource besides its props."""

    def __init__(self, name: str, type_: str, props: Mapping[str, Any], region: str | None):
        self.name, self.type, self.props, self.region = name, type_, props, region


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _one(value: Any) -> Any:
    """A nested block the provider gives as an object or a one-item list."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _monthly(key: str, quantity: float, region: str | None) -> tuple[float, str]:
    """USD per hour of quantity units of a monthly rate (above its free allowance), and a basis part."""
    rate = resource_rate(key)
    if rate is None:
        raise NotPricedError(f"no catalog rate {key}")
    usd, where = rate.rate(region)
    billed = max(quantity - rate.free, 0.0)
    per_hour = billed * usd / HOURS_PER_MONTH if rate.unit.endswith("month") else billed * usd
    free = f" above {rate.free:g} free" if rate.free else ""
    fallback = f" {where}" if where != region else ""
    return per_hour, f"{billed:g} {rate.unit.split('-')[0]}{free} x ${usd:g}/{rate.unit}{fallback}"


# --- volumes -------------------------------------------------------------------------------------


def _ebs(ebs: Mapping[str, Any], region: str | None, what: str) -> tuple[float, str]:
    kind = str(ebs.get("volumeType") or "gp3") if isinstance(ebs, Mapping) else "gp3"
    size = _num(get_path(ebs, "volumeSize") if "volumeSize" in ebs else get_path(ebs, "size"))
    if size is None:
        if ebs.get("snapshotId"):
            raise NotPricedError(f"{what}: size comes from snapshot {ebs['snapshotId']}, not known offline")
        raise NotPricedError(f"{what}: no volume size set")
    parts, total = [], 0.0
    hourly, basis = _monthly(f"aws.ebs.{kind}.storage", size, region)
    total, parts = total + hourly, [f"{kind} {basis}"]
    iops = _num(ebs.get("iops"))
    if iops is not None and resource_rate(f"aws.ebs.{kind}.iops") is not None:
        hourly, basis = _monthly(f"aws.ebs.{kind}.iops", iops, region)
        total, parts = total + hourly, [*parts, basis]
    throughput = _num(ebs.get("throughput"))
    if throughput is not None and resource_rate(f"aws.ebs.{kind}.throughput") is not None:
        hourly, basis = _monthly(f"aws.ebs.{kind}.throughput", throughput, region)
        total, parts = total + hourly, [*parts, basis]
    return total, f"{what} " + " + ".join(parts)


def _instance_volumes(props: Mapping[str, Any], template: Mapping[str, Any] | None, region: str | None):
    """[(hourly, basis)] of an instance's EBS volumes: its own block devices, else its template's."""
    found: list[tuple[float, str]] = []
    root = _one(props.get("rootBlockDevice"))
    if isinstance(root, Mapping):
        found.append(_ebs(root, region, "root volume"))
    for dev in props.get("ebsBlockDevices") or []:
        if isinstance(dev, Mapping):
            found.append(_ebs(dev, region, f"volume {dev.get('deviceName', '')}".strip()))
    if found:
        return found
    for mapping in (template or {}).get("blockDeviceMappings") or []:
        ebs = _one(get_path(mapping, "ebs"))
        if isinstance(ebs, Mapping):
            found.append(_ebs(ebs, region, f"volume {mapping.get('deviceName', '')}".strip()))
    if not found:  # billed, but its size is the AMI's
        raise UnsizedError("root volume size comes from the AMI, not known offline")
    return found


def _sum(parts: Sequence[tuple[float, str]], count: int = 1) -> tuple[float, str]:
    hourly = sum(h for h, _ in parts) * count
    basis = "; ".join(b for _, b in parts)
    return hourly, (f"{count} x ({basis})" if count != 1 else basis)


def _template_ref(props: Mapping[str, Any]) -> Any:
    return get_path(props, "launchTemplate") or get_path(
        props, "mixedInstancesPolicy", "launchTemplate", "launchTemplateSpecification"
    )


# --- readers ---------------------------------------------------------------------------------------

Reader = Callable[[_Resource, "Context"], list[Charge]]


@dataclass
class Context:
    templates: TemplateLookup
    resources: Sequence[Any]
    default_region: Callable[[Any, Cloud], str | None]
    forwarding_rules_seen: dict[str, int]


def _aws_instance(r: _Resource, ctx: Context) -> list[Charge]:
    ref = _template_ref(r.props)
    template = ctx.templates(ref) if isinstance(ref, Mapping) else None
    hourly, basis = _sum(_instance_volumes(r.props, template, r.region))
    charges = [Charge(hourly, basis, STORAGE)]
    public = r.props.get("associatePublicIpAddress")
    if public is None and template is not None:
        public = get_path(_one(template.get("networkInterfaces")), "associatePublicIpAddress")
    if public is True or public == "true":
        hourly, basis = _fixed("aws.public_ipv4.hour", 1, r.region, "public IPv4")
        charges.append(Charge(hourly, basis, NETWORK))
    return charges


def _aws_group(r: _Resource, ctx: Context) -> list[Charge]:
    ref = _template_ref(r.props)
    template = ctx.templates(ref) if isinstance(ref, Mapping) else None
    count = _num(r.props.get("desiredCapacity"))
    count = count if count is not None else _num(r.props.get("minSize")) or 0
    if count == 0:
        return [Charge(0.0, "no instances at desired capacity 0", STORAGE)]
    hourly, basis = _sum(_instance_volumes({}, template, r.region), int(count))
    return [Charge(hourly, basis, STORAGE)]


def _aws_node_group(r: _Resource, ctx: Context) -> list[Charge]:
    count = int(_num(get_path(r.props, "scalingConfig", "desiredSize")) or 0)
    ref = r.props.get("launchTemplate")
    if isinstance(ref, Mapping):
        parts = _instance_volumes({}, ctx.templates(ref), r.region)
    else:
        size = _num(r.props.get("diskSize")) or 20.0  # EKS managed node group default
        parts = [_ebs({"volumeType": "gp2", "volumeSize": size}, r.region, "node disk")]
    hourly, basis = _sum(parts, count)
    return [Charge(hourly, basis, STORAGE)]


def _aws_volume(r: _Resource, _: Context) -> list[Charge]:
    props = {"volumeType": r.props.get("type") or "gp2", **r.props}
    hourly, basis = _ebs(props, r.region, "volume")
    return [Charge(hourly, basis, STORAGE)]


def _fixed(key: str, count: float, region: str | None, what: str) -> tuple[float, str]:
    rate = resource_rate(key)
    if rate is None:
        raise NotPricedError(f"no catalog rate {key}")
    usd, where = rate.rate(region)
    times = f"{count:g} x " if count != 1 else ""
    fallback = f" {where}" if where != region else ""
    return usd * count, f"{what} {times}${usd:g}/{rate.unit}{fallback}"


def _simple(key: str, what: str, category: str = NETWORK) -> Reader:
    def read(r: _Resource, _: Context) -> list[Charge]:
        hourly, basis = _fixed(key, 1, r.region, what)
        return [Charge(hourly, basis, category)]

    return read


def _aws_vpc_endpoint(r: _Resource, _: Context) -> list[Charge]:
    kind = str(r.props.get("vpcEndpointType") or "Gateway")
    if kind == "Gateway":
        return [Charge(0.0, "gateway endpoint: no hourly or data charge", NETWORK)]
    azs = max(len(r.props.get("subnetIds") or []), 1)
    hourly, basis = _fixed(
        "aws.vpc_endpoint.interface.hour", azs, r.region, f"{kind} endpoint in {azs} AZ(s)"
    )
    return [Charge(hourly, basis, NETWORK)]


def _aws_lb(r: _Resource, _: Context) -> list[Charge]:
    kind = str(r.props.get("loadBalancerType") or "application")
    key = {"application": "aws.alb.hour", "network": "aws.nlb.hour", "gateway": "aws.gwlb.hour"}.get(kind)
    if key is None:
        raise NotPricedError(f"load balancer type {kind!r} has no catalog rate")
    hourly, basis = _fixed(key, 1, r.region, f"{kind} load balancer")
    return [Charge(hourly, basis + " (capacity units are usage-based)", NETWORK)]


def _aws_efs(r: _Resource, _: Context) -> list[Charge]:
    if r.props.get("throughputMode") == "provisioned":
        mibps = _num(r.props.get("provisionedThroughputInMibps")) or 0.0
        hourly, basis = _monthly("aws.efs.provisioned_throughput", mibps, r.region)
        return [Charge(hourly, "provisioned throughput " + basis + "; bytes stored are usage-based", STORAGE)]
    mode = r.props.get("throughputMode") or "bursting"
    return [Charge(0.0, f"{mode} throughput: bytes stored and transferred are usage-based", STORAGE)]


def _pd(kind: str, size: float, region: str | None, what: str, iops=None, throughput=None):
    hourly, basis = _monthly(f"gcp.pd.{kind}.storage", size, region)
    parts = [f"{what} {kind} {basis}"]
    for extra, value in (("iops", iops), ("throughput", throughput)):
        key = f"gcp.pd.{kind}.{extra}"
        if _num(value) is not None and resource_rate(key) is not None:
            more, b = _monthly(key, _num(value), region)
            hourly, parts = hourly + more, [*parts, b]
    return hourly, " + ".join(parts)


def _gcp_disk(r: _Resource, _: Context) -> list[Charge]:
    kind = str(r.props.get("type") or "pd-standard")
    size = _num(r.props.get("size"))
    if size is None:
        raise NotPricedError("disk size comes from its image or snapshot, not known offline")
    replicas = 2 if r.type == GCP_REGION_DISK else 1
    hourly, basis = _pd(
        kind,
        size * replicas,
        r.region,
        "disk",
        r.props.get("provisionedIops"),
        r.props.get("provisionedThroughput"),
    )
    return [Charge(hourly, basis + (" (regional: 2 replicas)" if replicas == 2 else ""), STORAGE)]


def _gcp_instance(r: _Resource, _: Context) -> list[Charge]:
    params = get_path(r.props, "bootDisk", "initializeParams")
    params = params if isinstance(params, Mapping) else {}
    kind = str(params.get("type") or "pd-standard")
    size = _num(params.get("size"))
    parts = []
    if size is None:  # billed, but its size is the image's
        raise UnsizedError("boot disk size comes from the image, not known offline")
    parts.append(_pd(kind, size, r.region, "boot disk"))
    scratch = len(r.props.get("scratchDisks") or [])
    if scratch:
        parts.append(_monthly("gcp.local_ssd.storage", scratch * LOCAL_SSD_GIB, r.region))
        parts[-1] = (parts[-1][0], f"{scratch} local SSD(s) {parts[-1][1]}")
    hourly, basis = _sum(parts)
    charges = [Charge(hourly, basis, STORAGE)]
    external = sum(
        len(nic.get("accessConfigs") or [])
        for nic in r.props.get("networkInterfaces") or []
        if isinstance(nic, Mapping)
    )
    if external:
        hourly, basis = _fixed("gcp.external_ip.hour", external, r.region, "external IP")
        charges.append(Charge(hourly, basis, NETWORK))
    return charges


def _gcp_node_pool(r: _Resource, _: Context) -> list[Charge]:
    config = _one(r.props.get("nodeConfig")) or {}
    count = _num(r.props.get("nodeCount"))
    if count is None:
        count = _num(r.props.get("initialNodeCount")) or _num(
            get_path(_one(r.props.get("autoscaling")), "minNodeCount")
        )
    size = _num(config.get("diskSizeGb")) or 100.0
    kind = str(config.get("diskType") or "pd-balanced")
    locations = max(len(r.props.get("nodeLocations") or []), 1)
    nodes = int(count or 0) * locations
    hourly, basis = _sum([_pd(kind, size, r.region, "node boot disk")], nodes)
    parts = [Charge(hourly, basis, STORAGE)]
    ssd = _num(get_path(config, "localNvmeSsdBlockConfig", "localSsdCount")) or _num(
        get_path(config, "ephemeralStorageLocalSsdConfig", "localSsdCount")
    )
    if ssd:
        hourly, basis = _monthly("gcp.local_ssd.storage", ssd * LOCAL_SSD_GIB * nodes, r.region)
        parts.append(Charge(hourly, f"{nodes} node(s) x {ssd:g} local SSD(s): {basis}", STORAGE))
    return parts


def _gcp_filestore(r: _Resource, _: Context) -> list[Charge]:
    tier = str(r.props.get("tier") or "BASIC_HDD")
    capacity = _num(get_path(_one(r.props.get("fileShares")), "capacityGb"))
    if capacity is None:
        raise NotPricedError("Filestore capacity not set")
    if resource_rate(f"gcp.filestore.{tier}") is None:
        raise NotPricedError(f"Filestore tier {tier!r} has no catalog rate")
    hourly, basis = _monthly(f"gcp.filestore.{tier}", capacity, r.region)
    return [Charge(hourly, f"Filestore {tier} {basis} (provisioned capacity)", STORAGE)]


def _gcp_router_nat(r: _Resource, ctx: Context) -> list[Charge]:
    vms = 0
    for other in ctx.resources:
        if other.type in (GCP_INSTANCE, GCP_TPU_VM) and _region_of(other, Cloud.GCP, ctx) == r.region:
            vms += 1
    billed = min(vms, 32)
    hourly, basis = _fixed(
        "gcp.cloud_nat.vm_hour", billed, r.region, f"Cloud NAT for {vms} VM(s) (32 at most billed)"
    )
    return [Charge(hourly, basis + "; data processed is usage-based", NETWORK)]


def _gcp_forwarding_rule(r: _Resource, ctx: Context) -> list[Charge]:
    where = r.region or "global"
    n = ctx.forwarding_rules_seen.get(where, 0) + 1
    ctx.forwarding_rules_seen[where] = n
    key = "gcp.forwarding_rule.first5" if n <= 5 else "gcp.forwarding_rule.additional"
    hourly, basis = _fixed(key, 1, r.region, f"forwarding rule {n} in {where}")
    return [Charge(hourly, basis, NETWORK)]


def _gcp_address(r: _Resource, _: Context) -> list[Charge]:
    if str(r.props.get("addressType") or "EXTERNAL") == "INTERNAL":
        return [Charge(0.0, "internal address: no charge", NETWORK)]
    hourly, basis = _fixed("gcp.external_ip.hour", 1, r.region, "external IP")
    return [Charge(hourly, basis, NETWORK)]


def _monthly_fixed(key: str, what: str, category: str = NETWORK) -> Reader:
    def read(r: _Resource, _: Context) -> list[Charge]:
        hourly, basis = _monthly(key, 1, r.region)
        return [Charge(hourly, f"{what} {basis}", category)]

    return read


def _ecs_service(r: _Resource, ctx: Context) -> list[Charge]:
    """An ECS service on Fargate: its desired tasks' vCPUs and memory (EC2-backed services run on
    instances priced as machines)."""
    if not fargate_capacity(r.props)[0]:
        return []
    definitions = [(d.id, d.props) for d in ctx.resources if d.type == AWS_ECS_TASK_DEFINITION]
    try:
        hourly, basis = price_fargate_service(r.props, definitions, r.region)
    except FargateNotPricedError as e:
        raise NotPricedError(str(e)) from None
    return [Charge(hourly, basis, "compute")]


def _sagemaker_serverless(r: _Resource, _: Context) -> list[Charge]:
    """An endpoint configuration of serverless variants only: said to be unpriced, not free (one
    with an instance variant is priced with its variants: pricing.sagemaker)."""
    if machine_use(r.type, r.props) is not None:
        return []
    serverless = [
        v.get("variantName") or "?"
        for v in r.props.get("productionVariants") or []
        if isinstance(v, Mapping) and v.get("serverlessConfig") is not None
    ]
    if serverless:
        names = ", ".join(map(str, serverless))
        raise NotPricedError(f"serverless variant(s) {names}: {SERVERLESS_NOT_PRICED}")
    return []


READERS: dict[str, Reader] = {
    AWS_SAGEMAKER_ENDPOINT_CONFIG: _sagemaker_serverless,
    AWS_ECS_SERVICE: _ecs_service,
    "aws:eks/cluster:Cluster": _simple("aws.eks.cluster.hour", "EKS control plane", "control-plane"),
    "gcp:container/cluster:Cluster": _simple(
        "gcp.gke.cluster.hour",
        "GKE cluster management fee (one zonal cluster per account is credited)",
        "control-plane",
    ),
    "aws:kms/key:Key": _monthly_fixed("aws.kms.key.month", "KMS key", "security"),
    "gcp:dns/managedZone:ManagedZone": _monthly_fixed(
        "gcp.dns.zone.month", "Cloud DNS managed zone", NETWORK
    ),
    "aws:secretsmanager/secret:Secret": _monthly_fixed(
        "aws.secretsmanager.secret.month", "Secrets Manager secret", "security"
    ),
    AWS_INSTANCE: _aws_instance,
    AWS_SPOT_REQUEST: _aws_instance,
    AWS_AUTOSCALING_GROUP: _aws_group,
    AWS_EKS_NODE_GROUP: _aws_node_group,
    AWS_VOLUME: _aws_volume,
    AWS_NAT_GATEWAY: _simple("aws.nat_gateway.hour", "NAT gateway", NETWORK),
    AWS_EIP: _simple("aws.public_ipv4.hour", "Elastic IP (public IPv4)", NETWORK),
    AWS_VPC_ENDPOINT: _aws_vpc_endpoint,
    **dict.fromkeys(AWS_LOAD_BALANCERS, _aws_lb),
    AWS_EFS: _aws_efs,
    GCP_INSTANCE: _gcp_instance,
    GCP_DISK: _gcp_disk,
    GCP_REGION_DISK: _gcp_disk,
    GCP_GKE_NODE_POOL: _gcp_node_pool,
    GCP_FILESTORE: _gcp_filestore,
    GCP_ROUTER_NAT: _gcp_router_nat,
    **dict.fromkeys(GCP_FORWARDING_RULES, _gcp_forwarding_rule),
    **dict.fromkeys(GCP_ADDRESSES, _gcp_address),
}


def cloud_of(type_token: str) -> Cloud | None:
    head = type_token.split(":", 1)[0]
    return {"aws": Cloud.AWS, "gcp": Cloud.GCP}.get(head)


def _region_of(r: Any, cloud: Cloud, ctx: Context) -> str | None:
    props = r.props
    for key in ("availabilityZone", "zone", "location"):
        value = props.get(key)
        if isinstance(value, str) and value:
            return region_of_zone(value)
    value = props.get("region")
    if isinstance(value, str) and value:
        return value
    return ctx.default_region(r, cloud)


def price_fixed(
    resources: Sequence[Any], default_region: Callable[[Any, Cloud], str | None], templates: TemplateLookup
) -> tuple[list[tuple[Any, Charge]], list[tuple[str, str]], list[tuple[str, str]]]:
    """Fixed charges of every non-accelerator billable resource, the ones not priced (urn, why), and
    the volumes whose size is an image's (urn, why)."""
    ctx = Context(templates, resources, default_region, {})
    charges: list[tuple[Any, Charge]] = []
    unpriced: list[tuple[str, str]] = []
    unsized: list[tuple[str, str]] = []
    for r in resources:
        reader = READERS.get(r.type)
        cloud = cloud_of(r.type)
        if reader is None or cloud is None:
            continue
        view = _Resource(r.name, r.type, r.props, _region_of(r, cloud, ctx))
        try:
            found = reader(view, ctx)
        except UnsizedError as e:
            unsized.append((r.urn, str(e)))
            continue
        except NotPricedError as e:
            unpriced.append((r.urn, str(e)))
            continue
        where = f" {view.region}" if view.region else ""
        charges.extend((r, replace(c, basis=c.basis + where)) for c in found)
    return charges, unpriced, unsized
