"""moto fixtures for the spot drain: a VPC, a stack-tagged target group and Auto Scaling group.

The two events are AWS's documented examples (the shapes of
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html and
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/rebalance-recommendations.html, read
2026-11-25), with the instance id and time filled in.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from inference_infra.lambdas.spot_drain.handler import CLIENT_CONFIG

REGION = "us-east-1"
AMI = "ami-12c6146b"  # one of moto's built-in AMIs
SCOPE = {"CostCenter": "ml-platform", "Environment": "dev"}

INTERRUPTION_WARNING: dict[str, Any] = {
    "version": "0",
    "id": "12345678-1234-1234-1234-123456789012",
    "detail-type": "EC2 Spot Instance Interruption Warning",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2026-11-25T17:00:00Z",
    "region": "us-east-2",
    "resources": ["arn:aws:ec2:us-east-2:123456789012:instance/i-1234567890abcdef0"],
    "detail": {"instance-id": "i-1234567890abcdef0", "instance-action": "terminate"},
}
REBALANCE_RECOMMENDATION: dict[str, Any] = {
    "version": "0",
    "id": "12345678-1234-1234-1234-123456789012",
    "detail-type": "EC2 Instance Rebalance Recommendation",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2026-11-25T17:00:00Z",
    "region": "us-east-2",
    "resources": ["arn:aws:ec2:us-east-2:123456789012:instance/i-1234567890abcdef0"],
    "detail": {"instance-id": "i-1234567890abcdef0"},
}


def event_for(template: dict[str, Any], instance_id: str, region: str = REGION) -> dict[str, Any]:
    event = copy.deepcopy(template)
    event["region"] = region
    event["resources"] = [f"arn:aws:ec2:{region}:123456789012:instance/{instance_id}"]
    event["detail"]["instance-id"] = instance_id
    return event


class Account:
    """A mocked account with the drain's clients and helpers to build pools."""

    def __init__(self, session: Any | None = None, config: Any = CLIENT_CONFIG) -> None:
        session = session or boto3.session.Session(region_name=REGION)
        self.ec2 = session.client("ec2", config=config)
        self.autoscaling = session.client("autoscaling", config=config)
        self.elbv2 = session.client("elbv2", config=config)
        vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        self.vpc = vpc
        self.subnet = self.ec2.create_subnet(
            VpcId=vpc, CidrBlock="10.0.1.0/24", AvailabilityZone="us-east-1a"
        )["Subnet"]["SubnetId"]
        self.ec2.create_launch_template(
            LaunchTemplateName="gpu-template",
            LaunchTemplateData={
                "ImageId": AMI,
                "InstanceType": "g5.xlarge",
                "InstanceMarketOptions": {"MarketType": "spot"},
            },
        )

    def target_group(self, name: str, tags: dict[str, str] | None = SCOPE, port: int = 8000) -> str:
        kwargs: dict[str, Any] = {"Tags": [{"Key": k, "Value": v} for k, v in tags.items()]} if tags else {}
        return self.elbv2.create_target_group(
            Name=name, Protocol="HTTP", Port=port, VpcId=self.vpc, TargetType="instance", **kwargs
        )["TargetGroups"][0]["TargetGroupArn"]

    def group(
        self,
        name: str,
        target_groups: list[str],
        *,
        size: int = 2,
        tags: dict[str, str] | None = SCOPE,
        capacity_rebalance: bool = False,
    ) -> list[str]:
        self.autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name,
            MinSize=0,
            MaxSize=size + 2,
            DesiredCapacity=size,
            LaunchTemplate={"LaunchTemplateName": "gpu-template", "Version": "$Latest"},
            VPCZoneIdentifier=self.subnet,
            TargetGroupARNs=target_groups,
            CapacityRebalance=capacity_rebalance,
            Tags=[{"Key": k, "Value": v, "PropagateAtLaunch": True} for k, v in (tags or {}).items()],
        )
        return self.members(name)

    def members(self, name: str) -> list[str]:
        found = self.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])[
            "AutoScalingGroups"
        ]
        return sorted(i["InstanceId"] for i in found[0]["Instances"])

    def health(self, name: str) -> dict[str, str]:
        found = self.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])[
            "AutoScalingGroups"
        ]
        return {i["InstanceId"]: i["HealthStatus"] for i in found[0]["Instances"]}

    def targets(self, arn: str) -> list[tuple[str, int]]:
        health = self.elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]
        return sorted((d["Target"]["Id"], d["Target"]["Port"]) for d in health)

    def lone_instance(self, target_groups: list[str], port: int = 8000) -> str:
        iid = self.ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge")[
            "Instances"
        ][0]["InstanceId"]
        for arn in target_groups:
            self.elbv2.register_targets(TargetGroupArn=arn, Targets=[{"Id": iid, "Port": port}])
        return iid


@pytest.fixture
def account(aws_credentials: None) -> Iterator[Account]:
    with mock_aws():
        yield Account()


@pytest.fixture
def interruption() -> Any:
    """instance id -> AWS's interruption-warning example for that instance."""
    return lambda instance_id, region=REGION: event_for(INTERRUPTION_WARNING, instance_id, region)


@pytest.fixture
def rebalance() -> Any:
    """instance id -> AWS's rebalance-recommendation example for that instance."""
    return lambda instance_id, region=REGION: event_for(REBALANCE_RECOMMENDATION, instance_id, region)


@pytest.fixture
def scope_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("SCOPE_TAGS", '{"CostCenter": "ml-platform", "Environment": "dev"}')
    return dict(SCOPE)
