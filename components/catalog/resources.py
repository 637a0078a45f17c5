"""List prices of the billable resources around the accelerators: storage, network, serverless.

One rate per priced quantity (a GiB-month of gp3, an hour of a NAT gateway, a
GB a NAT gateway processes), read from ``data/resource_rates.csv`` (kept by
hand; one row per key and region). ``usd`` maps region -> USD per ``unit``; the
first region is the reference, used (and named in the basis) for a region the
row has no figure for. ``usage`` rows price quantities that depend on traffic
or data (bytes stored, requests, GB processed): the plan lists them with their
unit prices and prices them only from a usage file.

Figures are the providers' public list prices for the reference regions
(AWS us-east-1, GCP us-central1), before free tiers and volume tiers (the first
tier is used), read from the pages in ``source`` on the ``as_of`` date. Rows
checked again against a dated copy of the provider's page name it in
``checked_against`` and carry the date of that check (2026-11-24: Lambda, Cloud
Storage, Filestore Basic HDD and Standard; the other pricing pages render their
tables with scripts and no dated copy of them was found). Fargate, ECR and
Artifact Registry rows quote the provider's page through the dated write-up
named in ``source``, as that page renders its table with scripts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache

from inference_infra.components.catalog.tables import by_region, day, flag, rows
from inference_infra.components.catalog.types import Cloud


@dataclass(frozen=True, kw_only=True)
class ResourceRate:
    key: str  # e.g. "aws.ebs.gp3.storage"
    cloud: Cloud
    unit: str  # "GiB-month", "hour", "GB", "1M requests", ...
    usd: Mapping[str, float]  # region -> USD per unit; first is the reference
    usage: bool = False  # priced from a usage file only (traffic, bytes stored, requests)
    free: float = 0.0  # quantity included without charge (e.g. gp3's 3,000 IOPS baseline)
    source: str
    as_of: date
    # Where the figure was checked again, when it was (a dated copy of the provider's page); the
    # row's as_of is then the date of that check.
    checked_against: str = ""
    notes: str = ""

    @property
    def reference_region(self) -> str:
        return next(iter(self.usd))

    def rate(self, region: str | None) -> tuple[float, str]:
        """(USD per unit, where): the region's figure, else the reference region's, saying so."""
        if region is not None and region in self.usd:
            return self.usd[region], region
        ref = self.reference_region
        return self.usd[ref], ref if region is None else f"{ref} (reference; no {region} rate in the catalog)"


def _load() -> tuple[ResourceRate, ...]:
    by_key: dict[str, list[Mapping[str, str]]] = {}
    for row in rows("resource_rates.csv"):
        by_key.setdefault(row["key"], []).append(row)
    out = []
    for key, regions in by_key.items():
        first = regions[0]
        for other in regions[1:]:  # one rate, several regions: everything but the figure agrees
            differs = [c for c in first if c not in ("region", "usd") and other[c] != first[c]]
            if differs:
                raise ValueError(f"resource rate {key}: regions disagree on {differs}")
        out.append(
            ResourceRate(
                key=key,
                cloud=Cloud(first["cloud"]),
                unit=first["unit"],
                usd=by_region(regions, "usd"),
                usage=flag(first["usage"]),
                free=float(first["free"] or 0),
                source=first["source"],
                as_of=day(first["as_of"]),
                checked_against=first["checked_against"],
                notes=first["notes"],
            )
        )
    return tuple(out)


RESOURCE_RATES: tuple[ResourceRate, ...] = _load()


@cache
def _rates() -> dict[str, ResourceRate]:
    return {r.key: r for r in RESOURCE_RATES}


def resource_rate(key: str) -> ResourceRate | None:
    """The rate row for key, or None when the catalog has none (the caller says so)."""
    return _rates().get(key)
