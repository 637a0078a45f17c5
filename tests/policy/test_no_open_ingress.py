"""no-open-ingress: 0.0.0.0/0 and ::/0 only to the configured ports."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE as WIRE_UNKNOWN

from inference_infra.policy.rules import no_open_ingress as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

SG = "aws:ec2/securityGroup:SecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
FIREWALL = "gcp:compute/firewall:Firewall"
ADVICE = "Narrow the source range or put a load balancer in front."
FW = "gcp:compute/firewall:Firewall 'fw'"
NONE = f"no port may be open to the internet (config allowedPorts). {ADVICE}"


def _ingress(protocol: str, low: int, high: int, cidrs=(), ipv6=()) -> dict:
    return {
        "protocol": protocol,
        "fromPort": low,
        "toPort": high,
        "cidrBlocks": list(cidrs),
        "ipv6CidrBlocks": list(ipv6),
    }


def test_no_open_ingress_passes_private_sources_and_allowed_ports(check):
    assert check(rule, SG, {"ingress": [_ingress("tcp", 8000, 8000, ["10.0.0.0/16"])]}) == Outcome()
    assert check(
        rule, SG, {"ingress": [_ingress("tcp", 443, 443, ["0.0.0.0/0"])]}, {"allowedPorts": [443]}
    ) == (Outcome())
    assert check(
        rule, INGRESS, {"ipProtocol": "tcp", "fromPort": 9400, "toPort": 9400, "cidrIpv4": "10.0.0.0/8"}
    ) == (Outcome())
    assert check(rule, SG, {"egress": [_ingress("-1", 0, 0, ["0.0.0.0/0"])]}) == Outcome()  # egress is fine


def test_no_open_ingress_rejects_a_security_group_open_to_the_internet(check):
    rules = [_ingress("tcp", 22, 22, ["0.0.0.0/0"]), _ingress("-1", 0, 0, ipv6=["::/0"])]
    assert check(rule, SG, {"ingress": rules}, name="gpu-sg").violations == (
        f"{SG} 'gpu-sg' opens TCP port 22 to 0.0.0.0/0 (ingress[0].cidrBlocks); {NONE}",
        f"{SG} 'gpu-sg' opens all traffic to ::/0 (ingress[1].ipv6CidrBlocks); {NONE}",
    )


def test_no_open_ingress_rejects_ranges_wider_than_the_allowed_ports(check):
    props = {"type": "ingress", **_ingress("tcp", 80, 443, ["0.0.0.0/0"])}
    assert check(rule, SG_RULE, props, {"allowedPorts": [80, 443]}, name="web").violations == (
        "aws:ec2/securityGroupRule:SecurityGroupRule 'web' opens TCP ports 80-443 to 0.0.0.0/0 (cidrBlocks); "
        f"only ports 80, 443 may be open to the internet (config allowedPorts). {ADVICE}",
    )
    vpc_rule = {"ipProtocol": "udp", "fromPort": 53.0, "toPort": 53.0, "cidrIpv4": "0.0.0.0/0"}
    assert check(rule, INGRESS, vpc_rule, {"allowedPorts": [443]}, name="dns").violations == (
        f"{INGRESS} 'dns' opens UDP port 53 to 0.0.0.0/0 (cidrIpv4); "
        f"only port 443 may be open to the internet (config allowedPorts). {ADVICE}",
    )


def test_no_open_ingress_rejects_gcp_firewalls_including_the_default_source(check):
    allows = [{"protocol": "tcp", "ports": ["22", "8000-8080"]}, {"protocol": "icmp"}]
    assert check(
        rule, FIREWALL, {"network": "n", "allows": allows}, {"allowedPorts": [22]}, name="fw"
    ).violations == (
        f"{FW} opens TCP ports 8000-8080 to 0.0.0.0/0 (sourceRanges, allows[0]); "
        f"only port 22 may be open to the internet (config allowedPorts). {ADVICE}",
        f"{FW} opens ICMP traffic to 0.0.0.0/0 (sourceRanges, allows[1]); "
        f"only port 22 may be open to the internet (config allowedPorts). {ADVICE}",
    )
    tagged = {"network": "n", "sourceTags": ["lb"], "allows": [{"protocol": "tcp"}]}
    assert check(rule, FIREWALL, tagged) == Outcome()


def test_no_open_ingress_does_not_apply_to_egress_disabled_or_other_resources(check):
    assert check(rule, SG_RULE, {"type": "egress", **_ingress("-1", 0, 0, ["0.0.0.0/0"])}) == Outcome(
        not_applicable="applies to ingress rules"
    )
    disabled = {"sourceRanges": ["0.0.0.0/0"], "allows": [{"protocol": "all"}], "disabled": True}
    assert check(rule, FIREWALL, disabled).not_applicable == "applies to enabled ingress firewalls"
    assert check(rule, "aws:s3/bucket:Bucket", {}).not_applicable == (
        "applies to security groups, their ingress rules and GCP firewalls"
    )


def test_no_open_ingress_does_not_judge_values_not_known_yet(check, sdk):
    props = {"ingress": [_ingress("tcp", 22, 22, [UNKNOWN])]}
    assert check(rule, SG, props) == Outcome(unknown=("ingress[0].cidrBlocks",))
    wire = {"ingress": [_ingress("tcp", 22, 22, [WIRE_UNKNOWN])]}
    assert sdk(rule, SG, wire) == (
        [],
        None,
        "string value at .ingress[0].cidrBlocks can't be known during preview",
    )
    assert check(rule, SG, {"ingress": UNKNOWN}) == Outcome(unknown=("ingress",))


def test_no_open_ingress_on_captured_resources(plan_of, run_pack):
    vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
    aws.ec2.SecurityGroup(
        "internal",
        vpc_id=vpc.id,
        ingress=[{"protocol": "tcp", "from_port": 8000, "to_port": 8000, "cidr_blocks": [vpc.cidr_block]}],
    )
    public = aws.ec2.SecurityGroup("public", vpc_id=vpc.id)
    aws.vpc.SecurityGroupIngressRule(
        "https",
        security_group_id=public.id,
        ip_protocol="tcp",
        from_port=443,
        to_port=443,
        cidr_ipv4="0.0.0.0/0",
    )
    aws.vpc.SecurityGroupIngressRule(
        "ssh", security_group_id=public.id, ip_protocol="tcp", from_port=22, to_port=22, cidr_ipv4="0.0.0.0/0"
    )
    gcp.compute.Firewall("fw", network="default", source_ranges=["0.0.0.0/0"], allows=[{"protocol": "all"}])
    report = run_pack(plan_of(), rule.NAME, {"allowedPorts": [443]})
    allowed = f"only port 443 may be open to the internet (config allowedPorts). {ADVICE}"
    assert sorted(v.message for v in report.violations) == [
        f"{INGRESS} 'ssh' opens TCP port 22 to 0.0.0.0/0 (cidrIpv4); {allowed}",
        f"{FW} opens all traffic to 0.0.0.0/0 (sourceRanges, allows[0]); {allowed}",
    ]
