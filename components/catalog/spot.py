"""Spot prices by instance type and region: a dated snapshot, replacing a flat discount per cloud.

Spot prices differ by type, region and availability zone, and move by the
hour. The snapshot records, per type and region, the spot price of every
availability zone the source listed on the snapshot date; a plan prices spot
capacity at the **highest** of them (a fleet may land in any zone, and a budget
should not be surprised), and its basis names the snapshot date.

A type or region the snapshot has no figure for is **not guessed**: the plan
prices it at on-demand (the most spot can cost) and its basis says that the
snapshot has no data. Extending the snapshot means adding rows read from one
source on one date; a new snapshot date replaces ``SNAPSHOT_DATE``.

Source: the AWS spot price history as published in SkyPilot's catalog
(``catalogs/v8/aws/vms.csv``, column ``SpotPrice`` per availability-zone id),
commit 00148f2af3672e2229b4f7bf8157d5a3f36e3c35, read on the snapshot date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cache

from inference_infra.components.catalog.types import Cloud

SNAPSHOT_DATE = date(2026, 11, 22)
_SKYPILOT_AWS = (
    "https://github.com/skypilot-org/skypilot-catalog/blob/00148f2af3672e2229b4f7bf8157d5a3f36e3c35/"
    "catalogs/v8/aws/vms.csv"
)


@dataclass(frozen=True, kw_only=True)
class SpotRow:
    cloud: Cloud
    name: str  # instance / machine type
    region: str
    zone_usd: tuple[float, ...]  # spot USD per hour in each zone the source listed
    source: str
    as_of: date

    @property
    def highest_usd(self) -> float:
        return max(self.zone_usd)


def _aws(name: str, region: str, *zone_usd: float) -> SpotRow:
    return SpotRow(
        cloud=Cloud.AWS,
        name=name,
        region=region,
        zone_usd=zone_usd,
        source=_SKYPILOT_AWS,
        as_of=SNAPSHOT_DATE,
    )


SPOT_SNAPSHOT: tuple[SpotRow, ...] = (
    _aws("g5.xlarge", "us-east-1", 0.4507, 0.4246, 0.4360, 0.4259, 0.4364),
    _aws("g5.xlarge", "us-west-2", 0.4857, 0.5134, 0.4829),
    _aws("g5.2xlarge", "us-east-1", 0.5218, 0.5933, 0.5036, 0.4738, 0.4985),
    _aws("g5.2xlarge", "us-west-2", 0.3727, 0.4155, 0.4119),
    _aws("g5.8xlarge", "us-east-1", 0.9401, 0.9643, 0.8391, 0.9641, 0.9228),
    _aws("g5.8xlarge", "us-west-2", 0.9241, 0.9322, 0.9206),
    _aws("g5.48xlarge", "us-east-1", 4.5408, 7.0077, 6.8918, 5.8671, 5.6899),
    _aws("g5.48xlarge", "us-west-2", 7.8564, 8.0904, 7.7435),
    _aws("g6.xlarge", "us-east-1", 0.4011, 0.3653, 0.3490, 0.3988),
    _aws("g6.xlarge", "us-west-2", 0.4250, 0.4537, 0.3900, 0.4541),
    _aws("g6e.xlarge", "us-east-1", 0.9154, 0.9599, 1.0492),
    _aws("g6e.xlarge", "us-west-2", 0.9228, 0.7201, 0.6538, 1.5145),
    _aws("g6e.12xlarge", "us-east-1", 3.7887, 5.6426, 4.9101, 6.0150),
    _aws("g6e.12xlarge", "us-west-2", 6.4585, 3.7322, 4.2304, 3.1053),
)


# Google prices TPU Spot per chip-hour; v5e in us-central1 at $0.60 (the TPU pricing page, read
# 2026-11-21 for the catalog's TPU rows). One figure per region, no zones.
_TPU_PRICES = "https://cloud.google.com/tpu/pricing"


def _tpu(name: str, chips: int, region: str, per_chip: float) -> SpotRow:
    return SpotRow(
        cloud=Cloud.GCP,
        name=name,
        region=region,
        zone_usd=(round(per_chip * chips, 6),),
        source=_TPU_PRICES,
        as_of=date(2026, 11, 21),
    )


SPOT_SNAPSHOT += tuple(
    _tpu(f"v5litepod-{n}", n, "us-central1", 0.60) for n in (1, 4, 8, 16, 32, 64, 128, 256)
)


@cache
def _rows() -> dict[tuple[Cloud, str, str], SpotRow]:
    return {(r.cloud, r.name, r.region): r for r in SPOT_SNAPSHOT}


def spot_row(cloud: Cloud | str, name: str, region: str | None) -> SpotRow | None:
    """The snapshot's row for a type in a region, or None when the snapshot has no data for it."""
    if region is None:
        return None
    return _rows().get((Cloud(cloud), name, region))
