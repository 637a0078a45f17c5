"""Endpoints in front of the fleets: routes by model (host), `X-Model-Pool` header override, weighted canary.

routing.py holds the cloud-neutral part (pools, routes, their validation);
the AWS and GCP components live in components/aws/endpoint.py and
components/gcp/endpoint.py.
"""

from inference_infra.components.endpoints.routing import (
    ALB_PATH_PATTERNS,
    GUARDED_API_PREFIX,
    POOL_HEADER,
    EndpointPool,
    PoolBackend,
    PoolWeight,
    Route,
    default_host,
    validate_routes,
)

__all__ = [
    "ALB_PATH_PATTERNS",
    "GUARDED_API_PREFIX",
    "POOL_HEADER",
    "EndpointPool",
    "PoolBackend",
    "PoolWeight",
    "Route",
    "default_host",
    "validate_routes",
]
