"""GcpInferenceEndpoint: an internal regional Application Load Balancer in front of GPU VMs and TPU VMs.

- a proxy-only subnet (REGIONAL_MANAGED_PROXY) in the region, which the
  load balancer's Envoy proxies use;
- per pool a backend service (INTERNAL_MANAGED, HTTP) with a regional HTTP
  health check on the engine's `/health`: GPU VMs through an unmanaged
  instance group per pool (named port per engine; one engine per VM), or a
  zonal network endpoint group of `GCE_VM_IP_PORT` endpoints (several engines
  per VM); TPU VMs through a zonal `NON_GCP_PRIVATE_IP_PORT` NEG of their
  internal addresses (a TPU VM is not a Compute Engine instance);
- a URL map: `X-Model-Pool: <pool>` header rules first, then one host rule per
  route with weighted backend services (canary); every rule matches only the API the engine's key
  guards (prefix `/v1/`) and `/health`; anything else (another path such as `/invocations`,
  `/tokenize` or `/metrics`, an unknown Host without a pool header) is answered 404 by the load
  balancer, whose every default aborts with 404 before a backend is picked;
- an HTTP target proxy (HTTPS with a regional certificate), a forwarding rule
  with an internal address in the fleets' subnetwork;
- a firewall rule admitting the engine ports from the proxy-only subnet and
  Google's health-check ranges, to the pools' service accounts only.

In production (the registered cost tags' Environment starts with prod or prd) every backend service
logs its requests to Cloud Logging (`request_logging`, `request_log_sample_rate` to change it).
"""

from __future__ import annotations

import math

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.endpoints.routing import (
    GUARDED_API_PREFIX,
    POOL_HEADER,
    EndpointPool,
    route_model,
)
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.gcp.elastic import ENGINE_PORT_NAME
from inference_infra.components.gcp.endpoint_args import (
    GcpInferenceEndpointArgs,
    GcpPoolBackend,
    gcp_host,
    validate_gcp_endpoint,
)
from inference_infra.components.serving import HEALTH_PATH
from inference_infra.components.tagging import in_production
from inference_infra.components.validation import check_types

# Google's health-check probers (https://cloud.google.com/load-balancing/docs/health-check-concepts#ip-ranges).
HEALTH_CHECK_RANGES = ("35.191.0.0/16", "130.211.0.0/22")
HEALTH_INTERVAL_SECONDS = 30
# A URL map must name a default (defaultService, defaultUrlRedirect or weighted defaultRouteAction services);
# pulumi-gcp 10.2's RegionUrlMap has no default custom error response. So the defaults keep a backend service
# the API asks for and add a defaultRouteAction whose fault injection aborts every request reaching it with
# 404 before a backend is picked (faultInjectionPolicy.abort: httpStatus 200..599, percentage 0..100; fault
# injection runs on every Application Load Balancer but the classic one). An unknown Host, or the catch-all
# host without an X-Model-Pool header naming a pool, gets 404 instead of the first pool's engines.
NOT_FOUND_ACTION = {"fault_injection_policy": {"abort": {"http_status": 404, "percentage": 100.0}}}


def api_match_rules(**extra: object) -> list[dict[str, object]]:
    """A route rule's matches: the engine's guarded API (prefix /v1/) or its health path, each with
    `extra` (e.g. the pool header). Match rules of one route rule are ORed; each takes exactly one of
    prefixMatch / fullPathMatch / regexMatch / pathTemplateMatch, case-sensitive unless ignoreCase
    (terraform-provider-google google/services/compute/resource_compute_region_url_map.go)."""
    return [{"prefix_match": GUARDED_API_PREFIX, **extra}, {"full_path_match": HEALTH_PATH, **extra}]


class GcpInferenceEndpoint(pulumi.ComponentResource):
    ip_address: pulumi.Output[str]
    backend_services: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: GcpInferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None):
        region = args.region or gcp.config.region or None
        raise_if_invalid(
            f"GcpInferenceEndpoint {name!r}", check_types(args) or validate_gcp_endpoint(args, region=region)
        )
        super().__init__("inference-infra:gcp:InferenceEndpoint", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        assert region is not None  # validated above
        self._name, self._args, self._region = name, args, region
        self._logging = in_production() if args.request_logging is None else args.request_logging
        common = {"project": args.project} if args.project else {}
        proxy_subnet = gcp.compute.Subnetwork(
            f"{name}-proxy-only",
            network=args.network,
            region=self._region,
            ip_cidr_range=args.proxy_subnet_cidr,
            purpose="REGIONAL_MANAGED_PROXY",
            role="ACTIVE",
            description=f"{name}: Envoy proxies of the internal Application Load Balancer",
            opts=child,
            **common,
        )
        self.backend_services = {p.name: self._backend(p, self._backend_of(p)) for p in args.pools}
        self._firewall(proxy_subnet)
        url_map = self._url_map()
        if args.ssl_certificate is not None:
            proxy = gcp.compute.RegionTargetHttpsProxy(
                f"{name}-proxy",
                region=self._region,
                url_map=url_map.id,
                ssl_certificates=[args.ssl_certificate],
                opts=child,
                **common,
            )
            port = "443"
        else:
            proxy = gcp.compute.RegionTargetHttpProxy(
                f"{name}-proxy", region=self._region, url_map=url_map.id, opts=child, **common
            )
            port = "80"
        rule = gcp.compute.ForwardingRule(
            f"{name}-rule",
            region=self._region,
            load_balancing_scheme="INTERNAL_MANAGED",
            ip_protocol="TCP",
            port_range=port,
            target=proxy.id,
            network=args.network,
            subnetwork=args.subnetwork,
            network_tier="PREMIUM",
            labels={"component": "inference-endpoint", "endpoint": name, **args.tags},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[proxy_subnet]),
            **common,
        )
        self.ip_address = rule.ip_address
        self.register_outputs({"ip_address": self.ip_address, "backend_services": self.backend_services})

    def _backend_of(self, pool: EndpointPool) -> GcpPoolBackend:
        backend = self._args.backend_of(pool)
        assert backend is not None  # validated above
        return backend

    def _backend(self, pool: EndpointPool, backend: GcpPoolBackend) -> pulumi.Output[str]:
        name, args = f"{self._name}-{pool.name}", self._args
        child = pulumi.ResourceOptions(parent=self)
        common = {"project": args.project} if args.project else {}
        unhealthy = max(2, min(10, math.ceil(pool.unhealthy_after_seconds / HEALTH_INTERVAL_SECONDS)))
        check = gcp.compute.RegionHealthCheck(
            f"{name}-hc",
            region=self._region,
            check_interval_sec=HEALTH_INTERVAL_SECONDS,
            timeout_sec=10,
            healthy_threshold=2,
            unhealthy_threshold=unhealthy,
            http_health_check={"request_path": HEALTH_PATH, "port_specification": "USE_SERVING_PORT"},
            opts=child,
            **common,
        )
        service: dict[str, object] = {}
        if backend.instance_group is not None:
            # An elastic pool: its managed instance group, reached on its named port. The load-balancer
            # signal balances by rate (the autoscaler reads the same per-VM rate); connection draining lets
            # a leaving VM finish its longest generation.
            if backend.max_rate_per_instance is not None:
                mode = {"balancing_mode": "RATE", "max_rate_per_instance": backend.max_rate_per_instance}
            else:
                mode = {"balancing_mode": "UTILIZATION"}
            backends = [{"group": backend.instance_group, "capacity_scaler": 1.0, **mode}]
            service["port_name"] = ENGINE_PORT_NAME
            if backend.draining_seconds is not None:
                service["connection_draining_timeout_sec"] = backend.draining_seconds
        elif backend.tpu_ips or len(pool.ports) > 1:
            kind = "NON_GCP_PRIVATE_IP_PORT" if backend.tpu_ips else "GCE_VM_IP_PORT"
            group = gcp.compute.NetworkEndpointGroup(
                f"{name}-neg",
                zone=backend.zone,
                network=args.network,
                subnetwork=args.subnetwork if kind == "GCE_VM_IP_PORT" else None,
                network_endpoint_type=kind,
                default_port=pool.ports[0],
                description=f"{pool.name}: {pool.model} engines",
                opts=child,
                **common,
            )
            addresses = backend.tpu_ips or backend.instance_ips
            for i, address in enumerate(addresses):
                for port in pool.ports:
                    gcp.compute.NetworkEndpoint(
                        f"{name}-{i}-{port}",
                        network_endpoint_group=group.name,
                        zone=backend.zone,
                        ip_address=address,
                        port=port,
                        instance=(backend.instances[i] if kind == "GCE_VM_IP_PORT" else None),
                        opts=child,
                        **common,
                    )
            backends = [{"group": group.id, "balancing_mode": "RATE", "max_rate_per_endpoint": 100}]
        else:
            group = gcp.compute.InstanceGroup(
                f"{name}-ig",
                zone=backend.zone,
                instances=list(backend.instances),
                named_ports=[{"name": "engine", "port": pool.ports[0]}],
                description=f"{pool.name}: {pool.model} engines",
                opts=child,
                **common,
            )
            backends = [{"group": group.self_link, "balancing_mode": "UTILIZATION", "capacity_scaler": 1.0}]
            service["port_name"] = "engine"
        backend_service = gcp.compute.RegionBackendService(
            f"{name}-backend",
            region=self._region,
            load_balancing_scheme="INTERNAL_MANAGED",
            protocol="HTTP",
            timeout_sec=args.request_timeout_seconds,
            health_checks=check.id,
            backends=backends,
            locality_lb_policy="LEAST_REQUEST",
            description=f"{pool.name} serving {pool.model}",
            opts=child,
            **service,
            **common,
            **(
                {"log_config": {"enable": True, "sample_rate": args.request_log_sample_rate}}
                if self._logging
                else {}
            ),
        )
        return backend_service.id

    def _firewall(self, proxy_subnet: gcp.compute.Subnetwork) -> None:
        args = self._args
        ports = sorted({p for pool in args.pools for p in pool.ports})
        backends = [self._backend_of(pool) for pool in args.pools]
        accounts = [b.service_account_email for b in backends if b.service_account_email is not None]
        gcp.compute.Firewall(
            f"{self._name}-to-engines",
            network=args.network,
            direction="INGRESS",
            source_ranges=[args.proxy_subnet_cidr, *HEALTH_CHECK_RANGES],
            allows=[{"protocol": "tcp", "ports": [str(p) for p in ports]}],
            target_service_accounts=accounts or None,
            description=f"{self._name}: engine ports from the load balancer's proxies and health checks only",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[proxy_subnet]),
            **({"project": args.project} if args.project else {}),
        )

    def _retry_after(self, pool: EndpointPool, key: str) -> dict[str, object]:
        """A pool that may stand at zero VMs: Retry-After on what it answers, the 503 included.

        With no VM in the group the load balancer (Envoy-based) has no healthy backend and answers
        503 itself: Envoy's router sends "no healthy upstream" as 503 (envoyproxy/envoy
        source/common/router/router.cc, Filter::sendNoHealthyUpstreamResponse) and applies the
        route's response headers to that local reply too. pulumi-gcp 10.2's RegionUrlMap has no custom
        error response policy, so the header rides on the route's header action, on every response of
        the pool (RFC 9110 section 10.2.3 gives it a meaning on 503 and 3xx responses only).
        """
        backend = self._backend_of(pool)
        if backend.retry_after_seconds is None:
            return {}
        header = {
            "header_name": "Retry-After",
            "header_value": str(backend.retry_after_seconds),
            "replace": True,
        }
        return {key: {"response_headers_to_adds": [header]}}

    def _url_map(self) -> gcp.compute.RegionUrlMap:
        args = self._args
        pools = {p.name: p for p in args.pools}
        header_rules = [
            {
                "priority": i + 1,
                "match_rules": api_match_rules(
                    header_matches=[{"header_name": POOL_HEADER, "exact_match": p.name}]
                ),
                "service": self.backend_services[p.name],
                **self._retry_after(p, "header_action"),
            }
            for i, p in enumerate(args.pools)
        ]
        host_rules = [{"hosts": ["*"], "path_matcher": "pools"}]
        unmatched = self.backend_services[args.pools[0].name]  # required by the API, never reached
        matchers = [
            {
                "name": "pools",
                "default_service": unmatched,
                "default_route_action": NOT_FOUND_ACTION,
                "route_rules": header_rules,
            }
        ]
        for i, route in enumerate(args.routes):
            model = route_model(route, pools) or ""
            host = gcp_host(route, model)
            weighted = {
                "priority": len(header_rules) + 1,
                "match_rules": api_match_rules(),
                "route_action": {
                    "weighted_backend_services": [
                        {
                            "backend_service": self.backend_services[w.pool],
                            "weight": w.weight,
                            **self._retry_after(pools[w.pool], "header_action"),
                        }
                        for w in route.pools
                    ]
                },
            }
            host_rules.append({"hosts": [host], "path_matcher": f"route{i}"})
            matchers.append(
                {
                    "name": f"route{i}",
                    "default_service": unmatched,
                    "default_route_action": NOT_FOUND_ACTION,
                    "route_rules": [*header_rules, weighted],
                }
            )
        return gcp.compute.RegionUrlMap(
            f"{self._name}-urls",
            region=self._region,
            default_service=unmatched,
            default_route_action=NOT_FOUND_ACTION,
            host_rules=host_rules,
            path_matchers=matchers,
            description=f"{self._name}: {POOL_HEADER} header, then host per model with weighted pools",
            opts=pulumi.ResourceOptions(parent=self),
            **({"project": args.project} if args.project else {}),
        )


__all__ = [
    "GcpInferenceEndpoint",
    "GcpInferenceEndpointArgs",
    "GcpPoolBackend",
    "gcp_host",
    "validate_gcp_endpoint",
]
