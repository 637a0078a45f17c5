"""The GCP part of the reference stack: VPC, model cache, GPU fleets and TPU slices.

Reads `gcp:project`, `gcp:region` (and `gcp:zone`, optional) and the
`inference-infra:` keys `gcpNetwork`, `gcpModelBucket`, `filestoreModelCache`,
`gcpGpuFleets` and `tpuVms`. `validate` builds exactly the component inputs
`deploy` will use (with stand-ins for values other resources produce) and
runs the components' own validators on them, so a bad fleet is reported with
its config key before anything is registered.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.catalog import AcceleratorFamily, Cloud, PriceModel, find_instance_type
from inference_infra.components.endpoints import EndpointPool, Route
from inference_infra.components.errors import Problem
from inference_infra.components.gcp.endpoint import GcpInferenceEndpointArgs, GcpPoolBackend
from inference_infra.components.gcp.filestore_model_cache import (
    FilestoreModelCacheArgs,
    validate_filestore_cache,
)
from inference_infra.components.gcp.filestore_tiers import tier_limits
from inference_infra.components.gcp.gpu_fleet import (
    Capacity,
    GpuFleetArgs,
    GpuReservation,
    validate_gpu_fleet,
)
from inference_infra.components.gcp.mirrors import mirror_problems, unmirrored_hosts
from inference_infra.components.gcp.names import is_zone, region_of
from inference_infra.components.gcp.network import PrivateNetworkArgs, validate_private_network
from inference_infra.components.gcp.tpu_vm import (
    TpuDataDisk,
    TpuScheduling,
    TpuVmArgs,
    multi_host_engine_problem,
    resolve_slice,
    validate_tpu_vm,
)
from inference_infra.components.monitoring.host_exporters import DCGM_EXPORTER_IMAGE, NODE_EXPORTER_IMAGE
from inference_infra.components.planner.wiring import Resolution, resolve_instance_type
from inference_infra.components.serving import (
    FIRST_ENGINE_PORT,
    EngineConfig,
    WeightSource,
    cold_start,
    engine_image,
    plan_engines,
)
from inference_infra.components.serving.cold_start import ColdStart, weights_gib
from inference_infra.infra.built import Built, GcpPool
from inference_infra.infra.config import (
    NAMESPACE,
    EgressSettings,
    EndpointSettings,
    FilestoreCacheSettings,
    GcpGpuFleetSettings,
    GcpNetworkSettings,
    ServedModelSettings,
    StackSettings,
    TpuVmSettings,
    camel_path,
)

NETWORK_NAME = "gcp-net"
CACHE_NAME = "model-cache"


@dataclass(frozen=True)
class GcpContext:
    project: str | None
    region: str | None
    zone: str | None  # default zone: gcp:zone, else <region>-a

    @classmethod
    def from_config(cls) -> GcpContext:
        config = pulumi.Config("gcp")
        region = config.get("region")
        zone = config.get("zone") or (f"{region}-a" if region else None)
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


def _plan(
    model: ServedModelSettings | None,
    type_name: str | None,
    *,
    family: AcceleratorFamily,
    spot: bool,
    type_key: str,
    model_key: str,
    max_hosts: int | None = None,
) -> Resolution:
    """The machine or slice type as configured (checked when a model is set) or the planner's pick."""
    return resolve_instance_type(
        instance_type_name=type_name,
        model=model.name if model else None,
        traffic=model.traffic() if model else None,
        precision=model.precision() if model else None,
        cloud=Cloud.GCP,
        purchase=PriceModel.SPOT if spot else PriceModel.ON_DEMAND,
        families={family},
        instance_type_key=f"{NAMESPACE}:{type_key}",
        model_key=f"{NAMESPACE}:{model_key}",
        max_hosts=max_hosts,
    )


def plan_fleet(fleet: GcpGpuFleetSettings, i: int) -> Resolution:
    return _plan(
        fleet.model,
        fleet.machine_type,
        family=AcceleratorFamily.NVIDIA_GPU,
        spot=fleet.capacity == "spot",
        type_key=f"gcpGpuFleets[{i}].machineType",
        model_key=f"gcpGpuFleets[{i}].model",
    )


def plan_tpu(tpu: TpuVmSettings, i: int) -> Resolution | None:
    """None when the slice is configured and no model is set (nothing for the planner to do)."""
    if tpu.model is None:
        return None
    named = tpu.accelerator_type
    if named is None and (tpu.generation is not None or tpu.topology is not None):
        probe = TpuVmArgs(
            zone="", network="", subnetwork="", generation=tpu.generation, topology=tpu.topology
        )
        found, _ = resolve_slice(probe)
        if found is None:
            return None  # the component's own validation names the bad generation or topology
        named = found.item.name
    return _plan(
        tpu.model,
        named,
        family=AcceleratorFamily.GOOGLE_TPU,
        spot=tpu.scheduling in ("spot", "preemptible"),
        type_key=f"tpuVms[{i}].acceleratorType",
        model_key=f"tpuVms[{i}].model",
        max_hosts=1,  # a served model runs on one host: the pinned vLLM TPU build serves no multi-host slice
    )


def _tpu_slice(tpu: TpuVmSettings, plan: Resolution | None) -> str | None:
    if tpu.accelerator_type is None and tpu.generation is None and tpu.topology is None and plan is not None:
        return plan.instance_type
    return tpu.accelerator_type


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
            validate_private_network(NETWORK_NAME, _network_args(network, ctx, settings.egress)),
            root=True,
        )
    ]
    problems += _egress_problems(settings)
    refs = NetworkRefs("(network)", "(network)", "(subnetwork)", network.cidr)  # stand-ins
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
    cache_nfs = _MODEL_CACHE_STAND_IN if cache is not None else None
    for i, fleet in enumerate(settings.gcp_gpu_fleets):
        key = f"gcpGpuFleets[{i}]"
        planned = plan_fleet(fleet, i)
        if planned.problems or planned.instance_type is None:
            problems += planned.problems
            continue
        fleet_args = _fleet_args(fleet, settings, refs, ctx, cache_nfs, planned.instance_type)
        problems += _keyed(key, validate_gpu_fleet(fleet.name, fleet_args, project=ctx.project))
        problems += _region_problems(f"{key}.zone", fleet_args.zone, ctx)
        if fleet.model_cache and cache is None:
            problems.append(Problem(f"{NAMESPACE}:{key}.modelCache", True, "needs filestoreModelCache set"))
    for i, tpu in enumerate(settings.tpu_vms):
        key = f"tpuVms[{i}]"
        planned_tpu = plan_tpu(tpu, i)
        if planned_tpu is not None and (planned_tpu.problems or planned_tpu.instance_type is None):
            problems += planned_tpu.problems
            continue
        tpu_args = _tpu_args(tpu, settings, refs, ctx, cache_nfs, _tpu_slice(tpu, planned_tpu))
        problems += _keyed(key, validate_tpu_vm(tpu.name, tpu_args, project=ctx.project))
        problems += _multi_host_model_problems(tpu, tpu_args, f"{NAMESPACE}:{key}.model")
        problems += _tpu_monitoring_problems(tpu, f"{NAMESPACE}:{key}.monitoringRanges")
        problems += _region_problems(f"{key}.zone", tpu_args.zone, ctx)
        if tpu.model_cache and cache is None:
            problems.append(Problem(f"{NAMESPACE}:{key}.modelCache", True, "needs filestoreModelCache set"))
    return problems


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.gcp.filestore_model_cache import FilestoreModelCache
    from inference_infra.components.gcp.gpu_fleet import GpuFleet
    from inference_infra.components.gcp.network import PrivateNetwork
    from inference_infra.components.gcp.tpu_vm import TpuVm

    ctx = GcpContext.from_config()
    network_settings = settings.gcp_network or GcpNetworkSettings()
    network = PrivateNetwork(NETWORK_NAME, _network_args(network_settings, ctx, settings.egress))
    refs = NetworkRefs(network.network.id, network.network.name, network.subnetwork.id, network_settings.cidr)
    built.gcp_network = refs
    exports: dict[str, Any] = {"gcpNetwork": network.network.name, "gcpSubnetwork": network.subnetwork.id}

    cache_nfs = None
    if settings.filestore_model_cache is not None:
        cache = FilestoreModelCache(CACHE_NAME, _cache_args(settings.filestore_model_cache, refs, ctx))
        cache_nfs = cache.nfs_target
        exports["gcpModelCache"] = cache.nfs_target

    fleets = {}
    for i, fleet in enumerate(settings.gcp_gpu_fleets):
        planned = plan_fleet(fleet, i)
        if planned.note:
            pulumi.log.info(f"GCP GpuFleet {fleet.name!r}: {planned.note}")
        machine_type = planned.instance_type or ""  # validate() rejected anything unresolved
        serving = engines(fleet.model, fleet.models, machine_type, fleet.serving_port)
        if note := cold_start_note(f"GCP GpuFleet {fleet.name!r}", fleet.model, serving, machine_type):
            pulumi.log.info(note)
        if not fleet.ops_agent:
            pulumi.log.info(
                f"GCP GpuFleet {fleet.name!r}: opsAgent false: no Ops Agent, so no GPU metrics "
                "(agent.googleapis.com/gpu) in Cloud Monitoring; the engines' /metrics stay for Prometheus"
            )
        component = GpuFleet(fleet.name, _fleet_args(fleet, settings, refs, ctx, cache_nfs, machine_type))
        zone = fleet.zone or ctx.zone or ""
        built.gcp_pools[fleet.name] = GcpPool(
            component, zone, serving, _cold_start(fleet.model, serving, machine_type), is_tpu=False
        )
        fleets[fleet.name] = {
            "machineType": machine_type,
            "instances": [vm.name for vm in component.instances],
            "internalIps": component.internal_ips,
            "serviceAccount": component.service_account_email,
            "reservation": component.reservation_name,
        }
    tpus = {}
    for i, tpu in enumerate(settings.tpu_vms):
        planned_tpu = plan_tpu(tpu, i)
        if planned_tpu is not None and planned_tpu.note:
            pulumi.log.info(f"TpuVm {tpu.name!r}: {planned_tpu.note}")
        slice_type = _tpu_slice(tpu, planned_tpu)
        serving_tpu = engines(tpu.model, tpu.models, slice_type, FIRST_ENGINE_PORT)
        if note := cold_start_note(f"TpuVm {tpu.name!r}", tpu.model, serving_tpu, slice_type or ""):
            pulumi.log.info(note)
        built_tpu = TpuVm(tpu.name, _tpu_args(tpu, settings, refs, ctx, cache_nfs, slice_type))
        built.gcp_pools[tpu.name] = GcpPool(
            built_tpu,
            tpu.zone or ctx.zone or "",
            serving_tpu,
            _cold_start(tpu.model, serving_tpu, slice_type or ""),
            is_tpu=True,
        )
        if tpu.monitoring_ranges and serving_tpu is not None:
            _tpu_metrics_firewall(tpu, serving_tpu, built_tpu, refs, ctx)
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
    if settings.gcp_model_bucket and settings.gcp_model_access_audit:
        exports["gcpModelAccessAudit"] = model_access_audit(ctx.project or "").service
    return exports


def _image_mirrors(settings: StackSettings, readers: list[Any]) -> dict[str, str]:
    """Artifact Registry remote repositories for egress.gcpImageMirrors (or grants on existing ones)."""
    from inference_infra.components.gcp.mirrors import ArtifactMirrors, ArtifactMirrorsArgs, reader_grants

    mirrors = dict(settings.egress.gcp_image_mirrors)
    if settings.egress.gcp_create_mirrors:
        ArtifactMirrors("image-mirrors", ArtifactMirrorsArgs(image_mirrors=mirrors, readers=readers))
    else:
        reader_grants("image-mirrors", mirrors, readers)
    return mirrors


def _multi_host_model_problems(tpu: TpuVmSettings, args: TpuVmArgs, key: str) -> list[Problem]:
    """A model on a multi-host slice is refused before anything is registered (no engine mode for it)."""
    if tpu.model is None:
        return []
    found, _ = resolve_slice(args)
    if found is None or not found.multi_host:
        return []
    return [multi_host_engine_problem(key, tpu.model.name, found.item)]


def _tpu_monitoring_problems(tpu: TpuVmSettings, key: str) -> list[Problem]:
    problems = []
    if tpu.monitoring_ranges and tpu.queued:
        problems.append(
            Problem(
                key,
                tpu.monitoring_ranges,
                "needs queued: false (a queued slice has no service account of "
                "its own for the firewall to target)",
            )
        )
    for i, cidr in enumerate(tpu.monitoring_ranges):
        try:
            private = ipaddress.ip_network(cidr, strict=True).is_private
        except ValueError:
            private = False
        if not private:
            problems.append(
                Problem(f"{key}[{i}]", cidr, "must be a private CIDR block such as '10.20.0.0/16'")
            )
    return problems


def _tpu_metrics_firewall(
    tpu: TpuVmSettings, serving: EngineConfig, built_tpu: Any, refs: NetworkRefs, ctx: GcpContext
) -> Any:
    """The monitoring cluster may reach the slice's engine ports (their /metrics), nothing else."""
    import pulumi_gcp as gcp

    first, last = serving.ports[0], serving.ports[-1]
    ports = str(first) if last == first else f"{first}-{last}"
    return gcp.compute.Firewall(
        f"{tpu.name}-metrics",
        network=refs.network_id,
        description=f"Engine metrics of TPU {tpu.name}, from the monitoring cluster only",
        direction="INGRESS",
        source_ranges=list(tpu.monitoring_ranges),
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[ports])],
        target_service_accounts=[built_tpu.service_account_email],
        log_config=gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA"),
        project=ctx.project,
    )


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


# --- config -> component inputs (shared by validate and deploy) --------------------------------


def _network_args(network: GcpNetworkSettings, ctx: GcpContext, egress: EgressSettings) -> PrivateNetworkArgs:
    return network.to_args(
        region=ctx.region or "",
        project=ctx.project,
        egress=egress.gcp,
        google_api_domain=egress.gcp_api_domain,
    )


# What a GCP node's boot would download from the internet (components/gcp/startup.py). Under egress.gcp
# 'endpoints-only' nothing is downloaded: images come from egress.gcpImageMirrors (Artifact Registry on
# pkg.dev), packages must be on the image (egress.gcpPreinstalled). Weights (gcloud storage) and logs and
# metrics writes go to Google APIs and stay reachable.
OPS_AGENT_PACKAGE = "google-cloud-ops-agent"


def _egress_problems(settings: StackSettings) -> list[Problem]:
    egress = settings.egress
    problems = [
        Problem(
            f"{NAMESPACE}:egress.{p.input.replace('image_mirrors', 'gcpImageMirrors')}", p.value, p.allowed
        )
        for p in mirror_problems(egress.gcp_image_mirrors)
    ]
    if egress.gcp != "endpoints-only":
        return problems
    found: list[tuple[str, str, list[str]]] = []
    for i, fleet in enumerate(settings.gcp_gpu_fleets):
        key = f"gcpGpuFleets[{i}]"
        machine = plan_fleet(fleet, i).instance_type or ""
        needs = []
        if fleet.ops_agent and OPS_AGENT_PACKAGE not in egress.gcp_preinstalled:
            needs.append(
                f"the Ops Agent from packages.cloud.google.com: list {OPS_AGENT_PACKAGE} in "
                f"egress.gcpPreinstalled if the image has it, or set {key}.opsAgent false"
            )
        needs += _image_needs(engines(fleet.model, fleet.models, machine, fleet.serving_port), egress)
        needs += _exporter_needs(egress)
        needs += _package_needs(fleet.model_cache, _local_ssds(fleet, machine), egress)
        if needs:
            found.append((key, fleet.name, needs))
    for i, tpu in enumerate(settings.tpu_vms):
        slice_type = _tpu_slice(tpu, plan_tpu(tpu, i))
        needs = _image_needs(engines(tpu.model, tpu.models, slice_type, FIRST_ENGINE_PORT), egress)
        needs += _package_needs(tpu.model_cache, 0, egress)
        if needs:
            found.append((f"tpuVms[{i}]", tpu.name, needs))
    return problems + [
        Problem(
            f"{NAMESPACE}:{key}",
            name,
            "cannot boot under egress.gcp 'endpoints-only': its startup script would need "
            f"{'; '.join(needs)}. Set those, or keep egress.gcp 'internet' (Cloud NAT) for it",
        )
        for key, name, needs in found
    ]


def _image_needs(planned: EngineConfig | None, egress: EgressSettings) -> list[str]:
    if planned is None:
        return []
    image = engine_image(planned.family).reference
    return [
        f"its engine image {image} from {host}: map {host} to an Artifact Registry repository in "
        "egress.gcpImageMirrors (LOCATION-docker.pkg.dev/PROJECT/REPOSITORY)"
        for host in unmirrored_hosts([image], egress.gcp_image_mirrors)
    ]


def _exporter_needs(egress: EgressSettings) -> list[str]:
    """A GPU fleet's host exporters (dcgm-exporter, node exporter), which the stack's Prometheus scrapes."""
    images = [DCGM_EXPORTER_IMAGE, NODE_EXPORTER_IMAGE]
    return [
        f"its host exporters' images from {host}: map {host} to an Artifact Registry repository in "
        "egress.gcpImageMirrors (LOCATION-docker.pkg.dev/PROJECT/REPOSITORY)"
        for host in unmirrored_hosts(images, egress.gcp_image_mirrors)
    ]


def _package_needs(model_cache: bool, local_ssds: int, egress: EgressSettings) -> list[str]:
    needs = []
    if model_cache and "nfs-common" not in egress.gcp_preinstalled:
        needs.append(
            "nfs-common for the Filestore cache from the Ubuntu archive: use an image with it and list "
            "nfs-common in egress.gcpPreinstalled, or drop modelCache"
        )
    if local_ssds > 1 and "mdadm" not in egress.gcp_preinstalled:
        needs.append(
            f"mdadm for its {local_ssds} local SSDs from the Ubuntu archive: use an image with it and list "
            "mdadm in egress.gcpPreinstalled"
        )
    return needs


def _local_ssds(fleet: GcpGpuFleetSettings, machine: str) -> int:
    item = find_instance_type(machine, Cloud.GCP) if machine else None
    return (item.local_nvme_disks if item is not None else 0) + fleet.local_ssd_count


def _egress_key(problem: Problem) -> Problem:
    """The network's egress inputs come from inference-infra:egress, not gcpNetwork."""
    for component_key, stack_key in (
        ("gcpNetwork.egress", "egress.gcp"),
        ("gcpNetwork.googleApiDomain", "egress.gcpApiDomain"),
    ):
        if problem.input == f"{NAMESPACE}:{component_key}":
            return Problem(f"{NAMESPACE}:{stack_key}", problem.value, problem.allowed)
    return problem


def _cache_args(cache: FilestoreCacheSettings, refs: NetworkRefs, ctx: GcpContext) -> FilestoreModelCacheArgs:
    default_location = ctx.region if tier_limits(cache.tier).regional else ctx.zone
    return cache.to_args(
        network=refs.network_name,
        location=cache.location or default_location or "",
        client_ranges=[refs.cidr],
        project=ctx.project,
    )


def engines(
    model: ServedModelSettings | None, models: list[str], machine: str | None, port: int
) -> EngineConfig | None:
    """The engines a VM or single-host TPU slice runs for its model (weights: the first of `models`)."""
    if model is None or not models or not machine:
        return None
    item = find_instance_type(machine, Cloud.GCP)
    if item is None or item.hosts > 1:
        return None  # unknown types are reported by the components; a model on a multi-host slice is refused
    try:
        return plan_engines(
            model=model.name,
            traffic=model.traffic(),
            precision=model.precision(),
            instance_type_name=machine,
            cloud=Cloud.GCP,
            extra_args=model.engine_args,
            first_port=port,
        )
    except ValueError:
        return None  # the planner's fit check reports it with the config key


def _cold_start(
    model: ServedModelSettings | None, planned: EngineConfig | None, machine: str
) -> ColdStart | None:
    if model is None or planned is None:
        return None
    return cold_start(
        weights_gib=weights_gib(model.name, model.precision()),
        source=WeightSource.GCS,
        instance_type=machine,
        family=planned.family,
    )


def serving(settings: StackSettings) -> dict[str, tuple[EngineConfig | None, ColdStart | None]]:
    """GCP pool name (GPU fleet or TPU VM) -> its engines and cold start, from the config alone."""
    found: dict[str, tuple[EngineConfig | None, ColdStart | None]] = {}
    for i, fleet in enumerate(settings.gcp_gpu_fleets):
        machine = plan_fleet(fleet, i).instance_type or ""
        planned = engines(fleet.model, fleet.models, machine, fleet.serving_port)
        found[fleet.name] = (planned, _cold_start(fleet.model, planned, machine))
    for i, tpu in enumerate(settings.tpu_vms):
        slice_type = _tpu_slice(tpu, plan_tpu(tpu, i))
        planned = engines(tpu.model, tpu.models, slice_type, FIRST_ENGINE_PORT)
        found[tpu.name] = (planned, _cold_start(tpu.model, planned, slice_type or ""))
    return found


def endpoint_args(
    endpoint: EndpointSettings,
    pools: list[EndpointPool],
    routes: list[Route],
    *,
    built: Built | None,
) -> GcpInferenceEndpointArgs:
    """The endpoint's arguments: from the built fleets, or placeholders for validation (built None)."""
    ctx = GcpContext.from_config()
    backends = {}
    for pool in pools:
        if built is None:
            backends[pool.name] = GcpPoolBackend(
                zone=ctx.zone or "", instances=["planned"], instance_ips=["planned"]
            )
            continue
        built_pool = built.gcp_pools[pool.name]
        component, zone = built_pool.component, built_pool.zone
        if built_pool.is_tpu:
            vm = component.vm
            address = vm.network_endpoints.apply(lambda eps: eps[0].ip_address if eps else "")
            backends[pool.name] = GcpPoolBackend(
                zone=zone, tpu_ips=[address], service_account_email=component.service_account_email
            )
        else:
            backends[pool.name] = GcpPoolBackend(
                zone=zone,
                instances=[vm.self_link for vm in component.instances],
                instance_ips=[
                    vm.network_interfaces.apply(lambda n: n[0].network_ip) for vm in component.instances
                ],
                service_account_email=component.service_account_email,
            )
    refs = built.gcp_network if built is not None else None
    return GcpInferenceEndpointArgs(
        region=ctx.region or "",
        network=refs.network_id if refs is not None else "planned",
        subnetwork=refs.subnetwork_id if refs is not None else "planned",
        pools=pools,
        backends=backends,
        routes=routes,
        proxy_subnet_cidr=endpoint.proxy_subnet_cidr,
        ssl_certificate=endpoint.ssl_certificate,
        internet_facing=endpoint.scheme == "internet-facing",
        public=endpoint.public,
        project=ctx.project,
    )


def deploy_endpoint(
    endpoint: EndpointSettings, pools: list[EndpointPool], routes: list[Route], built: Built
) -> dict[str, Any]:
    from inference_infra.components.gcp.endpoint import GcpInferenceEndpoint

    built = GcpInferenceEndpoint(endpoint.name, endpoint_args(endpoint, pools, routes, built=built))
    return {"cloud": "gcp", "ipAddress": built.ip_address}


def cold_start_note(
    subject: str, model: ServedModelSettings | None, planned: EngineConfig | None, machine: str
) -> str:
    if model is None or planned is None:
        return ""
    estimate = cold_start(
        weights_gib=weights_gib(model.name, model.precision()),
        source=WeightSource.GCS,
        instance_type=machine,
        family=planned.family,
    )
    return estimate.note(subject)


def _fleet_args(
    fleet: GcpGpuFleetSettings,
    settings: StackSettings,
    refs: NetworkRefs,
    ctx: GcpContext,
    cache_nfs: pulumi.Input[str] | None,
    machine_type: str,
) -> GpuFleetArgs:
    reservation = None
    if fleet.reservation is not None:
        reservation = GpuReservation(
            count=fleet.reservation.count, existing_name=fleet.reservation.existing_name
        )
    return GpuFleetArgs(
        machine_type=machine_type,
        zone=fleet.zone or ctx.zone or "",
        subnetwork=refs.subnetwork_id,
        capacity=Capacity(fleet.capacity),
        count=fleet.count,
        accelerator_type=fleet.accelerator_type,
        accelerator_count=fleet.accelerator_count,
        reservation=reservation,
        local_ssd_count=fleet.local_ssd_count,
        model_bucket=settings.gcp_model_bucket,
        model_uris=tuple(fleet.models),
        model_cache_nfs=cache_nfs if fleet.model_cache else None,
        boot_disk_size_gib=fleet.boot_disk_size_gib,
        network=refs.network_id,
        serving_port=fleet.serving_port,
        client_ranges=tuple(fleet.client_ranges),
        monitoring_ranges=tuple(fleet.monitoring_ranges),
        auto_shutdown=fleet.auto_shutdown,
        labels=dict(fleet.labels),
        project=ctx.project,
        engines=engines(fleet.model, fleet.models, machine_type, fleet.serving_port),
        image_mirrors=dict(settings.egress.gcp_image_mirrors),
        ops_agent=fleet.ops_agent,
        package_downloads=settings.egress.gcp != "endpoints-only",
    )


def _tpu_args(
    tpu: TpuVmSettings,
    settings: StackSettings,
    refs: NetworkRefs,
    ctx: GcpContext,
    cache_nfs: pulumi.Input[str] | None,
    accelerator_type: str | None,
) -> TpuVmArgs:
    return TpuVmArgs(
        zone=tpu.zone or ctx.zone or "",
        network=refs.network_id,
        subnetwork=refs.subnetwork_id,
        accelerator_type=accelerator_type,
        generation=tpu.generation,
        topology=tpu.topology,
        runtime_version=tpu.runtime_version,
        scheduling=TpuScheduling(tpu.scheduling),
        queued=tpu.queued,
        data_disks=tuple(
            TpuDataDisk(size_gib=d.size_gib, disk_type=d.disk_type, read_only=d.read_only)
            for d in tpu.data_disks
        ),
        # A queued slice cannot read the bucket (no service account of its own): leave it out.
        model_bucket=settings.gcp_model_bucket if tpu.models else None,
        model_uris=tuple(tpu.models),
        model_cache_nfs=cache_nfs if tpu.model_cache else None,
        secure_boot=tpu.secure_boot,
        accept_default_service_account=tpu.accept_default_service_account,
        auto_shutdown=tpu.auto_shutdown,
        labels=dict(tpu.labels),
        project=ctx.project,
        engines=engines(tpu.model, tpu.models, accelerator_type, FIRST_ENGINE_PORT),
        image_mirrors={} if tpu.queued else dict(settings.egress.gcp_image_mirrors),
        package_downloads=settings.egress.gcp != "endpoints-only",
    )


# --- problems: component input names -> config keys ------------------------------------------

_RENAMED = {"model_uris": "models", "model_cache_nfs": "modelCache"}
_ELSEWHERE = {
    "project": "gcp:project",
    "model_bucket": f"{NAMESPACE}:gcpModelBucket",
    "network": f"{NAMESPACE}:gcpNetwork",
    "subnetwork": f"{NAMESPACE}:gcpNetwork",
    "region": "gcp:region",
    "client_ranges": f"{NAMESPACE}:gcpNetwork.cidr",
}


def _config_key(prefix: str, component_input: str, *, root: bool = False) -> str:
    """'gcpGpuFleets[0]' + 'reservation.count' -> 'inference-infra:gcpGpuFleets[0].reservation.count'."""
    head = re.split(r"[.\[ ]", component_input, maxsplit=1)[0]
    if head in _ELSEWHERE:
        return _ELSEWHERE[head]
    if root and head == "name":
        return f"{NAMESPACE}:{prefix}"
    renamed = _RENAMED.get(head, head) + component_input[len(head) :]
    return f"{NAMESPACE}:{prefix}.{camel_path(renamed)}"


def _keyed(prefix: str, problems: list[Problem], *, root: bool = False) -> list[Problem]:
    return [Problem(_config_key(prefix, p.input, root=root), p.value, p.allowed) for p in problems]


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
