"""The dated spot snapshot: by type and region, never a guessed discount."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    PriceModel,
    accelerator,
    find_instance_type,
    gcp_guest_accelerator,
    gcp_n1_gpu_price,
    gcp_n1_machine,
    hourly_price,
    instance_types,
)
from inference_infra.components.catalog.compute import machine_price
from inference_infra.components.catalog.spot import SNAPSHOT_DATE, SPOT_SNAPSHOT, spot_row


def test_spot_snapshot_every_row_is_dated_sourced_known_and_below_on_demand():
    keys = [(r.cloud, r.name, r.region) for r in SPOT_SNAPSHOT]
    assert len(keys) == len(set(keys))
    for row in SPOT_SNAPSHOT:
        assert row.source.startswith("https://github.com/") or row.source.startswith(
            "https://cloud.google.com/"
        )
        assert "/blob/" in row.source or "cloud.google.com" in row.source  # pinned, or the vendor's page
        assert row.as_of <= SNAPSHOT_DATE
        assert row.as_of.year == 2026
        assert row.zone_usd
        assert all(v > 0 for v in row.zone_usd)
        item = find_instance_type(row.name, row.cloud)
        if item is None and row.name.startswith("n1-"):  # the VM part of an N1 + GPU machine
            machine = gcp_n1_machine(row.name)
            assert row.highest_usd < machine.hourly_usd.get(row.region, machine.hourly_usd["us-central1"])
            continue
        if item is None and (cpu := machine_price(row.cloud, row.name, row.region)) is not None:
            assert cpu.where == row.region, row  # a CPU machine: below its on-demand in that region
            assert row.highest_usd < cpu.hourly_usd, row
            continue
        if item is None:  # a guest GPU attached to N1 VMs, priced per GPU
            guest = gcp_guest_accelerator(row.name)
            assert row.highest_usd < guest.hourly_usd.get(row.region, guest.hourly_usd["us-central1"]), row
            continue
        on_demand = item.hourly_usd.get(row.region, item.hourly_usd[item.reference_region])
        assert row.highest_usd <= on_demand, row


def test_spot_row_is_per_region_and_none_without_data():
    assert spot_row(Cloud.AWS, "g6.xlarge", "us-west-2").highest_usd == pytest.approx(0.4541)
    assert spot_row(Cloud.AWS, "g6.xlarge", "us-east-1").highest_usd == pytest.approx(0.4011)
    assert spot_row(Cloud.AWS, "g6.xlarge", "eu-west-1") is None
    assert spot_row(Cloud.AWS, "g6.xlarge", None) is None


def test_spot_tpu_is_priced_per_chip_from_the_tpu_price_list():
    price = hourly_price(
        find_instance_type("v5litepod-4", "gcp"), region="us-central1", model=PriceModel.SPOT
    )
    assert price.hourly_usd == pytest.approx(2.40)
    assert "snapshot 2026-11-21" in price.basis


def test_spot_n1_vm_and_guest_gpu_come_from_the_snapshot():
    spot = gcp_n1_gpu_price("n1-standard-8", "nvidia-tesla-t4", region="us-central1", model=PriceModel.SPOT)
    assert spot.hourly_usd == pytest.approx(0.10446 + 0.175)
    assert "n1-standard-8 + 1 x nvidia-tesla-t4 spot $0.10446/h" in spot.basis
    assert "GPU spot $0.175/h" in spot.basis


def test_spot_gcp_gpu_machine_is_its_vm_plus_its_gpus_and_shows_the_sum():
    row = spot_row(Cloud.GCP, "a3-highgpu-8g", "us-central1")
    assert row.highest_usd == pytest.approx(2.88933 + 8 * 2.9926)
    assert row.notes == "VM $2.88933/h + GPUs (8 x H100) $23.9408/h"
    assert spot_row(Cloud.GCP, "g2-standard-8", "us-central1").highest_usd == pytest.approx(0.11747 + 0.2231)
    # a region has its own price
    assert spot_row(Cloud.GCP, "a3-highgpu-8g", "us-east4").highest_usd < row.highest_usd


def test_spot_covers_the_accelerator_families_by_type_and_region_and_says_what_it_lacks():
    covered = {(r.cloud, r.name) for r in SPOT_SNAPSHOT}
    for family in AcceleratorFamily:
        assert any(
            accelerator(i.accelerator).family is family and (i.cloud, i.name) in covered
            for i in instance_types()
        ), family
    for name in (
        "inf2.xlarge",
        "inf2.48xlarge",
        "trn1.32xlarge",
        "g2-standard-4",
        "a2-highgpu-1g",
        "v6e-8",
        "v5p-8",
    ):
        assert any(r.name == name for r in SPOT_SNAPSHOT), name
    # a type the source lists no spot price for is priced at on-demand, saying so
    price = hourly_price(find_instance_type("p5.4xlarge"), region="us-east-1", model=PriceModel.SPOT)
    assert price.hourly_usd == pytest.approx(6.88)
    assert f"no {SNAPSHOT_DATE.isoformat()} snapshot data for p5.4xlarge" in price.basis


def test_spot_closes_the_gaps_the_source_has_figures_for():
    # p4d.24xlarge in us-west-2 was priced at on-demand ($21.96), over twice its highest zone
    p4d = hourly_price(find_instance_type("p4d.24xlarge"), region="us-west-2", model=PriceModel.SPOT)
    assert p4d.hourly_usd == pytest.approx(9.7315)
    assert "highest of 4 zones" in p4d.basis
    for name, region in (
        ("g4dn.xlarge", "us-east-1"),
        ("g5.12xlarge", "us-west-2"),
        ("g6.48xlarge", "us-east-1"),
        ("g6e.48xlarge", "us-west-2"),
        ("a3-highgpu-4g", "us-central1"),
        ("v4-8", "us-central2"),
    ):
        assert spot_row(Cloud.AWS if "." in name else Cloud.GCP, name, region) is not None, (name, region)
    # p5e has a spot figure in us-west-2 only; neither region lists one for p5.4xlarge
    assert spot_row(Cloud.AWS, "p5e.48xlarge", "us-west-2").zone_usd == (19.5387,)
    assert spot_row(Cloud.AWS, "p5e.48xlarge", "us-east-1") is None
    assert spot_row(Cloud.AWS, "p5.4xlarge", "us-west-2") is None


def test_spot_aws_rows_name_their_zones_and_leave_local_zones_out():
    row = spot_row(Cloud.AWS, "g5.4xlarge", "us-west-2")
    assert row.zones == ("usw2-az1", "usw2-az2", "usw2-az3")  # usw2-lax1-az1 lists no spot price
    assert len(row.zones) == len(row.zone_usd)
    assert all("-az" in zone and zone.count("-") == 1 for r in SPOT_SNAPSHOT for zone in r.zones)


def test_spot_v5e_in_us_central1_keeps_googles_published_rate_over_skypilots():
    row = spot_row(Cloud.GCP, "v5litepod-8", "us-central1")
    assert row.zone_usd == (4.8,)
    assert row.source == "https://cloud.google.com/tpu/pricing"
    assert spot_row(Cloud.GCP, "v5litepod-8", "us-east1").zone_usd == (1.95941,)  # SkyPilot's figure


def test_spot_n1_gpu_counts_each_attached_gpu():
    spot = gcp_n1_gpu_price(
        "n1-standard-8", "nvidia-tesla-t4", gpus=2, region="us-central1", model=PriceModel.SPOT
    )
    assert spot.hourly_usd == pytest.approx(0.10446 + 2 * 0.175)


# Lines of SkyPilot's AWS catalog (catalogs/v8/aws/vms.csv at the pinned commit) as read on
# 2026-11-24, columns InstanceType,...,Price,SpotPrice,Region,AvailabilityZone,Arch, cut to the
# fields used here: type, region, zone, SpotPrice.
_READ_LINES = """
c5.large,us-east-1,use1-az4,0.039600
c5.large,us-west-2,usw2-az4,0.023500
c6i.xlarge,us-west-2,usw2-az3,0.091100
c7g.large,us-east-1,use1-az1,0.063100
c7i.8xlarge,us-west-2,usw2-az2,0.639800
t3.medium,us-east-1,use1-az1,0.020300
t3.medium,us-west-2,usw2-az1,0.022100
t3a.2xlarge,us-east-1,use1-az4,0.117000
m5.large,us-east-1,use1-az4,0.045300
m6g.8xlarge,us-east-1,use1-az1,0.840800
r5.xlarge,us-west-2,usw2-az4,0.091100
"""


def test_spot_cpu_rows_hold_the_figures_read_and_their_highest_zone():
    for line in _READ_LINES.split():
        name, region, _, usd = line.split(",")
        row = spot_row(Cloud.AWS, name, region)
        assert float(usd) in row.zone_usd, line
        assert "00148f2af3672e2229b4f7bf8157d5a3f36e3c35" in row.source
    assert spot_row(Cloud.AWS, "t3.medium", "us-east-1").highest_usd == pytest.approx(0.0203)
    assert spot_row(Cloud.AWS, "c7g.large", "us-east-1").highest_usd == pytest.approx(0.0631)
    # a Local Zone's figure (use1-atl2-az1 listed c7i.large at $0.0122) is not among a region's zones
    assert min(spot_row(Cloud.AWS, "c7i.large", "us-east-1").zone_usd) == pytest.approx(0.0354)


def test_spot_cpu_types_without_data_stay_unguessed():
    for name, region in (("r6i.large", "us-east-1"), ("t3.small", "us-east-1"), ("c5.large", "eu-west-1")):
        assert spot_row(Cloud.AWS, name, region) is None


def test_spot_gce_cpu_rows_hold_the_figures_read_one_per_region():
    assert spot_row(Cloud.GCP, "e2-standard-4", "us-central1").zone_usd == (0.05879,)
    assert spot_row(Cloud.GCP, "e2-standard-4", "us-east4").zone_usd == (0.07266,)
    assert spot_row(Cloud.GCP, "n2-standard-8", "us-east4").zone_usd == (0.09653,)
    assert spot_row(Cloud.GCP, "n2d-highcpu-8", "us-east1").zone_usd == (0.05179,)
    assert (
        "006059e0f18acb1341e22a27751e9f80df6ba92f" in spot_row(Cloud.GCP, "e2-standard-2", "us-east1").source
    )
    # the catalog prices shared-core e2 machines as full vCPUs, so their spot rows are not used
    assert spot_row(Cloud.GCP, "e2-medium", "us-central1") is None
    assert spot_row(Cloud.GCP, "c3-standard-4", "us-central1") is None  # not read
