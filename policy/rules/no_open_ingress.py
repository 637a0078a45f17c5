"""no-open-ingress: nothing is reachable from the internet but the ports configured.

An inference server, a Jupyter port or SSH open to the internet on a GPU host is how clusters end
up mining coins. Security groups (inline ingress), their rules (`ec2.SecurityGroupRule`,
`vpc.SecurityGroupIngressRule`) and GCP firewalls may admit a public source only to the TCP/UDP
ports listed in `allowedPorts` (none by default: public traffic comes in through a load balancer).

A source is public however it is written: the addresses it admits outside private and reserved
ranges (`inference_infra.components.resources.addresses`, Python's `ipaddress` classification)
number more than `maxIpv4Addresses` IPv4 addresses (2^24) or include a global IPv6 prefix shorter
than /`minIpv6PrefixLength` (/32). The sources that reach one security group on one port are merged
before they are judged: its inline ingress and every rule resource naming the group (by id, or by
dependency while the id is not known), so `0.0.0.0/1` + `128.0.0.0/1` is the whole internet. GCP
firewalls are merged per network and target (tags or service accounts; a firewall without a
target reaches every instance of its network, so it adds to every target's). A GCP firewall with
no source ranges, tags or service accounts admits 0.0.0.0/0. A violation is reported on the
contributing resource first by name, naming the others.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import StackIndex, exposure, get_path, is_public_address
from inference_infra.components.resources.addresses import (
    DEFAULT_MAX_IPV4_ADDRESSES,
    DEFAULT_MIN_IPV6_PREFIX,
    Exposure,
    parse_block,
)
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    judged_stack_policy,
    not_applicable,
    rule_metadata,
    show,
)

NAME = "no-open-ingress"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Security groups and firewalls admit public sources, however written, only to the configured ports."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "allowedPorts": {
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 65535},
            "default": [],
            "description": "TCP/UDP ports that may be open to the internet, e.g. [443] for a public API.",
        },
        "maxIpv4Addresses": {
            "type": "integer",
            "minimum": 0,
            "default": DEFAULT_MAX_IPV4_ADDRESSES,
            "description": "Sources admitting more public IPv4 addresses than this, merged per group and "
            "port, are public (2^24 = a /8's worth).",
        },
        "minIpv6PrefixLength": {
            "type": "integer",
            "minimum": 0,
            "maximum": 128,
            "default": DEFAULT_MIN_IPV6_PREFIX,
            "description": "Sources including a global IPv6 prefix shorter than this length are public.",
        },
    }
)

SECURITY_GROUPS = frozenset(
    {"aws:ec2/securityGroup:SecurityGroup", "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"}
)
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
# Firewall policies (hierarchical, global and regional network policies) hold rules of their own:
# match.srcIpRanges and match.layer4Configs, action allow (terraform-provider-google
# resource_compute_firewall_policy_rule.go and the network variants).
GCP_FIREWALL_POLICY_RULES = frozenset(
    {
        "gcp:compute/firewallPolicyRule:FirewallPolicyRule",
        "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule",
        "gcp:compute/regionNetworkFirewallPolicyRule:RegionNetworkFirewallPolicyRule",
    }
)
GCP_NETWORKS = frozenset({"gcp:compute/network:Network"})
APPLIES_TO = "security groups, their ingress rules, GCP firewalls and firewall-policy rules"
_PORTED = {"tcp": "TCP", "udp": "UDP", "6": "TCP", "17": "UDP"}
_ALL = {"-1", "all"}
_ADVICE = "Narrow the source range or put a load balancer in front."


@dataclass(frozen=True)
class Grant:
    """One source block admitted to a protocol and port range, and where it is declared."""

    owner: int  # the declaring resource's position in the stack
    where: str  # its property path there
    protocol: str  # 'all', 'tcp', 'udp', or another protocol's name or number
    low: int
    high: int
    block: str


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    """The resource judged on its own (a stack of one)."""
    return next(outcome for _, outcome in judge([resource], config))


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterator[tuple[Resource, Outcome]]:
    stack = StackIndex(resources)
    position = {r.urn: i for i, r in enumerate(resources) if r.urn}
    findings: dict[int, Findings] = {}
    outcomes: dict[int, Outcome] = {}
    groups: dict[tuple[Any, ...], list[Grant]] = {}
    for i, resource in enumerate(resources):
        found = Findings()
        key, grants, skip = _grants(i, resource, stack, position, found)
        if skip is not None:
            outcomes[i] = skip
            continue
        findings[i] = found
        groups.setdefault(key, []).extend(grants)
    for grants in _with_network_wide_firewalls(groups):
        for owner, message in _judge_group(grants, resources, config):
            findings[owner].violation(message)
    for i, resource in enumerate(resources):
        yield resource, outcomes[i] if i in outcomes else findings[i].outcome()


def _grants(
    i: int, resource: Resource, stack: StackIndex, position: Mapping[str, int], found: Findings
) -> tuple[tuple[Any, ...], list[Grant], Outcome | None]:
    """The group a resource's grants belong to, the grants, or why it does not apply."""
    props = resource.props
    if resource.type in SECURITY_GROUPS:
        rules = props.get("ingress")
        if rules is UNKNOWN:
            return (), [], Outcome(unknown=("ingress",))
        items = [(f"ingress[{n}]", r) for n, r in enumerate(rules if isinstance(rules, list) else [])]
        grants = [
            g
            for path, rule in items
            for g in _aws_rule(i, path, rule, ("cidrBlocks", "ipv6CidrBlocks"), found)
        ]
        return ("sg", i), grants, None
    if resource.type == SECURITY_GROUP_RULE:
        if props.get("type") != "ingress":
            return (), [], not_applicable("applies to ingress rules")
        sources = ("cidrBlocks", "ipv6CidrBlocks")
    elif resource.type == INGRESS_RULE:
        sources = ("cidrIpv4", "cidrIpv6")
    elif resource.type == GCP_FIREWALL:
        return _firewall(i, resource, stack, position, found)
    elif resource.type in GCP_FIREWALL_POLICY_RULES:
        return _firewall_policy_rule(i, resource, found)
    else:
        return (), [], not_applicable(f"applies to {APPLIES_TO}")
    group = props.get("securityGroupId")
    target = stack.find(group, SECURITY_GROUPS, holder=resource)
    if target is not None:
        key: tuple[Any, ...] = ("sg", position.get(target.urn, i))
    else:
        key = ("sg-id", group) if isinstance(group, str) and group else ("own", i)
    return key, list(_aws_rule(i, "", props, sources, found)), None


def _aws_rule(i: int, path: str, rule: Any, sources: tuple[str, ...], found: Findings) -> Iterator[Grant]:
    protocol, low, high = (get_path(rule, k) for k in ("protocol", "fromPort", "toPort"))
    if protocol is None:
        protocol = get_path(rule, "ipProtocol")
    blocks = list(_blocks(rule, sources, path, found))
    if not blocks:
        return
    if UNKNOWN in (protocol, low, high):
        found.not_known(f"{path}.protocol" if path else "protocol")
        return
    name = _protocol(protocol)
    if name in ("tcp", "udp"):
        low, high = int(low or 0), int(high if high is not None else 65535)
    else:
        low, high = 0, 65535
    for block, where in blocks:
        yield Grant(i, where, name, low, high, block)


def _firewall(
    i: int, resource: Resource, stack: StackIndex, position: Mapping[str, int], found: Findings
) -> tuple[tuple[Any, ...], list[Grant], Outcome | None]:
    props = resource.props
    direction, disabled = props.get("direction"), props.get("disabled")
    if direction is UNKNOWN or disabled is UNKNOWN:
        return (), [], Outcome(unknown=("direction",))
    if (direction or "INGRESS") != "INGRESS" or disabled is True:
        return (), [], not_applicable("applies to enabled ingress firewalls")
    network = props.get("network")
    found_network = stack.find(network, GCP_NETWORKS, holder=resource)
    if found_network is not None:
        net: Any = position.get(found_network.urn, i)
    else:
        net = network if isinstance(network, str) else ("own", i)
    chosen = [props.get("targetTags"), props.get("targetServiceAccounts")]
    names = [t for value in chosen if isinstance(value, list) for t in value]
    if any(v is UNKNOWN for v in chosen) or UNKNOWN in names:
        targets: tuple[Any, ...] = ("own", i)  # targets not known yet: judged alone
    else:
        targets = tuple(sorted(str(t) for t in names))
    ranges = props.get("sourceRanges")
    if ranges is None and props.get("sourceTags") is None and props.get("sourceServiceAccounts") is None:
        ranges = ["0.0.0.0/0"]  # GCP's default source when none is given
    blocks = list(_blocks({"sourceRanges": ranges}, ("sourceRanges",), "", found))
    allows = props.get("allows")
    if allows is UNKNOWN:
        found.not_known("allows")
        return ("fw", net, targets), [], None
    return ("fw", net, targets), _entry_grants(i, allows, "protocol", "allows", blocks, found), None


def _firewall_policy_rule(
    i: int, resource: Resource, found: Findings
) -> tuple[tuple[Any, ...], list[Grant], Outcome | None]:
    """A firewall policy's ingress allow rule, judged on its own (its targets are the policy's)."""
    props = resource.props
    direction, action, disabled = props.get("direction"), props.get("action"), props.get("disabled")
    if UNKNOWN in (direction, action, disabled):
        return (), [], Outcome(unknown=("action",))
    if direction != "INGRESS" or action != "allow" or disabled is True:
        return (), [], not_applicable("applies to enabled ingress allow rules")
    match = props.get("match")
    if match is UNKNOWN:
        return ("fwp", i), [], Outcome(unknown=("match",))
    ranges = get_path(match, "srcIpRanges")
    blocks = list(_blocks({"srcIpRanges": ranges}, ("srcIpRanges",), "match", found))
    configs = get_path(match, "layer4Configs")
    return ("fwp", i), _entry_grants(i, configs, "ipProtocol", "match.layer4Configs", blocks, found), None


def _entry_grants(
    i: int, entries: Any, protocol_key: str, at: str, blocks: list[tuple[str, str]], found: Findings
) -> list[Grant]:
    """The grants of a GCP rule's protocol and ports entries (a firewall's `allows`, a firewall policy
    rule's `match.layer4Configs`): one per port range and source block; an entry not known yet is named."""
    grants = []
    for n, entry in enumerate(entries if isinstance(entries, list) else []):
        protocol, ports = get_path(entry, protocol_key), get_path(entry, "ports")
        if UNKNOWN in (protocol, ports) or (isinstance(ports, list) and UNKNOWN in ports):
            found.not_known(f"{at}[{n}]")
            continue
        name = _protocol(protocol)
        port_ranges = _port_ranges(ports) if name in ("tcp", "udp") else [(0, 65535)]
        for low, high in port_ranges:
            grants += [Grant(i, f"{where}, {at}[{n}]", name, low, high, block) for block, where in blocks]
    return grants


def _with_network_wide_firewalls(groups: Mapping[tuple[Any, ...], list[Grant]]) -> Iterator[list[Grant]]:
    """Each group's grants; a GCP firewall with no target adds its grants to every target's group
    in its network (the instances with those tags receive both)."""
    everywhere = {key[1]: grants for key, grants in groups.items() if key[0] == "fw" and key[2] == ()}
    for key, grants in groups.items():
        if key[0] == "fw" and key[2] != () and key[1] in everywhere:
            yield [*grants, *everywhere[key[1]]]
        else:
            yield grants


def _blocks(rule: Any, fields: tuple[str, ...], path: str, found: Findings) -> Iterator[tuple[str, str]]:
    """(block, where) for each CIDR source of the rule; unknown ones are recorded."""
    for field in fields:
        value = get_path(rule, field)
        where = f"{path}.{field}" if path else field
        for block in value if isinstance(value, list) else [value]:
            if block is UNKNOWN:
                found.not_known(where)
            elif isinstance(block, str) and parse_block(block) is not None:
                yield block, where


def _protocol(value: Any) -> str:
    name = str(value).lower()
    if name in _ALL:
        return "all"
    return {"6": "tcp", "17": "udp"}.get(name, name)


def _port_ranges(ports: Any) -> list[tuple[int, int]]:
    if not isinstance(ports, list) or not ports:
        return [(0, 65535)]
    ranges = []
    for port in ports:
        low, _, high = str(port).partition("-")
        ranges.append((int(low), int(high or low)))
    return ranges


def _judge_group(
    grants: list[Grant], resources: Sequence[Resource], config: Mapping[str, Any]
) -> list[tuple[int, str]]:
    """(owner position, message) for every public exposure of the group, in declaration order."""
    if not grants:
        return []
    allowed = [int(p) for p in config["allowedPorts"]]
    found: list[tuple[list[Grant], str, Exposure]] = []
    every = [g for g in grants if g.protocol == "all"]
    if (verdict := _public(every, config)) is not None:
        found.append((every, "all traffic", verdict))
        every = []  # reported: each protocol below is judged on its own sources
    for protocol in dict.fromkeys(g.protocol for g in grants if g.protocol != "all"):
        own = [g for g in grants if g.protocol == protocol]
        if protocol in ("tcp", "udp"):
            found += _ported(protocol, own, every, config, allowed)
        elif (verdict := _public(own + every, config)) is not None:
            found.append((own + every, f"{protocol.upper()} traffic", verdict))
    first = {id(g): n for n, g in reversed(list(enumerate(grants)))}
    found.sort(key=lambda item: min(first[id(g)] for g in item[0]))
    return [_report(what, sources, verdict, resources, config, allowed) for sources, what, verdict in found]


def _ported(
    protocol: str, own: list[Grant], every: list[Grant], config: Mapping[str, Any], allowed: list[int]
) -> list[tuple[list[Grant], str, Exposure]]:
    """Port by port (between the grants' edges): the sources reaching it, merged, judged."""
    edges = sorted({0, 65536, *(g.low for g in own), *(g.high + 1 for g in own)})
    exposed: list[tuple[int, int, tuple[Grant, ...], Exposure]] = []
    for low, next_low in itertools.pairwise(edges):
        high = next_low - 1
        covering = [g for g in own if g.low <= low and g.high >= high]
        if not covering or (verdict := _public(covering + every, config)) is None:
            continue
        if all(p in allowed for p in range(low, high + 1)) and high - low < 65536:
            continue
        contributors = tuple(covering + every)
        if exposed and exposed[-1][1] == low - 1 and exposed[-1][2] == contributors:
            exposed[-1] = (exposed[-1][0], high, contributors, verdict)
        else:
            exposed.append((low, high, contributors, verdict))
    return [
        (
            list(sources),
            f"{_PORTED[protocol]} {f'port {low}' if low == high else f'ports {low}-{high}'}",
            verdict,
        )
        for low, high, sources, verdict in exposed
    ]


def _public(grants: Iterable[Grant], config: Mapping[str, Any]) -> Exposure | None:
    found = exposure(g.block for g in grants)
    return (
        found if found.public(int(config["maxIpv4Addresses"]), int(config["minIpv6PrefixLength"])) else None
    )


def _report(
    what: str,
    grants: list[Grant],
    verdict: Exposure,
    resources: Sequence[Resource],
    config: Mapping[str, Any],
    allowed: list[int],
) -> tuple[int, str]:
    # The registration order of a stack is not fixed: sources and the resource reported on are
    # ordered by resource name, then as declared.
    order = {id(g): n for n, g in enumerate(grants)}
    public = sorted(
        (g for g in grants if is_public_address(g.block)),
        key=lambda g: (resources[g.owner].name, resources[g.owner].type, order[id(g)]),
    )
    owner = public[0].owner
    blocks = ", ".join(dict.fromkeys(g.block for g in public))
    wheres = ", ".join(
        dict.fromkeys(
            g.where if g.owner == owner else f"{g.where} of {resources[g.owner].label}" for g in public
        )
    )
    whole = len({g.block for g in public}) == 1 and parse_block(public[0].block).prefixlen == 0  # type: ignore[union-attr]
    together = "" if whole else f", together {_why(verdict, config)}"
    if allowed:
        permitted = f"only port{'s' if len(allowed) > 1 else ''} {', '.join(show(p) for p in allowed)} may"
    else:
        permitted = "no port may"
    return owner, (
        f"{resources[owner].label} opens {what} to {blocks} ({wheres}){together}; {permitted} be open to the "
        f"internet (config allowedPorts). {_ADVICE}"
    )


def _why(verdict: Exposure, config: Mapping[str, Any]) -> str:
    limit, prefix = int(config["maxIpv4Addresses"]), int(config["minIpv6PrefixLength"])
    if verdict.ipv4_addresses > limit:
        return f"{verdict.ipv4_addresses:,} public IPv4 addresses (more than maxIpv4Addresses {limit:,})"
    return f"a global IPv6 /{verdict.ipv6_shortest_prefix} (shorter than minIpv6PrefixLength /{prefix})"


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)
