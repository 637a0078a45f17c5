"""The dated spot snapshot: by type and region, never a guessed discount."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import (
    Cloud,
    PriceModel,
    find_instance_type,
    gcp_n1_gpu_price,
    hourly_price,
)
from inference_infra.components.catalog.spot import SNAPSHOT_DATE, SPOT_SNAPSHOT, spot_row


def test_spot_snapshot_every_row_is_dated_sourced_known_and_below_on_demand():
    keys = [(r.cloud, r.name, r.region) for r in SPOT_SNAPSHOT]
    assert len(keys) == len(set(keys))
    for row in SPOT_SNAPSHOT:
        item = find_instance_type(row.name, row.cloud)
        assert item is not None, row.name
        assert row.source.startswith("https://")
        assert row.as_of <= SNAPSHOT_DATE
        assert row.zone_usd
        assert all(v > 0 for v in row.zone_usd)
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


def test_spot_n1_without_data_is_priced_at_on_demand_and_says_so():
    spot = gcp_n1_gpu_price("n1-standard-8", "nvidia-tesla-t4", region="us-central1", model=PriceModel.SPOT)
    on_demand = gcp_n1_gpu_price("n1-standard-8", "nvidia-tesla-t4", region="us-central1")
    assert spot.hourly_usd == pytest.approx(on_demand.hourly_usd)
    assert "no 2026-11-22 snapshot data for n1-standard-8" in spot.basis
