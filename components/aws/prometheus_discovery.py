"""PrometheusDiscoveryRole: the IAM role Prometheus assumes (IRSA) to discover EC2 fleets.

Prometheus's EC2 service discovery calls `ec2:DescribeInstances` and
`ec2:DescribeAvailabilityZones`; this role may do that and nothing else (the policy is
`monitoring.scrape.discovery_policy("aws")`, the one `monitoring scrape-config`
documents). Only one Kubernetes service account can assume it: the trust policy names
the EKS cluster's OIDC provider and pins the token's subject to
`system:serviceaccount:<namespace>:<service account>` and its audience to STS, so no
other pod in the cluster (and no other cluster) gets these credentials.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.monitoring.scrape import discovery_policy, discovery_subject_problems
from inference_infra.components.validation import input_problems

# arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B7
_OIDC_PROVIDER_ARN = re.compile(
    r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/(oidc\.eks\.[a-z0-9-]+\.amazonaws\.com/id/\w+)$"
)
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"


@dataclass(frozen=True, kw_only=True)
class PrometheusDiscoveryRoleArgs:
    oidc_provider_arn: str  # the EKS cluster's IAM OIDC provider
    namespace: str  # Prometheus's namespace
    service_account: str  # Prometheus's Kubernetes service account
    tags: Mapping[str, str] = field(default_factory=dict)


def oidc_issuer(provider_arn: str) -> str | None:
    """The issuer (host/path) an OIDC provider ARN names: 'oidc.eks.<region>.amazonaws.com/id/<id>'."""
    match = _OIDC_PROVIDER_ARN.fullmatch(provider_arn)
    return match.group(1) if match else None


def validate_prometheus_discovery_role(args: PrometheusDiscoveryRoleArgs) -> list[Problem]:
    problems: list[Problem] = []
    if oidc_issuer(args.oidc_provider_arn) is None:
        problems.append(
            Problem(
                "oidc_provider_arn",
                args.oidc_provider_arn,
                "must be an EKS cluster's IAM OIDC provider ARN "
                "(arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>)",
            )
        )
    problems += discovery_subject_problems(args.namespace, args.service_account)
    return problems


def trust_policy(args: PrometheusDiscoveryRoleArgs) -> dict:
    """Who may assume the role: that one service account, through the cluster's OIDC provider."""
    issuer = oidc_issuer(args.oidc_provider_arn)
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "PrometheusServiceAccountOnly",
                "Effect": "Allow",
                "Principal": {"Federated": args.oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:sub": f"system:serviceaccount:{args.namespace}:{args.service_account}",
                        f"{issuer}:aud": "sts.amazonaws.com",
                    }
                },
            }
        ],
    }


class PrometheusDiscoveryRole(pulumi.ComponentResource):
    role_arn: pulumi.Output[str]
    service_account_annotations: Mapping[str, pulumi.Output[str]]

    def __init__(
        self, name: str, args: PrometheusDiscoveryRoleArgs, opts: pulumi.ResourceOptions | None = None
    ):
        raise_if_invalid(
            f"PrometheusDiscoveryRole {name!r}", input_problems(args, validate_prometheus_discovery_role)
        )
        super().__init__("inference-infra:aws:PrometheusDiscoveryRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-role",
            description="Prometheus EC2 service discovery (IRSA): list instances, nothing else",
            assume_role_policy=json.dumps(trust_policy(args)),
            max_session_duration=3600,
            tags={"Name": name, **args.tags},
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-list-instances",
            role=role.id,
            policy=json.dumps(discovery_policy("aws")),
            opts=child,
        )
        self.role_arn = role.arn
        self.service_account_annotations = {IRSA_ANNOTATION: role.arn}
        self.register_outputs({"role_arn": self.role_arn})
