"""SageMaker hosting rates: priced only from a primary source, else listed as not priced with the reason."""

from __future__ import annotations

from inference_infra.components.catalog.sagemaker import (
    NOT_PRICED_REASON,
    SAGEMAKER_NOT_PRICED,
    SAGEMAKER_PRICES,
    sagemaker_not_priced_reason,
    sagemaker_price,
)


def test_sagemaker_prices_come_from_a_primary_source_with_its_date():
    for name, row in SAGEMAKER_PRICES.items():
        assert name == row.instance_type
        assert row.hourly_usd > 0
        assert row.source.startswith(("https://aws.amazon.com/", "https://pricing.us-east-1.amazonaws.com/"))
        assert row.as_of.year >= 2026


def test_sagemaker_types_without_a_primary_source_are_not_priced_and_say_why():
    assert SAGEMAKER_NOT_PRICED
    assert not set(SAGEMAKER_NOT_PRICED) & set(SAGEMAKER_PRICES)
    for name, row in SAGEMAKER_NOT_PRICED.items():
        assert name.startswith("ml.")
        assert sagemaker_price(name) is None
        assert "no primary source" in row.reason
    assert sagemaker_price("ml.g5.2xlarge") is None
    assert sagemaker_not_priced_reason("ml.g5.2xlarge") == NOT_PRICED_REASON
    assert sagemaker_not_priced_reason("ml.g7.xlarge") == NOT_PRICED_REASON  # a type not listed


def test_sagemaker_figures_once_recorded_are_kept_for_the_record_with_what_they_were_compared_with():
    row = SAGEMAKER_NOT_PRICED["ml.g5.xlarge"]
    assert row.recorded_usd == 1.408
    assert row.recorded_as_of.isoformat() == "2026-11-01"
    assert "2026-11-24" in row.checked
    assert "https://" in row.checked
    assert SAGEMAKER_NOT_PRICED["ml.p5.48xlarge"].recorded_usd is None  # never recorded
