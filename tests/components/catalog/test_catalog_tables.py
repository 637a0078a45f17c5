"""Invariants of the catalog tables: every row sourced, dated, consistent and priced."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date
from itertools import pairwise

import pytest

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    accelerator,
    accelerators,
    instance_types,
)
from inference_infra.components.catalog.accelerators import ACCELERATORS
from inference_infra.components.catalog.aws import AWS_INSTANCE_TYPES
from inference_infra.components.catalog.gcp import (
    GCP_GUEST_ACCELERATORS,
    GCP_INSTANCE_TYPES,
    GCP_N1_MACHINES,
    TPU_REFERENCE_REGION,
)

# The day these tables were last reviewed: no figure may claim to be newer.
REVIEWED = date(2026, 11, 25)
OLDEST = date(2023, 1, 1)

ALL_INSTANCES = (*AWS_INSTANCE_TYPES, *GCP_INSTANCE_TYPES)
ALL_RECORDS = (*ACCELERATORS, *ALL_INSTANCES, *GCP_GUEST_ACCELERATORS, *GCP_N1_MACHINES)
TPUS = [i for i in GCP_INSTANCE_TYPES if accelerator(i.accelerator).family is AcceleratorFamily.GOOGLE_TPU]
NON_TPUS = [i for i in ALL_INSTANCES if i not in TPUS]


def _label(record: object) -> str:
    return getattr(record, "key", None) or getattr(record, "name", None) or record.accelerator_type


def _family(item) -> str:
    """'g5' for g5.xlarge, 'a2-highgpu' for a2-highgpu-1g, 'v5p' for v5p-8."""
    if item.cloud is Cloud.AWS:
        return item.name.split(".")[0]
    return item.name.rsplit("-", 1)[0]


# --- provenance ------------------------------------------------------------------------------


@pytest.mark.parametrize("record", ALL_RECORDS, ids=_label)
def test_record_cites_web_sources(record):
    parts = [p.strip() for p in record.source.split(" ; ")]
    assert parts, f"{_label(record)} has no source"
    for part in parts:
        assert re.fullmatch(r"https://\S+", part), f"{_label(record)}: source {part!r} is not a URL"


@pytest.mark.parametrize("record", ALL_RECORDS, ids=_label)
def test_record_as_of_is_a_plausible_past_date(record):
    assert OLDEST <= record.as_of <= REVIEWED, f"{_label(record)}: as_of {record.as_of}"


# --- accelerators ------------------------------------------------------------------------------


def test_accelerators_have_unique_lower_kebab_keys():
    keys = [a.key for a in ACCELERATORS]
    assert len(keys) == len(set(keys))
    for key in keys:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key), key


def test_accelerators_cover_the_required_devices():
    required = {
        "t4", "l4", "a10g", "l40s", "a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb", "b200",
        "inferentia2", "trainium1", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e",
    }  # fmt: skip
    assert required <= {a.key for a in ACCELERATORS}


@pytest.mark.parametrize("acc", ACCELERATORS, ids=lambda a: a.key)
def test_accelerator_figures_are_positive(acc):
    assert acc.memory_gib > 0
    assert acc.memory_bandwidth_gb_s > 0
    assert acc.fp16_tflops > 0
    assert acc.cores_per_device >= 1
    for optional in (acc.fp8_tflops, acc.int8_tops):
        assert optional is None or optional > 0


@pytest.mark.parametrize("acc", [a for a in ACCELERATORS if a.fp8_tflops is not None], ids=lambda a: a.key)
def test_accelerator_fp8_is_at_least_fp16(acc):
    assert acc.fp8_tflops >= acc.fp16_tflops


@pytest.mark.parametrize("key", ["t4", "a10g", "a100-40gb", "a100-80gb", "tpu-v4", "tpu-v5e", "tpu-v5p"])
def test_accelerator_without_fp8_datapath_has_none(key):
    assert accelerator(key).fp8_tflops is None


def test_accelerator_dense_figures_are_not_sparse_ones():
    # Datasheets print H100 SXM FP16 as 1979 "with sparsity"; the catalog stores dense.
    assert accelerator("h100-80gb").fp16_tflops < 1000
    assert accelerator("l4").fp16_tflops < 200


@pytest.mark.parametrize(
    ("key", "cores"),
    [("inferentia2", 2), ("trainium1", 2), ("tpu-v4", 2), ("tpu-v5e", 1), ("tpu-v5p", 2), ("tpu-v6e", 1)],
)
def test_accelerator_cores_per_device(key, cores):
    assert accelerator(key).cores_per_device == cores


def test_gpus_have_one_core_and_only_gpus_have_gcp_guest_types():
    for acc in ACCELERATORS:
        if acc.family is AcceleratorFamily.NVIDIA_GPU:
            assert acc.cores_per_device == 1, acc.key
        else:
            assert acc.gcp_accelerator_type is None, acc.key


def test_gcp_accelerator_types_are_unique():
    types = [a.gcp_accelerator_type for a in ACCELERATORS if a.gcp_accelerator_type]
    assert len(types) == len(set(types))
    assert "nvidia-tesla-t4" in types


# --- instance types: shape -----------------------------------------------------------------------


def test_instance_names_are_unique_per_cloud():
    for cloud in Cloud:
        names = [i.name for i in ALL_INSTANCES if i.cloud is cloud]
        assert len(names) == len(set(names)), cloud


@pytest.mark.parametrize("item", ALL_INSTANCES, ids=lambda i: i.name)
def test_instance_references_a_known_accelerator(item):
    assert accelerator(item.accelerator).key == item.accelerator


@pytest.mark.parametrize("item", ALL_INSTANCES, ids=lambda i: i.name)
def test_instance_shape_and_prices_are_positive(item):
    assert item.accelerator_count > 0
    assert item.vcpus > 0
    assert item.memory_gib > 0
    assert item.hosts >= 1
    assert item.hourly_usd, f"{item.name} has no price"
    assert all(usd > 0 for usd in item.hourly_usd.values())


@pytest.mark.parametrize("item", ALL_INSTANCES, ids=lambda i: i.name)
def test_instance_discounts_are_fractions_below_095(item):
    assert 0 <= item.spot_discount < 0.95
    assert 0 <= item.committed_discount < 0.95


@pytest.mark.parametrize("item", ALL_INSTANCES, ids=lambda i: i.name)
def test_instance_local_nvme_size_and_disk_count_agree(item):
    assert (item.local_nvme_gib > 0) == (item.local_nvme_disks > 0)
    if item.local_nvme_disks:
        per_disk = item.local_nvme_gib / item.local_nvme_disks
        assert 100 <= per_disk <= 8000, f"{item.name}: {per_disk} GB per disk"


def test_instance_store_is_present_exactly_where_the_family_has_one():
    # EC2 G/P/Trn families and GCP A2 Ultra/A3 ship local NVMe; Inf2, G2, A2 High and TPUs do not.
    without = ("inf2.", "g2-standard-", "a2-highgpu-", "a2-megagpu-")
    for item in ALL_INSTANCES:
        expected = not (item.name.startswith(without) or item in TPUS)
        assert (item.local_nvme_disks > 0) == expected, item.name


def test_instance_reference_regions():
    for item in AWS_INSTANCE_TYPES:
        assert item.reference_region == "us-east-1", item.name
    for item in NON_TPUS:
        if item.cloud is Cloud.GCP:
            assert item.reference_region == "us-central1", item.name
    for item in TPUS:
        assert item.reference_region == TPU_REFERENCE_REGION[item.accelerator], item.name
    for record in (*GCP_GUEST_ACCELERATORS, *GCP_N1_MACHINES):
        assert next(iter(record.hourly_usd)) == "us-central1"


def test_tpu_fields_appear_only_on_tpu_slices():
    for item in NON_TPUS:
        assert item.tpu_topology is None, item.name
        assert item.hosts == 1, item.name
    for item in TPUS:
        assert item.tpu_topology, item.name


@pytest.mark.parametrize("item", TPUS, ids=lambda i: i.name)
def test_tpu_topology_multiplies_to_chip_count(item):
    product = 1
    for side in item.tpu_topology.split("x"):
        product *= int(side)
    assert product == item.accelerator_count


@pytest.mark.parametrize("item", TPUS, ids=lambda i: i.name)
def test_tpu_slice_name_counts_cores_for_v4_and_v5p_and_chips_otherwise(item):
    number = int(item.name.rsplit("-", 1)[1])
    if item.accelerator in ("tpu-v4", "tpu-v5p"):
        assert number == item.accelerator_count * 2  # v5p-8 is 4 chips
    else:
        assert number == item.accelerator_count  # v5litepod-8 and v6e-8 are 8 chips


@pytest.mark.parametrize("item", TPUS, ids=lambda i: i.name)
def test_tpu_slice_hosts_carry_at_most_eight_chips(item):
    assert item.accelerator_count <= 8 * item.hosts
    assert item.accelerator_count >= item.hosts


# Per-chip on-demand rates, USD per chip-hour, in each generation's reference region.
TPU_CHIP_RATE = {"tpu-v4": 3.22, "tpu-v5e": 1.2, "tpu-v5p": 4.2, "tpu-v6e": 2.7}


@pytest.mark.parametrize("item", TPUS, ids=lambda i: i.name)
def test_tpu_slice_price_is_chips_times_chip_rate(item):
    assert item.hourly_usd[item.reference_region] == pytest.approx(
        item.accelerator_count * TPU_CHIP_RATE[item.accelerator]
    )
    rates = {round(usd / item.accelerator_count, 6) for usd in item.hourly_usd.values()}
    assert len(rates) == 1, f"{item.name}: per-chip rate differs by region {rates}"


# --- instance types: prices across a family ---------------------------------------------------------


def _families(items):
    groups = defaultdict(list)
    for item in items:
        groups[(item.cloud, _family(item))].append(item)
    return groups


def test_prices_rise_with_vcpus_at_equal_accelerator_count():
    for (_, family), items in _families(NON_TPUS).items():
        by_count = defaultdict(list)
        for item in items:
            by_count[item.accelerator_count].append(item)
        for same in by_count.values():
            ordered = sorted(same, key=lambda i: i.vcpus)
            prices = [i.hourly_usd[i.reference_region] for i in ordered]
            assert prices == sorted(prices), f"{family}: {[i.name for i in ordered]} {prices}"


# g4dn.16xlarge (1 GPU, 64 vCPUs) costs more than g4dn.12xlarge (4 GPUs): the rule
# does not hold there, and the table says so in the row's notes.
FAMILIES_NOT_MONOTONIC_IN_GPUS = {"g4dn"}


def test_prices_rise_with_accelerator_count_within_a_family():
    for (_, family), items in _families(NON_TPUS).items():
        if family in FAMILIES_NOT_MONOTONIC_IN_GPUS:
            continue
        counts = sorted({i.accelerator_count for i in items})
        for fewer, more in pairwise(counts):
            dearest_fewer = max(
                i.hourly_usd[i.reference_region] for i in items if i.accelerator_count == fewer
            )
            cheapest_more = min(
                i.hourly_usd[i.reference_region] for i in items if i.accelerator_count == more
            )
            assert dearest_fewer < cheapest_more, f"{family}: {fewer} vs {more} accelerators"


def test_exception_to_monotonic_prices_is_real_and_documented():
    g4dn = {i.name: i for i in AWS_INSTANCE_TYPES if i.name.startswith("g4dn.")}
    assert g4dn["g4dn.16xlarge"].hourly_usd["us-east-1"] > g4dn["g4dn.12xlarge"].hourly_usd["us-east-1"]
    assert g4dn["g4dn.16xlarge"].notes


@pytest.mark.parametrize("series", ["a2-highgpu", "a2-ultragpu", "a3-highgpu"])
def test_gcp_series_price_per_gpu_is_constant(series):
    items = [i for i in GCP_INSTANCE_TYPES if i.name.startswith(series + "-")]
    per_gpu = {round(i.hourly_usd["us-central1"] / i.accelerator_count, 4) for i in items}
    assert len(items) == 4
    assert len(per_gpu) == 1, per_gpu


# --- coverage ----------------------------------------------------------------------------------


def test_aws_table_lists_every_required_size():
    sizes = {
        "g4dn": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"],
        "g5": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
        "g6": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
        "g6e": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
        "inf2": ["xlarge", "8xlarge", "24xlarge", "48xlarge"],
        "trn1": ["2xlarge", "32xlarge"],
    }
    required = {f"{family}.{size}" for family, names in sizes.items() for size in names}
    required |= {
        "p4d.24xlarge",
        "p4de.24xlarge",
        "p5.48xlarge",
        "p5.4xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
    }
    assert required <= {i.name for i in AWS_INSTANCE_TYPES}


def test_gcp_table_lists_every_required_machine_type_and_slice():
    required = {f"g2-standard-{n}" for n in (4, 8, 12, 16, 24, 32, 48, 96)}
    required |= {f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)} | {"a2-megagpu-16g"}
    required |= {f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)}
    required |= {f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)} | {"a3-megagpu-8g"}
    required |= {f"v5litepod-{n}" for n in (1, 4, 8, 16, 32, 64, 128, 256)}
    required |= {f"v6e-{n}" for n in (1, 4, 8, 16, 32, 64, 128, 256)}
    required |= {f"v5p-{n}" for n in (8, 16, 32, 64, 128)}
    required |= {f"v4-{n}" for n in (8, 16, 32)}
    assert required <= {i.name for i in GCP_INSTANCE_TYPES}


def test_n1_machines_and_guest_gpus_are_consistent():
    assert {m.name for m in GCP_N1_MACHINES} >= {f"n1-standard-{n}" for n in (4, 8, 16, 32)}
    for machine in GCP_N1_MACHINES:
        assert machine.memory_gib == pytest.approx(3.75 * machine.vcpus)
        assert all(usd > 0 for usd in machine.hourly_usd.values())
        assert 0 <= machine.spot_discount < 0.95
    for guest in GCP_GUEST_ACCELERATORS:
        assert accelerator(guest.accelerator).gcp_accelerator_type == guest.accelerator_type
        assert all(usd > 0 for usd in guest.hourly_usd.values())


def test_public_listings_match_the_tables():
    assert len(accelerators()) == len(ACCELERATORS)
    assert len(instance_types()) == len(ALL_INSTANCES)
    assert {i.name for i in instance_types(Cloud.AWS, AcceleratorFamily.AWS_NEURON)} >= {
        "inf2.48xlarge",
        "trn1.32xlarge",
    }


def test_aws_p5e_is_priced_at_its_capacity_block_rate_and_says_so():
    p5e = next(i for i in AWS_INSTANCE_TYPES if i.name == "p5e.48xlarge")
    assert (p5e.accelerator, p5e.accelerator_count) == ("h200-141gb", 8)
    assert (p5e.spot_discount, p5e.committed_discount) == (0.0, 0.0)
    assert "Capacity Blocks only" in p5e.notes
    assert "capacityblocks/pricing" in p5e.source
