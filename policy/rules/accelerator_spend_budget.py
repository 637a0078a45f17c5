"""accelerator-spend-budget (stack policy): the stack's accelerators cost at most maxHourlyUsd.

The estimate is the offline plan's own (inference_infra.components.pricing, catalog
list prices): running instances, VMs and TPU slices at their purchase model,
Auto Scaling groups at their desired capacity, capacity reservations in full
with the instances inside them at zero. Templates launch nothing by themselves
and cost nothing. The region is the resource's zone, else its provider's region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.catalog import Cloud
from inference_infra.components.inventory import region_of_zone
from inference_infra.components.pricing import HOURS_PER_MONTH, price_resources
from inference_infra.policy.rules._base import Outcome, Resource, not_applicable, passed, stack_policy

NAME = "accelerator-spend-budget"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "The stack's estimated accelerator spend per hour stays within maxHourlyUsd."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "maxHourlyUsd": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Budget in USD per hour for every accelerator the stack runs or reserves. "
            "Unset: the policy reports the estimate as not applicable.",
        },
        "topContributors": {
            "type": "integer",
            "minimum": 1,
            "default": 3,
            "description": "How many of the largest costs a violation names.",
        },
    }
)


def _provider_region(resource: Resource, cloud: Cloud) -> str | None:
    region, zone = resource.provider.get("region"), resource.provider.get("zone")
    if isinstance(region, str) and region:
        return region
    return region_of_zone(zone) if isinstance(zone, str) and zone else None


def check(resources: Sequence[Resource], config: Mapping[str, Any]) -> Outcome:
    # Every resource goes in: inventory knows which types carry accelerators.
    report = price_resources(resources, _provider_region)
    if not report.items and not report.unpriced:
        return not_applicable("the stack runs, launches or reserves no accelerators")
    estimate = report.hourly_usd
    limit = config.get("maxHourlyUsd")
    if limit is None:
        return not_applicable(f"maxHourlyUsd is not configured (estimate ${estimate:,.2f}/hour)")
    if estimate <= limit:
        return passed()
    names = {r.urn: r.name for r in resources}
    top = sorted(report.items, key=lambda i: -i.hourly_usd)[: int(config["topContributors"])]
    largest = "; ".join(f"{names[i.urn]} ${i.hourly_usd:,.2f}/h ({i.basis})" for i in top)
    unpriced = f"; not priced: {', '.join(names[u] for u, _ in report.unpriced)}" if report.unpriced else ""
    return Outcome(
        violations=(
            f"estimated accelerator spend ${estimate:,.2f}/hour (${estimate * HOURS_PER_MONTH:,.0f}/month) "
            f"exceeds maxHourlyUsd ${limit:,.2f}; largest: {largest}{unpriced}.",
        )
    )


POLICY = stack_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
