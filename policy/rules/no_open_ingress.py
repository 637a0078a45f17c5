"""no-open-ingress: nothing is reachable from the whole internet but the ports configured.

An inference server, a Jupyter port or SSH open to 0.0.0.0/0 on a GPU host is
how clusters end up mining coins. Security groups, their rules and GCP firewalls
may open 0.0.0.0/0 or ::/0 only to the TCP/UDP ports listed in `allowedPorts`
(none by default: public traffic comes in through a load balancer). A GCP
firewall with no source ranges, tags or service accounts is open to 0.0.0.0/0.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import get_path
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    show,
)

NAME = "no-open-ingress"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Security groups and firewalls open 0.0.0.0/0 and ::/0 only to the configured ports."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "allowedPorts": {
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 65535},
            "default": [],
            "description": "TCP/UDP ports that may be open to the internet, e.g. [443] for a public API.",
        }
    }
)

SECURITY_GROUPS = frozenset(
    {"aws:ec2/securityGroup:SecurityGroup", "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"}
)
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
_PORTED = {"tcp": "TCP", "udp": "UDP", "6": "TCP", "17": "UDP"}
_ALL = {"-1", "all"}


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    props = resource.props
    if resource.type in SECURITY_GROUPS:
        rules = props.get("ingress")
        if rules is UNKNOWN:
            return Outcome(unknown=("ingress",))
        items = [(f"ingress[{i}]", r) for i, r in enumerate(rules if isinstance(rules, list) else [])]
        sources = ("cidrBlocks", "ipv6CidrBlocks")
    elif resource.type == SECURITY_GROUP_RULE:
        if props.get("type") != "ingress":
            return not_applicable("applies to ingress rules")
        items, sources = [("", props)], ("cidrBlocks", "ipv6CidrBlocks")
    elif resource.type == INGRESS_RULE:
        items, sources = [("", props)], ("cidrIpv4", "cidrIpv6")
    elif resource.type == GCP_FIREWALL:
        return _check_firewall(resource, config)
    else:
        return not_applicable("applies to security groups, their ingress rules and GCP firewalls")
    found = Findings()
    for path, rule in items:
        _check_aws_rule(resource, path, rule, sources, config["allowedPorts"], found)
    return found.outcome()


def _check_aws_rule(
    resource: Resource, path: str, rule: Any, sources: tuple[str, ...], allowed: list[int], found: Findings
) -> None:
    protocol, low, high = (get_path(rule, k) for k in ("protocol", "fromPort", "toPort"))
    if protocol is None:
        protocol = get_path(rule, "ipProtocol")
    for cidr, where in _open_sources(rule, sources, path, found):
        if UNKNOWN in (protocol, low, high):
            found.not_known(f"{path}.protocol" if path else "protocol")
            continue
        what = _traffic(str(protocol).lower(), low, high)
        if what is not None and not _within(str(protocol).lower(), low, high, allowed):
            found.violation(_message(resource, what, cidr, where, allowed))


def _check_firewall(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    props, found = resource.props, Findings()
    direction, disabled = props.get("direction"), props.get("disabled")
    if direction is UNKNOWN or disabled is UNKNOWN:
        return Outcome(unknown=("direction",))
    if (direction or "INGRESS") != "INGRESS" or disabled is True:
        return not_applicable("applies to enabled ingress firewalls")
    ranges = props.get("sourceRanges")
    if ranges is None and props.get("sourceTags") is None and props.get("sourceServiceAccounts") is None:
        ranges = ["0.0.0.0/0"]  # GCP's default source when none is given
    open_ranges = list(_open_sources({"sourceRanges": ranges}, ("sourceRanges",), "", found))
    allows = props.get("allows")
    if allows is UNKNOWN:
        found.not_known("allows")
        return found.outcome()
    for cidr, where in open_ranges:
        for i, allow in enumerate(allows if isinstance(allows, list) else []):
            protocol, ports = get_path(allow, "protocol"), get_path(allow, "ports")
            if UNKNOWN in (protocol, ports) or (isinstance(ports, list) and UNKNOWN in ports):
                found.not_known(f"allows[{i}]")
                continue
            protocol = str(protocol).lower()
            for low, high in _port_ranges(ports):
                what = _traffic(protocol, low, high)
                if what is not None and not _within(protocol, low, high, config["allowedPorts"]):
                    found.violation(
                        _message(resource, what, cidr, f"{where}, allows[{i}]", config["allowedPorts"])
                    )
    return found.outcome()


def _open_sources(
    rule: Any, fields: tuple[str, ...], path: str, found: Findings
) -> Iterator[tuple[str, str]]:
    """(cidr, where) for each source in the rule that is the whole internet."""
    for field in fields:
        value = get_path(rule, field)
        where = f"{path}.{field}" if path else field
        values = value if isinstance(value, list) else [value]
        for cidr in values:
            if cidr is UNKNOWN:
                found.not_known(where)
            elif isinstance(cidr, str) and _is_everything(cidr):
                yield cidr, where


def _is_everything(cidr: str) -> bool:
    try:
        return ipaddress.ip_network(cidr, strict=False).prefixlen == 0
    except ValueError:
        return False


def _port_ranges(ports: Any) -> list[tuple[int, int]]:
    if not isinstance(ports, list) or not ports:
        return [(0, 65535)]
    ranges = []
    for port in ports:
        low, _, high = str(port).partition("-")
        ranges.append((int(low), int(high or low)))
    return ranges


def _traffic(protocol: str, low: Any, high: Any) -> str | None:
    """'TCP port 22', 'UDP ports 1000-2000', 'all traffic', 'ICMP traffic'."""
    if protocol in _ALL:
        return "all traffic"
    if protocol in _PORTED:
        low, high = int(low or 0), int(high if high is not None else 65535)
        if low == high:
            return f"{_PORTED[protocol]} port {low}"
        return f"{_PORTED[protocol]} ports {low}-{high}"
    return f"{protocol.upper()} traffic"


def _within(protocol: str, low: Any, high: Any, allowed: list[int]) -> bool:
    if protocol not in _PORTED:
        return False
    low, high = int(low or 0), int(high if high is not None else 65535)
    return high - low < 65536 and all(p in allowed for p in range(low, high + 1))


def _message(resource: Resource, what: str, cidr: str, where: str, allowed: list[int]) -> str:
    if allowed:
        permitted = f"only port{'s' if len(allowed) > 1 else ''} {', '.join(show(p) for p in allowed)} may"
    else:
        permitted = "no port may"
    return (
        f"{resource.label} opens {what} to {cidr} ({where}); {permitted} be open to the internet "
        "(config allowedPorts). Narrow the source range or put a load balancer in front."
    )


POLICY = resource_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
