"""Pricing: what a set of resources costs per hour, from the catalog's dated price rows.

A domain concept beside the catalog: the offline plan prices a captured stack with it, and the
policies (`accelerator-spend-budget`) price what the analyzer hands them with the same code.
"""

from inference_infra.components.pricing.core import (
    ACCELERATOR,
    CostItem,
    CostReport,
    Priceable,
    RegionOf,
    apply_usage_file,
    default_region,
    price_resources,
    price_use,
)
from inference_infra.components.resources import template_index
from inference_infra.components.units import HOURS_PER_MONTH

__all__ = [
    "ACCELERATOR",
    "HOURS_PER_MONTH",
    "CostItem",
    "CostReport",
    "Priceable",
    "RegionOf",
    "apply_usage_file",
    "default_region",
    "price_resources",
    "price_use",
    "template_index",
]
