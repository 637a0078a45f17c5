"""GcpInferenceEndpoint's arguments and their validation (pure: no provider SDK).

Apart from `endpoint.py` (which makes the load balancer) so that the stack config reads them without
loading the provider SDK.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import Renamed, arg, deprecated, renamed_inputs
from inference_infra.components.endpoints.routing import (
    EndpointPool,
    PoolBackend,
    Route,
    default_host,
    validate_routes,
)
from inference_infra.components.errors import Problem
from inference_infra.components.gcp.names import label_problems


@dataclass(frozen=True, kw_only=True)
class GcpPoolBackend(PoolBackend):
    """Where a pool's engines run: GPU VMs (instance self links) or TPU VMs (internal addresses).

    `GpuFleet.endpoint_pool()` and `TpuVm.endpoint_pool()` fill it in.
    """

    zone: str
    service_account_email: pulumi.Input[str] | None = None
    instances: Sequence[pulumi.Input[str]] = ()  # GPU VMs: instance self links
    instance_ips: Sequence[pulumi.Input[str]] = ()  # GPU VMs with several engines: their addresses
    tpu_ips: Sequence[pulumi.Input[str]] = ()  # TPU VMs: internal addresses
    # Elastic GPU pools: the managed instance group (its instance group URL, named port "engine").
    instance_group: pulumi.Input[str] | None = None
    # The load-balancer signal: RATE balancing at this many requests/s per VM (else UTILIZATION).
    max_rate_per_instance: float | None = None
    # Connection draining when the group lets a VM go: the longest generation finishes first.
    draining_seconds: int | None = None
    # A pool that may stand at zero VMs: the load balancer's 503 carries Retry-After (seconds).
    retry_after_seconds: int | None = None


@renamed_inputs(
    Renamed("timeout_seconds", "request_timeout_seconds"),
    Renamed("labels", "tags"),
)
@dataclass(frozen=True, kw_only=True)
class GcpInferenceEndpointArgs:
    network: pulumi.Input[str] = arg(
        doc="The fleets' VPC (PrivateNetwork.network.id): the proxy-only subnet is made in it.", stack=False
    )
    subnetwork: pulumi.Input[str] = arg(
        doc="The fleets' subnetwork: the forwarding rule's internal address comes from it.", stack=False
    )
    pools: Sequence[EndpointPool] = arg(
        doc="The fleets behind the endpoint, each from fleet.endpoint_pool() (GpuFleet or TpuVm).",
        stack=False,
    )
    routes: Sequence[Route] = arg(
        (), "Routes by Host to pools with weights (canary); every pool also answers X-Model-Pool."
    )
    region: str | None = arg(
        None, "The region of the load balancer (the fleets' region). Default: the gcp:region config."
    )
    proxy_subnet_cidr: str = arg(
        "10.40.64.0/23",
        "The proxy-only subnet of the load balancer's Envoy proxies: a private range of /26 or larger, "
        "unused in the network.",
    )
    ssl_certificate: pulumi.Input[str] | None = arg(
        None, "A regional SSL certificate (its id or self link): HTTPS on 443; without it HTTP on 80."
    )
    request_timeout_seconds: int = arg(
        900,
        "Backend response timeout: long generations stream for minutes.",
        ge=1,
        le=86400,
    )
    internet_facing: bool = arg(
        False, "Not offered: the internal Application Load Balancer has no external scheme."
    )
    public: bool = arg(False, "Not offered on GCP (an internal load balancer).")
    project: str | None = arg(None, "The project. Default: the gcp:project config.", stack=False)
    tags: Mapping[str, str] = arg(factory=dict, doc="More labels on the forwarding rule (GCP label rules).")
    backends: Mapping[str, GcpPoolBackend] = arg(
        factory=dict,
        doc="Deprecated since 0.2.0: build each pool with fleet.endpoint_pool(), which carries its "
        "backend. Pool name -> its VMs or TPU addresses, for pools without one.",
        stack=False,
    )
    request_logging: bool | None = arg(
        None,
        "Backend services log requests to Cloud Logging. Default: on when the registered cost tags' "
        "Environment is production (a name starting with prod or prd), off elsewhere.",
    )
    request_log_sample_rate: float = arg(
        1.0, "With request logging: the share of requests logged (1.0 logs every request).", ge=0.0, le=1.0
    )

    def __post_init__(self) -> None:
        if self.backends:
            deprecated(
                "GcpInferenceEndpointArgs(backends=...) is deprecated since 0.2.0 and goes in the next "
                "release; build each pool with fleet.endpoint_pool(), which carries its backend",
                stacklevel=5,
            )

    def backend_of(self, pool: EndpointPool) -> GcpPoolBackend | None:
        """The pool's own backend, else the deprecated `backends` entry for it."""
        if isinstance(pool.backend, GcpPoolBackend):
            return pool.backend
        return self.backends.get(pool.name)


def gcp_host(route: Route, model: str) -> str:
    """GCP host rules take a leading '*' only: the default is the model's DNS label (`llama-3-1-8b`)."""
    return route.host or default_host(model).removesuffix(".*")


def validate_gcp_endpoint(args: GcpInferenceEndpointArgs, *, region: str | None = None) -> list[Problem]:
    """Every problem with the endpoint's input; `region` is the default for args.region (gcp:region)."""
    problems = validate_routes(args.pools, args.routes)
    if (args.region or region) is None:
        problems.append(Problem("region", None, "is required: pass region or set the gcp:region config"))
    for i, route in enumerate(args.routes):
        if route.host is not None and ("*" in route.host[1:] or "?" in route.host):
            problems.append(
                Problem(f"routes[{i}].host", route.host, "may use '*' only as its first character on GCP")
            )
    if args.internet_facing:
        problems.append(
            Problem(
                "internet_facing",
                True,
                "is not offered on GCP: the endpoint is an internal Application Load Balancer",
            )
        )
    try:
        proxy = ipaddress.ip_network(args.proxy_subnet_cidr)
        if not proxy.is_private or proxy.prefixlen > 26:
            problems.append(
                Problem(
                    "proxy_subnet_cidr", args.proxy_subnet_cidr, "must be a private range of /26 or larger"
                )
            )
    except ValueError:
        problems.append(Problem("proxy_subnet_cidr", args.proxy_subnet_cidr, "is not a CIDR block"))
    # request_timeout_seconds and request_log_sample_rate: their arg(ge=..., le=...) bounds are checked
    # before this runs, by check_types in GcpInferenceEndpoint and by the typed stack config (the same
    # bounds) in infra/endpoints_stack.py.
    problems += label_problems("tags", args.tags)
    for pool in args.pools:
        backend = args.backend_of(pool)
        if backend is None:
            other = (
                f" ({type(pool.backend).__name__} is not a GCP backend)" if pool.backend is not None else ""
            )
            problems.append(
                Problem(
                    f"pools[{pool.name}]",
                    pool.name,
                    f"has no backend{other}: build it with fleet.endpoint_pool() of a GCP GpuFleet or TpuVm",
                )
            )
        elif not (backend.instances or backend.tpu_ips or backend.instance_group is not None):
            problems.append(Problem(f"pools[{pool.name}]", pool.name, "has no VMs or TPU VMs to serve"))
        elif backend.instance_group is not None and len(pool.ports) > 1:
            problems.append(
                Problem(
                    f"pools[{pool.name}]",
                    list(pool.ports),
                    "is a managed instance group with several engine ports; a group is a backend through "
                    "one named port, so an elastic pool runs one engine per VM",
                )
            )
    return problems
