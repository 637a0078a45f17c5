"""PrivateEndpoints: the AWS APIs accelerator nodes call, inside the VPC (for `egress: endpoints-only`).

With these, a fleet needs no route to the internet: its security group sends
HTTPS only to the endpoints' security group and to S3 through the gateway
endpoint (`EndpointsOnlyEgress`, from `PrivateEndpoints.egress()`). One
interface endpoint per service, private DNS on (the SDKs, the SSM agent and
the CloudWatch agent keep their default regional host names), one network
interface per zone, and one security group that admits 443 only from the
fleets that attach to it (each fleet adds its own rule).

What a node calls, read from `bootstrap.py` and the scripts in `node/`, is the
table `NODE_SERVICES` below.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.network import SubnetRef, s3_gateway_endpoint, validate_zone
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.validation import check_types

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
    "ec2": "CloudWatch agent ec2:DescribeTags (append_dimensions)",
    "ecr.api": "ECR authorization tokens for the image mirrors (amazon-ecr-credential-helper)",
    "ecr.dkr": "image pulls from the ECR mirrors (layers come from S3 through the gateway endpoint)",
    "sts": "regional STS for SDKs and credential helpers that use it",
}
_SERVICE_RE = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class S3Gateway:
    """An existing S3 gateway endpoint (e.g. `ModelStore.gateway()`) and its managed prefix list."""

    endpoint_id: pulumi.Input[str]
    prefix_list_id: pulumi.Input[str]


@dataclass(frozen=True, kw_only=True)
class EndpointsOnlyEgress:
    """What a fleet needs to send HTTPS only to the VPC endpoints (`PrivateEndpoints.egress()` builds it)."""

    endpoint_security_group_id: pulumi.Input[str]
    s3_prefix_list_id: pulumi.Input[str]


@dataclass(frozen=True, kw_only=True)
class PrivateEndpointsArgs:
    vpc_id: pulumi.Input[str]
    subnets: Sequence[SubnetRef]  # one per zone: each zone's endpoint network interfaces live there
    # S3: reuse a gateway endpoint (the ModelStore's) or give the route tables to make one here.
    s3_gateway: S3Gateway | None = None
    route_table_ids: Sequence[pulumi.Input[str]] = ()
    extra_services: Sequence[str] = ()  # more interface endpoints (e.g. "secretsmanager", "kms")


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
        if not isinstance(service, str) or not _SERVICE_RE.match(service):
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


class PrivateEndpoints(pulumi.ComponentResource):
    """Interface endpoints for every AWS API the nodes call, plus the S3 gateway, behind one group."""

    security_group_id: pulumi.Output[str]
    s3_prefix_list_id: pulumi.Output[str]
    endpoint_ids: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: PrivateEndpointsArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(f"PrivateEndpoints {name!r}", check_types(args) or validate_private_endpoints(args))
        super().__init__("inference-infra:aws:PrivateEndpoints", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        region = aws.get_region_output(opts=pulumi.InvokeOutputOptions(parent=self)).region
        group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=args.vpc_id,
            description=f"{name}: VPC interface endpoints; HTTPS from the fleets that attach only",
            tags={"Name": f"{name}-sg"},
            opts=child,
        )
        self.endpoint_ids = {}
        for service in [*NODE_SERVICES, *args.extra_services]:
            endpoint = aws.ec2.VpcEndpoint(
                f"{name}-{service.replace('.', '-')}",
                vpc_id=args.vpc_id,
                service_name=region.apply(lambda r, s=service: f"com.amazonaws.{r}.{s}"),
                vpc_endpoint_type="Interface",
                # The default regional names resolve to the endpoint: nothing on the node is configured.
                private_dns_enabled=True,
                subnet_ids=[s.id for s in args.subnets],
                security_group_ids=[group.id],
                tags={"Name": f"{name}-{service}"},
                opts=child,
            )
            self.endpoint_ids[service] = endpoint.id
        if args.s3_gateway is not None:
            self.s3_gateway_endpoint_id = pulumi.Output.from_input(args.s3_gateway.endpoint_id)
            self.s3_prefix_list_id = pulumi.Output.from_input(args.s3_gateway.prefix_list_id)
        else:
            gateway = s3_gateway_endpoint(
                f"{name}-s3", vpc_id=args.vpc_id, route_table_ids=args.route_table_ids, parent=self
            )
            self.s3_gateway_endpoint_id = gateway.id
            self.s3_prefix_list_id = gateway.prefix_list_id
        self.security_group_id = group.id
        self.register_outputs(
            {
                "security_group_id": self.security_group_id,
                "s3_prefix_list_id": self.s3_prefix_list_id,
                "s3_gateway_endpoint_id": self.s3_gateway_endpoint_id,
                "endpoint_ids": self.endpoint_ids,
            }
        )

    def egress(self) -> EndpointsOnlyEgress:
        """For FleetArgs.egress: HTTPS to these endpoints and to S3 only (no 0.0.0.0/0)."""
        return EndpointsOnlyEgress(
            endpoint_security_group_id=self.security_group_id, s3_prefix_list_id=self.s3_prefix_list_id
        )
