"""Spot interruption bands by instance type and region: AWS's Spot Instance Advisor, a dated copy.

The advisor (https://aws.amazon.com/ec2/spot/instance-advisor/) gives each instance type, region and
operating system a "frequency of interruption" band from the reclaims of the previous month, one of
<5%, 5-10%, 10-15%, 15-20% and >20%; its page reads the public JSON
https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json (`ranges`: the bands by index;
`spot_advisor[region]["Linux"][type]`: `r` the band's index, `s` the saving over on-demand in percent).

`data/spot_bands.csv` holds the Linux band of every AWS type of the catalog in us-east-1 and us-west-2
(the regions of the spot price snapshot), taken from the copy of that JSON that alexei-led/spotinfo
vendors (internal/spot/data/spot-advisor-data.json at commit 5eedf20a99614443af215f4aaf09bd10805cac72,
committed 2025-06-28, unchanged at the repository's head 05e93313 of 2025-07-28; 922,078 bytes, SHA-256
06d25100fe665ce321f205bd210aceb00184034be46b9b204b9efa7d1bda481b; read 2026-12-02). The copy itself
is not committed (only the rows kept); `bands_from_advisor` rebuilds them from any copy of the JSON.
The copy lists no band for p5.4xlarge, p5e.48xlarge or p6-b200.48xlarge: those have none here (the
replay then assumes one and says so). GCP publishes no interruption rate for Spot VMs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from types import MappingProxyType
from typing import Any

from inference_infra.components.catalog.tables import day, rows

BANDS_FILE = "spot_bands.csv"
# The advisor's bands, lowest first, and the share of machines reclaimed in a month that each one's
# middle stands for (25% for ">20%": an assumption of ours, 2026-12-02; the advisor gives no upper end).
BAND_MIDDLES = MappingProxyType(
    {"<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25}
)
BANDS = tuple(BAND_MIDDLES)


@dataclass(frozen=True, kw_only=True)
class SpotBand:
    name: str  # instance type
    region: str
    band: str  # one of BANDS
    savings_percent: int  # the advisor's saving over on-demand (its own figure, not our price snapshot)
    source: str
    as_of: date

    @property
    def monthly_share(self) -> float:
        """The share of machines reclaimed in a month the band's middle stands for."""
        return BAND_MIDDLES[self.band]


def _band(cells: Mapping[str, str]) -> SpotBand:
    return SpotBand(
        name=cells["name"],
        region=cells["region"],
        band=cells["band"],
        savings_percent=int(cells["savings_percent"]),
        source=cells["source"],
        as_of=day(cells["as_of"]),
    )


@cache
def spot_bands() -> tuple[SpotBand, ...]:
    """Every row of data/spot_bands.csv."""
    return tuple(_band(cells) for cells in rows(BANDS_FILE))


@cache
def _by_key() -> dict[tuple[str, str], SpotBand]:
    return {(b.name, b.region): b for b in spot_bands()}


def interruption_band(name: str, region: str | None = None) -> SpotBand | None:
    """The type's band in `region`; without a region, the highest band of the regions recorded (a pool
    may land in either); None when the copy lists no band for the type (or for it in that region)."""
    if region is not None:
        return _by_key().get((name, region))
    found = [b for b in spot_bands() if b.name == name]
    return max(found, key=lambda b: BANDS.index(b.band)) if found else None


def bands_from_advisor(
    document: Mapping[str, Any],
    names: Iterable[str],
    regions: Iterable[str],
    *,
    source: str,
    as_of: str,
) -> list[dict[str, str]]:
    """The CSV rows of `names` x `regions` from a copy of the advisor's JSON (Linux; missing types left
    out). Raises ValueError when the copy's band labels are not the five this module knows."""
    labels = {r["index"]: r["label"] for r in document["ranges"]}
    if set(labels.values()) != set(BANDS):
        raise ValueError(f"the advisor's ranges {sorted(labels.values())} are not the bands {list(BANDS)}")
    out: list[dict[str, str]] = []
    wanted = list(regions)
    for name in names:
        for region in wanted:
            entry = document["spot_advisor"].get(region, {}).get("Linux", {}).get(name)
            if entry is None:
                continue
            out.append(
                {
                    "name": name,
                    "region": region,
                    "band": labels[entry["r"]],
                    "savings_percent": str(entry["s"]),
                    "source": source,
                    "as_of": as_of,
                }
            )
    return out


__all__ = ["BANDS", "BAND_MIDDLES", "SpotBand", "bands_from_advisor", "interruption_band", "spot_bands"]
