"""Prices a captured plan: the pricing module over the capture's resources and provider config."""

from __future__ import annotations

from inference_infra.components.offline_plan.model import Capture
from inference_infra.components.pricing import CostReport, default_region, price_resources


def price_capture(capture: Capture) -> CostReport:
    return price_resources(capture.custom, lambda _, cloud: default_region(cloud, capture.config))
