"""SageMaker real-time inference prices for ml.* accelerator instances (on-demand, per instance-hour).

SageMaker bills its own rate for an ml.* instance, above the EC2 price of the
same machine. A rate is recorded only from a primary source (AWS's pricing page
or the AWS Price List offer file for AmazonSageMaker) with its date.

As of 2026-11-25 **no ml.* type is priced**: AWS's pricing page fills its
tables with scripts and could not be read here, and no copy of the Price List
offer file was found through the search and fetch tools. The rates recorded on
2026-11-01 (said to be from AWS's page, never checked) disagree with secondary
pages read on 2026-11-24 (ml.g5.xlarge at $1.408 recorded, $1.21 on one page,
about $1.41 on another; ml.inf2.xlarge $0.99 recorded, $0.76 on one), so they
are kept in ``data/sagemaker.csv`` as ``recorded_usd`` for the record and are
not used: ``sagemaker_price`` returns None, and a plan lists a SageMaker endpoint
as not priced instead of guessing. ``SAGEMAKER_NOT_PRICED`` lists the types
with the reason; any other ml.* type is not priced for the same reason.

To price them, add ``hourly_usd``, ``source`` and ``as_of`` to a row from the
offer file (``https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonSageMaker/current/index.json``,
product family "ML Instance", component "Hosting", usage type ``USE1-Host:<type>``)
and empty its ``not_priced`` cell.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from inference_infra.components.catalog.tables import day, rows

NOT_PRICED_REASON = (
    "no primary source: AWS's SageMaker pricing page fills its tables with scripts and could not be "
    "read, and no copy of the AWS Price List offer file for AmazonSageMaker was found (2026-11-25)"
)


@dataclass(frozen=True, kw_only=True)
class SageMakerPrice:
    instance_type: str
    hourly_usd: float  # us-east-1, on-demand
    source: str
    as_of: date
    checked: str = ""


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
        source=r["source"],
        as_of=day(r["as_of"]),
        checked=r["checked"],
    )
    for r in rows("sagemaker.csv")
    if not r["not_priced"]
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
    if r["not_priced"]
}


def sagemaker_price(instance_type: str) -> SageMakerPrice | None:
    return SAGEMAKER_PRICES.get(instance_type)


def sagemaker_not_priced_reason(instance_type: str) -> str:
    """Why an ml.* type has no price: its row's reason, or the general one for a type not listed."""
    row = SAGEMAKER_NOT_PRICED.get(instance_type)
    return row.reason if row else NOT_PRICED_REASON
