"""Catalog lookups and pricing, plus spot checks of real figures."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import (
    AcceleratorFamily,
    CatalogError,
    Cloud,
    PriceModel,
    accelerator,
    accelerators,
    find_instance_type,
    gcp_guest_accelerator,
    gcp_n1_gpu_price,
    gcp_n1_machine,
    hourly_price,
    instance_type,
    instance_types,
)
from inference_infra.components.errors import InputError

# --- spot checks of figures that matter ----------------------------------------------------------


def test_p5_48xlarge_has_eight_h100_80gb_and_eight_nvme_disks():
    p5 = instance_type("p5.48xlarge")
    assert (p5.accelerator, p5.accelerator_count) == ("h100-80gb", 8)
    assert (p5.vcpus, p5.memory_gib) == (192, 2048)
    assert p5.local_nvme_disks == 8
    assert p5.accelerator_memory_gib == 640


def test_p_family_carries_prices_after_the_june_2025_cut():
    # Before the cut: p5.48xlarge $98.32/h, p4d.24xlarge $32.77/h in us-east-1.
    assert instance_type("p5.48xlarge").hourly_usd["us-east-1"] == pytest.approx(55.04)
    assert instance_type("p4d.24xlarge").hourly_usd["us-east-1"] < 25


def test_inf2_48xlarge_has_twelve_chips_of_two_neuroncores():
    inf2 = instance_type("inf2.48xlarge", cloud="aws")
    assert (inf2.accelerator, inf2.accelerator_count) == ("inferentia2", 12)
    assert inf2.accelerator_count * accelerator(inf2.accelerator).cores_per_device == 24
    assert inf2.local_nvme_disks == 0


def test_a3_highgpu_8g_has_eight_h100_and_bundled_local_ssd():
    a3 = instance_type("a3-highgpu-8g", cloud=Cloud.GCP)
    assert (a3.accelerator, a3.accelerator_count) == ("h100-80gb", 8)
    assert (a3.local_nvme_disks, a3.local_nvme_gib) == (16, 6000)


def test_v5litepod_8_is_eight_v5e_chips_on_one_host():
    slice_ = instance_type("v5litepod-8")
    assert (slice_.accelerator, slice_.accelerator_count, slice_.hosts) == ("tpu-v5e", 8, 1)
    assert slice_.tpu_topology == "2x4"


def test_v5p_8_is_four_chips():
    assert instance_type("v5p-8").accelerator_count == 4


# --- lookups ----------------------------------------------------------------------------------


def test_accelerator_returns_the_record_for_its_key():
    assert accelerator("l4").gcp_accelerator_type == "nvidia-l4"


def test_accelerator_rejects_unknown_key_listing_close_matches():
    with pytest.raises(CatalogError, match=r"unknown accelerator 'h100'; close matches: .*h100-80gb"):
        accelerator("h100")


def test_instance_type_rejects_typo_suggesting_the_real_name():
    with pytest.raises(CatalogError, match=r"'p5\.48xlargee'; close matches: p5\.48xlarge"):
        instance_type("p5.48xlargee")


def test_instance_type_rejects_name_from_the_other_cloud():
    with pytest.raises(CatalogError, match=r"unknown gcp accelerator instance type 'p5\.48xlarge'"):
        instance_type("p5.48xlarge", cloud="gcp")


def test_instance_type_rejects_gibberish_listing_known_names():
    with pytest.raises(CatalogError, match=r"known: .*\(\d+ in all"):
        instance_type("zzzz")


def test_catalog_error_is_an_input_error_and_reads_cleanly():
    with pytest.raises(InputError) as caught:
        instance_type("g9.xlarge")
    assert isinstance(caught.value, KeyError)
    assert not str(caught.value).startswith('"')


def test_find_instance_type_returns_none_for_a_cpu_type():
    assert find_instance_type("m5.large") is None
    assert find_instance_type("g5.xlarge", cloud="aws").name == "g5.xlarge"


def test_instance_types_filters_by_cloud_and_family():
    tpus = instance_types(Cloud.GCP, AcceleratorFamily.GOOGLE_TPU)
    assert tpus
    assert all(i.cloud is Cloud.GCP and i.accelerator.startswith("tpu-") for i in tpus)
    assert not instance_types(Cloud.AWS, AcceleratorFamily.GOOGLE_TPU)


def test_accelerators_filters_by_family():
    neuron = {a.key for a in accelerators(AcceleratorFamily.AWS_NEURON)}
    assert neuron == {"inferentia2", "trainium1"}


def test_gcp_guest_accelerator_and_n1_machine_lookups():
    assert gcp_guest_accelerator("nvidia-tesla-t4").accelerator == "t4"
    assert gcp_n1_machine("n1-standard-8").vcpus == 8


def test_gcp_guest_accelerator_rejects_unknown_type():
    with pytest.raises(CatalogError, match=r"close matches: nvidia-tesla-t4"):
        gcp_guest_accelerator("nvidia-tesla-t5")


def test_gcp_n1_machine_rejects_unknown_type():
    with pytest.raises(CatalogError, match=r"unknown GCP N1 machine type 'n1-standard-3'"):
        gcp_n1_machine("n1-standard-3")


# --- hourly_price ---------------------------------------------------------------------------------


def test_hourly_price_on_demand_uses_the_reference_region():
    price = hourly_price(instance_type("g5.xlarge"))
    assert price.hourly_usd == pytest.approx(1.006)
    assert price.basis == "g5.xlarge on-demand us-east-1"


def test_hourly_price_uses_a_listed_region():
    price = hourly_price(instance_type("g5.xlarge"), region="us-west-2")
    assert price.basis == "g5.xlarge on-demand us-west-2"


def test_hourly_price_falls_back_to_the_reference_and_says_so():
    price = hourly_price(instance_type("g5.xlarge"), region="eu-west-1")
    assert price.hourly_usd == pytest.approx(1.006)
    assert price.basis == "g5.xlarge on-demand us-east-1 (reference; no eu-west-1 price in the catalog)"


def test_hourly_price_spot_without_snapshot_data_says_so_at_on_demand():
    price = hourly_price(instance_type("p5.4xlarge"), model=PriceModel.SPOT)
    assert price.hourly_usd == pytest.approx(6.88)
    assert price.basis == (
        "p5.4xlarge spot (no 2026-11-25 snapshot data for p5.4xlarge in us-east-1; priced at on-demand) "
        "us-east-1"
    )


def test_hourly_price_spot_takes_the_highest_zone_of_the_snapshot_by_region():
    east = hourly_price(instance_type("g6e.xlarge"), region="us-east-1", model=PriceModel.SPOT, count=2)
    west = hourly_price(instance_type("g6e.xlarge"), region="us-west-2", model=PriceModel.SPOT)
    assert east.hourly_usd == pytest.approx(2 * 1.1975)
    assert east.basis == "2 x g6e.xlarge spot $1.1975/h (highest of 4 zones, snapshot 2026-11-25) us-east-1"
    assert west.hourly_usd == pytest.approx(1.5145)  # a different region, a different price


def test_hourly_price_reserved_applies_the_commitment_discount_and_count():
    item = instance_type("a3-highgpu-8g")
    price = hourly_price(item, model=PriceModel.RESERVED, count=2)
    assert price.hourly_usd == pytest.approx(
        2 * item.hourly_usd["us-central1"] * (1 - item.committed_discount)
    )
    assert price.basis.startswith("2 x a3-highgpu-8g reserved ~30% below on-demand us-central1")


def test_hourly_price_of_a_tpu_slice_is_chips_times_rate():
    assert hourly_price(instance_type("v6e-8")).hourly_usd == pytest.approx(8 * 2.7)


def test_gcp_n1_gpu_price_adds_vm_and_gpus():
    vm = gcp_n1_machine("n1-standard-8").hourly_usd["us-central1"]
    t4 = gcp_guest_accelerator("nvidia-tesla-t4").hourly_usd["us-central1"]
    price = gcp_n1_gpu_price("n1-standard-8", "nvidia-tesla-t4", gpus=2)
    assert price.hourly_usd == pytest.approx(vm + 2 * t4)
    assert price.basis == "n1-standard-8 + 2 x nvidia-tesla-t4 on-demand us-central1"


def test_gcp_n1_gpu_price_spot_falls_back_to_reference_region():
    price = gcp_n1_gpu_price("n1-standard-4", "nvidia-tesla-t4", region="mars-1", model=PriceModel.SPOT)
    assert "spot" in price.basis
    assert "(reference; no mars-1 price in the catalog)" in price.basis
    assert "no 2026-11-25 snapshot data for n1-standard-4 in mars-1" in price.basis
    assert price.hourly_usd == gcp_n1_gpu_price("n1-standard-4", "nvidia-tesla-t4").hourly_usd


def test_gcp_n1_gpu_price_rejects_unknown_gpu():
    with pytest.raises(CatalogError):
        gcp_n1_gpu_price("n1-standard-4", "nvidia-l4")
