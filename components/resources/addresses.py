"""How much of the internet a set of source ranges admits: the public share of CIDR blocks.

A source is public when the addresses it admits, outside the ranges that are not reachable from
the internet, cover more than a number of IPv4 addresses in total (2^24 by default, a /8's worth)
or include any global IPv6 prefix shorter than a length (/32 by default). The blocks are merged
before they are judged, so `0.0.0.0/1` + `128.0.0.0/1` is the whole internet, as `0.0.0.0/0` is.

Not public: what Python's `ipaddress` does not call global, plus what it calls multicast or
reserved (and IPv6 site-local), i.e. exactly the addresses `a` for which
`not a.is_global or a.is_multicast or a.is_reserved or a.is_site_local` (Python 3.11):

- IPv4: 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10 (shared address space), 127.0.0.0/8, 169.254.0.0/16,
  172.16.0.0/12, 192.0.0.0/29, 192.0.0.170/31, 192.0.2.0/24, 192.168.0.0/16, 198.18.0.0/15,
  198.51.100.0/24, 203.0.113.0/24, 224.0.0.0/4 (multicast), 240.0.0.0/4 (reserved, with the broadcast);
- IPv6: the private blocks (::1, ::, ::ffff:0:0/96, 100::/64, 2001::/23, 2001:db8::/32, fc00::/7,
  fe80::/10), the IETF-reserved blocks (::/8, 100::/8, 200::/7, 400::/6, 800::/5, 1000::/4, 4000::/3,
  6000::/3, 8000::/3, a000::/3, c000::/3, e000::/4, f000::/5, f800::/6, fe00::/9), site-local
  fec0::/10 and multicast ff00::/8. What remains is global unicast space inside 2000::/3.

`tests/components/resources/test_addresses.py` checks the tables against `ipaddress` at every edge.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

DEFAULT_MAX_IPV4_ADDRESSES = 2**24
DEFAULT_MIN_IPV6_PREFIX = 32

NOT_PUBLIC_IPV4 = (
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/29",
    "192.0.0.170/31",
    "192.0.2.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
)
NOT_PUBLIC_IPV6 = (
    "::/8",
    "100::/8",
    "200::/7",
    "400::/6",
    "800::/5",
    "1000::/4",
    "2001::/23",
    "2001:db8::/32",
    "4000::/3",
    "6000::/3",
    "8000::/3",
    "a000::/3",
    "c000::/3",
    "e000::/4",
    "f000::/5",
    "f800::/6",
    "fc00::/7",
    "fe00::/9",
    "fe80::/10",
    "fec0::/10",
    "ff00::/8",
)

Interval = tuple[int, int]  # first and last address, inclusive


@dataclass(frozen=True)
class Exposure:
    """What a set of source blocks admits from the internet."""

    ipv4_addresses: int  # public IPv4 addresses admitted, after merging
    ipv6_shortest_prefix: int | None  # the shortest global IPv6 prefix admitted (None: none)

    def public(
        self, max_ipv4: int = DEFAULT_MAX_IPV4_ADDRESSES, min_ipv6: int = DEFAULT_MIN_IPV6_PREFIX
    ) -> bool:
        """More than max_ipv4 public IPv4 addresses, or a global IPv6 prefix shorter than /min_ipv6."""
        shortest = self.ipv6_shortest_prefix
        return self.ipv4_addresses > max_ipv4 or (shortest is not None and shortest < min_ipv6)

    def describe(self) -> str:
        """'3,702,258,432 public IPv4 addresses and a global IPv6 /3'."""
        parts = []
        if count := self.ipv4_addresses:
            parts.append(f"{count:,} public IPv4 address{'es' if count != 1 else ''}")
        if self.ipv6_shortest_prefix is not None:
            parts.append(f"a global IPv6 /{self.ipv6_shortest_prefix}")
        return " and ".join(parts) or "no public address"


def _interval(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> Interval:
    return int(network.network_address), int(network.broadcast_address)


def _merged(intervals: Iterable[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for low, high in sorted(intervals):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


@cache
def _not_public(version: int) -> tuple[Interval, ...]:
    table = NOT_PUBLIC_IPV4 if version == 4 else NOT_PUBLIC_IPV6
    return tuple(_merged(_interval(ipaddress.ip_network(c)) for c in table))


def _public_parts(intervals: list[Interval], version: int) -> list[Interval]:
    """intervals minus the ranges that are not public (both sorted and merged)."""
    out: list[Interval] = []
    holes = _not_public(version)
    for low, high in intervals:
        cursor = low
        for hole_low, hole_high in holes:
            if hole_high < cursor or hole_low > high:
                continue
            if hole_low > cursor:
                out.append((cursor, hole_low - 1))
            cursor = max(cursor, hole_high + 1)
            if cursor > high:
                break
        if cursor <= high:
            out.append((cursor, high))
    return out


def _shortest_prefix(intervals: list[Interval]) -> int | None:
    """The shortest IPv6 CIDR block lying wholly inside one of the intervals."""
    best = None
    for low, high in intervals:
        first, last = ipaddress.IPv6Address(low), ipaddress.IPv6Address(high)
        for block in ipaddress.summarize_address_range(first, last):
            best = block.prefixlen if best is None else min(best, block.prefixlen)
    return best


def parse_block(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """A CIDR block (or a bare address) as a network, host bits ignored; None when it is not one."""
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except (ValueError, AttributeError):
        return None


def exposure(blocks: Iterable[str]) -> Exposure:
    """The public addresses a set of CIDR blocks admits, merged (strings that are not blocks are skipped)."""
    by_version: dict[int, list[Interval]] = {4: [], 6: []}
    for text in blocks:
        network = parse_block(text) if isinstance(text, str) else None
        if network is not None:
            by_version[network.version].append(_interval(network))
    ipv4 = _public_parts(_merged(by_version[4]), 4)
    ipv6 = _public_parts(_merged(by_version[6]), 6)
    return Exposure(sum(high - low + 1 for low, high in ipv4), _shortest_prefix(ipv6))


def is_public_address(text: str) -> bool:
    """One address or block: does any public address lie in it (the tables above)?"""
    found = exposure([text])
    return found.ipv4_addresses > 0 or found.ipv6_shortest_prefix is not None
