"""The watchdog leaves instances an Auto Scaling group launched alone (elastic pools, #25).

A group's instances carry `aws:autoscaling:groupName` (set by Auto Scaling itself, which the
watchdog reads); stopping one would make the group mark it unhealthy and replace it, so an idle
elastic pool is the group's to shrink (its minimum, its schedule), not the watchdog's.
"""

from __future__ import annotations

import io

import boto3

from inference_infra.lambdas.idle_gpu_watchdog.prices import PriceTable
from inference_infra.lambdas.idle_gpu_watchdog.report import JsonLog
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings
from inference_infra.lambdas.idle_gpu_watchdog.watchdog import run

IDLE = [0.0] * 6


def test_watchdog_skips_idle_instances_launched_by_an_auto_scaling_group(account):
    autoscaling = boto3.session.Session(region_name="us-east-1").client("autoscaling")
    vpc = account.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = account.ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24", AvailabilityZone="us-east-1a")
    account.ec2.create_launch_template(
        LaunchTemplateName="pool-template",
        LaunchTemplateData={
            "ImageId": "ami-12c6146b",
            "InstanceType": "g5.xlarge",
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": [{"Key": "AutoShutdown", "Value": "true"}]}
            ],
        },
    )
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="elastic-pool",
        MinSize=0,
        MaxSize=4,
        DesiredCapacity=2,
        LaunchTemplate={"LaunchTemplateName": "pool-template", "Version": "$Latest"},
        VPCZoneIdentifier=subnet["Subnet"]["SubnetId"],
        Tags=[{"Key": "AutoShutdown", "Value": "true", "PropagateAtLaunch": True}],
    )
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["elastic-pool"])
    members = sorted(i["InstanceId"] for i in group["AutoScalingGroups"][0]["Instances"])
    loose = account.launch(1)
    tags = {
        i["InstanceId"]: {t["Key"]: t["Value"] for t in i.get("Tags", ())}
        for r in account.ec2.describe_instances(InstanceIds=members)["Reservations"]
        for i in r["Instances"]
    }
    assert {t.get("aws:autoscaling:groupName") for t in tags.values()} == {"elastic-pool"}  # set by the group
    now = account.clock_after_launch(members + loose)
    account.seed(members + loose, IDLE, now=now)

    result = run(
        Settings(), account.clients, now=now, prices=PriceTable(), log=JsonLog(io.StringIO())
    ).as_dict()

    assert sorted(result["skipped"]["managed"]) == members
    assert result["stopped"] == loose
    assert set(account.states(members).values()) == {"running"}
