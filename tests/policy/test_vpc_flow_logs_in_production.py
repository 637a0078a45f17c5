"""vpc-flow-logs-in-production: every production VPC has a flow log."""

from __future__ import annotations

import pulumi_aws as aws

from inference_infra.policy.rules import vpc_flow_logs_in_production as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome, Resource, config_defaults

VPC = "aws:ec2/vpc:Vpc"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
MISSING = (
    "has no flow log; add an aws.ec2.FlowLog with vpc_id set to it and traffic_type ALL (PrivateNetwork does "
    "this with flow_logs)."
)


def _judge(resources: list[Resource], **config) -> list[tuple[str, Outcome]]:
    settings = {**config_defaults(rule.CONFIG_SCHEMA), **config}
    return [(r.name, o) for r, o in rule.judge(resources, settings) if r.type == VPC]


def test_vpc_flow_logs_passes_a_logged_production_vpc_and_any_dev_vpc(check):
    vpc = Resource(VPC, "vpc", {"id": "vpc-1", "tags": {"Environment": "prod"}}, "urn:v")
    log = Resource(FLOW_LOG, "log", {"vpcId": "vpc-1", "trafficType": "ALL"}, "urn:l")
    assert _judge([vpc, log]) == [("vpc", Outcome())]
    pending = Resource(FLOW_LOG, "log", {"vpcId": UNKNOWN}, "urn:l", dependencies=("urn:v",))  # preview
    assert _judge([vpc, pending]) == [("vpc", Outcome())]
    assert check(rule, VPC, {"tags": {"Environment": "dev"}}).not_applicable


def test_vpc_flow_logs_rejects_a_production_vpc_without_one(check):
    assert check(rule, VPC, {"cidrBlock": "10.0.0.0/16"}, {"environment": "prod"}, name="vpc").violations == (
        f"{VPC} 'vpc' in production 'prod' {MISSING}",
    )


def test_vpc_flow_logs_on_captured_resources(plan_of, run_pack):
    logged = aws.ec2.Vpc("logged", cidr_block="10.0.0.0/16")
    aws.ec2.FlowLog("logged-flow", vpc_id=logged.id, traffic_type="ALL", log_destination="arn:aws:s3:::flow")
    aws.ec2.Vpc("silent", cidr_block="10.1.0.0/16")
    report = run_pack(plan_of(), rule.NAME, {"environment": "prod"})
    assert [v.message for v in report.violations] == [f"{VPC} 'silent' in production 'prod' {MISSING}"]
