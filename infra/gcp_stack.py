"""The GCP part of the reference stack: VPC, model cache, GPU fleets and TPU slices.

Reads `gcp:project`, `gcp:region` (and `gcp:zone`, optional) and the
`inference-infra:` keys `gcpNetwork`, `gcpModelBucket`, `filestoreModelCache`,
`gcpGpuFleets`, `tpuVms` and `egress`. It only turns those settings into the
components' inputs: each fleet and slice plans its own machine, engines, ports
and cold start, and checks that its boot needs nothing the network cannot
reach. `validate` builds exactly the component inputs `deploy` will use (with
stand-ins for values other resources produce) and runs the components' own
validators on them, so a bad fleet is reported with its config key before
anything is registered.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import pulumi

from inference_infra.components.catalog.zones import gcp_zones
from inference_infra.components.endpoints import EndpointPool
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.gcp.endpoint_args import GcpInferenceEndpointArgs, GcpPoolBackend
from inference_infra.components.gcp.filestore_model_cache_args import (
    FilestoreModelCacheArgs,
    validate_filestore_cache,
)
from inference_infra.components.gcp.filestore_tiers import tier_limits
from inference_infra.components.gcp.gpu_fleet import GcpGpuProfile
from inference_infra.components.gcp.gpu_fleet_args import GpuFleetArgs
from inference_infra.components.gcp.mirrors import mirror_problems, unmirrored_hosts
from inference_infra.components.gcp.model_bucket_args import GcsModelPublishersArgs, validate_publishers
from inference_infra.components.gcp.names import is_zone, region_of
from inference_infra.components.gcp.network_args import PrivateNetworkArgs, validate_private_network
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.gcp.startup import StartupConfig, pulled_images
from inference_infra.components.gcp.tpu_vm import GcpTpuProfile
from inference_infra.components.gcp.tpu_vm_args import TpuVmArgs
from inference_infra.infra.built import Built, GcpPool
from inference_infra.infra.config import (
    NAMESPACE,
    FilestoreCacheSettings,
    GcpEndpointSettings,
    GcpGpuFleetSettings,
    GcpNetworkSettings,
    StackSettings,
    TpuVmSettings,
)
from inference_infra.infra.pools import PlannedPool
from inference_infra.infra.schema import camel_path

NETWORK_NAME = "gcp-net"
CACHE_NAME = "model-cache"
MODEL_BUCKET_NAME = "gcp-model-bucket"


@dataclass(frozen=True)
class GcpContext:
    project: str | None
    region: str | None
    zone: str | None  # default zone: gcp:zone, else the region's first zone (<region>-a where it exists)

    @classmethod
    def from_config(cls) -> GcpContext:
        config = pulumi.Config("gcp")
        region = config.get("region")
        zone = config.get("zone") or (gcp_zones(region).names[0] if region else None)  # us-east1: b
        return cls(
            project=config.get("project"), region=region or (region_of(zone) if zone else None), zone=zone
        )


@dataclass(frozen=True)
class NetworkRefs:
    """What components take from the VPC: real outputs in deploy, stand-ins in validate."""

    network_id: pulumi.Input[str]
    network_name: pulumi.Input[str]
    subnetwork_id: pulumi.Input[str]
    cidr: str


_MODEL_CACHE_STAND_IN = "(model cache)"
_STAND_INS = NetworkRefs("(network)", "(network)", "(subnetwork)", "")


def validate(settings: StackSettings) -> list[Problem]:
    ctx = GcpContext.from_config()
    problems: list[Problem] = []
    if ctx.project is None:
        problems.append(Problem("gcp:project", None, "is required when the stack uses GCP"))
    if ctx.region is None:
        problems.append(Problem("gcp:region", None, "is required when the stack uses GCP (e.g. us-central1)"))
        return problems
    network = settings.gcp_network or GcpNetworkSettings()
    problems += [
        _egress_key(p)
        for p in _keyed(
            "gcpNetwork",
            validate_private_network(NETWORK_NAME, _network_args(network, ctx, settings)),
            root=True,
        )
    ]
    problems += [
        Problem(
            f"{NAMESPACE}:egress.gcpImageMirrors{p.input.removeprefix('image_mirrors')}", p.value, p.allowed
        )
        for p in mirror_problems(settings.egress.gcp_image_mirrors)
    ]
    refs = replace(_STAND_INS, cidr=network.cidr)
    cache = settings.filestore_model_cache
    if cache is not None:
        args = _cache_args(cache, refs, ctx)
        problems += _keyed("filestoreModelCache", validate_filestore_cache(CACHE_NAME, args), root=True)
        problems += _region_problems("filestoreModelCache.location", args.location, ctx)
    names = [f.name for f in settings.gcp_gpu_fleets] + [t.name for t in settings.tpu_vms]
    for name, times in Counter(names).items():
        if times > 1:
            problems.append(
                Problem(
                    f"{NAMESPACE}:gcpGpuFleets/tpuVms", name, "is used twice; fleet and TPU names must differ"
                )
            )
    kept = {pool.where: pool for pool in fleet_plans(settings)}
    for i, fleet in enumerate(settings.gcp_gpu_fleets):
        key = f"gcpGpuFleets[{i}]"
        pool = kept[key]
        problems += _keyed(key, list(pool.plan.problems))
        problems += _region_problems(f"{key}.zone", pool.args.zone or "", ctx)
        if fleet.model_cache and cache is None:
            problems.append(Problem(f"{NAMESPACE}:{key}.modelCache", True, "needs filestoreModelCache set"))
    problems += _publisher_problems(settings, ctx)
    problems += _named_hosts_problems(settings)
    for i, tpu in enumerate(settings.tpu_vms):
        key = f"tpuVms[{i}]"
        if tpu.queued and settings.is_production:
            problems.append(
                Problem(
                    f"{NAMESPACE}:{key}.queued",
                    True,
                    "is refused in production whatever acceptDefaultServiceAccount says: a queued slice runs "
                    "as the project's Compute Engine default service account (pulumi-gcp's V2QueuedResource "
                    "cannot name another), which usually holds roles/editor and may write every fleet's "
                    "weights; drop queued for a direct slice, which runs as its own least-privilege account",
                )
            )
        pool = kept[key]
        problems += _keyed(key, list(pool.plan.problems))
        problems += _region_problems(f"{key}.zone", pool.args.zone or "", ctx)
        if tpu.model_cache and cache is None:
            problems.append(Problem(f"{NAMESPACE}:{key}.modelCache", True, "needs filestoreModelCache set"))
    return problems


def _named_hosts_problems(settings: StackSettings) -> list[Problem]:
    """Under egress.gcp named-hosts every image comes from an Artifact Registry mirror (pkg.dev, through
    Private Google Access): a registry serves its layers from CDN hosts that change (Docker's own allowlist
    changed three times in 2025, docker/docs pulls 21867, 21970, 25122), which a host-name rule cannot
    follow. The problem names the registries and the nodes that pull from them."""
    if settings.gcp_egress != "named-hosts":
        return []
    mirrors = dict(settings.egress.gcp_image_mirrors)
    by_host: dict[str, list[str]] = {}
    for pool in fleet_plans(settings):
        boot = pool.plan.boot
        if not isinstance(boot, StartupConfig):
            continue
        for host in unmirrored_hosts(pulled_images(boot), mirrors):
            by_host.setdefault(host, []).append(pool.config.name)
    return [
        Problem(
            f"{NAMESPACE}:egress.gcpImageMirrors",
            mirrors,
            f"has no mirror of {host}, which {', '.join(sorted(set(names)))} pull from; under egress.gcp "
            f"named-hosts nodes pull images only from Artifact Registry: map {host} to a remote repository "
            "(LOCATION-docker.pkg.dev/PROJECT/REPOSITORY), or set egress.gcp internet",
        )
        for host, names in sorted(by_host.items())
    ]


def _publisher_args(settings: StackSettings, ctx: GcpContext) -> GcsModelPublishersArgs | None:
    """The model bucket's write guard, when the stack names its publishers."""
    if not settings.gcp_model_bucket or not settings.gcp_model_publishers:
        return None
    return GcsModelPublishersArgs(
        bucket=settings.gcp_model_bucket, publishers=tuple(settings.gcp_model_publishers), project=ctx.project
    )


def _publisher_problems(settings: StackSettings, ctx: GcpContext) -> list[Problem]:
    """Production names who may write the model bucket; the names are IAM members."""
    uses_bucket = bool(settings.gcp_model_bucket) and any(
        n.models for n in [*settings.gcp_gpu_fleets, *settings.tpu_vms]
    )
    if settings.gcp_model_publishers and not settings.gcp_model_bucket:
        return [
            Problem(f"{NAMESPACE}:gcpModelPublishers", settings.gcp_model_publishers, "needs gcpModelBucket")
        ]
    args = _publisher_args(settings, ctx)
    if args is None:
        if uses_bucket and settings.is_production:
            return [
                Problem(
                    f"{NAMESPACE}:gcpModelPublishers",
                    [],
                    "must name who may write the model bucket in production (serviceAccount:<email>, "
                    "user:<email> or group:<email>): a deny policy then refuses object writes to everyone "
                    "else, project owners and the deploying identity included; anyone who can write the "
                    "bucket chooses the weights the next pinned manifest serves",
                )
            ]
        return []
    keys = {"publishers": "gcpModelPublishers", "bucket": "gcpModelBucket", "location": "gcp:region"}
    return [
        Problem(
            _prefixed_key(keys.get(re.split(r"[.\[]", p.input, maxsplit=1)[0], p.input), p.input),
            p.value,
            p.allowed,
        )
        for p in validate_publishers(args, location=ctx.region)
    ]


def _prefixed_key(key: str, component_input: str) -> str:
    if key.startswith("gcp:"):
        return key
    return f"{NAMESPACE}:{key}{component_input[len(component_input.split('[', 1)[0]) :]}"


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.gcp.filestore_model_cache import FilestoreModelCache
    from inference_infra.components.gcp.gpu_fleet import GpuFleet
    from inference_infra.components.gcp.network import PrivateNetwork
    from inference_infra.components.gcp.tpu_vm import TpuVm

    ctx = GcpContext.from_config()
    network_settings = settings.gcp_network or GcpNetworkSettings()
    network = PrivateNetwork(NETWORK_NAME, _network_args(network_settings, ctx, settings))
    refs = NetworkRefs(network.network.id, network.network.name, network.subnetwork.id, network_settings.cidr)
    built.gcp_network = refs
    exports: dict[str, Any] = {"gcpNetwork": network.network.name, "gcpSubnetwork": network.subnetwork.id}

    cache_nfs = None
    if settings.filestore_model_cache is not None:
        cache = FilestoreModelCache(CACHE_NAME, _cache_args(settings.filestore_model_cache, refs, ctx))
        cache_nfs = cache.nfs_target
        exports["gcpModelCache"] = cache.nfs_target

    kept = {pool.config.name: pool.plan for pool in fleet_plans(settings)}
    fleets = {}
    for fleet in settings.gcp_gpu_fleets:
        args = _fleet_args(fleet, settings, refs, ctx, cache_nfs)
        component = GpuFleet(fleet.name, args, plan=kept[fleet.name])
        built.gcp_pools[fleet.name] = GcpPool(
            component, component.zone, component.engines, component.cold_start, is_tpu=False
        )
        fleets[fleet.name] = {
            "machineType": component.machine_type,
            "instances": [vm.name for vm in component.instances],
            "internalIps": component.internal_ips,
            "serviceAccount": component.service_account_email,
            "reservation": component.reservation_name,
        }
        if component.instance_group is not None:  # an elastic pool: its managed instance group
            fleets[fleet.name]["instanceGroup"] = component.instance_group
    tpus = {}
    for tpu in settings.tpu_vms:
        built_tpu = TpuVm(tpu.name, _tpu_args(tpu, settings, refs, ctx, cache_nfs), plan=kept[tpu.name])
        built.gcp_pools[tpu.name] = GcpPool(
            built_tpu, built_tpu.zone, built_tpu.engines, built_tpu.cold_start, is_tpu=True
        )
        tpus[tpu.name] = {
            "acceleratorType": built_tpu.accelerator_type,
            "runtimeVersion": built_tpu.runtime_version,
            "queued": built_tpu.queued_resource is not None,
        }
    readers = [f.component.service_account_email for f in built.gcp_pools.values() if not f.is_tpu]
    readers += [
        t.component.service_account_email
        for t in built.gcp_pools.values()
        if t.is_tpu and t.component.service_account_email is not None
    ]
    if settings.egress.gcp_image_mirrors:
        exports["gcpImageMirrors"] = _image_mirrors(settings, readers)
    if fleets:
        exports["gcpGpuFleets"] = fleets
    if tpus:
        exports["tpuVms"] = tpus
    publishers = _publisher_args(settings, ctx)
    if publishers is not None:
        from inference_infra.components.gcp.model_bucket import GcsModelPublishers

        guard = GcsModelPublishers(MODEL_BUCKET_NAME, publishers)
        exports["gcpModelWriteGuard"] = guard.deny_policy.name
    if settings.gcp_model_bucket and settings.gcp_model_access_audit:
        exports["gcpModelAccessAudit"] = model_access_audit(ctx.project or "").service
    return exports


@dataclass(frozen=True)
class KeptPool:
    """One GCP GPU fleet or TPU VM of the stack, planned once: its config key, config and FleetPlan."""

    where: str  # gcpGpuFleets[0] or tpuVms[0]
    config: Any  # GcpGpuFleetSettings | TpuVmSettings
    plan: FleetPlan
    args: Any  # GpuFleetArgs | TpuVmArgs with the network's stand-ins
    is_tpu: bool


_KEPT: dict[int, tuple[StackSettings, list[KeptPool]]] = {}


def fleet_plans(settings: StackSettings) -> list[KeptPool]:
    """Every GCP fleet's and slice's plan, made once per stack settings (from the config, with stand-ins
    for the network's ids) and read by validation, deployment, the endpoints and observability."""
    kept = _KEPT.get(id(settings))
    if kept is not None and kept[0] is settings:
        return kept[1]
    ctx = GcpContext.from_config()
    refs = replace(_STAND_INS, cidr=(settings.gcp_network or GcpNetworkSettings()).cidr)
    cache_nfs = _MODEL_CACHE_STAND_IN if settings.filestore_model_cache is not None else None
    pools = []
    for i, fleet in enumerate(settings.gcp_gpu_fleets):
        args = _fleet_args(fleet, settings, refs, ctx, cache_nfs)
        plan = fleet_plan.plan_fleet(fleet.name, args, GcpGpuProfile(ctx.project, ctx.zone))
        pools.append(KeptPool(f"gcpGpuFleets[{i}]", fleet, plan, args, is_tpu=False))
    for i, tpu in enumerate(settings.tpu_vms):
        args = _tpu_args(tpu, settings, refs, ctx, cache_nfs)
        plan = fleet_plan.plan_fleet(tpu.name, args, GcpTpuProfile(ctx.project, ctx.zone))
        pools.append(KeptPool(f"tpuVms[{i}]", tpu, plan, args, is_tpu=True))
    if len(_KEPT) >= 16:  # a process plans a few stacks (tests plan many): keep the latest
        _KEPT.pop(next(iter(_KEPT)))
    _KEPT[id(settings)] = (settings, pools)
    return pools


def planned_pools(settings: StackSettings) -> list[PlannedPool]:
    """Every GCP GPU fleet and TPU VM as it planned itself (fleet_plans): machine, nodes, serving."""
    return [
        PlannedPool(
            name=pool.config.name,
            cloud="gcp",
            accelerator="tpu" if pool.is_tpu else "nvidia",
            machine=pool.plan.machine,
            nodes=pool.plan.counts.total,
            serving=pool.plan.serving,
            serves_model=pool.config.model is not None,
            latency=None if pool.is_tpu else pool.config.latency,
            model=pool.args.model,
            plan=pool.plan,
        )
        for pool in fleet_plans(settings)
    ]


def _image_mirrors(settings: StackSettings, readers: list[Any]) -> dict[str, str]:
    """Artifact Registry remote repositories for egress.gcpImageMirrors (or grants on existing ones)."""
    from inference_infra.components.gcp.mirrors import ArtifactMirrors, ArtifactMirrorsArgs, reader_grants

    mirrors = dict(settings.egress.gcp_image_mirrors)
    if settings.egress.gcp_create_mirrors:
        ArtifactMirrors("image-mirrors", ArtifactMirrorsArgs(image_mirrors=mirrors, readers=readers))
    else:
        reader_grants("image-mirrors", mirrors, readers)
    return mirrors


def model_access_audit(project: str) -> Any:
    """Data Access audit logs for Cloud Storage in the project: who read or wrote which weight file.

    The model bucket is the stack's input (gcpModelBucket), not its resource, so its access log is the
    project's Cloud Storage audit log (Cloud Audit Logs), not a bucket setting. Admin Activity logs are on
    regardless; DATA_READ and DATA_WRITE are off by default and are what name the reader of an object.
    """
    import pulumi_gcp as gcp

    return gcp.projects.IAMAuditConfig(
        "model-bucket-data-access",
        project=project,
        service="storage.googleapis.com",
        audit_log_configs=[{"log_type": "DATA_READ"}, {"log_type": "DATA_WRITE"}],
    )


def endpoint_args(
    endpoint: GcpEndpointSettings, pools: list[EndpointPool], *, built: Built | None
) -> GcpInferenceEndpointArgs:
    """The endpoint's arguments: pools from the fleets' endpoint_pool(), or stand-in nodes for validation
    (built None)."""
    ctx = GcpContext.from_config()
    if built is None:
        planned = GcpPoolBackend(zone=ctx.zone or "", instances=["planned"], instance_ips=["planned"])
        pools = [replace(pool, backend=planned) for pool in pools]
    refs = built.gcp_network if built is not None else None
    return endpoint.to_args(
        region=ctx.region,
        network=refs.network_id if refs is not None else "planned",
        subnetwork=refs.subnetwork_id if refs is not None else "planned",
        pools=pools,
        project=ctx.project,
    )


def deploy_endpoint(endpoint: GcpEndpointSettings, pools: list[EndpointPool], built: Built) -> dict[str, Any]:
    from inference_infra.components.gcp.endpoint import GcpInferenceEndpoint

    made = GcpInferenceEndpoint(endpoint.name, endpoint_args(endpoint, pools, built=built))
    return {"cloud": "gcp", "ipAddress": made.ip_address}


# --- config -> component inputs (shared by validate, deploy and serving) ------------------------


def _egress_inputs(settings: StackSettings) -> dict[str, Any]:
    """What every GCP node takes from inference-infra:egress."""
    egress = settings.egress
    return {
        "image_mirrors": dict(egress.gcp_image_mirrors),
        "internet_egress": egress.gcp != "endpoints-only",
        "preinstalled_packages": tuple(egress.gcp_preinstalled),
    }


def _fleet_args(
    fleet: GcpGpuFleetSettings,
    settings: StackSettings,
    refs: NetworkRefs,
    ctx: GcpContext,
    cache_nfs: pulumi.Input[str] | None,
) -> GpuFleetArgs:
    bucket = settings.gcp_model_bucket
    return fleet.to_args(
        zone=fleet.zone or ctx.zone,
        subnetwork=refs.subnetwork_id,
        network=refs.network_id,
        project=ctx.project,
        weights=(
            GcsWeights(bucket or "", tuple(fleet.models), dict(fleet.manifest_sha256))
            if bucket or fleet.models
            else None
        ),
        model_cache_nfs=cache_nfs if fleet.model_cache else None,
        **_egress_inputs(settings),
    )


def _tpu_args(
    tpu: TpuVmSettings,
    settings: StackSettings,
    refs: NetworkRefs,
    ctx: GcpContext,
    cache_nfs: pulumi.Input[str] | None,
) -> TpuVmArgs:
    egress = _egress_inputs(settings)
    if tpu.queued:
        egress["image_mirrors"] = {}  # a queued slice runs no boot script and pulls nothing
    return tpu.to_args(
        zone=tpu.zone or ctx.zone,
        network=refs.network_id,
        subnetwork=refs.subnetwork_id,
        project=ctx.project,
        # A slice without model folders reads no bucket (a queued one cannot: no account of its own).
        weights=(
            GcsWeights(settings.gcp_model_bucket or "", tuple(tpu.models), dict(tpu.manifest_sha256))
            if tpu.models
            else None
        ),
        model_cache_nfs=cache_nfs if tpu.model_cache else None,
        **egress,
    )


def _network_args(
    network: GcpNetworkSettings, ctx: GcpContext, settings: StackSettings
) -> PrivateNetworkArgs:
    egress = settings.egress
    return network.to_args(
        region=ctx.region or "",
        project=ctx.project,
        egress=settings.gcp_egress,
        google_api_domain=egress.gcp_api_domain,
        allowed_hosts=tuple(egress.gcp_allowed_hosts) if egress.gcp_allowed_hosts is not None else None,
    )


def _egress_key(problem: Problem) -> Problem:
    """The network's egress inputs come from inference-infra:egress, not gcpNetwork."""
    for component_key, stack_key in (
        ("gcpNetwork.egress", "egress.gcp"),
        ("gcpNetwork.googleApiDomain", "egress.gcpApiDomain"),
        ("gcpNetwork.allowedHosts", "egress.gcpAllowedHosts"),
    ):
        given = f"{NAMESPACE}:{component_key}"
        if problem.input == given or problem.input.startswith(f"{given}["):
            rest = problem.input[len(given) :]
            return Problem(f"{NAMESPACE}:{stack_key}{rest}", problem.value, problem.allowed)
    return problem


def _cache_args(cache: FilestoreCacheSettings, refs: NetworkRefs, ctx: GcpContext) -> FilestoreModelCacheArgs:
    default_location = ctx.region if tier_limits(cache.tier).regional else ctx.zone
    return cache.to_args(
        network=refs.network_name,
        location=cache.location or default_location or "",
        client_ranges=[refs.cidr],
        project=ctx.project,
    )


# --- problems: component input names -> config keys ------------------------------------------

# Inputs the stack sets from elsewhere: another section, the provider's config, egress.
_ELSEWHERE = {
    "project": "gcp:project",
    "network": f"{NAMESPACE}:gcpNetwork",
    "subnetwork": f"{NAMESPACE}:gcpNetwork",
    "region": "gcp:region",
    "client_ranges": f"{NAMESPACE}:gcpNetwork.cidr",  # the Filestore cache's clients: the stack's subnet
}
# Node inputs the stack sets from inference-infra:egress (_egress_inputs).
_EGRESS = {
    "image_mirrors": "gcpImageMirrors",
    "preinstalled_packages": "gcpPreinstalled",
    "internet_egress": "gcp",
    "package_downloads": "gcp",
}


def _config_key(prefix: str, component_input: str, *, root: bool = False) -> str | None:
    """'gcpGpuFleets[0]' + 'reservation.count' -> 'inference-infra:gcpGpuFleets[0].reservation.count'.

    None: the problem is the stack's own and reported once under its key (a malformed mirror).
    """
    head = re.split(r"[.\[ ]", component_input, maxsplit=1)[0]
    rest = component_input[len(head) :]
    if head in _ELSEWHERE:
        return _ELSEWHERE[head]
    if root and head == "name":
        return f"{NAMESPACE}:{prefix}"
    if head == "weights":
        if rest.startswith(".bucket"):
            return f"{NAMESPACE}:gcpModelBucket"
        if rest.startswith(".manifest_sha256"):
            return f"{NAMESPACE}:{prefix}.manifestSha256{rest.removeprefix('.manifest_sha256')}"
        return f"{NAMESPACE}:{prefix}.models{rest.removeprefix('.uris')}"
    if head == "model_cache_nfs":
        return f"{NAMESPACE}:{prefix}.modelCache"
    if head in _EGRESS:
        if head == "image_mirrors" and rest:
            return None  # egress.gcpImageMirrors[...] is checked once, for every node
        return f"{NAMESPACE}:egress.{_EGRESS[head]}{rest} (for {prefix})"
    if head == "capacity":  # a problem of the counts together (e.g. two modes on one fleet)
        return f"{NAMESPACE}:{prefix}"
    return f"{NAMESPACE}:{prefix}.{camel_path(component_input)}"


def _keyed(prefix: str, problems: list[Problem], *, root: bool = False) -> list[Problem]:
    keyed = []
    for p in problems:
        key = _config_key(prefix, p.input, root=root)
        if key is not None:
            keyed.append(Problem(key, p.value, p.allowed))
    return keyed


def _region_problems(key: str, location: str, ctx: GcpContext) -> list[Problem]:
    where = region_of(location) if is_zone(location) else location
    if ctx.region is not None and where != ctx.region:
        return [
            Problem(
                f"{NAMESPACE}:{key}",
                location,
                f"must be in gcp:region {ctx.region!r}, where the stack's subnet is",
            )
        ]
    return []
