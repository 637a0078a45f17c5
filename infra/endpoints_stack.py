"""The stack's endpoints: internal load balancers in front of the fleets that serve models.

`inference-infra:endpoints` lists endpoints per cloud (`cloud: aws | gcp`). Each pool named is a
fleet of that cloud with engines (a model whose weights the fleet prefetches); routes pick pools by
Host with weights, and every pool answers the `X-Model-Pool` header. This part runs after the AWS
and GCP parts and reads the fleets they built: a fleet hands over its pool (`fleet.endpoint_pool()`),
and at validation time the fleets' own plan (`plans.planned_pools`) says what each would serve.
"""

from __future__ import annotations

from typing import Any

from inference_infra.components.aws.endpoint_args import validate_endpoint
from inference_infra.components.endpoints import EndpointPool
from inference_infra.components.errors import Problem
from inference_infra.infra.built import Built
from inference_infra.infra.config import NAMESPACE, AwsEndpointSettings, StackSettings
from inference_infra.infra.plans import planned_pools
from inference_infra.infra.pools import PlannedPool
from inference_infra.infra.schema import camel_path

_PLANNED = "planned"


def validate(settings: StackSettings) -> list[Problem]:
    problems: list[Problem] = []
    names = [e.name for e in settings.endpoints]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem(f"{NAMESPACE}:endpoints[].name", duplicate, "must be unique"))
    planned: dict[str, dict[str, PlannedPool]] = {"aws": {}, "gcp": {}}
    for pool in planned_pools(settings, frozenset(e.cloud for e in settings.endpoints)):
        planned[pool.cloud][pool.name] = pool
    for i, endpoint in enumerate(settings.endpoints):
        where = f"{NAMESPACE}:endpoints[{i}]"
        fleets = planned[endpoint.cloud]
        pools: list[EndpointPool] = []
        for name in endpoint.pool_names():
            fleet = fleets.get(name)
            if fleet is None:
                problems.append(
                    Problem(
                        f"{where}.pools",
                        name,
                        f"is not a {endpoint.cloud.upper()} fleet of this stack ({sorted(fleets)})",
                    )
                )
            elif fleet.serving is None and fleet.serves_model:
                continue  # the fleet's model cannot be planned: its own problems say why, once
            elif fleet.serving is None:
                problems.append(
                    Problem(
                        f"{where}.pools",
                        name,
                        "serves no model: give the fleet a model and its weights (modelPrefix / models)",
                    )
                )
            else:
                wiring = {"instance_ids": [_PLANNED], "security_group_id": _PLANNED}
                serving = fleet.serving
                pools.append(EndpointPool.from_engines(name, serving.engines, serving.cold_start, **wiring))
        if len(pools) != len(endpoint.pool_names()):
            continue
        if isinstance(endpoint, AwsEndpointSettings):
            args = endpoint.to_args(vpc_id=_PLANNED, subnet_ids=[_PLANNED, _PLANNED], pools=pools)
            found = validate_endpoint(args)
        else:
            from inference_infra.components.gcp.endpoint_args import validate_gcp_endpoint
            from inference_infra.infra import gcp_stack

            found = validate_gcp_endpoint(gcp_stack.endpoint_args(endpoint, pools, built=None))
        problems += [Problem(f"{where}.{camel_path(p.input)}", p.value, p.allowed) for p in found]
    return problems


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    exports: dict[str, Any] = {}
    for endpoint in settings.endpoints:
        if isinstance(endpoint, AwsEndpointSettings):
            from inference_infra.components.aws.endpoint import InferenceEndpoint

            pools = [built.aws_pools[name].endpoint_pool() for name in endpoint.pool_names()]
            args = endpoint.to_args(vpc_id=built.aws_vpc_id, subnet_ids=built.aws_subnet_ids, pools=pools)
            lb = InferenceEndpoint(endpoint.name, args)
            built.aws_endpoints[endpoint.name] = lb
            exports.setdefault("endpoints", {})[endpoint.name] = {"cloud": "aws", "dnsName": lb.dns_name}
        else:
            from inference_infra.infra import gcp_stack

            pools = [built.gcp_pools[name].component.endpoint_pool(name) for name in endpoint.pool_names()]
            exports.setdefault("endpoints", {})[endpoint.name] = gcp_stack.deploy_endpoint(
                endpoint, pools, built
            )
    return exports
