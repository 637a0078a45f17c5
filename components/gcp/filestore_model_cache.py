"""FilestoreModelCache: an NFS share for model weights on the fleet's VPC.

GPU and TPU nodes without local SSD read their weights from here; the first
node of a fleet fills it from Cloud Storage (see `startup.py`), the others
find it filled. The share is exported only to the ranges given: READ_ONLY with
ROOT_SQUASH to the serving client ranges (root on a serving VM cannot replace
the weights every other node serves), READ_WRITE only to the named writer
ranges (a publisher host; see `writer_ranges`), which must not overlap them.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.gcp.filestore_model_cache_args import (
    ConnectMode,
    FilestoreModelCacheArgs,
    validate_filestore_cache,
)
from inference_infra.components.validation import input_problems

__all__ = [
    "ConnectMode",
    "FilestoreModelCache",
    "FilestoreModelCacheArgs",
    "export_options",
    "validate_filestore_cache",
]


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
            f"FilestoreModelCache {name!r}", input_problems(args, lambda a: validate_filestore_cache(name, a))
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
            kms_key_name=args.kms_key,
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
