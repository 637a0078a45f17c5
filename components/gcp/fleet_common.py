"""What a GCP GPU fleet and a TPU VM share: the checks of their inputs and the serving they plan.

Their shared inputs (`GcpNodeArgs`, `GcsWeights`) live in `node_args.py`, free of the provider SDK:
the network the nodes live in, their weights, who may call and scrape them, and whether their network
reaches the internet. The functions here are pure; the components call them before they register
anything, and the reference stack gets the same answers from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import ip_network

import pulumi

from inference_infra.components.catalog import Cloud
from inference_infra.components.endpoints.routing import EndpointPool, PoolBackend
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import FleetServing, plan_serving
from inference_infra.components.gcp.names import bucket_problems, label_problems, model_uri_problems
from inference_infra.components.gcp.node_args import GcpNodeArgs as GcpNodeArgs
from inference_infra.components.gcp.node_args import GcsWeights as GcsWeights
from inference_infra.components.gcp.startup import BOOT_PACKAGES
from inference_infra.components.serving import EngineConfig, validate_engine
from inference_infra.components.serving.cold_start import ColdStart, WeightSource

# Where Google's load balancer health checks come from (https://cloud.google.com/load-balancing/docs/health-checks).
HEALTH_CHECK_RANGES = (ip_network("35.191.0.0/16"), ip_network("130.211.0.0/22"))
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
    problems += model_uri_problems("weights.uris", tuple(args.weights.uris), bucket or None)
    return problems


def ingress_problems(args: GcpNodeArgs) -> list[Problem]:
    """The serving port, and the private ranges that may call or scrape the node."""
    problems = []
    if not 1 <= args.serving_port <= 65535:
        problems.append(Problem("serving_port", args.serving_port, "must be a TCP port (1-65535)"))
    for input_name, ranges in (
        ("client_cidr_blocks", args.client_cidr_blocks),
        ("monitoring_cidr_blocks", args.monitoring_cidr_blocks),
    ):
        if ranges and args.network is None:
            problems.append(
                Problem("network", None, f"is required with {input_name} (the firewall rule's network)")
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
    for i, cidr in enumerate(args.client_cidr_blocks):
        try:
            block = ip_network(cidr, strict=True)
        except ValueError:
            problems.append(
                Problem(f"client_cidr_blocks[{i}]", cidr, "must be a CIDR block such as '10.0.0.0/8'")
            )
            continue
        if not block.is_private and not any(block.subnet_of(hc) for hc in HEALTH_CHECK_RANGES):
            problems.append(
                Problem(
                    f"client_cidr_blocks[{i}]",
                    cidr,
                    "must be a private range or a Google health-check range (35.191.0.0/16, "
                    "130.211.0.0/22): serving ports are never opened to the internet "
                    "(put a load balancer in front)",
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
