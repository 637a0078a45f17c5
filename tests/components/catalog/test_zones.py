"""Regions and zones from the catalog's sourced lists: unknown regions, zones their region lacks,
zones outside the provider's or the subnetwork's region, each with a did-you-mean (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import botocore
import pytest

from inference_infra.components.catalog.zones import (
    AWS_REGIONS,
    AWS_ZONES,
    GCP_REGIONS,
    GCP_ZONES,
    aws_region_problems,
    aws_zone_problems,
    gcp_network_region_problems,
    gcp_region_problems,
    gcp_subnetwork_region,
    gcp_zone_problems,
)


def test_zones_aws_region_list_is_botocores_at_the_recorded_version():
    # The list was read from botocore 1.44.8's endpoints.json; with that version installed it must
    # equal the SDK's own list (a newer botocore may add regions: then refresh the table).
    endpoints = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    listed = {region for partition in endpoints["partitions"] for region in partition["regions"]}
    if botocore.__version__ == "1.44.8":
        assert listed == AWS_REGIONS
    assert listed >= AWS_REGIONS


def test_zones_tables_hold_only_known_regions_with_a_source_and_date():
    assert set(AWS_ZONES) <= AWS_REGIONS
    assert set(GCP_ZONES) <= GCP_REGIONS
    for table in [*AWS_ZONES.values(), *GCP_ZONES.values()]:
        assert table.source.startswith("https://")
        assert table.as_of.year == 2026
        assert all(name.startswith(table.region) for name in table.names)


@pytest.mark.parametrize("zone", ["us-east-1a", "us-east-1f", "eu-west-1c", "ca-west-1a", "us-gov-west-1a"])
def test_zones_aws_accepts_zones_of_known_regions(zone):
    assert aws_zone_problems("z", zone) == []


def test_zones_rejects_aws_zone_its_region_lacks_with_did_you_mean():
    [problem] = aws_zone_problems("subnets[0].availability_zone", "us-east-1z")
    assert problem.input == "subnets[0].availability_zone"
    assert "is not a zone of us-east-1 (did you mean 'us-east-1f'" in problem.allowed
    assert "us-east-1a, us-east-1b" in problem.allowed


def test_zones_rejects_aws_zone_in_unknown_region():
    [problem] = aws_zone_problems("z", "us-east-9a")
    assert "unknown region 'us-east-9' (did you mean 'us-east-2'" in problem.allowed


def test_zones_rejects_aws_zone_outside_the_providers_region():
    [problem] = aws_zone_problems("subnets[1].availability_zone", "us-east-1b", "eu-west-1")
    assert "outside the provider's region 'eu-west-1'" in problem.allowed
    assert "eu-west-1a, eu-west-1b, eu-west-1c" in problem.allowed
    assert aws_zone_problems("z", "eu-west-1b", "eu-west-1") == []


def test_zones_rejects_unknown_aws_region_as_unknown_region():
    [problem] = aws_region_problems("aws:region", "us-east-9")
    assert str(problem).startswith("aws:region 'us-east-9' is an unknown region (did you mean 'us-east-2'")
    assert aws_region_problems("aws:region", "ap-southeast-7") == []


def test_zones_rejects_gcp_zone_its_region_lacks_and_unknown_regions():
    [letter] = gcp_zone_problems("zone", "europe-west9-z")
    assert "is not a zone of europe-west9" in letter.allowed
    [listed] = gcp_zone_problems("zone", "us-central1-d")  # us-central1 has a, b, c, f
    assert "(did you mean" in listed.allowed
    assert "us-central1-f" in listed.allowed
    [region] = gcp_zone_problems("zone", "us-centrall1-a")
    assert "unknown region 'us-centrall1' (did you mean 'us-central1'" in region.allowed
    assert gcp_region_problems("region", "europe-west4") == []
    assert "unknown region" in gcp_region_problems("region", "europe-west44")[0].allowed
    assert gcp_zone_problems("zone", "us-central2-b") == []  # TPU v4's region


def test_zones_gcp_fleet_must_be_in_its_subnetworks_region_else_the_providers():
    subnet = "projects/p/regions/us-central1/subnetworks/serving"
    assert gcp_subnetwork_region(subnet) == "us-central1"
    assert gcp_subnetwork_region("serving") is None
    assert gcp_subnetwork_region(object()) is None  # wired from another resource: known at deploy
    [problem] = gcp_network_region_problems("zone", "europe-west4-a", subnetwork=subnet)
    assert "the fleet's subnetwork" in problem.allowed
    assert "is in us-central1" in problem.allowed
    # the subnetwork's region decides when it is known, whatever gcp:region says
    assert (
        gcp_network_region_problems(
            "zone",
            "europe-west4-a",
            subnetwork=subnet.replace("us-central1", "europe-west4"),
            provider_region="us-central1",
        )
        == []
    )
    [provider] = gcp_network_region_problems("zone", "europe-west4-a", provider_region="us-central1")
    assert "outside the provider's region 'us-central1' (gcp:region)" in provider.allowed
    assert gcp_network_region_problems("zone", "us-central1-b", provider_region="us-central1") == []
