"""AWS name rules shared by the components: the rules themselves live in components.naming and the
zone and region lists in components.catalog.zones; this adds the provider's region."""

from __future__ import annotations

from collections.abc import Iterable

import pulumi

from inference_infra.components.catalog.zones import aws_region_problems, aws_zone_problems
from inference_infra.components.errors import Problem
from inference_infra.components.naming import is_aws_region as is_region

PROVIDER_REGION = "aws:region (the aws provider's region)"


def provider_region(opts: pulumi.ResourceOptions | None) -> str | None:
    """The stack's aws:region when the component deploys through the default provider; None when an
    explicit provider or parent decides the region (checked where that region is known) or when unset."""
    if opts is not None and (opts.provider or opts.providers or opts.parent):
        return None
    return pulumi.Config("aws").get("region") or None


def zones_in_region_problems(zones: Iterable[tuple[str, object]], region: str | None) -> list[Problem]:
    """The provider's region unknown (us-east-9), or a well-formed zone (input name, zone) outside it.
    A zone malformed or unknown in its own region is the args' validation's to report, once."""
    if region is None:
        return []
    if problems := aws_region_problems(PROVIDER_REGION, region):
        return problems
    found: list[Problem] = []
    for key, zone in zones:
        if isinstance(zone, str) and zone[-1:].isalpha() and not aws_zone_problems(key, zone):
            found += aws_zone_problems(key, zone, region)
    return found


__all__ = ["PROVIDER_REGION", "is_region", "provider_region", "zones_in_region_problems"]
