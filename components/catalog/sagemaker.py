"""SageMaker real-time inference prices for ml.* accelerator instances (on-demand, per instance-hour).

SageMaker bills its own rate for an ml.* instance, above the EC2 price of the same machine. The
rates come from a pinned, committed copy of AWS's own benchmarking tool's price file: FMBench
(``aws-samples/foundation-model-benchmarking-tool``), ``fmbench/configs/pricing.yml`` at
39ce6b9c, which ``make catalog`` reads (``data/sources/fmbench-pricing.yml``; URL, commit, git
blob and SHA-256 in ``SOURCES.json``) into ``data/generated/sagemaker_prices.csv``: every ml.* size
of the instance families the catalog carries (g4dn, g5, g6, inf2, p4d, p5, trn1) that the file
prices. The file names no region; FMBench prices for us-east-1 (see ``SOURCES.json``), so the
rows are us-east-1 and a plan in another region says it used the us-east-1 rate.

The file was last changed on 2025-01-26: the rates are as AWS published them then, not live
prices. A type the file does not price (``data/sagemaker.csv``: ml.g6.xlarge, ml.g6e.xlarge,
ml.p4de.24xlarge, ...) is not priced, and a plan lists it as such instead of guessing.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from inference_infra.components.catalog.tables import day, rows

NOT_PRICED_REASON = (
    "not priced: FMBench's pricing.yml at 39ce6b9c (aws-samples/foundation-model-benchmarking-tool, "
    "the catalog's SageMaker source) lists no rate for it"
)
SAGEMAKER_REGION = "us-east-1"


@dataclass(frozen=True, kw_only=True)
class SageMakerPrice:
    instance_type: str
    hourly_usd: float
    region: str  # the region the source prices (us-east-1)
    source: str
    as_of: date  # the day the copy was made
    notes: str = ""


@dataclass(frozen=True, kw_only=True)
class SageMakerNotPriced:
    """An ml.* type the catalog does not price, why, and the unverified figure once recorded for it."""

    instance_type: str
    reason: str
    recorded_usd: float | None  # not used for pricing
    recorded_source: str
    recorded_as_of: date | None
    checked: str  # what the recorded figure was compared with


SAGEMAKER_PRICES: dict[str, SageMakerPrice] = {
    r["instance_type"]: SageMakerPrice(
        instance_type=r["instance_type"],
        hourly_usd=float(r["hourly_usd"]),
        region=r["region"],
        source=r["source"],
        as_of=day(r["as_of"]),
        notes=r["notes"],
    )
    for r in rows("generated/sagemaker_prices.csv")
}

SAGEMAKER_NOT_PRICED: dict[str, SageMakerNotPriced] = {
    r["instance_type"]: SageMakerNotPriced(
        instance_type=r["instance_type"],
        reason=r["not_priced"],
        recorded_usd=float(r["recorded_usd"]) if r["recorded_usd"] else None,
        recorded_source=r["recorded_source"],
        recorded_as_of=day(r["recorded_as_of"]) if r["recorded_as_of"] else None,
        checked=r["checked"],
    )
    for r in rows("sagemaker.csv")
}


def sagemaker_price(instance_type: str) -> SageMakerPrice | None:
    return SAGEMAKER_PRICES.get(instance_type)


def sagemaker_not_priced_reason(instance_type: str) -> str:
    """Why an ml.* type has no price: its row's reason, or the general one for a type not listed."""
    row = SAGEMAKER_NOT_PRICED.get(instance_type)
    return row.reason if row else NOT_PRICED_REASON
