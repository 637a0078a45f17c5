"""Groups that may launch several machine types, priced at the dearest of them.

An Auto Scaling group's mixed-instances overrides, an EKS node group's
``instanceTypes``, an EC2 or Spot Fleet's overrides and a Batch compute
environment's types each let the cloud pick which type runs. Which one it picks
depends on capacity and (for spot) on the allocation strategy, neither known
before deploy, so the group is priced at the most it can cost: every type is
priced alone (the same purchase, spot share and count; a Batch environment's
vCPUs as machines of that type) and the dearest is taken. This matches how spot
is priced (the highest zone price, on-demand when the snapshot lacks the type).
The basis names the range; a type that cannot be priced is named, not guessed,
and the group is priced at the dearest type that can be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from inference_infra.components.catalog import CatalogError, find_instance_type
from inference_infra.components.resources import AcceleratorUse

PriceOne = Callable[[AcceleratorUse, "str | None"], tuple[float, str]]


def price_dearest(use: AcceleratorUse, region: str | None, price_one: PriceOne) -> tuple[float, str]:
    """Hourly USD and basis of a group at its dearest type; price_one prices a single-type use.

    Raises CatalogError (naming every type and why) when none of the types can be priced.
    """
    priced: list[tuple[float, float, str, str]] = []  # (hourly, unit rate, type, basis)
    failed: list[tuple[str, str]] = []
    for name in use.all_types:
        one = use.as_type(name)
        try:
            hourly, basis = price_one(one, region)
            each, _ = price_one(_single(one), region)
        except (CatalogError, ValueError) as e:
            failed.append((name, str(e)))
            continue
        # a machine's rate; a Batch environment's per vCPU, as it asks for vCPUs
        unit_rate = each / _vcpus_of(one) if use.vcpus is not None else each
        priced.append((hourly, unit_rate, name, basis))
    if not priced:
        reasons = "; ".join(f"{name}: {why}" for name, why in failed)
        raise CatalogError(f"none of the types the group may launch can be priced ({reasons})")
    hourly, _, dearest, basis = max(priced, key=lambda p: (p[0], p[1]))
    rates = {name: per for _, per, name, _ in priced}
    cheapest = min(rates, key=lambda n: rates[n])
    unit = "/vCPU-hour" if use.vcpus is not None else "/h each"
    note = (
        f"; the dearest of the {len(use.all_types)} types it may launch "
        f"({cheapest} ${rates[cheapest]:.4g}{unit} to {dearest} ${rates[dearest]:.4g}{unit})"
    )
    if failed:
        note += "; not priced: " + ", ".join(name for name, _ in failed)
    return hourly, basis + note


def _single(use: AcceleratorUse) -> AcceleratorUse:
    """One machine of the use's type, same purchase and spot share, without its scaling bounds."""
    return replace(use, count=1, min_count=None, max_count=None, vcpus=None)


def _vcpus_of(use: AcceleratorUse) -> int:
    item = find_instance_type(use.machine_type, use.cloud)
    return item.vcpus if item is not None else 1
