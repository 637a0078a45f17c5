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
        "applies to security groups, their ingress rules, GCP firewalls and firewall-policy rules"
    )


def test_no_open_ingress_does_not_judge_values_not_known_yet(check, sdk):
    props = {"ingress": [_ingress("tcp", 22, 22, [UNKNOWN])]}
    assert check(rule, SG, props) == Outcome(unknown=("ingress[0].cidrBlocks",))
    wire = {"ingress": [_ingress("tcp", 22, 22, [WIRE_UNKNOWN])]}
    assert sdk(rule, SG, wire) == (
        [],
        None,
        "string value at .r.ingress[0].cidrBlocks can't be known during preview",
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


HALVES = "0.0.0.0/1, 128.0.0.0/1"
WHOLE_V4 = "together 3,702,258,934 public IPv4 addresses (more than maxIpv4Addresses 16,777,216)"


def test_no_open_ingress_rejects_the_internet_in_two_halves_on_a_group(check):
    rules = [
        _ingress("tcp", 22, 22, ["0.0.0.0/1", "128.0.0.0/1"]),
        _ingress("tcp", 8000, 8000, ipv6=["::/1"]),
    ]
    assert check(rule, SG, {"ingress": rules}, name="sg").violations == (
        f"{SG} 'sg' opens TCP port 22 to {HALVES} (ingress[0].cidrBlocks), {WHOLE_V4}; {NONE}",
        f"{SG} 'sg' opens TCP port 8000 to ::/1 (ingress[1].ipv6CidrBlocks), together a global IPv6 /4 "
        f"(shorter than minIpv6PrefixLength /32); {NONE}",
    )


def test_no_open_ingress_passes_public_ranges_below_the_thresholds(check):
    three = [_ingress("tcp", 22, 22, ["1.0.0.0/8", "2.0.0.0/8", "3.0.0.0/8"], ["2600::/31"])]
    assert check(
        rule, SG, {"ingress": three[:1]}, {"maxIpv4Addresses": 2**26, "minIpv6PrefixLength": 24}
    ) == (Outcome())
    assert (
        check(rule, SG, {"ingress": [_ingress("tcp", 22, 22, ["8.8.0.0/16", "2001:db8::/32"])]}) == Outcome()
    )
    assert len(check(rule, SG, {"ingress": three}).violations) == 1


def test_no_open_ingress_rejects_sources_merged_across_rule_resources(plan_of, run_pack):
    vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
    group = aws.ec2.SecurityGroup("gpu", vpc_id=vpc.id)
    # Each rule admits a /8 (2^24 addresses, not more: not public alone); together they are.
    for n, (v4, v6) in enumerate([("1.0.0.0/8", "2600::/32"), ("2.0.0.0/8", "2600:1::/32")]):
        aws.vpc.SecurityGroupIngressRule(
            f"part{n}", security_group_id=group.id, ip_protocol="tcp", from_port=22, to_port=22, cidr_ipv4=v4
        )
        aws.ec2.SecurityGroupRule(
            f"v6-{n}",
            type="ingress",
            security_group_id=group.id,
            protocol="-1",
            from_port=0,
            to_port=0,
            ipv6_cidr_blocks=[v6],
        )
    other = aws.ec2.SecurityGroup("other", vpc_id=vpc.id)  # another group: not merged with the first
    aws.vpc.SecurityGroupIngressRule(
        "other-part",
        security_group_id=other.id,
        ip_protocol="tcp",
        from_port=22,
        to_port=22,
        cidr_ipv4="3.0.0.0/8",
    )
    report = run_pack(plan_of(), rule.NAME)
    assert sorted(v.message for v in report.violations) == [
        f"{SG_RULE} 'v6-0' opens all traffic to 2600::/32, 2600:1::/32 (ipv6CidrBlocks, ipv6CidrBlocks of "
        f"{SG_RULE} 'v6-1'), together a global IPv6 /31 (shorter than minIpv6PrefixLength /32); {NONE}",
        f"{INGRESS} 'part0' opens TCP port 22 to 1.0.0.0/8, 2.0.0.0/8 (cidrIpv4, cidrIpv4 of {INGRESS} "
        "'part1'), together 33,554,432 public IPv4 addresses (more than maxIpv4Addresses 16,777,216); "
        f"{NONE}",
    ]


def test_no_open_ingress_rejects_firewalls_merged_per_network_and_target(plan_of, run_pack):
    network = gcp.compute.Network("net", auto_create_subnetworks=False)
    gcp.compute.Firewall(
        "part-tagged",
        network=network.id,
        source_ranges=["1.0.0.0/8"],
        target_tags=["gpu"],
        allows=[{"protocol": "tcp", "ports": ["8000"]}],
    )
    gcp.compute.Firewall(
        "part-everywhere",
        network=network.id,
        source_ranges=["2.0.0.0/8"],  # no target: every instance of the network, the tagged ones too
        allows=[{"protocol": "tcp", "ports": ["8000-8001"]}],
    )
    gcp.compute.Firewall(
        "elsewhere",
        network="other-network",
        source_ranges=["3.0.0.0/8"],
        target_tags=["gpu"],
        allows=[{"protocol": "tcp", "ports": ["8000"]}],
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        f"{FIREWALL} 'part-everywhere' opens TCP port 8000 to 2.0.0.0/8, 1.0.0.0/8 (sourceRanges, allows[0], "
        f"sourceRanges, allows[0] of {FIREWALL} 'part-tagged'), together 33,554,432 public IPv4 "
        f"addresses (more than maxIpv4Addresses 16,777,216); {NONE}",
    ]


POLICY_RULE = "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule"


def _policy_rule(**overrides):
    match = {"srcIpRanges": ["0.0.0.0/0"], "layer4Configs": [{"ipProtocol": "tcp", "ports": ["8000"]}]}
    return {"direction": "INGRESS", "action": "allow", "priority": 1000, "match": match, **overrides}


def test_no_open_ingress_rejects_firewall_policy_rules_open_to_the_internet(check):
    for kind in (
        POLICY_RULE,
        "gcp:compute/firewallPolicyRule:FirewallPolicyRule",
        "gcp:compute/regionNetworkFirewallPolicyRule:RegionNetworkFirewallPolicyRule",
    ):
        (violation,) = check(rule, kind, _policy_rule(), name="open").violations
        assert "0.0.0.0/0" in violation
    every = _policy_rule(match={"srcIpRanges": ["::/0"], "layer4Configs": [{"ipProtocol": "all"}]})
    assert check(rule, POLICY_RULE, every).violations


def test_no_open_ingress_passes_firewall_policy_rules_that_deny_or_stay_private(check):
    assert check(rule, POLICY_RULE, _policy_rule(action="deny")).not_applicable
    assert check(rule, POLICY_RULE, _policy_rule(direction="EGRESS")).not_applicable
    assert check(rule, POLICY_RULE, _policy_rule(disabled=True)).not_applicable
    private = {"srcIpRanges": ["10.0.0.0/8"], "layer4Configs": [{"ipProtocol": "tcp", "ports": ["8000"]}]}
    assert check(rule, POLICY_RULE, _policy_rule(match=private)) == Outcome()
    assert check(rule, POLICY_RULE, _policy_rule(match=UNKNOWN)).unknown == ("match",)
