"""The Spot Instance Advisor's interruption bands in the catalog: a dated copy, and what the replay reads."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import AWS_INSTANCE_TYPES
from inference_infra.components.catalog.spot_bands import (
    BANDS,
    bands_from_advisor,
    interruption_band,
    spot_bands,
)
from inference_infra.components.simulate.spot import DEFAULT_BAND, HOURS_PER_MONTH, interruption_rate

COPY = "https://github.com/alexei-led/spotinfo/blob/5eedf20a99614443af215f4aaf09bd10805cac72/"
# Types the advisor copy of 2025-06-28 lists no band for (newer than the copy, or not offered as Spot).
UNLISTED = {"p5.4xlarge", "p5e.48xlarge", "p6-b200.48xlarge"}


def test_spot_bands_every_row_has_a_known_band_source_and_date():
    rows = spot_bands()
    assert len(rows) == len({(b.name, b.region) for b in rows})  # one band per type and region
    for band in rows:
        assert band.band in BANDS
        assert band.source.startswith(COPY)
        assert band.as_of.isoformat() == "2025-06-28"
        assert 0 <= band.savings_percent < 100


def test_spot_bands_cover_every_aws_type_of_the_catalog_the_copy_lists():
    names = {t.name for t in AWS_INSTANCE_TYPES}
    covered = {b.name for b in spot_bands()}
    assert covered == names - UNLISTED
    assert {b.region for b in spot_bands()} == {"us-east-1", "us-west-2"}


def test_interruption_band_reads_the_region_or_the_highest_of_the_regions():
    # g6e.xlarge: 5-10% in us-east-1 and >20% in us-west-2 in the copy
    assert interruption_band("g6e.xlarge", "us-east-1").band == "5-10%"
    assert interruption_band("g6e.xlarge", "us-west-2").band == ">20%"
    assert interruption_band("g6e.xlarge").band == ">20%"
    assert interruption_band("p6-b200.48xlarge") is None
    assert interruption_band("g6e.xlarge", "eu-west-1") is None


def test_interruption_rate_is_the_bands_middle_over_a_month_or_says_it_assumed_one():
    rate, basis = interruption_rate("g6e.xlarge", "us-east-1")
    assert rate == pytest.approx(0.075 / HOURS_PER_MONTH)
    assert "band 5-10% for g6e.xlarge in us-east-1" in basis
    rate, basis = interruption_rate("p6-b200.48xlarge")
    assert rate == pytest.approx(0.175 / HOURS_PER_MONTH)
    assert basis.startswith(f"assumed band {DEFAULT_BAND}")


ADVISOR = {
    "ranges": [
        {"index": 0, "label": "<5%", "dots": 0, "max": 5},
        {"index": 1, "label": "5-10%", "dots": 1, "max": 11},
        {"index": 2, "label": "10-15%", "dots": 2, "max": 16},
        {"index": 3, "label": "15-20%", "dots": 3, "max": 22},
        {"index": 4, "label": ">20%", "dots": 4, "max": 100},
    ],
    "spot_advisor": {
        "us-east-1": {
            "Linux": {"g6e.xlarge": {"s": 58, "r": 1}},
            "Windows": {"g6e.xlarge": {"s": 40, "r": 0}},
        },
        "us-west-2": {"Linux": {"g6e.xlarge": {"s": 50, "r": 4}, "m5.large": {"s": 60, "r": 0}}},
    },
}


def test_bands_from_advisor_keeps_linux_rows_of_the_wanted_types_and_regions():
    rows = bands_from_advisor(
        ADVISOR, ["g6e.xlarge", "p5.4xlarge"], ["us-east-1", "us-west-2"], source="copy", as_of="2025-06-28"
    )
    assert [(r["name"], r["region"], r["band"], r["savings_percent"]) for r in rows] == [
        ("g6e.xlarge", "us-east-1", "5-10%", "58"),
        ("g6e.xlarge", "us-west-2", ">20%", "50"),
    ]


def test_bands_from_advisor_rejects_a_copy_with_other_bands():
    changed = {**ADVISOR, "ranges": [*ADVISOR["ranges"][:4], {"index": 4, "label": "20-30%"}]}
    with pytest.raises(ValueError, match="are not the bands"):
        bands_from_advisor(changed, ["g6e.xlarge"], ["us-east-1"], source="copy", as_of="2025-06-28")
