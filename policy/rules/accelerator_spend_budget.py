"""accelerator-spend-budget (stack policy): the stack costs at most maxHourlyUsd per hour.

The estimate is the offline plan's own (inference_infra.components.pricing, catalog
list prices): running instances, VMs and TPU slices at their purchase model,
elastic pools (Auto Scaling groups, managed instance groups) at their maximum
(`elasticPools: expected` judges them at the expected size from their schedules or desired capacity,
`minimum` at their minimum), capacity reservations in full
with the instances inside them at zero; and, by default (`scope: total`),
every other resource billed by the hour (CPU machines wherever they run,
volumes, file shares, NAT, load balancers, endpoints, addresses).
`scope: accelerators` judges the accelerators alone. Usage-priced quantities (bytes stored, requests, traffic)
are not known at preview time and are not in the estimate. Templates launch
nothing by themselves and cost nothing. The region is the resource's zone,
else its provider's region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.catalog import Cloud
from inference_infra.components.pricing import ACCELERATOR, HOURS_PER_MONTH, price_resources
from inference_infra.components.resources import region_of_zone
from inference_infra.policy.rules._base import (
    Outcome,
    Resource,
    not_applicable,
    passed,
    rule_metadata,
    stack_policy,
)

NAME = "accelerator-spend-budget"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "The stack's estimated spend per hour (all of it by default) stays within maxHourlyUsd."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "maxHourlyUsd": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Budget in USD per hour for what the stack runs or reserves (see scope). "
            "Unset: the policy reports the estimate as not applicable.",
        },
        "scope": {
            "type": "string",
            "enum": ["total", "accelerators"],
            "default": "total",
            "description": "total: every resource billed by the hour; accelerators: accelerators only.",
        },
        "elasticPools": {
            "type": "string",
            "enum": ["maximum", "expected", "minimum"],
            "default": "maximum",
            "description": "The size elastic pools are judged at: maximum (the most the stack can cost), "
            "expected (their schedules, else their desired capacity) or minimum.",
        },
        "topContributors": {
            "type": "integer",
            "minimum": 1,
            "default": 3,
            "description": "How many of the largest costs a violation names.",
        },
    }
)


_AT = {
    "maximum": lambda i: i.hourly_usd,
    "expected": lambda i: i.hourly_expected,
    "minimum": lambda i: i.hourly_min,
}


def _provider_region(resource: Resource, cloud: Cloud) -> str | None:
    region, zone = resource.provider.get("region"), resource.provider.get("zone")
    if isinstance(region, str) and region:
        return region
    return region_of_zone(zone) if isinstance(zone, str) and zone else None


def check(resources: Sequence[Resource], config: Mapping[str, Any]) -> Outcome:
    # Every resource goes in: the resource readers know which types carry accelerators.
    report = price_resources(resources, _provider_region)
    scope = config.get("scope", "total")
    items = [i for i in report.items if scope == "total" or i.category == ACCELERATOR]
    unpriced_all = report.unpriced if scope == "total" else report.unpriced_accelerators
    no_accelerators = not [i for i in items if i.category == ACCELERATOR] and not report.unpriced_accelerators
    if no_accelerators and (scope != "total" or not any(i.hourly_usd for i in items)):
        return not_applicable("the stack runs, launches or reserves no accelerators")
    at = _AT[config.get("elasticPools", "maximum")]
    estimate = round(sum(at(i) for i in items), 4)
    what = "spend" if scope == "total" else "accelerator spend"
    if any(i.range is not None for i in items):
        what += f" (elastic pools at their {config.get('elasticPools', 'maximum')})"
    limit = config.get("maxHourlyUsd")
    if limit is None:
        return not_applicable(f"maxHourlyUsd is not configured (estimate ${estimate:,.2f}/hour)")
    if estimate <= limit:
        return passed()
    names = {r.urn: r.name for r in resources}
    per_urn: dict[str, list] = {}
    for i in items:
        per_urn.setdefault(i.urn, []).append(i)
    costs = [(sum(at(i) for i in its), max(its, key=at), u) for u, its in per_urn.items()]
    top = sorted((c for c in costs if c[0] > 0), key=lambda c: -c[0])[: int(config.get("topContributors", 3))]
    largest = "; ".join(f"{names.get(u, u)} ${usd:,.2f}/h ({i.basis})" for usd, i, u in top)
    unpriced = f"; not priced: {', '.join(names[u] for u, _ in unpriced_all)}" if unpriced_all else ""
    return Outcome(
        violations=(
            f"estimated {what} ${estimate:,.2f}/hour (${estimate * HOURS_PER_MONTH:,.0f}/month) "
            f"exceeds maxHourlyUsd ${limit:,.2f}; largest: {largest}{unpriced}.",
        )
    )


POLICY = stack_policy(**rule_metadata(__name__), check=check)
