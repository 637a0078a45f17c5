"""Where the fleets run: subnet references, the minimal private network, the S3 gateway endpoint.

Most stacks pass existing VPC and subnet ids (`SubnetRef` with the subnet's
availability zone, so zones can be checked against capacity reservations
before anything is created). A stack without a network can ask for
`PrivateNetwork`: a VPC with one private subnet per zone, no public IPs, a
locked-down default security group, an S3 gateway endpoint (model downloads
do not pay NAT data charges) and, by default, one NAT gateway for package and
container-image downloads. In production (the registered cost tags' Environment
starts with prod or prd) the VPC's flow logs go to a CloudWatch Logs group kept
`flow_log_retention_days` (`flow_logs` to set it either way).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.names import provider_region, zones_in_region_problems
from inference_infra.components.aws.network_args import (
    ZONE_RE,
    PrivateNetworkArgs,
    SubnetRef,
    validate_private_network,
    validate_zone,
)
from inference_infra.components.aws.private_endpoints_args import s3_gateway_endpoint_policy
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.tagging import in_production
from inference_infra.components.validation import input_problems

__all__ = [
    "ZONE_RE",
    "PrivateNetwork",
    "PrivateNetworkArgs",
    "SubnetRef",
    "s3_gateway_endpoint",
    "validate_private_network",
    "validate_zone",
]


def s3_gateway_endpoint(
    name: str,
    *,
    vpc_id: pulumi.Input[str],
    route_table_ids: Sequence[pulumi.Input[str]],
    parent: pulumi.Resource,
) -> aws.ec2.VpcEndpoint:
    """A gateway endpoint for S3 on the given route tables (free; no NAT data charges for S3), with a
    policy admitting the account's own buckets and the AWS-owned buckets nodes read
    (private_endpoints_args.s3_gateway_endpoint_policy)."""
    invoke = pulumi.InvokeOutputOptions(parent=parent)
    region = aws.get_region_output(opts=invoke).region
    policy = pulumi.Output.all(
        aws.get_partition_output(opts=invoke).partition,
        region,
        aws.get_caller_identity_output(opts=invoke).account_id,
    ).apply(lambda v: json.dumps(s3_gateway_endpoint_policy(v[0], v[1], v[2])))
    return aws.ec2.VpcEndpoint(
        name,
        vpc_id=vpc_id,
        service_name=region.apply(lambda r: f"com.amazonaws.{r}.s3"),
        vpc_endpoint_type="Gateway",
        route_table_ids=list(route_table_ids),
        policy=policy,
        tags={"Name": name},
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _subnet_blocks(cidr_block: str, count: int) -> list[str]:
    """count private /(n+4) blocks, then one more for the NAT's public subnet (the last block)."""
    network = ipaddress.ip_network(cidr_block)
    blocks = list(network.subnets(new_prefix=network.prefixlen + 4))
    return [str(b) for b in blocks[:count]] + [str(blocks[-1])]


class PrivateNetwork(pulumi.ComponentResource):
    """A minimal private VPC for accelerator fleets."""

    vpc_id: pulumi.Output[str]
    subnets: list[SubnetRef]
    route_table_ids: list[pulumi.Output[str]]

    def __init__(self, name: str, args: PrivateNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(
            f"PrivateNetwork {name!r}",
            input_problems(args, validate_private_network)
            + zones_in_region_problems(
                ((f"availability_zones[{i}]", z) for i, z in enumerate(args.availability_zones)),
                provider_region(opts),
            ),
        )
        super().__init__("inference-infra:aws:PrivateNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        zones = list(args.availability_zones)
        blocks = _subnet_blocks(args.cidr_block, len(zones))

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.cidr_block,
            enable_dns_support=True,
            enable_dns_hostnames=True,  # EFS mount helpers and SSM need DNS names
            tags={"Name": name},
            opts=child,
        )
        # The default security group allows all traffic between its members: empty it.
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg", vpc_id=vpc.id, tags={"Name": f"{name}-default (no rules)"}, opts=child
        )
        private_routes = aws.ec2.RouteTable(
            f"{name}-private", vpc_id=vpc.id, tags={"Name": f"{name}-private"}, opts=child
        )
        self.subnets = []
        for i, zone in enumerate(zones):
            subnet = aws.ec2.Subnet(
                f"{name}-private-{zone}",
                vpc_id=vpc.id,
                cidr_block=blocks[i],
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={"Name": f"{name}-private-{zone}", "Tier": "private"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone}", subnet_id=subnet.id, route_table_id=private_routes.id, opts=child
            )
            self.subnets.append(SubnetRef(id=subnet.id, availability_zone=zone))

        self.nat_gateway_id: pulumi.Output[str] | None = None
        if args.nat_gateway:
            gateway = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags={"Name": name}, opts=child)
            public = aws.ec2.Subnet(
                f"{name}-public-{zones[0]}",
                vpc_id=vpc.id,
                cidr_block=blocks[-1],
                availability_zone=zones[0],
                map_public_ip_on_launch=False,
                tags={"Name": f"{name}-public-{zones[0]}", "Tier": "public (NAT only)"},
                opts=child,
            )
            public_routes = aws.ec2.RouteTable(
                f"{name}-public", vpc_id=vpc.id, tags={"Name": f"{name}-public"}, opts=child
            )
            aws.ec2.Route(
                f"{name}-public-default",
                route_table_id=public_routes.id,
                destination_cidr_block="0.0.0.0/0",
                gateway_id=gateway.id,
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zones[0]}", subnet_id=public.id, route_table_id=public_routes.id, opts=child
            )
            address = aws.ec2.Eip(f"{name}-nat", domain="vpc", tags={"Name": f"{name}-nat"}, opts=child)
            nat = aws.ec2.NatGateway(
                f"{name}-nat",
                subnet_id=public.id,
                allocation_id=address.id,
                tags={"Name": f"{name}-nat"},
                opts=child,
            )
            aws.ec2.Route(
                f"{name}-private-default",
                route_table_id=private_routes.id,
                destination_cidr_block="0.0.0.0/0",
                nat_gateway_id=nat.id,
                opts=child,
            )
            self.nat_gateway_id = nat.id

        self.flow_log_id: pulumi.Output[str] | None = None
        if in_production() if args.flow_logs is None else args.flow_logs:
            self.flow_log_id = self._flow_logs(name, vpc, args.flow_log_retention_days)

        self.vpc_id = vpc.id
        self.cidr_block = vpc.cidr_block
        self.route_table_ids = [private_routes.id]
        self.s3_endpoint_id: pulumi.Output[str] | None = None
        self.s3_prefix_list_id: pulumi.Output[str] | None = None
        if args.s3_gateway_endpoint:
            endpoint = s3_gateway_endpoint(
                f"{name}-s3", vpc_id=vpc.id, route_table_ids=self.route_table_ids, parent=self
            )
            self.s3_endpoint_id = endpoint.id
            self.s3_prefix_list_id = endpoint.prefix_list_id
        self.subnet_ids = [s.id for s in self.subnets]
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "subnet_ids": self.subnet_ids,
                "route_table_ids": self.route_table_ids,
                "s3_endpoint_id": self.s3_endpoint_id,
                "nat_gateway_id": self.nat_gateway_id,
                "flow_log_id": self.flow_log_id,
            }
        )

    def _flow_logs(self, name: str, vpc: aws.ec2.Vpc, retention_days: int) -> pulumi.Output[str]:
        """All of the VPC's traffic to a CloudWatch Logs group, written by a role only the flow-logs
        service of this account may assume (aws:SourceAccount)."""
        child = pulumi.ResourceOptions(parent=self)
        group = aws.cloudwatch.LogGroup(
            f"{name}-flow-logs",
            retention_in_days=retention_days,
            tags={"Name": f"{name}-flow-logs"},
            opts=child,
        )
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
        role = aws.iam.Role(
            f"{name}-flow-logs",
            assume_role_policy=account.apply(
                lambda account_id: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
                                "Action": "sts:AssumeRole",
                                "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
                            }
                        ],
                    }
                )
            ),
            tags={"Name": f"{name}-flow-logs"},
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-flow-logs",
            role=role.id,
            policy=group.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": [
                                    "logs:CreateLogStream",
                                    "logs:PutLogEvents",
                                    "logs:DescribeLogGroups",
                                    "logs:DescribeLogStreams",
                                ],
                                "Resource": [arn, f"{arn}:*"],
                            }
                        ],
                    }
                )
            ),
            opts=child,
        )
        flow_log = aws.ec2.FlowLog(
            f"{name}-flow-log",
            vpc_id=vpc.id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=group.arn,
            iam_role_arn=role.arn,
            max_aggregation_interval=600,
            tags={"Name": f"{name}-flow-log"},
            opts=child,
        )
        return flow_log.id
