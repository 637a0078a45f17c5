"""FilestoreModelCache: an NFS share for model weights on the fleet's VPC.

GPU and TPU nodes without local SSD read their weights from here; the first
node of a fleet fills it from Cloud Storage (see `startup.py`), the others
find it filled. The share is exported only to the ranges given: READ_ONLY with
ROOT_SQUASH to the serving client ranges (root on a serving VM cannot replace
the weights every other node serves), READ_WRITE only to the named writer
ranges (a publisher host; see `writer_ranges`), which must not overlap them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from ipaddress import ip_network

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.gcp.filestore_tiers import FilestoreTier, capacity_problems, tier_limits
from inference_infra.components.gcp.names import is_region, is_zone, label_problems, name_problems
from inference_infra.components.validation import check_types

_SHARE_NAME_MAX = 16


class ConnectMode(StrEnum):
    DIRECT_PEERING = "DIRECT_PEERING"
    PRIVATE_SERVICE_ACCESS = "PRIVATE_SERVICE_ACCESS"


@dataclass(frozen=True, kw_only=True)
class FilestoreModelCacheArgs:
    network: pulumi.Input[str]  # VPC network name (or projects/<p>/global/networks/<n> for Shared VPC)
    location: str  # a zone for BASIC_* and ZONAL, a region for REGIONAL and ENTERPRISE
    client_ranges: Sequence[str]  # CIDRs that may mount the share read-only (the fleet's subnets)
    writer_ranges: Sequence[str] = ()  # CIDRs (e.g. a publisher's /32) that may write; none by default
    tier: FilestoreTier = FilestoreTier.ZONAL
    capacity_gib: int = 1024
    share_name: str = "models"
    connect_mode: ConnectMode = ConnectMode.DIRECT_PEERING
    reserved_ip_range: str | None = None  # CIDR (/29 or larger) or an allocated range name
    kms_key_name: pulumi.Input[str] | None = None  # CMEK; Google-managed encryption when unset
    deletion_protection: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)
    project: str | None = None


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


def export_options(
    args: FilestoreModelCacheArgs,
) -> list[gcp.filestore.InstanceFileSharesNfsExportOptionArgs]:
    """Serving ranges read-only with root squashed; the named writer ranges read-write."""
    options = [
        gcp.filestore.InstanceFileSharesNfsExportOptionArgs(
            ip_ranges=list(args.client_ranges), access_mode="READ_ONLY", squash_mode="ROOT_SQUASH"
        )
    ]
    if args.writer_ranges:
        # The writer fills the cache as root from its boot script; it is the only range that may.
        options.append(
            gcp.filestore.InstanceFileSharesNfsExportOptionArgs(
                ip_ranges=list(args.writer_ranges), access_mode="READ_WRITE", squash_mode="NO_ROOT_SQUASH"
            )
        )
    return options


class FilestoreModelCache(pulumi.ComponentResource):
    """A Filestore instance holding model weights, mounted by the fleets' boot scripts."""

    instance: gcp.filestore.Instance
    ip_address: pulumi.Output[str]
    nfs_target: pulumi.Output[str]  # "<ip>:/<share>", what GpuFleet/TpuVm take as model_cache_nfs

    def __init__(
        self, name: str, args: FilestoreModelCacheArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(
            f"FilestoreModelCache {name!r}", check_types(args) or validate_filestore_cache(name, args)
        )
        super().__init__("inference-infra:gcp:FilestoreModelCache", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        self.instance = gcp.filestore.Instance(
            f"{name}-fs",
            location=args.location,
            tier=args.tier.value,
            description=f"inference-infra model cache {name}",
            file_shares=gcp.filestore.InstanceFileSharesArgs(
                name=args.share_name,
                capacity_gb=args.capacity_gib,
                nfs_export_options=export_options(args),
            ),
            networks=[
                gcp.filestore.InstanceNetworkArgs(
                    network=args.network,
                    modes=["MODE_IPV4"],
                    connect_mode=args.connect_mode.value,
                    reserved_ip_range=args.reserved_ip_range,
                )
            ],
            kms_key_name=args.kms_key_name,
            deletion_protection_enabled=args.deletion_protection or None,
            labels={"component": "model-cache", "model-cache": name, **args.labels},
            project=args.project,
            opts=child,
        )
        self.ip_address = self.instance.networks.apply(lambda nets: nets[0].ip_addresses[0])
        self.nfs_target = pulumi.Output.concat(self.ip_address, ":/", args.share_name)
        self.register_outputs(
            {
                "instance_name": self.instance.name,
                "ip_address": self.ip_address,
                "nfs_target": self.nfs_target,
            }
        )
