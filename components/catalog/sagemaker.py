"""SageMaker real-time inference prices for ml.* accelerator instances (on-demand, per instance-hour).

SageMaker bills its own rate for an ml.* instance, above the EC2 price of the
same machine. Rates are for US East (N. Virginia); other regions are not
listed and are priced at this rate with the region named in the basis.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

_SOURCE = "https://aws.amazon.com/sagemaker/ai/pricing/ (Real-Time Inference, us-east-1)"
_AS_OF = date(2026, 11, 1)


@dataclass(frozen=True, kw_only=True)
class SageMakerPrice:
    instance_type: str
    hourly_usd: float  # us-east-1, on-demand
    source: str = _SOURCE
    as_of: date = _AS_OF


SAGEMAKER_PRICES: dict[str, SageMakerPrice] = {
    p.instance_type: p
    for p in (
        SageMakerPrice(instance_type="ml.g4dn.xlarge", hourly_usd=0.7364),
        SageMakerPrice(instance_type="ml.g4dn.2xlarge", hourly_usd=0.94),
        SageMakerPrice(instance_type="ml.g4dn.12xlarge", hourly_usd=4.89),
        SageMakerPrice(instance_type="ml.g5.xlarge", hourly_usd=1.408),
        SageMakerPrice(instance_type="ml.g5.2xlarge", hourly_usd=1.515),
        SageMakerPrice(instance_type="ml.g5.4xlarge", hourly_usd=2.03),
        SageMakerPrice(instance_type="ml.g5.8xlarge", hourly_usd=3.06),
        SageMakerPrice(instance_type="ml.g5.12xlarge", hourly_usd=7.09),
        SageMakerPrice(instance_type="ml.g5.24xlarge", hourly_usd=10.18),
        SageMakerPrice(instance_type="ml.g5.48xlarge", hourly_usd=20.36),
        SageMakerPrice(instance_type="ml.p4d.24xlarge", hourly_usd=37.688),
        SageMakerPrice(instance_type="ml.inf2.xlarge", hourly_usd=0.99),
        SageMakerPrice(instance_type="ml.inf2.24xlarge", hourly_usd=7.79),
        SageMakerPrice(instance_type="ml.inf2.48xlarge", hourly_usd=15.58),
    )
}


def sagemaker_price(instance_type: str) -> SageMakerPrice | None:
    return SAGEMAKER_PRICES.get(instance_type)
