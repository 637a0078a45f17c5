"""Availability zones per region, with AWS zone ids, for offline answers to zone look-ups.

AWS maps zone names (us-east-1a) to physical zones per account in the oldest
regions; the zone id (use1-az1) is the same for every account. The pairs below
are one account's mapping as shown by `aws ec2 describe-availability-zones`,
in the order the API lists them, and only zones open to every account (opt-in
Local Zones and Wavelength Zones are left out). A region missing here answers
with three zones a-c and a warning-free default; add a row when a program needs it.

The region lists (`AWS_REGIONS`, `GCP_REGIONS`) decide "unknown region"; a zone is checked against
its region's recorded names where the tables above record them, else its letter must be a-f (the
letters both clouds use). `aws_zone_problems`, `gcp_zone_problems` and the region checks return the
problems the components raise (exit 2 in a plan), each with a did-you-mean.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from inference_infra.components.errors import Problem, did_you_mean

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
    return bool(_AWS_ZONE_ID.fullmatch(value))


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


# Every region of every AWS partition, as botocore 1.44.8 lists them (`botocore/data/endpoints.json`,
# partitions[].regions; read 2026-12-02): what the AWS SDKs accept as a region.
AWS_REGIONS_SOURCE = "botocore 1.44.8 botocore/data/endpoints.json (partitions[].regions), read 2026-12-02"
AWS_REGIONS = frozenset(
    [
        "af-south-1",
        "ap-east-1",
        "ap-east-2",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-central-1",
        "ca-west-1",
        "eu-central-1",
        "eu-central-2",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "il-central-1",
        "me-central-1",
        "me-south-1",
        "mx-central-1",
        "sa-east-1",
        "us-east-1",
        "us-east-2",
        "us-west-1",
        "us-west-2",
        "cn-north-1",
        "cn-northwest-1",
        "us-gov-east-1",
        "us-gov-west-1",
        "us-iso-east-1",
        "us-iso-west-1",
        "us-isob-east-1",
        "us-isob-west-1",
        "eu-isoe-west-1",
        "us-isof-east-1",
        "us-isof-south-1",
        "eusc-de-east-1",
    ]
)

# Google's own region list (GoogleCloudPlatform/region-picker, data/regions.json at 565d8fa9, last
# changed 2024-07-04; read 2026-12-02), plus us-central2 (the TPU v4 region: Google's TPU zone table
# and SkyPilot's GCP catalog copy list it) and the two regions opened after that file
# (northamerica-south1, europe-north2; secondary: https://docs.velt.dev/security/supported-regions,
# read 2026-12-02).
GCP_REGIONS_SOURCE = (
    "https://github.com/GoogleCloudPlatform/region-picker/blob/565d8fa976d01f8dc626102ed2f5466e8f60aa4f/"
    "data/regions.json (read 2026-12-02), plus us-central2, northamerica-south1 and europe-north2"
)
GCP_REGIONS = frozenset(
    [
        "africa-south1",
        "asia-east1",
        "asia-east2",
        "asia-northeast1",
        "asia-northeast2",
        "asia-northeast3",
        "asia-south1",
        "asia-south2",
        "asia-southeast1",
        "asia-southeast2",
        "australia-southeast1",
        "australia-southeast2",
        "europe-central2",
        "europe-north1",
        "europe-southwest1",
        "europe-west1",
        "europe-west10",
        "europe-west12",
        "europe-west2",
        "europe-west3",
        "europe-west4",
        "europe-west6",
        "europe-west8",
        "europe-west9",
        "me-central1",
        "me-central2",
        "me-west1",
        "northamerica-northeast1",
        "northamerica-northeast2",
        "southamerica-east1",
        "southamerica-west1",
        "us-central1",
        "us-east1",
        "us-east4",
        "us-east5",
        "us-south1",
        "us-west1",
        "us-west2",
        "us-west3",
        "us-west4",
        "us-central2",
        "northamerica-south1",
        "europe-north2",
    ]
)
_ZONE_LETTERS = "abcdef"  # where a region's zone names are not recorded


def aws_region_problems(input_name: str, region: str) -> list[Problem]:
    """'unknown region' for a name no AWS partition has (us-east-9), with a did-you-mean."""
    if region in AWS_REGIONS:
        return []
    return [
        Problem(
            input_name,
            region,
            f"is an unknown region{did_you_mean(region, AWS_REGIONS)}: AWS regions are those of "
            f"{AWS_REGIONS_SOURCE}",
        )
    ]


def gcp_region_problems(input_name: str, region: str) -> list[Problem]:
    """'unknown region' for a name Google does not list (us-central9), with a did-you-mean."""
    if region in GCP_REGIONS:
        return []
    return [
        Problem(
            input_name,
            region,
            f"is an unknown region{did_you_mean(region, GCP_REGIONS)}: GCP regions are those of "
            f"{GCP_REGIONS_SOURCE}",
        )
    ]


def _zone_problems(
    input_name: str, zone: str, region: str, recorded: RegionZones | None, where: str | None, cloud: str
) -> list[Problem]:
    known = AWS_REGIONS if cloud == "AWS" else GCP_REGIONS
    article = "an" if cloud == "AWS" else "a"
    if region not in known:
        return [
            Problem(
                input_name,
                zone,
                f"is in an unknown region {region!r}{did_you_mean(region, known)}: "
                f"not {article} {cloud} zone",
            )
        ]
    if where is not None and region != where:
        return [
            Problem(
                input_name,
                zone,
                f"is outside the provider's region {where!r}: {article} {cloud} resource's zone is in "
                f"the region its provider deploys to; use a zone of {where} ({_listed(where, cloud)}) "
                "or set the provider's region",
            )
        ]
    names = recorded.names if recorded is not None else ()
    if names and zone not in names:
        return [
            Problem(
                input_name,
                zone,
                f"is not a zone of {region}{did_you_mean(zone, names)}: its zones are {', '.join(names)} "
                f"({recorded.source}, {recorded.as_of.isoformat()})",
            )
        ]
    if not names and zone[-1] not in _ZONE_LETTERS:
        example = f"{region}a" if cloud == "AWS" else f"{region}-a"
        return [
            Problem(input_name, zone, f"is not a zone of {region}: its letter is one of a-f, e.g. {example}")
        ]
    return []


def _listed(region: str, cloud: str) -> str:
    table = (AWS_ZONES if cloud == "AWS" else GCP_ZONES).get(region)
    return ", ".join(table.names) if table is not None else "zone names not recorded"


def aws_zone_problems(input_name: str, zone: str, provider_region: str | None = None) -> list[Problem]:
    """An AWS zone name (us-east-1a) that is not a zone of its region, in an unknown region, or
    outside `provider_region` (the stack's aws:region) when given."""
    region = zone[:-1]
    return _zone_problems(input_name, zone, region, AWS_ZONES.get(region), provider_region, "AWS")


def gcp_zone_problems(input_name: str, zone: str, provider_region: str | None = None) -> list[Problem]:
    """A GCP zone (us-central1-a) that is not a zone of its region, in an unknown region, or outside
    `provider_region` (the stack's gcp:region, or the fleet's network's region) when given."""
    region = zone.rsplit("-", 1)[0]
    return _zone_problems(input_name, zone, region, GCP_ZONES.get(region), provider_region, "GCP")


_SUBNETWORK_REGION = re.compile(r"(?:^|/)regions/([a-z0-9-]+)/subnetworks/[^/]+$")


def gcp_subnetwork_region(subnetwork: object) -> str | None:
    """The region of a subnetwork given as its id or URL (projects/p/regions/r/subnetworks/s); None
    for a name alone or a value wired from another resource (known only at deploy)."""
    if not isinstance(subnetwork, str):
        return None
    found = _SUBNETWORK_REGION.search(subnetwork)
    return found.group(1) if found else None


def gcp_network_region_problems(
    input_name: str, zone: str, *, subnetwork: object = None, provider_region: str | None = None
) -> list[Problem]:
    """A GCP fleet whose zone is in another region than its subnetwork (when the subnetwork names its
    region), else than the provider's region (gcp:region, when set): its VMs could not attach to it."""
    region = zone.rsplit("-", 1)[0]
    if provider_region is not None and provider_region not in GCP_REGIONS:
        return gcp_region_problems("gcp:region (the gcp provider's region)", provider_region)
    if (network_region := gcp_subnetwork_region(subnetwork)) is not None:
        if region == network_region:
            return []
        return [
            Problem(
                input_name,
                zone,
                f"is in {region}, but the fleet's subnetwork {subnetwork!r} is in {network_region}: a VM "
                f"attaches only to a subnetwork of its own region; use a zone of {network_region} "
                f"({_listed(network_region, 'GCP')}) or a subnetwork of {region}",
            )
        ]
    if provider_region is None or region == provider_region:
        return []
    return [
        Problem(
            input_name,
            zone,
            f"is outside the provider's region {provider_region!r} (gcp:region), where the stack's "
            f"subnetworks are; use a zone of {provider_region} ({_listed(provider_region, 'GCP')}), "
            "or set gcp:region (or give the fleet its subnetwork's id, projects/P/regions/R/subnetworks/S)",
        )
    ]
