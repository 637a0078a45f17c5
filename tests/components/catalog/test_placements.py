"""Which zones offer which accelerators: TPU generations (Google's table) and GPU machines (the
catalog's source), and the problems a slice or fleet placed elsewhere gets (pure)."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import instance_types
from inference_infra.components.catalog.placements import (
    GPU_MACHINE_ZONES,
    TPU_ZONES,
    gpu_machine_zones,
    gpu_zone_problems,
    tpu_zone_problems,
    tpu_zones,
)
from inference_infra.components.catalog.zones import GCP_REGIONS, gcp_zone_problems


def test_placements_tpu_table_covers_every_generation_the_catalog_sells_in_known_zones():
    generations = {t.accelerator for t in instance_types("gcp") if t.accelerator.startswith("tpu-")}
    assert generations <= set(TPU_ZONES)
    for row in TPU_ZONES.values():
        assert row.source.startswith("https://docs.cloud.google.com/tpu/docs/")
        assert row.as_of.isoformat() == "2026-12-02"
        assert row.zones
        assert all(gcp_zone_problems("zone", z) == [] for z in row.zones)


def test_placements_tpu_table_holds_googles_rows():
    assert tpu_zones("tpu-v6e").zones == (
        "us-central1-b",
        "us-east1-d",
        "us-east5-a",
        "us-east5-b",
        "europe-west4-a",
    )
    assert tpu_zones("tpu-v5e").zones == ("us-central1-a", "us-south1-a", "us-west1-c", "us-west4-a")
    assert tpu_zones("tpu-v5p").zones == ("us-central1-a", "us-east5-a")
    assert tpu_zones("tpu-v4").zones == ("us-central2-b",)


def test_placements_rejects_v6e_in_us_central1_a_naming_its_zone_in_the_region():
    [problem] = tpu_zone_problems("zone", "us-central1-a", "v6e-4", "tpu-v6e")
    assert problem.value == "us-central1-a"
    assert "does not offer TPU v6e (v6e-4) (in its region: us-central1-b)" in problem.allowed
    assert "https://docs.cloud.google.com/tpu/docs/types-zones" in problem.allowed


@pytest.mark.parametrize(
    ("zone", "slice_name", "accelerator"),
    [
        ("us-central1-b", "v6e-4", "tpu-v6e"),
        ("us-central1-a", "v5litepod-8", "tpu-v5e"),
        ("us-central2-b", "v4-8", "tpu-v4"),
    ],
)
def test_placements_accepts_slices_where_google_lists_them(zone, slice_name, accelerator):
    assert tpu_zone_problems("zone", zone, slice_name, accelerator) == []


def test_placements_rejects_v4_outside_us_central2_with_did_you_mean():
    [problem] = tpu_zone_problems("zone", "us-central1-b", "v4-8", "tpu-v4")
    assert "lists v4 in us-central2-b" in problem.allowed


def test_placements_gpu_machine_zones_come_from_the_catalogs_source():
    assert GPU_MACHINE_ZONES
    for (name, region), row in GPU_MACHINE_ZONES.items():
        assert region in GCP_REGIONS
        assert all(z.startswith(region + "-") for z in row.zones), name
        assert "skypilot-catalog" in row.source
    assert gpu_machine_zones("a3-highgpu-8g", "us-central1").zones == (
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
    )
    assert gpu_machine_zones("g2-standard-8", "europe-west4") is None  # not covered: not checked


def test_placements_rejects_a_gpu_machine_in_a_zone_its_region_does_not_offer_it():
    [problem] = gpu_zone_problems("zones[0]", "us-central1-f", "a3-highgpu-8g")
    assert problem.input == "zones[0]"
    assert "does not offer a3-highgpu-8g" in problem.allowed
    assert gpu_zone_problems("zone", "us-central1-b", "g2-standard-8") == []
    assert gpu_zone_problems("zone", "europe-west4-a", "g2-standard-8") == []  # region not covered


def test_placements_names_the_generations_the_zone_does_offer():
    [central] = tpu_zone_problems("zone", "us-central1-a", "v6e-4", "tpu-v6e")
    assert "pick a generation offered in us-central1-a (generation='v5p' or 'v5e')" in central.allowed
    [west] = tpu_zone_problems("zone", "us-west1-b", "v6e-4", "tpu-v6e")
    assert "did you mean" not in west.allowed  # no zone of another region is suggested as a typo
    assert "Google's table lists none in this zone" in west.allowed
