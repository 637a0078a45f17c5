"""The stack's endpoints: internal load balancers in front of the fleets that serve models.

`inference-infra:endpoints` lists endpoints per cloud. Each pool named is a
fleet of that cloud with engines (a model whose weights the fleet prefetches);
routes pick pools by Host with weights, and every pool answers the
`X-Model-Pool` header. This part runs after the AWS and GCP parts and reads
the fleets they built: an AWS fleet hands over its pool (`fleet.endpoint_pool()`),
and at validation time the fleets' own plan (`aws_stack.fleet_serving`) says what
each would serve.
"""

from __future__ import annotations

from typing import Any

from inference_infra.components.aws.endpoint import InferenceEndpointArgs, validate_endpoint
from inference_infra.components.endpoints import EndpointPool, PoolWeight, Route
from inference_infra.components.errors import Problem
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


def _aws_serving(settings: StackSettings) -> dict[str, tuple[Any, Any]]:
    """AWS pool name -> the engines and cold start its fleet would plan, from the config alone (validate)."""
    from inference_infra.infra import aws_stack

    return {
        name: (serving.engines, serving.cold_start) if serving is not None else (None, None)
        for name, serving in aws_stack.fleet_serving(settings).items()
    }


def _gcp_serving(settings: StackSettings) -> dict[str, tuple[Any, Any]]:
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
        request_timeout_seconds=endpoint.idle_timeout_seconds,
        access_logs_bucket=endpoint.access_logs_bucket,
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
                wiring = {"instance_ids": [_PLANNED], "security_group_id": _PLANNED}
                pools.append(EndpointPool.from_engines(name, engines, start, **wiring))
        if len(pools) != len(endpoint.pool_names()):
            continue
        if endpoint.cloud == "aws":
            subnets = [_PLANNED, _PLANNED]
            found = validate_endpoint(_aws_args(endpoint, pools, _PLANNED, subnets))
        else:
            from inference_infra.components.gcp.endpoint import validate_gcp_endpoint

            found = validate_gcp_endpoint(gcp_args_for_validation(endpoint, pools))
        problems += [Problem(f"{where}.{_config_key(p.input)}", p.value, p.allowed) for p in found]
    return problems


# Endpoint inputs whose stack config key still has the previous release's name.
_CONFIG_KEYS = {"request_timeout_seconds": "idleTimeoutSeconds"}


def _config_key(component_input: str) -> str:
    return _CONFIG_KEYS.get(component_input) or camel_path(component_input)


def gcp_args_for_validation(endpoint: EndpointSettings, pools: list[EndpointPool]) -> Any:
    from inference_infra.infra import gcp_stack

    return gcp_stack.endpoint_args(endpoint, pools, _routes(endpoint), built=None)


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.aws.endpoint import InferenceEndpoint

    exports: dict[str, Any] = {}
    for endpoint in settings.endpoints:
        if endpoint.cloud == "aws":
            pools = [built.aws_pools[name].endpoint_pool() for name in endpoint.pool_names()]
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
