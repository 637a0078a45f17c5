"""CPU machines: what the instances, groups, node pools and VMs without accelerators cost per hour.

Priced from the CPU machine table (``catalog.compute``): on-demand list prices,
spot from the dated spot snapshot when it has the type and region, else at
on-demand saying so (as accelerators are). A type neither table knows raises
CatalogError naming it, so the plan lists it as not priced instead of $0.
"""

from __future__ import annotations

from inference_infra.components.catalog import CatalogError, Cloud
from inference_infra.components.catalog.compute import MachinePrice, machine_price
from inference_infra.components.catalog.spot import SNAPSHOT_DATE, spot_row
from inference_infra.components.pricing.groups import price_dearest
from inference_infra.components.resources import MachineUse, Purchase

COMPUTE = "compute"  # CostItem category of CPU machines: "everything else", not accelerators


def _unknown(use: MachineUse) -> CatalogError:
    kind = "EC2 instance type" if use.cloud is Cloud.AWS else "GCE machine type"
    return CatalogError(
        f"{kind} {use.machine_type!r} is in neither the accelerator catalog nor the CPU machine table "
        "(components/catalog/compute.py); not in the total"
    )


def _spot(price: MachinePrice, region: str | None) -> tuple[float, str]:
    """Spot USD per hour of one machine, from the snapshot; on-demand, saying so, without data."""
    where = region or price.where
    row = spot_row(price.cloud, price.name, where)
    if row is None:
        when = SNAPSHOT_DATE.isoformat()
        return (
            price.hourly_usd,
            f"spot (no {when} snapshot data for {price.name} in {where}; priced at on-demand)",
        )
    return row.highest_usd, f"spot ${row.highest_usd:g}/h (snapshot {row.as_of.isoformat()})"


def price_machine_use(use: MachineUse, region: str | None) -> tuple[float, str]:
    """Hourly USD and basis of a CPU machine use. Raises CatalogError for a type the table lacks.

    A group that may launch several types is priced at the dearest (`pricing.groups`)."""
    if len(use.all_types) > 1:
        return price_dearest(use, region, price_machine_use)
    if use.machine_type.startswith("ml.") and use.cloud is Cloud.AWS:
        raise CatalogError(
            f"SageMaker instance type {use.machine_type!r} has no recorded price; not in the total"
        )
    price = machine_price(use.cloud, use.machine_type, region)
    if price is None:
        raise _unknown(use)
    each = f"${price.hourly_usd:.4g}/h each" if use.count != 1 else f"${price.hourly_usd:.4g}/h"
    derived = f", {price.how}" if price.how != "read" else ""
    times = f"{use.count} x " if use.count != 1 else ""
    on_demand = f"on-demand {price.where} ({each}{derived})"
    if use.purchase is Purchase.SPOT or (use.spot_share is not None and use.spot_share >= 1):
        rate, how = _spot(price, region)
        return rate * use.count, f"{times}{use.machine_type} {how} {price.where}" + use.scaling
    if use.spot_share is not None and 0 < use.spot_share < 1 and use.count > 0:
        spot_n = round(use.count * use.spot_share, 2)
        rate, how = _spot(price, region)
        hourly = (use.count - spot_n) * price.hourly_usd + spot_n * rate
        basis = (
            f"{use.count} x {use.machine_type}, mixed by its instances distribution: "
            f"{use.count - spot_n:g} {on_demand} + {spot_n:g} at the {how}"
        )
        return hourly, basis + use.scaling
    note = "; reserved capacity, billed whether used or not" if use.purchase is Purchase.RESERVED else ""
    return price.hourly_usd * use.count, f"{times}{use.machine_type} {on_demand}{note}" + use.scaling
