"""SageMaker real-time inference prices for ml.* accelerator instances (on-demand, per instance-hour).

SageMaker bills its own rate for an ml.* instance, above the EC2 price of the
same machine. Rates are for US East (N. Virginia); other regions are not
listed and are priced at this rate with the region named in the basis.

Verification (2026-11-24): none of these rows has been checked against a
primary source. They were recorded on 2026-11-01 from AWS's pricing page,
which renders its tables in the browser and could not be read here; no
public price-list snapshot of SageMaker hosting rates (like SkyPilot's for
EC2) was found. Third-party pages read on 2026-11-24 disagree with each other
(ml.g5.xlarge at $1.21 on one, about $1.41 on another; ml.inf2.xlarge at
$0.76 on one), so they were not used to change any row. Each row's
``checked`` says what, if anything, it was compared with. Not added for want
of a source: ml.g6, ml.g6e, ml.p4de, ml.p5.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

_SOURCE = "https://aws.amazon.com/sagemaker/ai/pricing/ (Real-Time Inference, us-east-1)"
_AS_OF = date(2026, 11, 1)
# Third-party pages compared with on 2026-11-24 (secondary sources: agreement is not verification).
_WRING = "https://www.wring.co/blog/aws-sagemaker-inference-guide"
_ZIRCON = "https://zircon.tech/blog/the-real-cost-of-running-ai-models-on-aws-sagemaker-inference-deep-dive"


@dataclass(frozen=True, kw_only=True)
class SageMakerPrice:
    instance_type: str
    hourly_usd: float  # us-east-1, on-demand
    source: str = _SOURCE
    as_of: date = _AS_OF
    checked: str = "not verified against a primary source"


SAGEMAKER_PRICES: dict[str, SageMakerPrice] = {
    p.instance_type: p
    for p in (
        SageMakerPrice(instance_type="ml.g4dn.xlarge", hourly_usd=0.7364),
        SageMakerPrice(instance_type="ml.g4dn.2xlarge", hourly_usd=0.94),
        SageMakerPrice(instance_type="ml.g4dn.12xlarge", hourly_usd=4.89),
        SageMakerPrice(
            instance_type="ml.g5.xlarge",
            hourly_usd=1.408,
            checked=f"2026-11-24: about $1.41 at {_ZIRCON}, $1.21 at {_WRING}; kept, not verified",
        ),
        SageMakerPrice(
            instance_type="ml.g5.2xlarge",
            hourly_usd=1.515,
            checked=f"2026-11-24: $1.52 at {_WRING}; not verified against AWS",
        ),
        SageMakerPrice(instance_type="ml.g5.4xlarge", hourly_usd=2.03),
        SageMakerPrice(instance_type="ml.g5.8xlarge", hourly_usd=3.06),
        SageMakerPrice(instance_type="ml.g5.12xlarge", hourly_usd=7.09),
        SageMakerPrice(instance_type="ml.g5.24xlarge", hourly_usd=10.18),
        SageMakerPrice(instance_type="ml.g5.48xlarge", hourly_usd=20.36),
        SageMakerPrice(
            instance_type="ml.p4d.24xlarge",
            hourly_usd=37.688,
            checked=f"2026-11-24: $37.69 at {_WRING}; not verified against AWS",
        ),
        SageMakerPrice(
            instance_type="ml.inf2.xlarge",
            hourly_usd=0.99,
            checked=f"2026-11-24: $0.76 at {_WRING}; kept (one secondary source), not verified",
        ),
        SageMakerPrice(instance_type="ml.inf2.24xlarge", hourly_usd=7.79),
        SageMakerPrice(instance_type="ml.inf2.48xlarge", hourly_usd=15.58),
    )
}


def sagemaker_price(instance_type: str) -> SageMakerPrice | None:
    return SAGEMAKER_PRICES.get(instance_type)
