"""Availability zones per region, with AWS zone ids, for offline answers to zone look-ups.

AWS maps zone names (us-east-1a) to physical zones per account in the oldest
regions; the zone id (use1-az1) is the same for every account. The pairs below
are one account's mapping as shown by `aws ec2 describe-availability-zones`,
in the order the API lists them, and only zones open to every account (opt-in
Local Zones and Wavelength Zones are left out). A region missing here answers
with three zones a-c and a warning-free default; add a row when a program needs it.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_AWS_SOURCE = "https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html"
_GCP_SOURCE = "https://cloud.google.com/compute/docs/regions-zones#available"
_AS_OF = date(2026, 11, 1)


@dataclass(frozen=True, kw_only=True)
class RegionZones:
    region: str
    names: tuple[str, ...]
    zone_ids: tuple[str, ...]  # AWS only; empty for GCP
    source: str
    as_of: date


def _aws(region: str, pairs: str) -> RegionZones:
    names, ids = zip(*(p.split("=") for p in pairs.split()), strict=True)
    return RegionZones(
        region=region,
        names=tuple(f"{region}{n}" for n in names),
        zone_ids=ids,
        source=_AWS_SOURCE,
        as_of=_AS_OF,
    )


def _gcp(region: str, letters: str) -> RegionZones:
    return RegionZones(
        region=region,
        names=tuple(f"{region}-{z}" for z in letters),
        zone_ids=(),
        source=_GCP_SOURCE,
        as_of=_AS_OF,
    )


AWS_ZONES: dict[str, RegionZones] = {
    z.region: z
    for z in (
        _aws("us-east-1", "a=use1-az6 b=use1-az1 c=use1-az2 d=use1-az4 e=use1-az3 f=use1-az5"),
        _aws("us-east-2", "a=use2-az1 b=use2-az2 c=use2-az3"),
        _aws("us-west-1", "a=usw1-az1 c=usw1-az3"),
        _aws("us-west-2", "a=usw2-az1 b=usw2-az2 c=usw2-az3 d=usw2-az4"),
        _aws("ca-central-1", "a=cac1-az1 b=cac1-az2 d=cac1-az4"),
        _aws("sa-east-1", "a=sae1-az1 b=sae1-az2 c=sae1-az3"),
        _aws("eu-west-1", "a=euw1-az1 b=euw1-az2 c=euw1-az3"),
        _aws("eu-west-2", "a=euw2-az2 b=euw2-az3 c=euw2-az1"),
        _aws("eu-west-3", "a=euw3-az1 b=euw3-az2 c=euw3-az3"),
        _aws("eu-central-1", "a=euc1-az2 b=euc1-az3 c=euc1-az1"),
        _aws("eu-north-1", "a=eun1-az1 b=eun1-az2 c=eun1-az3"),
        _aws("ap-south-1", "a=aps1-az1 b=aps1-az3 c=aps1-az2"),
        _aws("ap-northeast-1", "a=apne1-az4 c=apne1-az1 d=apne1-az2"),
        _aws("ap-northeast-2", "a=apne2-az1 b=apne2-az2 c=apne2-az3 d=apne2-az4"),
        _aws("ap-southeast-1", "a=apse1-az1 b=apse1-az2 c=apse1-az3"),
        _aws("ap-southeast-2", "a=apse2-az1 b=apse2-az3 c=apse2-az2"),
    )
}

GCP_ZONES: dict[str, RegionZones] = {
    z.region: z
    for z in (
        _gcp("us-central1", "abcf"),
        _gcp("us-east1", "bcd"),
        _gcp("us-east4", "abc"),
        _gcp("us-east5", "abc"),
        _gcp("us-west1", "abc"),
        _gcp("us-west4", "abc"),
        _gcp("us-south1", "abc"),
        _gcp("europe-west1", "bcd"),
        _gcp("europe-west4", "abc"),
        _gcp("asia-east1", "abc"),
        _gcp("asia-northeast1", "abc"),
        _gcp("asia-southeast1", "abc"),
    )
}


def aws_zones(region: str) -> RegionZones:
    """The region's zones; an unlisted region gets three zones a-c with made-up ids."""
    if region in AWS_ZONES:
        return AWS_ZONES[region]
    short = "".join(part[0] if not part.isdigit() else part for part in region.split("-"))
    return RegionZones(
        region=region,
        names=tuple(f"{region}{z}" for z in "abc"),
        zone_ids=tuple(f"{short}-az{i}" for i in (1, 2, 3)),
        source="assumed: three zones (region not in the table)",
        as_of=_AS_OF,
    )


def gcp_zones(region: str) -> RegionZones:
    return GCP_ZONES.get(region) or _gcp(region, "abc")


# AWS maps zone names to physical zones independently for each account only in the regions opened
# before November 2012 (and, since November 2025, not for new accounts): elsewhere a name is the same
# zone in every account. Source: https://docs.aws.amazon.com/global-infrastructure/latest/regions/az-ids.html
# ("All Regions introduced after November 2012 use a uniform mapping", read 2026-11-26); the regions
# open before then (us-east-1 2006, eu-west-1 2008, us-west-1 2009, ap-southeast-1 2010, ap-northeast-1,
# us-west-2, sa-east-1 and us-gov-west-1 2011; ap-southeast-2 opened in November 2012 and is counted
# here, the cautious side).
INDEPENDENTLY_MAPPED_REGIONS = frozenset(
    {
        "us-east-1",
        "us-west-1",
        "us-west-2",
        "eu-west-1",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-northeast-1",
        "sa-east-1",
        "us-gov-west-1",
    }
)
_AWS_ZONE_ID = re.compile(r"^[a-z]{3,5}\d+-az\d+$")  # use1-az1, usw2-az4 (no Local Zones)


def is_aws_zone_id(value: str) -> bool:
    """'use1-az1': an AZ id, the same physical zone in every account."""
    return bool(_AWS_ZONE_ID.match(value))


def aws_zone_id(zone: str) -> tuple[str | None, str]:
    """(the AZ id of an AWS zone given by name or id, or None; why, when None).

    A name resolves only where it means the same zone in every account and the table lists the
    region; in the regions that map names per account the id is the account's to tell.
    """
    if is_aws_zone_id(zone):
        return zone, ""
    region = zone[:-1]
    if region in INDEPENDENTLY_MAPPED_REGIONS:
        return None, f"{zone} maps to a zone per account in {region}"
    table = AWS_ZONES.get(region)
    if table is None or zone not in table.names:
        return None, f"no zone id known for {zone}"
    return table.zone_ids[table.names.index(zone)], ""
