"""vpc-flow-logs-in-production: every production VPC records its traffic.

When a GPU host is compromised, flow logs are what shows where it talked to; without them an
incident has no network record. In the environments listed in `production` (the policy config's
`environment`, else the VPC's Environment tag), every VPC the stack makes needs a flow log
(`aws.ec2.FlowLog` naming it by `vpcId`, by id or by dependency while the id is not known yet).
VPCs made elsewhere are theirs to judge.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, Severity

from inference_infra.components.resources import StackIndex
from inference_infra.policy.rules._base import (
    Outcome,
    Resource,
    judged_stack_policy,
    not_applicable,
    passed,
    rule_metadata,
)
from inference_infra.policy.rules._tags import not_production, production_environment, production_schema

NAME = "vpc-flow-logs-in-production"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "In production, every VPC the stack makes has a flow log."
CONFIG_SCHEMA = production_schema("each VPC's")

VPC = "aws:ec2/vpc:Vpc"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
APPLIES_TO = "AWS VPCs in production"


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterator[tuple[Resource, Outcome]]:
    stack = StackIndex(resources)
    logged = {
        target.urn
        for log in stack.of_type(FLOW_LOG)
        if (target := stack.find(log.props.get("vpcId"), (VPC,), holder=log)) is not None
    }
    for resource in resources:
        if resource.type != VPC:
            yield resource, not_applicable(f"applies to {APPLIES_TO}")
            continue
        environment = production_environment(resource, config)
        if environment is None:
            yield resource, not_production(resource, config)
        elif resource.urn in logged:
            yield resource, passed()
        else:
            yield (
                resource,
                Outcome(
                    violations=(
                        f"{resource.label} in production {environment!r} has no flow log; add an "
                        "aws.ec2.FlowLog with vpc_id set to it and traffic_type ALL (PrivateNetwork does "
                        "this with flow_logs).",
                    )
                ),
            )


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    """The resource judged on its own (a stack of one)."""
    return next(outcome for _, outcome in judge([resource], config))


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)
