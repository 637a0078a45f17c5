"""The stack's endpoints: internal load balancers in front of the fleets that serve models.

`inference-infra:endpoints` lists endpoints per cloud. Each pool named is a
fleet of that cloud with engines (a model whose weights the fleet prefetches);
routes pick pools by Host with weights, and every pool answers the
`X-Model-Pool` header. This part runs after the AWS and GCP parts and reads
the fleets they built.
"""

from __future__ import annotations

from typing import Any

import pulumi

from inference_infra.components.aws.endpoint import InferenceEndpointArgs, validate_endpoint
from inference_infra.components.endpoints import EndpointPool, PoolWeight, Route
from inference_infra.components.errors import Problem
from inference_infra.components.serving import EngineConfig
from inference_infra.components.serving.cold_start import ColdStart
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, EndpointSettings, StackSettings, camel_path

_PLANNED = "planned"


def _routes(endpoint: EndpointSettings) -> list[Route]:
    return [
        Route(
            pools=[PoolWeight(p.pool, p.weight) for p in r.pools],
            model=r.model,
            host=r.host,
            sticky_seconds=r.sticky_seconds,
        )
        for r in endpoint.routes
    ]


def _pool(name: str, engines: EngineConfig, start: ColdStart | None, **wiring: Any) -> EndpointPool:
    slow = start.slow_start_seconds() if start is not None else 90
    return EndpointPool(
        name=name,
        model=engines.served_model_name,
        ports=engines.ports,
        slow_start_seconds=slow,
        unhealthy_after_seconds=slow,
        **wiring,
    )


def _aws_serving(settings: StackSettings) -> dict[str, tuple[EngineConfig | None, ColdStart | None]]:
    """AWS pool name -> its engines and cold start, from the config alone (validate)."""
    from inference_infra.infra import aws_stack

    found: dict[str, tuple[EngineConfig | None, ColdStart | None]] = {}
    for key, kind, group in aws_stack._fleet_lists(settings):
        for i, config in enumerate(group):
            resolution = aws_stack.resolve(config, kind, f"{NAMESPACE}:{key}[{i}]")
            if resolution.instance_type is None or resolution.problems:
                found[config.name] = (None, None)
                continue
            found[config.name] = (
                aws_stack.engines(config, resolution.instance_type),
                aws_stack.fleet_cold_start(config, resolution.instance_type),
            )
    return found


def _gcp_serving(settings: StackSettings) -> dict[str, tuple[EngineConfig | None, ColdStart | None]]:
    from inference_infra.infra import gcp_stack

    return gcp_stack.serving(settings)


def _aws_args(
    endpoint: EndpointSettings, pools: list[EndpointPool], vpc_id: Any, subnets: list[Any]
) -> InferenceEndpointArgs:
    return InferenceEndpointArgs(
        vpc_id=vpc_id,
        subnet_ids=subnets,
        pools=pools,
        routes=_routes(endpoint),
        client_cidr_blocks=list(endpoint.client_cidr_blocks),
        client_security_group_ids=list(endpoint.client_security_group_ids),
        internet_facing=endpoint.scheme == "internet-facing",
        public=endpoint.public,
        certificate_arn=endpoint.certificate_arn,
        idle_timeout_seconds=endpoint.idle_timeout_seconds,
        access_logs_bucket=endpoint.access_logs_bucket,
        region=pulumi.Config("aws").get("region") or "us-east-1",
    )


def validate(settings: StackSettings) -> list[Problem]:
    problems: list[Problem] = []
    names = [e.name for e in settings.endpoints]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem(f"{NAMESPACE}:endpoints[].name", duplicate, "must be unique"))
    serving = {
        "aws": _aws_serving(settings) if any(e.cloud == "aws" for e in settings.endpoints) else {},
        "gcp": _gcp_serving(settings) if any(e.cloud == "gcp" for e in settings.endpoints) else {},
    }
    for i, endpoint in enumerate(settings.endpoints):
        where = f"{NAMESPACE}:endpoints[{i}]"
        fleets = serving[endpoint.cloud]
        pools: list[EndpointPool] = []
        for name in endpoint.pool_names():
            engines, start = fleets.get(name, (None, None))
            if name not in fleets:
                problems.append(
                    Problem(
                        f"{where}.pools",
                        name,
                        f"is not a {endpoint.cloud.upper()} fleet of this stack ({sorted(fleets)})",
                    )
                )
            elif engines is None:
                problems.append(
                    Problem(
                        f"{where}.pools",
                        name,
                        "serves no model: give the fleet a model and its weights (modelPrefix / models)",
                    )
                )
            else:
                pools.append(_pool(name, engines, start, instance_ids=[_PLANNED], security_group_id=_PLANNED))
        if len(pools) != len(endpoint.pool_names()):
            continue
        if endpoint.cloud == "aws":
            subnets = [_PLANNED, _PLANNED]
            found = validate_endpoint(_aws_args(endpoint, pools, _PLANNED, subnets))
        else:
            from inference_infra.components.gcp.endpoint import validate_gcp_endpoint

            found = validate_gcp_endpoint(gcp_args_for_validation(endpoint, pools))
        problems += [Problem(f"{where}.{camel_path(p.input)}", p.value, p.allowed) for p in found]
    return problems


def gcp_args_for_validation(endpoint: EndpointSettings, pools: list[EndpointPool]) -> Any:
    from inference_infra.infra import gcp_stack

    return gcp_stack.endpoint_args(endpoint, pools, _routes(endpoint), built=None)


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.aws.endpoint import InferenceEndpoint

    exports: dict[str, Any] = {}
    for endpoint in settings.endpoints:
        if endpoint.cloud == "aws":
            pools = []
            for name in endpoint.pool_names():
                pool = built.aws_pools[name]
                fleet, engines, start = pool.fleet, pool.engines, pool.cold_start
                count = len(fleet.instance_types)
                ids = [fleet.instance_ids.apply(lambda v, k=k: v[k]) for k in range(count)]
                pools.append(
                    _pool(name, engines, start, instance_ids=ids, security_group_id=fleet.security_group_id)
                )
            args = _aws_args(endpoint, pools, built.aws_vpc_id, built.aws_subnet_ids)
            lb = InferenceEndpoint(endpoint.name, args)
            exports.setdefault("endpoints", {})[endpoint.name] = {"cloud": "aws", "dnsName": lb.dns_name}
        else:
            from inference_infra.infra import gcp_stack

            pools = [built.gcp_pools[name].component.endpoint_pool(name) for name in endpoint.pool_names()]
            exports.setdefault("endpoints", {})[endpoint.name] = gcp_stack.deploy_endpoint(
                endpoint, pools, _routes(endpoint), built
            )
    return exports
