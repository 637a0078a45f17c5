"""The CPU machine table: dated rows with sources, prices that reproduce every row read, pure lookups."""

from __future__ import annotations

from datetime import date

import pytest

from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.catalog.compute import (
    EC2_FAMILIES,
    GCE_READ,
    GCE_SERIES,
    SIZE_FACTORS,
    ec2_price,
    gce_price,
    gce_rates,
    machine_price,
)

REQUIRED = {
    "t2", "t3", "t3a", "t4g", "m5", "m5a", "m6i", "m6a", "m6g", "m7i", "m7g",
    "c5", "c6i", "c6a", "c6g", "c7i", "c7g", "r5", "r6i", "r6g", "r7i",
}  # fmt: skip


def test_compute_table_rows_carry_sources_and_dates():
    for row in (*EC2_FAMILIES, *GCE_SERIES):
        assert all(part.strip().startswith("https://") for part in row.source.split(" ; ")), row
        assert "skypilot-catalog" in row.source
        assert date(2026, 11, 1) <= row.as_of <= date(2026, 12, 31)


def test_compute_table_covers_the_common_ec2_families_in_the_accelerator_catalogs_regions():
    assert {f.family for f in EC2_FAMILIES} >= REQUIRED
    for family in EC2_FAMILIES:
        assert list(family.hourly_usd) == ["us-east-1", "us-west-2"]
        assert family.anchor in family.sizes
        assert set(family.read) <= set(family.sizes)
        assert set(family.sizes) <= set(SIZE_FACTORS)


def test_compute_table_scaling_reproduces_every_ec2_row_read():
    for family in EC2_FAMILIES:
        unit = family.hourly_usd["us-east-1"] / SIZE_FACTORS[family.anchor]
        for size, usd in family.read.items():
            # t2.small is the one row read that is not exactly proportional ($0.023 vs $0.0232)
            assert unit * SIZE_FACTORS[size] == pytest.approx(usd, rel=0.01), f"{family.family}.{size}"
            assert ec2_price(f"{family.family}.{size}").hourly_usd == usd  # a read figure is used as read


def test_compute_table_prices_ec2_sizes_by_their_normalization_factors():
    assert ec2_price("m5.large").hourly_usd == 0.096
    assert ec2_price("m5.4xlarge").hourly_usd == pytest.approx(0.768)
    assert ec2_price("m6i.large").how == "m6i.12xlarge x 4/96 (size factors)"
    assert ec2_price("t2.micro").hourly_usd == 0.0116
    assert ec2_price("t2.small").hourly_usd == 0.023


def test_compute_table_rates_reproduce_every_gce_machine_read():
    for machine, (_, _, usd) in GCE_READ.items():
        for region, read in usd.items():
            assert gce_price(machine, region).hourly_usd == pytest.approx(read, rel=2e-4), (machine, region)


def test_compute_table_solves_gce_rates_per_region():
    n2 = gce_rates("n2")
    assert n2["us-central1"].vcpu_usd == pytest.approx(0.031611, abs=2e-6)
    assert n2["us-central1"].gib_usd == pytest.approx(0.004237, abs=2e-7)
    assert n2["us-east4"].vcpu_usd > n2["us-central1"].vcpu_usd
    assert gce_rates("n2d")["us-central1"].gib_usd is None  # only highcpu rows read


def test_compute_table_bills_shared_core_e2_at_its_vcpu_fraction():
    rate = gce_rates("e2")["us-central1"]
    assert gce_price("e2-micro", "us-central1").hourly_usd == pytest.approx(
        0.25 * rate.vcpu_usd + rate.gib_usd, abs=1e-6
    )
    assert gce_price("e2-micro", "us-central1").hourly_usd == pytest.approx(0.008376, abs=2e-6)
    assert gce_price("e2-medium", "us-central1").hourly_usd == pytest.approx(0.0335, abs=1e-4)
    assert gce_price("e2-small", "us-central1").hourly_usd < gce_price("e2-medium", "us-central1").hourly_usd


def test_compute_table_falls_back_to_the_reference_region_and_says_so():
    price = machine_price(Cloud.AWS, "c5.large", "eu-west-1")
    assert price.hourly_usd == 0.085
    assert price.where == "us-east-1 (reference; no eu-west-1 price in the catalog)"
    assert machine_price(Cloud.GCP, "n1-standard-1", "europe-west4").where.startswith(
        "us-central1 (reference"
    )


@pytest.mark.parametrize(
    ("cloud", "name"),
    [
        ("aws", "m5.metal"),  # metal not priced
        ("aws", "m5.nano"),  # no such size
        ("aws", "x2iedn.xlarge"),  # family not in the table
        ("gcp", "n2d-standard-4"),  # only n2d highcpu rows were read
        ("gcp", "e2-custom-4-8192"),  # custom machine types
        ("gcp", "c3-standard-4-lssd"),  # local SSD bundled
        ("gcp", "n1-standard-3"),  # no such shape
    ],
)
def test_compute_table_rejects_types_it_cannot_price(cloud, name):
    assert machine_price(cloud, name) is None


def test_compute_table_and_accelerator_catalog_do_not_overlap():
    for family in EC2_FAMILIES:
        for size in family.sizes:
            assert find_instance_type(f"{family.family}.{size}", Cloud.AWS) is None
    for machine in GCE_READ:
        assert find_instance_type(machine, Cloud.GCP) is None
