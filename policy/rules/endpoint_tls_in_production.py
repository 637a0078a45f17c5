"""endpoint-tls-in-production: production endpoints speak TLS, even inside the network.

Prompts and generations are user data. Inside a VPC plain HTTP is the
library's default (no certificate to manage); in production the listener
should be HTTPS: an AWS ALB listener with protocol HTTPS (or an NLB listener
with TLS), a GCP target proxy of the HTTPS kind. Advisory: a production stack
may decide that its network is trusted. The environment is the policy
config's `environment`, else the resource's Environment tag; `production`
lists the environments this applies to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Severity

from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    passed,
    resource_policy,
    rule_metadata,
    show,
)
from inference_infra.policy.rules._tags import not_production, production_environment, production_schema

NAME = "endpoint-tls-in-production"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.ADVISORY
DESCRIPTION = "Load balancer listeners and target proxies in production use HTTPS or TLS."
CONFIG_SCHEMA = production_schema()

AWS_LISTENERS = frozenset({"aws:lb/listener:Listener", "aws:alb/listener:Listener"})
GCP_PLAIN_PROXIES = frozenset(
    {"gcp:compute/regionTargetHttpProxy:RegionTargetHttpProxy", "gcp:compute/targetHttpProxy:TargetHttpProxy"}
)
TLS_PROTOCOLS = frozenset({"HTTPS", "TLS"})


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    if resource.type not in AWS_LISTENERS and resource.type not in GCP_PLAIN_PROXIES:
        return not_applicable("applies to AWS load balancer listeners and GCP HTTP target proxies")
    environment = production_environment(resource, config)
    if environment is None:
        return not_production(resource, config)
    if resource.type in GCP_PLAIN_PROXIES:
        return Outcome(
            violations=(
                f"{resource.label} serves plain HTTP in production {environment!r}; use a target HTTPS proxy "
                "with a certificate.",
            )
        )
    protocol = resource.props.get("protocol")
    found = Findings()
    if protocol is UNKNOWN:
        found.not_known("protocol")
    elif protocol not in TLS_PROTOCOLS:
        found.violation(
            f"{resource.label} listens with protocol {show(protocol)} in production {environment!r}; "
            "use HTTPS with a certificate (certificateArn)."
        )
    else:
        return passed()
    return found.outcome()


POLICY = resource_policy(**rule_metadata(__name__), check=check)
