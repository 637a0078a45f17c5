"""PrivateNetwork egress 'named-hosts' (#33 item 4, GCP): Google's APIs through Private Google Access, HTTPS
and HTTP to named hosts only through a Cloud NGFW FQDN rule evaluated before the VPC rules' deny; hostile
and careless host names refused before anything is registered.

Checked against pulumi-gcp 10.2.0 (the pinned SDK): NetworkFirewallPolicyRule match.dest_fqdns ("Maximum
number of destination fqdn allowed is 100"), Network.network_firewall_policy_enforcement_order
(BEFORE_CLASSIC_FIREWALL / AFTER_CLASSIC_FIREWALL, default after).
"""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp.network import PrivateNetwork, PrivateNetworkArgs
from inference_infra.components.gcp.network_args import PACKAGE_HOSTS, boot_hosts, host_problem

RULE = "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule"
POLICY = "gcp:compute/networkFirewallPolicy:NetworkFirewallPolicy"
ASSOCIATION = "gcp:compute/networkFirewallPolicyAssociation:NetworkFirewallPolicyAssociation"
FIREWALL = "gcp:compute/firewall:Firewall"


def _named(**fields) -> PrivateNetwork:
    values = {"region": "us-central1", "egress": "named-hosts"}
    return PrivateNetwork("core", PrivateNetworkArgs(**(values | fields)))


def test_named_hosts_allows_only_the_boot_hosts_on_443_and_80(plan_of):
    plan = plan_of(_named())
    rule = plan.one(RULE).props
    assert rule["direction"] == "EGRESS"
    assert rule["action"] == "allow"
    assert rule["match"]["destFqdns"] == list(boot_hosts("us-central1"))
    assert set(PACKAGE_HOSTS) < set(rule["match"]["destFqdns"])
    assert "us-central1.gce.archive.ubuntu.com" in rule["match"]["destFqdns"]
    assert rule["match"]["layer4Configs"] == [{"ipProtocol": "tcp", "ports": ["443", "80"]}]
    assert "destIpRanges" not in rule["match"]
    assert rule["enableLogging"] is True
    policy = plan.one(POLICY)
    association = plan.one(ASSOCIATION).props
    network = plan.one("gcp:compute/network:Network")
    assert association["attachmentTarget"] == network.id
    assert association["firewallPolicy"] == policy.id


def test_named_hosts_policy_is_evaluated_before_the_vpc_rules_deny(plan_of):
    plan = plan_of(_named())
    network = plan.one("gcp:compute/network:Network").props
    # after the classic rules (the default), the deny at 65534 would end the evaluation before the allow
    assert network["networkFirewallPolicyEnforcementOrder"] == "BEFORE_CLASSIC_FIREWALL"
    egress = {r.name: r.props for r in plan.of_type(FIREWALL) if r.props["direction"] == "EGRESS"}
    assert set(egress) == {"core-deny-egress", "core-google-apis", "core-internal-egress"}
    assert egress["core-deny-egress"]["destinationRanges"] == ["0.0.0.0/0"]
    assert egress["core-deny-egress"]["denies"] == [{"protocol": "all"}]
    # no VPC rule opens the internet: 0.0.0.0/0 is only ever denied
    for name, props in egress.items():
        if "0.0.0.0/0" in props["destinationRanges"]:
            assert "allows" not in props, name
    assert egress["core-google-apis"]["destinationRanges"] == ["199.36.153.8/30"]
    assert egress["core-google-apis"]["allows"] == [{"protocol": "tcp", "ports": ["443"]}]


def test_named_hosts_resolves_google_apis_and_pkg_dev_privately_and_keeps_nat(plan_of):
    plan = plan_of(_named())
    zones = sorted(z.props["dnsName"] for z in plan.of_type("gcp:dns/managedZone:ManagedZone"))
    assert zones == ["googleapis.com.", "pkg.dev."]
    records = {r.props["name"]: r.props for r in plan.of_type("gcp:dns/recordSet:RecordSet")}
    assert records["*.googleapis.com."]["rrdatas"] == ["private.googleapis.com."]
    assert records["*.pkg.dev."]["rrdatas"] == ["pkg.dev."]
    route = plan.one("gcp:compute/route:Route").props
    assert (route["destRange"], route["nextHopGateway"]) == ("199.36.153.8/30", "default-internet-gateway")
    assert plan.one("gcp:compute/routerNat:RouterNat").props["sourceSubnetworkIpRangesToNat"] == (
        "LIST_OF_SUBNETWORKS"
    )


def test_named_hosts_takes_the_hosts_given(plan_of):
    plan = plan_of(_named(allowed_hosts=["deb.debian.org", "mirror.example.com"]))
    assert plan.one(RULE).props["match"]["destFqdns"] == ["deb.debian.org", "mirror.example.com"]


def test_other_modes_make_no_firewall_policy(plan_of):
    plan = plan_of(_named(egress="internet"))
    plan_of(
        PrivateNetwork("closed", PrivateNetworkArgs(region="us-central1", egress="endpoints-only", nat=False))
    )
    assert plan.of_type(RULE) == []
    assert plan.of_type(POLICY) == []
    networks = plan.of_type("gcp:compute/network:Network")
    assert all("networkFirewallPolicyEnforcementOrder" not in n.props for n in networks)


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("*.debian.org", "no wildcard"),
        ("*", "no wildcard"),
        ("1.1.1.1", "not an address"),
        ("::1", "not an address"),
        ("localhost", "two labels or more"),
        ("com", "two labels or more"),
        ("Deb.Debian.org", "lowercase"),
        ("deb.debian.org.", "no trailing dot"),
        ("deb.debian.org:443", "port"),
        ("deb debian.org", "space"),
        ("-bad.example.com", "labels of 1 to"),
        ("bad-.example.com", "labels of 1 to"),
        ("a..example.com", "labels of 1 to"),
        (f"{'a' * 64}.example.com", "labels of 1 to"),
        (".".join(["a" * 60] * 5), "253 at most"),
        ("evil.example.com\nallow", "space"),
        ("storage.googleapis.com", "Private Google Access"),
        ("us-docker.pkg.dev", "Private Google Access"),
        ("metadata.google.internal", "answered inside the network"),
        (None, "no wildcard"),
    ],
)
def test_hostile_host_names_are_refused(host, says):
    problem = host_problem(host)
    assert problem is not None
    assert says in problem


@pytest.mark.parametrize(
    "host", ["deb.debian.org", "us-central1.gce.archive.ubuntu.com", "xn--bcher-kva.example"]
)
def test_plain_host_names_pass(host):
    assert host_problem(host) is None


def test_a_hostile_host_stops_the_network_before_anything_is_registered(plan_of):
    with pytest.raises(InputError, match=r"allowed_hosts\[1\] '\*\.example\.com' must be one host name"):
        _named(allowed_hosts=["deb.debian.org", "*.example.com"])
    assert plan_of().of_type("gcp:compute/network:Network") == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"allowed_hosts": []}, r"allowed_hosts \[\] must name at least one host"),
        (
            {"allowed_hosts": [f"h{i}.example.com" for i in range(101)]},
            r"allowed_hosts '101 hosts' must name at most 100",
        ),
        (
            {"allowed_hosts": ["a.example.com", "a.example.com"]},
            r"allowed_hosts\[1\] 'a.example.com' is listed twice",
        ),
        ({"egress": "internet", "allowed_hosts": ["a.example.com"]}, r"only apply with egress 'named-hosts'"),
        ({"nat": False}, r"nat False is the way egress 'named-hosts' reaches its allowed hosts"),
    ],
)
def test_careless_named_hosts_input_is_refused(plan_of, fields, message):
    with pytest.raises(InputError, match=message):
        _named(**fields)
    assert plan_of().of_type(RULE) == []
