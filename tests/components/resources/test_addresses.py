"""The public share of source ranges: merged blocks, Python's ipaddress at every edge of the tables."""

from __future__ import annotations

import ipaddress

import pytest

from inference_infra.components.resources.addresses import (
    NOT_PUBLIC_IPV4,
    NOT_PUBLIC_IPV6,
    Exposure,
    exposure,
)


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """What ipaddress says: global, and neither multicast nor reserved (nor IPv6 site-local)."""
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    return address.is_global and not (address.is_multicast or address.is_reserved or site_local)


@pytest.mark.parametrize("block", NOT_PUBLIC_IPV4 + NOT_PUBLIC_IPV6)
def test_addresses_tables_agree_with_ipaddress_at_every_edge(block):
    network = ipaddress.ip_network(block)
    first, last = network.network_address, network.broadcast_address
    assert not _public(first)
    assert not _public(last)
    tables = [ipaddress.ip_network(b) for b in NOT_PUBLIC_IPV4 + NOT_PUBLIC_IPV6]
    for neighbour in (int(first) - 1, int(last) + 1):
        if not 0 <= neighbour < 2**network.max_prefixlen:
            continue
        kind = ipaddress.IPv4Address if network.version == 4 else ipaddress.IPv6Address
        address = kind(neighbour)
        listed = any(address in t for t in tables if t.version == network.version)
        assert _public(address) is not listed, address


def test_addresses_whole_internet_in_two_halves_is_the_whole_internet():
    halves = exposure(["0.0.0.0/1", "128.0.0.0/1"])
    assert halves == exposure(["0.0.0.0/0"])
    hidden = sum(ipaddress.ip_network(b).num_addresses for b in NOT_PUBLIC_IPV4)  # the table does not overlap
    assert halves.ipv4_addresses == 2**32 - hidden == 3_702_258_934
    assert halves.public()
    # 3000::/4 is the widest global block (2001::/23 is not global)
    assert exposure(["::/1", "8000::/1"]) == exposure(["::/0"]) == Exposure(0, 4)
    assert exposure(["::/0"]).public()


def test_addresses_passes_private_and_narrow_sources():
    assert exposure(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"]) == Exposure(0, None)
    assert not exposure(["203.0.113.7/32", "8.8.8.0/24"]).public()
    assert exposure(["8.0.0.0/8"]).ipv4_addresses == 2**24
    assert not exposure(["8.0.0.0/8"]).public()  # exactly 2^24: not more than it
    assert not exposure(["2600:1f18::/32", "fd00::/8", "fe80::/10"]).public()
    assert exposure(["8000::/1"]) == Exposure(0, None)  # reserved, private, multicast: nothing global


def test_addresses_rejects_wide_public_sources_merged_across_blocks():
    blocks = [f"{n}.0.0.0/8" for n in (1, 2, 3)]
    assert exposure(blocks[:1]).public() is False
    assert exposure(blocks).public()  # three /8s together: more than 2^24
    assert exposure(["2600::/31"]).public()
    assert exposure(["2600::/32", "2600:1::/32"]) == Exposure(0, 31)  # merged into a /31
    assert exposure(["2600::/31"]).public(min_ipv6=24) is False
    assert exposure(["1.0.0.0/8", "2.0.0.0/8"]).public(max_ipv4=2**25) is False


def test_addresses_skips_what_is_not_a_block():
    assert exposure(["not-a-cidr", "pl-123", "0.0.0.0/0"]).public()
    assert exposure(["sg-1"]) == Exposure(0, None)
