"""Prices a captured plan: the pricing module over the capture's resources and provider config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inference_infra.components.catalog import Cloud
from inference_infra.components.offline_plan.model import Capture, CapturedResource
from inference_infra.components.pricing import CostReport, default_region, price_resources
from inference_infra.components.resources import region_of_zone


def price_capture(capture: Capture) -> CostReport:
    """Prices each resource in its provider's region: an explicit provider's `region` (or zone),
    else the stack's `aws:region` / `gcp:region`, as the accelerator-spend-budget policy does."""
    providers = {r.urn: r.props for r in capture.resources if r.type.startswith("pulumi:providers:")}

    def region(resource: Any, cloud: Cloud) -> str | None:
        own = _explicit_region(providers, resource)
        return own or default_region(cloud, capture.config)

    # In URN order: the engine registers a program's resources in whatever order its tasks finish,
    # and the items, the elastic pools and which machines fill a reservation first follow this order.
    return price_resources(sorted(capture.custom, key=lambda r: r.urn), region)


def _explicit_region(providers: Mapping[str, Mapping[str, Any]], resource: CapturedResource) -> str | None:
    ref = getattr(resource, "provider", None)
    props = providers.get(ref.rsplit("::", 1)[0]) if isinstance(ref, str) and "::" in ref else None
    if not props:
        return None
    region, zone = props.get("region"), props.get("zone")
    if isinstance(region, str) and region:
        return region
    return region_of_zone(zone) if isinstance(zone, str) and zone else None
