"""inference-endpoint-internal: load balancers stay internal unless the stack allows internet-facing ones.

An inference server answers anyone who reaches it, and every answer burns
accelerator time. The load balancers of an inference stack front accelerators,
so they are internal by default: an AWS ALB/NLB or classic ELB must set `internal: true`
(AWS's default is internet-facing), and a GCP forwarding rule must use an
internal load-balancing scheme (a global rule's default is EXTERNAL). A stack
that means to serve the internet sets `allowInternetFacing` (or names the load
balancers in `allowedNames`), and puts authentication and TLS in front.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    rule_metadata,
    show,
)

NAME = "inference-endpoint-internal"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Load balancers in front of accelerators are internal unless the stack allows internet-facing ones."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "allowInternetFacing": {
            "type": "boolean",
            "default": False,
            "description": "Allow every internet-facing load balancer of the stack (a public API).",
        },
        "allowedNames": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Names of load balancers or forwarding rules that may be internet-facing.",
        },
    }
)

# Application/Network Load Balancers and the classic ELB (aws:elb): each is internet-facing unless
# `internal: true` (terraform-provider-aws: `internal` is Optional, default false, on both).
AWS_LOAD_BALANCERS = frozenset(
    {
        "aws:lb/loadBalancer:LoadBalancer",
        "aws:alb/loadBalancer:LoadBalancer",
        "aws:elb/loadBalancer:LoadBalancer",
        "aws:elasticloadbalancing/loadBalancer:LoadBalancer",
    }
)
GCP_FORWARDING_RULES = {
    "gcp:compute/forwardingRule:ForwardingRule": "EXTERNAL",
    "gcp:compute/globalForwardingRule:GlobalForwardingRule": "EXTERNAL",
}
INTERNAL_SCHEMES = frozenset({"INTERNAL", "INTERNAL_MANAGED", "INTERNAL_SELF_MANAGED"})
_ADVICE = "set it internal, or allow it in the policy config (allowInternetFacing / allowedNames)"


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    if resource.type not in AWS_LOAD_BALANCERS and resource.type not in GCP_FORWARDING_RULES:
        return not_applicable("applies to AWS load balancers and GCP forwarding rules")
    if config["allowInternetFacing"] or resource.name in config["allowedNames"]:
        return Outcome()
    found = Findings()
    if resource.type in AWS_LOAD_BALANCERS:
        internal = resource.props.get("internal")
        if internal is UNKNOWN:
            found.not_known("internal")
        elif internal is not True:
            found.violation(
                f"{resource.label} is internet-facing (internal {show(internal)}; AWS's default is "
                f"internet-facing); {_ADVICE}."
            )
        return found.outcome()
    scheme = resource.props.get("loadBalancingScheme")
    if scheme is UNKNOWN:
        found.not_known("loadBalancingScheme")
        return found.outcome()
    effective = scheme or GCP_FORWARDING_RULES[resource.type]
    if effective not in INTERNAL_SCHEMES:
        found.violation(f"{resource.label} has the external scheme {show(effective)}; {_ADVICE}.")
    return found.outcome()


POLICY = resource_policy(**rule_metadata(__name__), check=check)
