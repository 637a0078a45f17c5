"""Filestore service tiers: what capacity each accepts, and where it lives.

Filestore rejects a capacity outside its tier's range (or off its scaling
step) only after the create call; checking it here turns that into a plan-time
error that names the allowed range. Capacities are GiB, as the API's
`capacity_gb` field is.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from inference_infra.components.errors import Problem

_TIERS = "https://cloud.google.com/filestore/docs/service-tiers"
_ZONAL = "https://cloud.google.com/filestore/docs/service-tiers-zonal"
_REGIONAL = "https://cloud.google.com/filestore/docs/service-tiers-regional"
_READ = date(2026, 11, 21)
_TIB = 1024


class FilestoreTier(StrEnum):
    BASIC_HDD = "BASIC_HDD"
    BASIC_SSD = "BASIC_SSD"
    ZONAL = "ZONAL"
    REGIONAL = "REGIONAL"
    ENTERPRISE = "ENTERPRISE"


@dataclass(frozen=True, kw_only=True)
class CapacityRange:
    min_gib: int
    max_gib: int
    step_gib: int | None  # None: any whole GiB (or the step was not published)

    def fits(self, capacity_gib: int) -> bool:
        if not self.min_gib <= capacity_gib <= self.max_gib:
            return False
        return self.step_gib is None or (capacity_gib - self.min_gib) % self.step_gib == 0

    def describe(self) -> str:
        step = f" in steps of {self.step_gib} GiB" if self.step_gib else ""
        return f"{self.min_gib}-{self.max_gib} GiB{step}"


@dataclass(frozen=True, kw_only=True)
class TierLimits:
    tier: FilestoreTier
    ranges: tuple[CapacityRange, ...]
    regional: bool  # lives in a region (replicated across zones) rather than one zone
    scales_down: bool
    source: str
    as_of: date


FILESTORE_TIERS: tuple[TierLimits, ...] = (
    TierLimits(
        tier=FilestoreTier.BASIC_HDD,
        ranges=(CapacityRange(min_gib=1 * _TIB, max_gib=65_433, step_gib=None),),  # 1 TiB - 63.9 TiB
        regional=False,
        scales_down=False,
        source=_TIERS,
        as_of=_READ,
    ),
    TierLimits(
        tier=FilestoreTier.BASIC_SSD,
        ranges=(CapacityRange(min_gib=2_560, max_gib=65_433, step_gib=None),),  # 2.5 TiB - 63.9 TiB
        regional=False,
        scales_down=False,
        source=_TIERS,
        as_of=_READ,
    ),
    TierLimits(
        tier=FilestoreTier.ZONAL,
        ranges=(
            CapacityRange(min_gib=1 * _TIB, max_gib=9_984, step_gib=256),  # 1 TiB - 9.75 TiB
            CapacityRange(min_gib=10 * _TIB, max_gib=100 * _TIB, step_gib=2_560),  # 10 TiB - 100 TiB
        ),
        regional=False,
        scales_down=True,
        source=f"{_TIERS} ; {_ZONAL}",
        as_of=_READ,
    ),
    TierLimits(
        tier=FilestoreTier.REGIONAL,
        ranges=(
            # The current page lists 100 GiB - 10,239 GiB; its scaling step was not published there.
            CapacityRange(min_gib=100, max_gib=10_239, step_gib=None),
            CapacityRange(min_gib=10 * _TIB, max_gib=100 * _TIB, step_gib=2_560),
        ),
        regional=True,
        scales_down=True,
        source=f"{_TIERS} ; {_REGIONAL}",
        as_of=_READ,
    ),
    TierLimits(
        tier=FilestoreTier.ENTERPRISE,
        ranges=(CapacityRange(min_gib=1 * _TIB, max_gib=10 * _TIB, step_gib=256),),  # 1 TiB - 10 TiB
        regional=True,
        scales_down=True,
        source=_TIERS,
        as_of=_READ,
    ),
)


def tier_limits(tier: FilestoreTier) -> TierLimits:
    return next(t for t in FILESTORE_TIERS if t.tier is tier)


def capacity_problems(tier: FilestoreTier, capacity_gib: int) -> list[Problem]:
    limits = tier_limits(tier)
    if any(r.fits(capacity_gib) for r in limits.ranges):
        return []
    allowed = " or ".join(r.describe() for r in limits.ranges)
    return [Problem("capacity_gib", capacity_gib, f"does not fit the {tier.value} tier: allowed {allowed}")]
