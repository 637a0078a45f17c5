"""PrivateEndpoints' arguments and what a node calls (pure: no provider SDK).

Apart from `private_endpoints.py` so that fleets' arguments and the stack config read them without
loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.aws.network_args import SubnetRef, validate_zone
from inference_infra.components.errors import Problem

# Service names as in com.amazonaws.<region>.<name>, from the AWS PrivateLink guide's list of "AWS services
# that integrate with AWS PrivateLink" and the Systems Manager guide's "Improve the security of EC2
# instances by using VPC endpoints for Systems Manager" (both read 2026-11-24).
NODE_SERVICES: dict[str, str] = {
    "ssm": "SSM agent: registration, inventory, the fleet's own parameters",
    "ssmmessages": "Session Manager channels (the only way onto a node; no SSH)",
    "ec2messages": "Run Command messages to the SSM agent",
    "monitoring": "CloudWatch agent PutMetricData (the idle watchdog's signal) and the prefetch's "
    "ModelVerificationFailed metric",
    "logs": "CloudWatch Logs (Session Manager session logs, the agent's own log when configured)",
    "ec2": "CloudWatch agent ec2:DescribeTags (append_dimensions); an elastic node's group name",
    "autoscaling": "an elastic pool's node completes its group's launch lifecycle action (serving_load.py)",
    "ecr.api": "ECR authorization tokens for the image mirrors (amazon-ecr-credential-helper)",
    "ecr.dkr": "image pulls from the ECR mirrors (layers come from S3 through the gateway endpoint)",
    "sts": "regional STS for SDKs and credential helpers that use it",
}


_SERVICE_RE = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class S3Gateway:
    """An existing S3 gateway endpoint (e.g. `ModelStore.gateway()`) and its managed prefix list."""

    endpoint_id: pulumi.Input[str] = arg(doc="The gateway endpoint's id.", stack=False)
    prefix_list_id: pulumi.Input[str] = arg(doc="Its AWS-managed prefix list of S3's ranges.", stack=False)


@dataclass(frozen=True, kw_only=True)
class EndpointsOnlyEgress:
    """What a fleet needs to send HTTPS only to the VPC endpoints (`PrivateEndpoints.egress()` builds it)."""

    endpoint_security_group_id: pulumi.Input[str] = arg(doc="The endpoints' security group.", stack=False)
    s3_prefix_list_id: pulumi.Input[str] = arg(doc="S3's managed prefix list.", stack=False)
    services: Sequence[str] = arg(
        tuple(NODE_SERVICES),
        "The interface endpoints' services (com.amazonaws.<region>.<name>): a fleet refuses a boot that "
        "calls any other (components/aws/node_services.py).",
        stack=False,
    )


@dataclass(frozen=True, kw_only=True)
class PrivateEndpointsArgs:
    """The interface endpoints accelerator nodes call, and S3 through a gateway endpoint."""

    vpc_id: pulumi.Input[str] = arg(doc="The fleets' VPC.", stack=False)
    subnets: Sequence[SubnetRef] = arg(
        doc="One subnet per zone: each zone's endpoint network interfaces live there.", stack=False
    )
    # S3: reuse a gateway endpoint (the ModelStore's) or give the route tables to make one here.
    s3_gateway: S3Gateway | None = arg(
        None,
        "Reuse this S3 gateway endpoint (e.g. ModelStore.gateway()); or give route_table_ids.",
        stack=False,
    )
    route_table_ids: Sequence[pulumi.Input[str]] = arg(
        (), "Make an S3 gateway endpoint on these route tables (without s3_gateway).", stack=False
    )
    extra_services: Sequence[str] = arg(
        (),
        "More interface endpoints besides the ones nodes call (NODE_SERVICES), as in "
        "com.amazonaws.<region>.<name>: e.g. kms, secretsmanager.",
    )


def validate_private_endpoints(args: PrivateEndpointsArgs) -> list[Problem]:
    problems: list[Problem] = []
    if not args.subnets:
        problems.append(Problem("subnets", [], "must list one subnet per zone the fleets run in"))
    zones = [s.availability_zone for s in args.subnets]
    for i, zone in enumerate(zones):
        problems += validate_zone(f"subnets[{i}].availability_zone", zone)
    if len(set(zones)) != len(zones):
        problems.append(
            Problem(
                "subnets", zones, "must name each zone once (an interface endpoint takes one subnet per zone)"
            )
        )
    if (args.s3_gateway is None) == (not args.route_table_ids):
        problems.append(
            Problem(
                "s3_gateway",
                None if args.s3_gateway is None else "given",
                "give either s3_gateway (reuse an S3 gateway endpoint, e.g. ModelStore.gateway()) or "
                "route_table_ids (make one here), not both",
            )
        )
    extra = list(args.extra_services)
    for i, service in enumerate(extra):
        if not isinstance(service, str) or not _SERVICE_RE.fullmatch(service):
            problems.append(
                Problem(f"extra_services[{i}]", service, "must be a service name such as 'kms' or 'ecr.api'")
            )
        elif service in NODE_SERVICES or service == "s3" or extra.count(service) > 1:
            problems.append(
                Problem(
                    f"extra_services[{i}]",
                    service,
                    "is already made (the node services and the S3 gateway) or repeated",
                )
            )
    return problems


def interface_endpoint_policy(account_id: str) -> dict[str, object]:
    """An interface endpoint's policy: calls by this account's principals only.

    Without a policy an endpoint admits any principal's credentials (AWS's default endpoint policy is
    full access), so a node could use it with another account's keys to carry data out of the VPC.
    `aws:PrincipalAccount` is present in every authenticated request (IAM's global condition keys,
    read 2026-12-02), so the nodes' own calls (SSM, CloudWatch, ECR tokens, STS, DescribeTags) keep
    working; an unauthenticated call has no principal account and is refused.
    """
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ThisAccountOnly",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "*",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
            }
        ],
    }


# AWS-owned buckets a node reads through the S3 gateway endpoint, by region. Names from AWS's own data
# perimeter examples (aws-samples/data-perimeter-policy-examples, vpc_endpoint_policies/
# s3_endpoint_policy.json, "AllowRequestsToAWSOwnedResources", read 2026-12-02 at commit 031eaa58), which
# the Amazon ECR User Guide ("Create the Amazon S3 gateway endpoint": image layers live in
# prod-<region>-starport-layer-bucket) and the AL2023 User Guide (package repositories served from S3 in
# each region) describe. Exact names, not `al2023-repos-<region>-*`: S3 bucket names are global, and a
# wildcard would admit a bucket anyone can create under that prefix.
AWS_OWNED_BUCKETS: dict[str, str] = {
    "al2023-repos-{region}-de612dc2": "Amazon Linux 2023 package repositories (dnf: mdadm, docker, the "
    "CloudWatch agent, efs-utils, the ECR credential helper)",
    "prod-{region}-starport-layer-bucket": "ECR image layers (docker pulls from the ECR mirrors)",
}


def aws_owned_bucket(pattern: str, region: str) -> str:
    return pattern.format(region=region)


def s3_gateway_endpoint_policy(partition: str, region: str, account_id: str) -> dict[str, object]:
    """The S3 gateway endpoint's policy: the account's own buckets with its own credentials, and reads of
    the AWS-owned buckets nodes need (AWS_OWNED_BUCKETS); nothing else leaves through it.

    Without a policy a gateway endpoint admits every request to every bucket (AWS's default endpoint
    policy is full access), so a node could copy weights to a bucket of another account with that
    account's keys. `aws:ResourceAccount` names the account that owns the bucket and
    `aws:PrincipalAccount` the caller's (IAM's global condition keys, read 2026-12-02); both must be this
    account. The AWS-owned reads carry no principal condition: dnf's requests to the AL2023 repositories
    are unsigned, and an ECR layer is fetched with a URL ECR presigns, so neither has this account as
    principal. They allow s3:GetObject only, which cannot carry data out.
    """
    owned = [f"arn:{partition}:s3:::{aws_owned_bucket(b, region)}/*" for b in AWS_OWNED_BUCKETS]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ThisAccountsBucketsOnly",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "*",
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"aws:PrincipalAccount": account_id, "aws:ResourceAccount": account_id}
                },
            },
            {
                "Sid": "AwsOwnedBucketsNodesRead",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": owned,
            },
        ],
    }
