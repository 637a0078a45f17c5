"""What a GCP GPU fleet and a TPU VM share: the checks of their inputs and the serving they plan.

Their shared inputs (`GcpNodeArgs`, `GcsWeights`) live in `node_args.py`, free of the provider SDK:
the network the nodes live in, their weights, who may call and scrape them, and whether their network
reaches the internet. The functions here are pure; the components call them before they register
anything, and the reference stack gets the same answers from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from ipaddress import ip_network
from typing import Any

import pulumi

from inference_infra.components.arguments import deprecated
from inference_infra.components.catalog import Cloud
from inference_infra.components.catalog.zones import gcp_network_region_problems, gcp_zones
from inference_infra.components.endpoints.routing import EndpointPool, PoolBackend
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.fleet import CapacityMode, FleetServing
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.gcp.names import (
    bucket_problems,
    label_problems,
    model_uri_problems,
    name_problems,
    zone_problems,
)
from inference_infra.components.gcp.node_args import GcpNodeArgs as GcpNodeArgs
from inference_infra.components.gcp.node_args import GcsWeights as GcsWeights
from inference_infra.components.gcp.node_services import startup_host_problems
from inference_infra.components.gcp.startup import (
    BOOT_PACKAGES,
    StartupConfig,
    offline_problems,
    validate_startup,
)
from inference_infra.components.models.manifest import is_pinned_digest
from inference_infra.components.serving import EngineConfig
from inference_infra.components.serving.cold_start import ColdStart, WeightSource
from inference_infra.components.serving.engines import METRICS_PORT_OFFSET
from inference_infra.components.tagging import bool_tag
from inference_infra.components.validation import blocking_problems

# Where Google's load balancer health checks come from (https://cloud.google.com/load-balancing/docs/health-checks).
HEALTH_CHECK_RANGES = (ip_network("35.191.0.0/16"), ip_network("130.211.0.0/22"))
_SECRET_RE = re.compile(
    r"^(?:projects/(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])/secrets/)?(?P<name>[A-Za-z0-9_-]{1,255})"
    r"(?:/versions/(?P<version>latest|[1-9][0-9]{0,9}))?$"
)
# A pool without a cold-start estimate (engines given the old way) ramps and is judged over this long.
DEFAULT_SLOW_START_SECONDS = 90


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
    if isinstance(weights.manifest_sha256, str) and len(weights.uris) != 1:
        return [
            Problem(
                "weights.manifest_sha256",
                weights.manifest_sha256,
                f"is one digest for {len(weights.uris)} folders: a string pins the one folder of uris; "
                "for several, map each folder URI to its digest",
            )
        ]
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
        elif not is_pinned_digest(pin):
            problems.append(
                Problem(f"weights.manifest_sha256[{uri!r}]", pin, "must be a SHA-256: 64 hex digits")
            )
    for key in weights.pins():
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
    if args.api_key_secret is None or _SECRET_RE.fullmatch(args.api_key_secret):
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
    return _SECRET_RE.fullmatch(args.api_key_secret or default_api_key_secret(name))


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
    problems = []  # the serving port: components/fleet/plan.py's port rules
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


def gcp_place_problems(name: str, zone: str | None, project: str | None) -> list[Problem]:
    """The node's name, zone and project (the args' own, else the gcp provider's configuration)."""
    problems = name_problems("name", name)
    problems += (
        zone_problems("zone", zone)
        if zone
        else [Problem("zone", None, "is required: pass zone or set the gcp:zone or gcp:region config")]
    )
    if project is None:
        problems.append(Problem("project", None, "is required: pass project or set the gcp:project config"))
    return problems


def gcs_weights(args: GcpNodeArgs, subject: str) -> tuple[bool, str | None]:
    """(the node has a gs:// folder to serve from, the note saying a model is not served without one)."""
    if args.weight_uris:
        return True, None
    if args.model is None:
        return False, None
    return False, (
        f"{subject}: model {args.model.name} chose or checked the machine, but no engine runs: "
        "give weights=GcsWeights(bucket, uris) to serve it"
    )


@dataclass(frozen=True)
class GcpNodeProfile:
    """What GCP GPU fleets and TPU VMs contribute alike to the fleet skeleton (components/fleet/plan.py):
    the args' zone else the provider's, GCS weights with their pins, engines given without a cold start,
    the cold start's note. Types and bounds are the skeleton's (check_types, step 0). `project` and
    `default_zone` are the defaults for the args' own (the gcp provider's configuration)."""

    project: str | None
    default_zone: str | None = None
    cloud = Cloud.GCP
    weight_source = WeightSource.GCS
    weights_rule = "need weights with a gs:// folder to serve"

    def key(self, name: str) -> str:
        return name

    def zone(self, args: GcpNodeArgs) -> str | None:
        return args.zone or self.default_zone

    def weights(self, args: GcpNodeArgs, subject: str) -> tuple[bool, str | None]:
        return gcs_weights(args, subject)

    def given_serving(self, args: GcpNodeArgs, machine: str) -> FleetServing | None:
        return None

    def serving_notes(self, subject: str, serving: FleetServing | None) -> list[str]:
        return [serving.cold_start.note(subject)] if serving is not None else []

    def weights_problems(self, args: GcpNodeArgs) -> list[Problem]:
        return weights_problems(args)

    def startup(self, name: str, args: GcpNodeArgs, plan: FleetPlan) -> StartupConfig | None:
        """The node's boot inputs (`node_startup` and the node's own), None before its machine is resolved."""
        raise NotImplementedError

    def boot(self, name: str, args: GcpNodeArgs, plan: FleetPlan) -> tuple[Any, list[Problem]]:
        startup = self.startup(name, args, plan)
        assert startup is not None  # the skeleton asks for the boot of a resolved machine only
        problems = validate_startup(startup)
        if not args.internet_egress:
            problems += offline_problems(startup, args.preinstalled_packages)
        # Every host the rendered boot reaches, against the network (node_services.py).
        problems += startup_host_problems(startup, internet_egress=args.internet_egress, reported=problems)
        return startup, problems

    def with_boot(self, name: str, args: GcpNodeArgs, plan: FleetPlan) -> FleetPlan:
        """A kept plan with its startup script's inputs read again from the args the node renders with."""
        startup = self.startup(name, args, plan) if plan.boot is not None else None
        return plan if startup is None else replace(plan, boot=startup)


def node_startup(name: str, args: GcpNodeArgs, engines: EngineConfig | None, **node: Any) -> StartupConfig:
    """The boot inputs GPU VMs and TPU VMs read alike from their args (weights and their pins, the
    engines and their API key, the model cache, mirrors, downloads), with the node's own (`node`)."""
    return StartupConfig(
        model_uris=args.weight_uris,
        manifest_sha256=args.weights.pins() if args.weights is not None else {},
        allow_code=engines.allows_code if engines is not None else False,
        api_key_secret=api_key_secret_version(name, args)
        if engines is not None and args.weight_uris
        else None,
        model_cache=args.model_cache_nfs is not None,
        engines=engines,
        image_mirrors=dict(args.image_mirrors),
        package_downloads=args.downloads,
        **node,
    )


def node_plan(
    subject: str, name: str, args: GcpNodeArgs, plan: FleetPlan | None, profile: type[GcpNodeProfile]
) -> tuple[FleetPlan, str | None]:
    """The plan a GPU fleet or TPU VM registers, and its project: made from the args with the provider's
    project and zone, or the kept `plan` with its boot read again; refused (`subject` names the component)
    on any problem, the zone's region against the subnetwork's and the provider's included."""
    import pulumi_gcp as gcp

    project = args.project or gcp.config.project or None
    raise_if_invalid(subject, blocking_problems(args))
    if plan is None:
        plan = fleet_plan.plan_fleet(name, args, profile(project, provider_zone()))
    else:
        plan = profile(project).with_boot(name, args, plan)
    placed = (
        gcp_network_region_problems(
            "zone", plan.zone, subnetwork=args.subnetwork, provider_region=gcp.config.region or None
        )
        if plan.zone and not plan.problems
        else []
    )
    raise_if_invalid(subject, [*plan.problems, *placed])
    return plan, project


def node_labels(args: GcpNodeArgs, mode: CapacityMode, **own: str) -> dict[str, str]:
    """A node's labels: its own (component, name), its capacity mode, the args' tags, and `auto-shutdown`
    when the args set it (the stack transform adds the cost labels)."""
    labels = {**own, "capacity": mode.value, **args.tags}
    if args.auto_shutdown is not None:
        labels["auto-shutdown"] = bool_tag(args.auto_shutdown)
    return labels


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
    """The zone a node takes when its args name none: gcp:zone, else the first zone of gcp:region
    (`catalog.zones`: us-east1 and europe-west1 have no zone a; elsewhere <region>-a)."""
    import pulumi_gcp as gcp

    if gcp.config.zone:
        return gcp.config.zone
    return gcp_zones(gcp.config.region).names[0] if gcp.config.region else None


def log_notes(notes: Sequence[str]) -> None:
    """The component's planner and cold-start notes, in `plan` output and `pulumi up` logs."""
    for note in notes:
        pulumi.log.info(note)


def capacity_mode_alias(module: str, old: str) -> Callable[[str], Any]:
    """A module's `__getattr__` that gives `old`, the previous release's GCP enum of `module`, as
    `components.fleet.CapacityMode`, with a DeprecationWarning that blames the user's line."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (a module's __getattr__)
        if name == old:
            deprecated(
                f"inference_infra.components.gcp.{old} is deprecated since 0.2.0 and goes in the next "
                "release; use inference_infra.components.fleet.CapacityMode",
            )
            return CapacityMode
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


class GcpNode(pulumi.ComponentResource):
    """What a GPU fleet and a TPU VM are alike: planned before anything is registered (`plan`), in one
    zone, bought one way (`mode`), serving the engines they planned (`serving`, `engines`, `cold_start`)."""

    zone: str
    mode: CapacityMode
    serving: FleetServing | None  # engines and cold start, when the node serves a model
    engines: EngineConfig | None
    cold_start: ColdStart | None

    plan: FleetPlan  # everything the node decided before registering anything (components/fleet/plan.py)

    def _begin(
        self,
        kind: str,
        name: str,
        args: GcpNodeArgs,
        plan: FleetPlan | None,
        profile: type[GcpNodeProfile],
        opts: pulumi.ResourceOptions | None,
    ) -> str:
        """Plan the node (`node_plan`: refused on any problem), then register it as
        `inference-infra:gcp:<kind>`, log its notes and keep what it planned; returns its project."""
        plan, project = node_plan(f"{kind} {name!r}", name, args, plan, profile)
        self.plan = plan
        super().__init__(f"inference-infra:gcp:{kind}", name, None, opts)
        log_notes(plan.notes)
        assert project is not None
        assert plan.zone is not None
        self._name = name
        self.zone, self.mode = plan.zone, plan.mode
        self.serving, self.engines, self.cold_start = plan.serving, plan.engines, plan.cold_start
        return project

    def _serves(self, args: GcpNodeArgs) -> bool:
        """The node runs engines (so it reads their API key)."""
        return self.engines is not None and bool(args.weight_uris)
