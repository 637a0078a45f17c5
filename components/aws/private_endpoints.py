"""PrivateEndpoints: the AWS APIs accelerator nodes call, inside the VPC (for `egress: endpoints-only`).

With these, a fleet needs no route to the internet: its security group sends
HTTPS only to the endpoints' security group and to S3 through the gateway
endpoint (`EndpointsOnlyEgress`, from `PrivateEndpoints.egress()`). One
interface endpoint per service, each with a policy admitting this account's principals only
(`interface_endpoint_policy`: no other account's credentials through it), private DNS on
(the SDKs, the SSM agent and the CloudWatch agent keep their default regional host names), one network
interface per zone, and one security group that admits 443 only from the
fleets that attach to it (each fleet adds its own rule).

What a node calls, read from `bootstrap.py` and the scripts in `node/`, is the
table `NODE_SERVICES` (private_endpoints_args.py).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.network import s3_gateway_endpoint
from inference_infra.components.aws.private_endpoints_args import (
    NODE_SERVICES,
    EndpointsOnlyEgress,
    PrivateEndpointsArgs,
    S3Gateway,
    interface_endpoint_policy,
    validate_private_endpoints,
)
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import check_types

__all__ = [
    "NODE_SERVICES",
    "EndpointsOnlyEgress",
    "PrivateEndpoints",
    "PrivateEndpointsArgs",
    "S3Gateway",
    "validate_private_endpoints",
]


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
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
        policy = account.apply(lambda a: json.dumps(interface_endpoint_policy(a)))
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
                policy=policy,  # this account's principals only
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
            endpoint_security_group_id=self.security_group_id,
            s3_prefix_list_id=self.s3_prefix_list_id,
            services=tuple(self.endpoint_ids),
        )
