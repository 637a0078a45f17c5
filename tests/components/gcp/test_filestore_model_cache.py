"""FilestoreModelCache: the share, its export, its tier limits, and what it refuses."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp.filestore_model_cache import (
    ConnectMode,
    FilestoreModelCache,
    FilestoreModelCacheArgs,
)
from inference_infra.components.gcp.filestore_tiers import FILESTORE_TIERS, FilestoreTier, capacity_problems

FILESTORE = "gcp:filestore/instance:Instance"


def args(**overrides) -> FilestoreModelCacheArgs:
    base = FilestoreModelCacheArgs(
        network="gpu-vpc", location="us-central1-a", client_ranges=("10.40.0.0/20",)
    )
    return dataclasses.replace(base, **overrides)


def test_filestore_cache_exports_read_only_with_root_squash_to_serving_ranges(plan_of):
    fs = plan_of(FilestoreModelCache("cache", args())).one(FILESTORE)
    assert fs.props["tier"] == "ZONAL"
    assert fs.props["location"] == "us-central1-a"
    assert fs.props["fileShares"] == {
        "name": "models",
        "capacityGb": 1024,
        "nfsExportOptions": [
            {"ipRanges": ["10.40.0.0/20"], "accessMode": "READ_ONLY", "squashMode": "ROOT_SQUASH"}
        ],
    }
    assert fs.props["networks"] == [
        {"network": "gpu-vpc", "modes": ["MODE_IPV4"], "connectMode": "DIRECT_PEERING"}
    ]


def test_filestore_cache_exports_read_write_to_the_named_writer_only(plan_of):
    fs = plan_of(FilestoreModelCache("cache", args(writer_ranges=("10.41.0.10/32",)))).one(FILESTORE)
    assert fs.props["fileShares"]["nfsExportOptions"] == [
        {"ipRanges": ["10.40.0.0/20"], "accessMode": "READ_ONLY", "squashMode": "ROOT_SQUASH"},
        {"ipRanges": ["10.41.0.10/32"], "accessMode": "READ_WRITE", "squashMode": "NO_ROOT_SQUASH"},
    ]


def test_filestore_cache_rejects_a_writer_range_inside_the_serving_ranges():
    with pytest.raises(InputError, match=r"writer_ranges\[0\] '10.40.0.7/32' must not overlap client_ranges"):
        FilestoreModelCache("cache", args(writer_ranges=("10.40.0.7/32",)))


def test_filestore_cache_nfs_target_is_what_fleets_mount(plan_of):
    plan = plan_of(FilestoreModelCache("cache", args(share_name="weights")))
    outputs = plan.one("inference-infra:gcp:FilestoreModelCache").outputs
    ip = outputs["ip_address"]
    assert ip.startswith("10.200.")
    assert outputs["nfs_target"] == f"{ip}:/weights"


def test_filestore_cache_regional_tier_with_cmek_and_private_service_access(plan_of):
    key = "projects/test-project/locations/us-central1/keyRings/r/cryptoKeys/k"
    cache = args(
        tier=FilestoreTier.REGIONAL,
        location="us-central1",
        capacity_gib=10240,
        kms_key=key,
        connect_mode=ConnectMode.PRIVATE_SERVICE_ACCESS,
        reserved_ip_range="filestore-range",
        deletion_protection=True,
    )
    fs = plan_of(FilestoreModelCache("cache", cache)).one(FILESTORE)
    assert fs.props["kmsKeyName"] == key
    assert fs.props["deletionProtectionEnabled"] is True
    assert fs.props["networks"][0]["connectMode"] == "PRIVATE_SERVICE_ACCESS"
    assert fs.props["networks"][0]["reservedIpRange"] == "filestore-range"


def test_filestore_cache_args_accept_kms_key_name_with_a_warning():
    key = "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
    with pytest.warns(DeprecationWarning, match=r"kms_key_name=\.\.\.\) is deprecated.*use kms_key"):
        cache = FilestoreModelCacheArgs(
            network="gpu-vpc", location="us-central1-a", client_ranges=("10.40.0.0/20",), kms_key_name=key
        )
    assert cache.kms_key == key


def test_filestore_cache_labels_reach_the_engine_with_the_cost_labels(plan_of, tagged):
    fs = plan_of(FilestoreModelCache("cache", args(labels={"tier": "hot"}))).one(FILESTORE)
    assert fs.props["labels"] == {
        "cost-center": "ml-platform",
        "environment": "test",
        "owner": "ml-team_example_com",
        "component": "model-cache",
        "model-cache": "cache",
        "tier": "hot",
    }
    assert "auto-shutdown" not in fs.props["labels"]  # storage is not an accelerator instance


@pytest.mark.parametrize(
    ("tier", "capacity_gib", "fits"),
    [
        (FilestoreTier.BASIC_HDD, 1024, True),
        (FilestoreTier.BASIC_HDD, 1023, False),
        (FilestoreTier.BASIC_HDD, 65433, True),
        (FilestoreTier.BASIC_HDD, 65434, False),
        (FilestoreTier.BASIC_SSD, 2560, True),
        (FilestoreTier.BASIC_SSD, 2048, False),
        (FilestoreTier.ZONAL, 1024, True),
        (FilestoreTier.ZONAL, 1280, True),
        (FilestoreTier.ZONAL, 1300, False),  # off the 256 GiB step
        (FilestoreTier.ZONAL, 9984, True),
        (FilestoreTier.ZONAL, 10000, False),  # between the two ranges
        (FilestoreTier.ZONAL, 12800, True),
        (FilestoreTier.ZONAL, 102400, True),
        (FilestoreTier.ZONAL, 104960, False),
        (FilestoreTier.REGIONAL, 100, True),
        (FilestoreTier.REGIONAL, 99, False),
        (FilestoreTier.ENTERPRISE, 10240, True),
        (FilestoreTier.ENTERPRISE, 10496, False),
    ],
)
def test_filestore_tier_capacity_ranges(tier, capacity_gib, fits):
    assert (capacity_problems(tier, capacity_gib) == []) is fits


def test_filestore_tier_table_is_sourced_and_covers_every_tier():
    assert {t.tier for t in FILESTORE_TIERS} == set(FilestoreTier)
    for limits in FILESTORE_TIERS:
        assert all(
            part.startswith("https://cloud.google.com/filestore/") for part in limits.source.split(" ; ")
        )
        assert limits.as_of.year >= 2025
        for low, high in pairwise(limits.ranges):
            assert low.max_gib < high.min_gib


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"tier": FilestoreTier.BASIC_SSD, "capacity_gib": 1024},
            r"capacity_gib 1024 does not fit the BASIC_SSD tier: allowed 2560-65433 GiB",
        ),
        (
            {"capacity_gib": 10000},
            r"does not fit the ZONAL tier: allowed 1024-9984 GiB in steps of 256 GiB or 10240-102400 GiB",
        ),
        (
            {"tier": FilestoreTier.REGIONAL, "capacity_gib": 2048},
            r"location 'us-central1-a' must be a region such as 'us-central1' for the REGIONAL tier",
        ),
        ({"location": "us-central1"}, r"location 'us-central1' must be a zone such as 'us-central1-a'"),
        ({"client_ranges": ()}, r"client_ranges \[\] must name the CIDRs that may mount the share"),
        ({"client_ranges": ("0.0.0.0/0",)}, r"client_ranges\[0\] '0.0.0.0/0' must be a private range"),
        ({"client_ranges": ("10.40.0.1/20",)}, r"client_ranges\[0\] '10.40.0.1/20' must be a CIDR block"),
        ({"share_name": "model-cache"}, r"share_name 'model-cache' must start with a letter and use only"),
        ({"share_name": "m" * 17}, r"share_name 'm{17}' must be at most 16 characters"),
        (
            {"tier": FilestoreTier.BASIC_HDD, "deletion_protection": True},
            r"deletion_protection True is not offered on the BASIC_HDD tier",
        ),
    ],
)
def test_filestore_cache_rejects_bad_input(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        FilestoreModelCache("cache", args(**overrides))
    assert plan_of().of_type(FILESTORE) == []
