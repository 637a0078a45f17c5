"""Spot at the fleet's own zones: a zone's own snapshot figure when the zone is known, else the region's
highest, and the basis says which and why."""

from __future__ import annotations

from datetime import date

import pulumi_aws as aws
import pytest

from inference_infra.components import catalog
from inference_infra.components.catalog import Cloud, PriceModel, find_instance_type, hourly_price
from inference_infra.components.catalog.spot import SPOT_SNAPSHOT, SpotRow, spot_row
from inference_infra.components.catalog.zones import AWS_ZONES, INDEPENDENTLY_MAPPED_REGIONS, aws_zone_id
from inference_infra.components.offline_plan.pricing import price_capture

G5 = find_instance_type("g5.2xlarge", Cloud.AWS)


def _spot(item, region: str, zone: str | None):
    return hourly_price(item, region=region, model=PriceModel.SPOT, zone=zone)


def test_spot_snapshot_zone_ids_name_one_zone_of_the_rows_region_each():
    with_zones = [r for r in SPOT_SNAPSHOT if r.zones]
    assert {(r.name, r.region) for r in with_zones} >= {
        ("g5.2xlarge", "us-east-1"),
        ("p5.48xlarge", "us-west-2"),
    }
    for row in with_zones:
        assert len(row.zones) == len(row.zone_usd) == len(set(row.zones)), row
        assert set(row.zones) <= set(AWS_ZONES[row.region].zone_ids), row


def test_hourly_price_prices_spot_at_the_zone_ids_own_figure():
    price = _spot(G5, "us-east-1", "use1-az4")
    row = spot_row(Cloud.AWS, "g5.2xlarge", "us-east-1")
    assert price.hourly_usd == 0.5036 < row.highest_usd
    assert "(zone use1-az4; snapshot 2026-11-25)" in price.basis


def test_hourly_price_prices_a_zone_name_of_an_independently_mapped_region_at_the_highest():
    price = _spot(G5, "us-east-1", "us-east-1a")
    assert price.hourly_usd == spot_row(Cloud.AWS, "g5.2xlarge", "us-east-1").highest_usd
    assert "highest of 5 zones; us-east-1a maps to a zone per account in us-east-1;" in price.basis


def test_hourly_price_prices_a_zone_the_snapshot_has_no_figure_for_at_the_highest():
    price = _spot(G5, "us-east-1", "use1-az3")
    assert price.hourly_usd == 0.5933
    assert "highest of 5 zones; no figure for use1-az3;" in price.basis


def test_hourly_price_without_a_zone_keeps_the_regions_highest():
    assert _spot(G5, "us-east-1", None).basis == (
        "g5.2xlarge spot $0.5933/h (highest of 5 zones, snapshot 2026-11-25) us-east-1"
    )


def test_hourly_price_resolves_a_zone_name_where_names_are_the_same_in_every_account(monkeypatch):
    row = SpotRow(
        cloud=Cloud.AWS,
        name="g5.2xlarge",
        region="us-east-2",
        zone_usd=(0.41, 0.52, 0.63),
        zones=("use2-az1", "use2-az2", "use2-az3"),
        source="test",
        as_of=date(2026, 11, 26),
    )
    monkeypatch.setattr(catalog, "spot_row", lambda cloud, name, region: row)
    price = _spot(G5, "us-east-2", "us-east-2b")
    assert price.hourly_usd == 0.52
    assert "(zone us-east-2b = use2-az2; snapshot 2026-11-26)" in price.basis


def test_hourly_price_of_gcp_spot_in_a_zone_is_the_regions_one_price():
    price = _spot(find_instance_type("g2-standard-8", Cloud.GCP), "us-central1", "us-central1-a")
    assert price.hourly_usd == spot_row(Cloud.GCP, "g2-standard-8", "us-central1").highest_usd
    assert "(zone us-central1-a: one price per region; snapshot 2026-11-25)" in price.basis


def test_aws_zone_id_refuses_names_that_map_per_account():
    assert "us-east-1" in INDEPENDENTLY_MAPPED_REGIONS
    assert "us-east-2" not in INDEPENDENTLY_MAPPED_REGIONS
    assert aws_zone_id("us-east-1a")[0] is None
    assert aws_zone_id("us-east-2a") == ("use2-az1", "")
    assert aws_zone_id("use1-az6") == ("use1-az6", "")


def _spot_instance(name: str, subnet_id, zone: str | None = None) -> aws.ec2.Instance:
    return aws.ec2.Instance(
        name,
        ami="ami-0abc",
        instance_type="g5.2xlarge",
        subnet_id=subnet_id,
        availability_zone=zone,
        instance_market_options={"market_type": "spot"},
    )


def test_price_capture_prices_an_instance_in_a_subnet_made_by_zone_id_at_that_zones_spot(plan_of):
    subnet = aws.ec2.Subnet("az4", vpc_id="vpc-0a", cidr_block="10.0.1.0/24", availability_zone_id="use1-az4")
    _spot_instance("by-zone-id", subnet.id)
    _spot_instance("by-zone-name", "subnet-0given", "us-east-1b")
    items = {i.urn.rsplit("::", 1)[1]: i for i in price_capture(plan_of()).items}
    assert items["by-zone-id"].hourly_usd == pytest.approx(0.5036)
    assert "zone use1-az4" in items["by-zone-id"].basis
    assert items["by-zone-name"].hourly_usd == pytest.approx(0.5933)
    assert "us-east-1b maps to a zone per account in us-east-1" in items["by-zone-name"].basis
