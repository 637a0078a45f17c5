"""What a GCP GPU fleet and a TPU VM share: their inputs, weights from Cloud Storage, and the checks.

`GcpNodeArgs` is the base of `GpuFleetArgs` and `TpuVmArgs`, on the cross-cloud `FleetCommonArgs`
(capacity counts, `model`, `serving_port`, `tags`, `kms_key`, `auto_shutdown`): the network the
nodes live in, their weights (`GcsWeights`), who may call and scrape them, and whether their network
reaches the internet. The functions here are pure; the components call them before they register
anything, and the reference stack gets the same answers from them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import ip_network
from typing import Any

import pulumi

from inference_infra.components.arguments import Renamed, arg, deprecated, renamed_inputs
from inference_infra.components.catalog import Cloud
from inference_infra.components.endpoints.routing import EndpointPool, PoolBackend
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import FleetCommonArgs, FleetServing, plan_serving
from inference_infra.components.gcp.names import bucket_problems, label_problems, model_uri_problems
from inference_infra.components.gcp.startup import BOOT_PACKAGES
from inference_infra.components.serving import EngineConfig, validate_engine
from inference_infra.components.serving.cold_start import ColdStart, WeightSource
from inference_infra.components.serving.engines import METRICS_PORT_OFFSET

# Where Google's load balancer health checks come from (https://cloud.google.com/load-balancing/docs/health-checks).
HEALTH_CHECK_RANGES = (ip_network("35.191.0.0/16"), ip_network("130.211.0.0/22"))
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_SECRET_RE = re.compile(
    r"^(?:projects/(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])/secrets/)?(?P<name>[A-Za-z0-9_-]{1,255})"
    r"(?:/versions/(?P<version>latest|[1-9][0-9]{0,9}))?$"
)
# A pool without a cold-start estimate (engines given the old way) ramps and is judged over this long.
DEFAULT_SLOW_START_SECONDS = 90


@dataclass(frozen=True)
class GcsWeights:
    """Where a GCP node's weights come from: folders in one Cloud Storage bucket, the first one served."""

    bucket: str = arg(
        doc="The Cloud Storage bucket holding the weights (a name, without gs://): the nodes' service "
        "account may read only the listed model folders in it (roles/storage.objectViewer with a prefix "
        "condition; the bucket needs uniform bucket-level access), or the whole bucket when none is listed."
    )
    uris: Sequence[str] = arg(
        (),
        "gs://<bucket>/<folder> model folders the nodes copy at every boot (to local SSD, else the Filestore "
        "cache, else the boot disk) and verify against their pinned manifest; the engines serve the first. "
        "Folder paths: letters, digits, '.', '_', '-' and '/'.",
    )
    manifest_sha256: Mapping[str, str] = arg(
        factory=dict,
        doc="Each folder's pinned manifest: folder URI (as in uris) -> the SHA-256 of its "
        "inference-manifest.json, which `inference-infra models manifest gs://...` prints. Required for "
        "every folder: a node downloads only the files that manifest lists and serves nothing when the "
        "manifest in the bucket has another digest.",
    )

    def pinned(self, uri: str) -> str | None:
        """The pinned manifest digest of a folder (lower-case), or None."""
        wanted = uri.rstrip("/")
        for key, value in self.manifest_sha256.items():
            if isinstance(key, str) and key.rstrip("/") == wanted and isinstance(value, str):
                return value.lower()
        return None


def _weights(bucket: str | None, uris: Sequence[str] | None) -> GcsWeights | None:
    # The previous release's inputs had no pins: the fleet's checks then ask for manifest_sha256.
    if bucket is None and not uris:
        return None
    return GcsWeights(bucket or "", tuple(uris or ()))


def _weights_from_bucket(value: Any, kwargs: Any) -> dict[str, Any]:
    """The old `model_bucket` (with `model_uris`, when given too) became `weights=GcsWeights(...)`."""
    return {"weights": _weights(value, kwargs.pop("model_uris", None))}


def _weights_from_uris(value: Any, kwargs: Any) -> dict[str, Any]:
    return {"weights": _weights(kwargs.pop("model_bucket", None), value)}


@renamed_inputs(
    Renamed("model_bucket", "weights", _weights_from_bucket),
    Renamed("model_uris", "weights", _weights_from_uris),
    Renamed("client_ranges", "client_cidr_blocks"),
    Renamed("monitoring_ranges", "monitoring_cidr_blocks"),
    Renamed("labels", "tags"),
)
@dataclass(frozen=True, kw_only=True)
class GcpNodeArgs(FleetCommonArgs):
    """The inputs a GCP GPU fleet and a TPU VM share (see GpuFleetArgs, TpuVmArgs)."""

    subnetwork: pulumi.Input[str] = arg(
        doc="The subnetwork the nodes take their private addresses from (PrivateNetwork.subnetwork.id).",
        stack=False,
    )
    network: pulumi.Input[str] | None = arg(
        None,
        "The subnetwork's VPC (PrivateNetwork.network.id): the firewall rules for client_cidr_blocks and "
        "monitoring_cidr_blocks are made in it.",
        stack=False,
    )
    zone: str | None = arg(
        None, "The zone the nodes run in, e.g. us-central1-a. Default: the gcp:zone config."
    )
    project: str | None = arg(None, "The project. Default: the gcp:project config.", stack=False)
    weights: GcsWeights | None = arg(
        None,
        "The model folders in Cloud Storage the nodes copy at boot, and the one bucket they may read; with "
        "model, the engines serve the first folder.",
    )
    model_cache_nfs: pulumi.Input[str] | None = arg(
        None,
        "FilestoreModelCache.nfs_target: mount the shared weights cache (read-only) and serve from it "
        "when the machine has no local SSD.",
        stack=False,
    )
    secure_boot: bool = arg(
        True,
        "Shielded VM Secure Boot: only signed kernel modules load (the image's NVIDIA driver must be "
        "signed). False is a stated trade (vTPM and integrity monitoring stay on GPU VMs).",
    )
    client_cidr_blocks: Sequence[str] = arg(
        (),
        "Refused when set: only the load balancer reaches the engines' API ports (a GcpInferenceEndpoint "
        "admits its own proxies and health checks). Kept for one release so old stacks get that explanation.",
    )
    monitoring_cidr_blocks: Sequence[str] = arg(
        (),
        "Private CIDRs of the monitoring cluster (its pods or nodes) that may scrape the node: the engines' "
        "metrics-only ports (each engine's port + 1000: GET /metrics, nothing of the API), and on GPU VMs "
        "dcgm-exporter (9400) and node exporter (9100); nothing else is opened. Needs network.",
    )
    image_mirrors: Mapping[str, str] = arg(
        factory=dict,
        doc="Upstream registry host -> Artifact Registry Docker repository "
        "('LOCATION-docker.pkg.dev/PROJECT/REPOSITORY'): the node pulls every image it runs from there, "
        "by the same digest. Needed without internet egress.",
        stack=False,
    )
    internet_egress: bool = arg(
        True,
        "False when the nodes' network has no route to the internet (PrivateNetwork egress "
        "'endpoints-only': Google APIs only). The boot then downloads nothing, and the component refuses "
        "itself unless every image it runs has a mirror and every package its boot needs is preinstalled.",
        stack=False,
    )
    package_downloads: bool | None = arg(
        None,
        "Install a package the image lacks (Ops Agent, nfs-common, mdadm) at boot. Default: only with "
        "internet egress; without it a missing package is one boot-log line naming it.",
        stack=False,
    )
    preinstalled_packages: Sequence[str] = arg(
        (),
        "Packages the image carries (any of google-cloud-ops-agent, nfs-common, mdadm), which a node "
        "without internet egress then needs not download.",
        stack=False,
    )
    api_key_secret: str | None = arg(
        None,
        "Secret Manager secret holding the engines' API key (clients send it as a Bearer token): NAME (in "
        "the nodes' project) or projects/PROJECT/secrets/NAME, optionally /versions/N (default: latest). "
        "Each engine fetches it at start into a 0600 file of its own runtime folder, never into metadata or "
        "a unit; the nodes' service account may read only this secret. Default: the secret "
        "inference-infra-<name>-api-key, which must exist before the engines start.",
    )
    engines: EngineConfig | None = arg(
        None,
        "Deprecated since 0.2.0: give model and the component plans its engines. Engines planned "
        "elsewhere (components.serving.plan_engines), serving the first weights folder.",
        stack=False,
    )

    def __post_init__(self) -> None:
        if self.engines is not None:
            deprecated(
                f"{type(self).__name__}(engines=...) is deprecated since 0.2.0 and goes in the next release; "
                "use model=ServedModel(...): the component plans its engines",
                stacklevel=5,
            )

    @property
    def weight_uris(self) -> tuple[str, ...]:
        """The weights folders the nodes copy (the first is served); () without weights."""
        return tuple(self.weights.uris) if self.weights is not None else ()

    @property
    def weight_bucket(self) -> str | None:
        """The one bucket the nodes may read; None without weights."""
        return self.weights.bucket if self.weights is not None and self.weights.bucket else None

    @property
    def model_uris(self) -> tuple[str, ...]:
        deprecated(f"{type(self).__name__}.model_uris is deprecated; use weights.uris")
        return self.weight_uris

    @property
    def model_bucket(self) -> str | None:
        deprecated(f"{type(self).__name__}.model_bucket is deprecated; use weights.bucket")
        return self.weight_bucket

    @property
    def downloads(self) -> bool:
        """Whether the boot installs a package the image lacks."""
        return self.internet_egress if self.package_downloads is None else self.package_downloads


# --- checks shared by GPU fleets and TPU VMs ------------------------------------------------------


def weights_problems(args: GcpNodeArgs) -> list[Problem]:
    """The bucket is a bucket name and every folder lies inside it."""
    if args.weights is None:
        return []
    bucket = args.weights.bucket
    problems = []
    if not bucket:
        problems.append(Problem("weights.bucket", bucket, "is required: the nodes may read only this bucket"))
    else:
        problems += bucket_problems("weights.bucket", bucket)
    uris = tuple(args.weights.uris)
    problems += model_uri_problems("weights.uris", uris, bucket or None)
    problems += pin_problems(args.weights)
    return problems


def pin_problems(weights: GcsWeights) -> list[Problem]:
    """A pinned manifest digest (64 hex digits) for every folder, and no pin for a folder not listed."""
    problems = []
    listed = {u.rstrip("/") for u in weights.uris if isinstance(u, str)}
    for uri in weights.uris:
        pin = weights.pinned(uri)
        if pin is None:
            problems.append(
                Problem(
                    f"weights.manifest_sha256[{uri!r}]",
                    None,
                    "is required: pin the SHA-256 of the folder's inference-manifest.json, which "
                    f"`inference-infra models manifest {uri}` prints; nodes serve only the files a pinned "
                    "manifest lists",
                )
            )
        elif not _SHA256_RE.match(pin):
            problems.append(
                Problem(f"weights.manifest_sha256[{uri!r}]", pin, "must be a SHA-256: 64 hex digits")
            )
    for key in weights.manifest_sha256:
        if not isinstance(key, str) or key.rstrip("/") not in listed:
            problems.append(
                Problem(
                    "weights.manifest_sha256",
                    key,
                    "pins a folder that is not in weights.uris; each key is one of the folder URIs",
                )
            )
    return problems


def api_key_secret_problems(args: GcpNodeArgs) -> list[Problem]:
    """The API key's secret is a Secret Manager name (it reaches a unit's command line)."""
    if args.api_key_secret is None or _SECRET_RE.match(args.api_key_secret):
        return []
    return [
        Problem(
            "api_key_secret",
            args.api_key_secret,
            "must be a Secret Manager secret: NAME or projects/PROJECT/secrets/NAME (NAME: letters, digits, "
            "'_' and '-', up to 255), optionally followed by /versions/N or /versions/latest",
        )
    ]


def default_api_key_secret(name: str) -> str:
    """The secret a fleet's engines read their API key from when api_key_secret is not given."""
    return f"inference-infra-{name}-api-key"


def _api_key_secret(name: str, args: GcpNodeArgs) -> re.Match[str] | None:
    return _SECRET_RE.match(args.api_key_secret or default_api_key_secret(name))


def api_key_secret_version(name: str, args: GcpNodeArgs) -> str | None:
    """The secret version the engines read: [projects/P/secrets/]NAME/versions/V (V default latest)."""
    match = _api_key_secret(name, args)
    if match is None:
        return None
    prefix = f"projects/{match['project']}/secrets/" if match["project"] else ""
    return f"{prefix}{match['name']}/versions/{match['version'] or 'latest'}"


def api_key_secret_id(name: str, args: GcpNodeArgs, project: str) -> str | None:
    """projects/P/secrets/NAME of the API key's secret (P: the secret's project, else the nodes')."""
    match = _api_key_secret(name, args)
    if match is None:
        return None
    return f"projects/{match['project'] or project}/secrets/{match['name']}"


def ingress_problems(args: GcpNodeArgs) -> list[Problem]:
    """The serving port, and the private ranges that may call or scrape the node."""
    problems = []
    if not 1 <= args.serving_port <= 65535:
        problems.append(Problem("serving_port", args.serving_port, "must be a TCP port (1-65535)"))
    if args.monitoring_cidr_blocks and args.network is None:
        problems.append(
            Problem("network", None, "is required with monitoring_cidr_blocks (the firewall rule's network)")
        )
    for i, cidr in enumerate(args.monitoring_cidr_blocks):
        try:
            private = ip_network(cidr, strict=True).is_private
        except ValueError:
            private = False
        if not private:
            problems.append(
                Problem(
                    f"monitoring_cidr_blocks[{i}]", cidr, "must be a private CIDR block such as '10.8.0.0/14'"
                )
            )
    if args.client_cidr_blocks:
        problems.append(
            Problem(
                "client_cidr_blocks",
                list(args.client_cidr_blocks),
                "are refused: only the load balancer reaches the engines' API ports (a GcpInferenceEndpoint "
                "admits its proxy-only subnet and Google's health-check ranges to the pools it fronts, "
                "through fleet.endpoint_pool()); put callers behind the endpoint",
            )
        )
    return problems


def node_input_problems(args: GcpNodeArgs) -> list[Problem]:
    """The egress inputs agree (what the boot needs is startup.offline_problems); tags are GCP labels."""
    problems = []
    if args.package_downloads and not args.internet_egress:
        problems.append(
            Problem(
                "package_downloads",
                True,
                "cannot download packages without internet egress (internet_egress False); leave it unset",
            )
        )
    problems += api_key_secret_problems(args)
    for i, package in enumerate(args.preinstalled_packages):
        if package not in BOOT_PACKAGES:
            problems.append(
                Problem(
                    f"preinstalled_packages[{i}]",
                    package,
                    f"is not a package the boot installs; one of {', '.join(BOOT_PACKAGES)}",
                )
            )
    problems += label_problems("tags", args.tags)
    return problems


# --- the node's serving -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeServing:
    """What each node serves: planned from `model` (serving), or the deprecated `engines` input as given."""

    serving: FleetServing | None = None
    engines: EngineConfig | None = None
    problems: tuple[Problem, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def cold_start(self) -> ColdStart | None:
        return self.serving.cold_start if self.serving is not None else None


def plan_node_serving(args: GcpNodeArgs, machine: str, *, subject: str) -> NodeServing:
    """The engines a node of `machine` runs for the args' model (weights: the first folder), or problems."""
    uris = args.weight_uris
    if args.engines is not None:
        problems = [Problem(f"engines.{p.input}", p.value, p.allowed) for p in validate_engine(args.engines)]
        if args.model is not None:
            problems.append(
                Problem(
                    "engines",
                    args.engines.served_model_name,
                    "is the previous release's input: give model (the component plans the engines) or "
                    "engines, not both",
                )
            )
        if not uris:
            problems.append(
                Problem(
                    "engines", args.engines.served_model_name, "need weights with a gs:// folder to serve"
                )
            )
        if args.engines.first_port != args.serving_port:
            problems.append(
                Problem(
                    "engines.first_port", args.engines.first_port, f"must be serving_port {args.serving_port}"
                )
            )
        return NodeServing(engines=args.engines, problems=tuple(problems))
    if args.model is None:
        return NodeServing()
    if not uris:
        note = (
            f"{subject}: model {args.model.name} chose or checked the machine, but no engine runs: "
            "give weights=GcsWeights(bucket, uris) to serve it"
        )
        return NodeServing(notes=(note,))
    serving, problems = plan_serving(
        args.model, machine=machine, cloud=Cloud.GCP, source=WeightSource.GCS, first_port=args.serving_port
    )
    if serving is None:
        return NodeServing(problems=tuple(problems))
    return NodeServing(serving, serving.engines, notes=(serving.cold_start.note(subject),))


def port_range(engines: EngineConfig | None, first_port: int) -> str:
    """A firewall's port or range: one port per engine on a node."""
    count = engines.engines if engines is not None else 1
    return str(first_port) if count == 1 else f"{first_port}-{first_port + count - 1}"


def metrics_port_range(engines: EngineConfig | None, first_port: int) -> list[str]:
    """The engines' metrics-only ports (GET /metrics only: components/serving/metrics_proxy.py), as a
    firewall's port or range; none without engines. Never the API ports: those answer the load balancer."""
    if engines is None:
        return []
    return [port_range(engines, first_port + METRICS_PORT_OFFSET)]


def endpoint_pool_of(
    name: str, engines: EngineConfig, cold_start: ColdStart | None, backend: PoolBackend
) -> EndpointPool:
    """The pool an endpoint fronts: the engines' model and ports, slow start from the cold start."""
    slow = cold_start.slow_start_seconds() if cold_start is not None else DEFAULT_SLOW_START_SECONDS
    return EndpointPool(
        name=name,
        model=engines.served_model_name,
        ports=engines.ports,
        slow_start_seconds=slow,
        unhealthy_after_seconds=slow,
        backend=backend,
    )


def provider_zone() -> str | None:
    """The zone a node takes when its args name none: gcp:zone, else <gcp:region>-a."""
    import pulumi_gcp as gcp

    if gcp.config.zone:
        return gcp.config.zone
    return f"{gcp.config.region}-a" if gcp.config.region else None


def log_notes(notes: Sequence[str]) -> None:
    """The component's planner and cold-start notes, in `plan` output and `pulumi up` logs."""
    for note in notes:
        pulumi.log.info(note)
