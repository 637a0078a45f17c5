"""SageMaker hosting rates: dated, sourced, and honest about what was checked."""

from __future__ import annotations

from datetime import date

from inference_infra.components.catalog.sagemaker import SAGEMAKER_PRICES, sagemaker_price


def test_sagemaker_every_row_is_dated_sourced_and_says_what_it_was_checked_against():
    for name, row in SAGEMAKER_PRICES.items():
        assert name == row.instance_type
        assert name.startswith("ml.")
        assert row.hourly_usd > 0
        assert row.source.startswith("https://")
        assert row.as_of <= date(2026, 11, 24)
        assert "not verified" in row.checked  # no row is claimed as verified without a primary source


def test_sagemaker_rows_compared_with_a_secondary_page_name_it_and_the_date():
    row = sagemaker_price("ml.g5.xlarge")
    assert "2026-11-24" in row.checked
    assert "https://" in row.checked
    assert sagemaker_price("ml.p5.48xlarge") is None  # not added: no source found
