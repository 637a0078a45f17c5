"""SageMaker hosting rates: from the pinned copy of FMBench's pricing.yml (aws-samples), rebuilt by
`make catalog`; a type the copy lacks is listed as not priced with the reason."""

from __future__ import annotations

import csv
import io

import yaml

from inference_infra.components.catalog import build
from inference_infra.components.catalog.sagemaker import (
    NOT_PRICED_REASON,
    SAGEMAKER_NOT_PRICED,
    SAGEMAKER_PRICES,
    sagemaker_not_priced_reason,
    sagemaker_price,
)


def test_sagemaker_prices_come_from_the_pinned_fmbench_copy_with_its_commit_and_date():
    meta = build.sources()[build.SAGEMAKER_INPUT]
    assert meta["repository"] == "https://github.com/aws-samples/foundation-model-benchmarking-tool"
    assert meta["sha256"] == meta["original_sha256"] == build.sha256(build.SOURCES / build.SAGEMAKER_INPUT)
    listed = yaml.safe_load((build.SOURCES / build.SAGEMAKER_INPUT).read_text())["pricing"]["instance_based"]
    assert SAGEMAKER_PRICES
    for name, row in SAGEMAKER_PRICES.items():
        assert row.hourly_usd == listed[name] > 0  # the file's figure, unchanged
        assert row.region == "us-east-1"
        assert row.source == meta["url"]
        assert row.as_of.isoformat() == meta["copied_on"]


def test_sagemaker_prices_cover_every_size_of_the_catalogs_families_that_the_copy_lists():
    listed = yaml.safe_load((build.SOURCES / build.SAGEMAKER_INPUT).read_text())["pricing"]["instance_based"]
    families = {"g4dn", "g5", "g6", "inf2", "p4d", "p5", "trn1"}
    expected = {n for n in listed if n.startswith("ml.") and n.split(".")[1] in families}
    assert set(SAGEMAKER_PRICES) == expected
    assert "ml.p3.2xlarge" not in SAGEMAKER_PRICES  # listed, but p3 is no family of the catalog
    assert sagemaker_price("ml.inf2.48xlarge").hourly_usd == 15.58
    assert sagemaker_price("ml.g5.xlarge").hourly_usd == 1.4084


def test_sagemaker_generated_rows_are_what_make_catalog_rebuilds():
    rebuilt = list(csv.DictReader(io.StringIO(build.build()["sagemaker_prices.csv"])))
    assert {r["instance_type"]: float(r["hourly_usd"]) for r in rebuilt} == {
        n: p.hourly_usd for n, p in SAGEMAKER_PRICES.items()
    }


def test_sagemaker_types_the_copy_lacks_are_not_priced_and_say_why():
    assert set(SAGEMAKER_NOT_PRICED) == {"ml.g6.xlarge", "ml.g6e.xlarge", "ml.p4de.24xlarge"}
    assert not set(SAGEMAKER_NOT_PRICED) & set(SAGEMAKER_PRICES)
    for name, row in SAGEMAKER_NOT_PRICED.items():
        assert sagemaker_price(name) is None
        assert "not in FMBench's pricing.yml" in row.reason
    assert sagemaker_not_priced_reason("ml.g7.xlarge") == NOT_PRICED_REASON  # a type not listed
    assert sagemaker_price("ml.g7.xlarge") is None
