"""Spot prices by instance type and region: a dated snapshot, replacing a flat discount per cloud.

Spot prices differ by type, region and availability zone, and move by the
hour. The snapshot records, per type and region, the spot price of every
availability zone the source listed; a plan prices spot capacity at the
**highest** of them (a fleet may land in any zone, and a budget should not be
surprised), and its basis names the row's date.

A type or region the snapshot has no figure for is **not guessed**: the plan
prices it at on-demand (the most spot can cost) and its basis says that the
snapshot has no data.

The rows live in ``data/``, each with its ``source`` and ``as_of``:

* ``generated/spot.csv`` (rebuilt by ``make catalog`` from the committed copies
  of SkyPilot's catalogs, ``build.py``): every accelerator type of the catalog
  in every region of the copies that lists a spot price for it. AWS (us-east-1,
  us-west-2): one figure per ordinary availability zone, the zone ids in
  ``zones`` (Local Zones such as use1-atl2-az1 left out). GCP (us-central1,
  us-central2, us-east1, us-east4, us-east5): one figure per region (the zones
  agree, and Google prices spot per region); a GPU machine is its VM row plus
  the GPU row of its GPU count, as Google bills them, and ``notes`` shows the
  sum; N1 VMs and T4 guest GPUs on their own rows; TPU slices from their
  ``tpu-<slice>`` rows. The source lists no spot price for p5.4xlarge (either
  region) or p5e.48xlarge in us-east-1: those stay on-demand.
* ``spot.csv`` (kept by hand): CPU machines read on 2026-11-24 from the same
  SkyPilot files (AWS: the common sizes of c5, c6i, c7g, c7i, m5, m5a, m6g,
  m6i, m7i, r5, t3, t3a; GCE: e2, n2, n2d shapes in us-central1, us-east1,
  us-east4; zone ids not recorded), and TPU v5e in us-central1 from Google's
  TPU pricing page ($0.60 per chip-hour, read 2026-11-21), kept over SkyPilot's
  $0.24493. The build does not generate a row this file has.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cache

from inference_infra.components.catalog.tables import day, rows
from inference_infra.components.catalog.types import Cloud

SPOT_FILES = ("spot.csv", "generated/spot.csv")


@dataclass(frozen=True, kw_only=True)
class SpotRow:
    cloud: Cloud
    name: str  # instance / machine type
    region: str
    zone_usd: tuple[float, ...]  # spot USD per hour in each zone the source listed
    source: str
    as_of: date
    notes: str = ""  # how the figure was put together, when it is not one source row
    zones: tuple[str, ...] = ()  # the zone ids of zone_usd, where recorded (AWS: use1-az1, ...)

    @property
    def highest_usd(self) -> float:
        return max(self.zone_usd)

    def zone_usd_of(self, zone_id: str) -> float | None:
        """The figure of one zone (by AWS zone id), or None when the row does not record that zone."""
        if zone_id in self.zones:
            return self.zone_usd[self.zones.index(zone_id)]
        return None


def _row(cells) -> SpotRow:
    return SpotRow(
        cloud=Cloud(cells["cloud"]),
        name=cells["name"],
        region=cells["region"],
        zone_usd=tuple(float(v) for v in cells["zone_usd"].split()),
        source=cells["source"],
        as_of=day(cells["as_of"]),
        notes=cells["notes"],
        zones=tuple(cells["zones"].split()),
    )


SPOT_SNAPSHOT: tuple[SpotRow, ...] = tuple(_row(cells) for name in SPOT_FILES for cells in rows(name))
SNAPSHOT_DATE: date = max(r.as_of for r in SPOT_SNAPSHOT)  # the latest read; each row carries its own


@cache
def _rows() -> dict[tuple[Cloud, str, str], SpotRow]:
    return {(r.cloud, r.name, r.region): r for r in SPOT_SNAPSHOT}


def spot_row(cloud: Cloud | str, name: str, region: str | None) -> SpotRow | None:
    """The snapshot's row for a type in a region, or None when the snapshot has no data for it."""
    if region is None:
        return None
    return _rows().get((Cloud(cloud), name, region))
