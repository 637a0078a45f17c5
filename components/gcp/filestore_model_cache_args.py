"""FilestoreModelCache's arguments and their validation (pure: no provider SDK).

Apart from `filestore_model_cache.py` so that the stack config reads them without loading the
provider SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from ipaddress import ip_network

import pulumi

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.errors import Problem
from inference_infra.components.gcp.filestore_tiers import FilestoreTier, capacity_problems, tier_limits
from inference_infra.components.gcp.names import is_region, is_zone, label_problems, name_problems

_SHARE_NAME_MAX = 16


class ConnectMode(StrEnum):
    DIRECT_PEERING = "DIRECT_PEERING"
    PRIVATE_SERVICE_ACCESS = "PRIVATE_SERVICE_ACCESS"


@renamed_inputs(Renamed("kms_key_name", "kms_key"))
@dataclass(frozen=True, kw_only=True)
class FilestoreModelCacheArgs:
    """An NFS share of model weights on the fleets' VPC: read-only to the serving ranges."""

    network: pulumi.Input[str] = arg(
        doc="The VPC network's name (or projects/<p>/global/networks/<n> for Shared VPC).", stack=False
    )
    location: str = arg(doc="A zone for the BASIC_* and ZONAL tiers, a region for REGIONAL and ENTERPRISE.")
    client_ranges: Sequence[str] = arg(
        doc="CIDRs that may mount the share, read-only with root squashed (the fleets' subnets)."
    )
    writer_ranges: Sequence[str] = arg(
        (),
        "CIDRs (a publisher host, outside the serving ranges) exported READ_WRITE; none by default.",
    )
    tier: FilestoreTier = arg(FilestoreTier.ZONAL, "The service tier; the capacity must fit its range.")
    capacity_gib: int = arg(1024, "Capacity in GiB; must fit the tier's range and step.", le=102_400)
    share_name: str = arg(
        "models", f"The NFS share's name: a letter, then letters, digits and '_' (at most {_SHARE_NAME_MAX})."
    )
    connect_mode: ConnectMode = arg(
        ConnectMode.DIRECT_PEERING,
        "How the instance joins the VPC: DIRECT_PEERING or PRIVATE_SERVICE_ACCESS.",
    )
    reserved_ip_range: str | None = arg(
        None,
        "The instance's addresses: a CIDR (/29 or larger) or an allocated range's name; default: "
        "Google's pick.",
    )
    kms_key: pulumi.Input[str] | None = arg(
        None,
        "Customer-managed key (a Cloud KMS key name) for the instance; default: Google-managed encryption.",
    )
    deletion_protection: bool = arg(False, "Refuse to delete the instance (ZONAL tier and up).")
    labels: Mapping[str, str] = arg(factory=dict, doc="More labels on the instance.")
    project: str | None = arg(None, "The project; default: the provider's.")


def validate_filestore_cache(name: str, args: FilestoreModelCacheArgs) -> list[Problem]:
    problems = name_problems("name", name)
    problems += capacity_problems(args.tier, args.capacity_gib)
    limits = tier_limits(args.tier)
    if limits.regional and not is_region(args.location):
        problems.append(
            Problem(
                "location", args.location, f"must be a region such as 'us-central1' for the {args.tier} tier"
            )
        )
    if not limits.regional and not is_zone(args.location):
        problems.append(
            Problem(
                "location", args.location, f"must be a zone such as 'us-central1-a' for the {args.tier} tier"
            )
        )
    if not args.share_name[:1].isalpha() or not args.share_name.replace("_", "").isalnum():
        problems.append(
            Problem(
                "share_name", args.share_name, "must start with a letter and use only letters, digits and '_'"
            )
        )
    elif len(args.share_name) > _SHARE_NAME_MAX:
        problems.append(
            Problem("share_name", args.share_name, f"must be at most {_SHARE_NAME_MAX} characters")
        )
    if not args.client_ranges:
        problems.append(
            Problem("client_ranges", [], "must name the CIDRs that may mount the share (the fleet's subnets)")
        )
    for i, cidr in enumerate(args.client_ranges):
        try:
            network = ip_network(cidr, strict=True)
        except ValueError:
            problems.append(
                Problem(f"client_ranges[{i}]", cidr, "must be a CIDR block such as '10.40.0.0/20'")
            )
            continue
        if not network.is_private:
            problems.append(
                Problem(f"client_ranges[{i}]", cidr, "must be a private range; the share is for the VPC only")
            )
    readers = [_network(c) for c in args.client_ranges]
    for i, cidr in enumerate(args.writer_ranges):
        writer = _network(cidr)
        if writer is None:
            problems.append(
                Problem(f"writer_ranges[{i}]", cidr, "must be a CIDR block such as '10.40.15.10/32'")
            )
        elif not writer.is_private:
            problems.append(Problem(f"writer_ranges[{i}]", cidr, "must be a private range"))
        elif any(r is not None and r.overlaps(writer) for r in readers):
            problems.append(
                Problem(
                    f"writer_ranges[{i}]",
                    cidr,
                    "must not overlap client_ranges (a serving host must never get the read-write export); "
                    "give the writer its own subnet or address outside the serving ranges",
                )
            )
    if args.deletion_protection and args.tier in (FilestoreTier.BASIC_HDD, FilestoreTier.BASIC_SSD):
        problems.append(
            Problem(
                "deletion_protection", True, f"is not offered on the {args.tier} tier (ZONAL and up only)"
            )
        )
    problems += label_problems("labels", args.labels)
    return problems


def _network(cidr: str):
    try:
        return ip_network(cidr, strict=True)
    except ValueError:
        return None
