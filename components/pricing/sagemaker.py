"""SageMaker endpoint configurations: every variant priced, or said to be unpriced.

An `aws.sagemaker.EndpointConfiguration` bills each production (and shadow) variant on its own:
an instance variant at SageMaker's ml.* rate times its `initialInstanceCount`, a serverless variant
per use (compute time by its memory size, and the data it processes). The instance rates are the
catalog's (``catalog.sagemaker``: FMBench's pricing.yml, pinned); no serverless rate has a primary
source in the catalog yet, so a serverless variant is listed as unpriced with what it is billed on,
never as $0. Pure: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Callable

from inference_infra.components.catalog import CatalogError
from inference_infra.components.resources import AcceleratorUse

SERVERLESS_NOT_PRICED = (
    "serverless: billed per use (compute seconds by the variant's memory size, and data processed); "
    "the catalog has no SageMaker Serverless Inference rate from a primary source, so it is not in the total"
)

PriceUse = Callable[[AcceleratorUse, str | None], tuple[float, str]]


def price_variants(
    use: AcceleratorUse, region: str | None, price_use: PriceUse
) -> tuple[float, str, list[str]]:
    """(hourly USD of the priced variants, their basis, why each other variant is not priced).

    Raises CatalogError when no variant could be priced (the whole configuration is unpriced)."""
    hourly, bases, unpriced = 0.0, [], []
    for variant in use.variants:
        if variant.use is None:
            unpriced.append(f"variant {variant.name!r}: {SERVERLESS_NOT_PRICED}")
            continue
        try:
            usd, basis = price_use(variant.use, region)
        except CatalogError as e:
            unpriced.append(f"variant {variant.name!r}: {e}")
            continue
        hourly += usd
        bases.append(f"variant {variant.name!r}: {basis}")
    if not bases:
        raise CatalogError("; ".join(unpriced))
    return hourly, " + ".join(bases), unpriced
