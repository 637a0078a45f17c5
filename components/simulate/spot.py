"""Spot interruptions per machine-hour, from the interruption band the catalog holds for the type.

The catalog (components/catalog/spot_bands.py) holds AWS's Spot Instance Advisor band of each AWS
accelerator type in us-east-1 and us-west-2 (<5%, 5-10%, 10-15%, 15-20% or >20% of machines reclaimed
in the previous month; a dated copy, its source in the module). The replay takes the band's middle
(25% for >20%) spread evenly over a 30-day month: in the pool's region when the replay knows it, else
the highest band of the regions recorded (a pool may land in either). A type the copy lists no band
for (p5.4xlarge, p5e.48xlarge, p6-b200.48xlarge; every GCP type: Google publishes no rate for Spot
VMs) takes DEFAULT_BAND, an assumption of ours (2026-12-02) and said so in the basis.
`--interruptions-per-hour` sets a rate directly.
"""

from __future__ import annotations

from inference_infra.components.catalog.spot_bands import BAND_MIDDLES, interruption_band

HOURS_PER_MONTH = 30 * 24
BANDS = BAND_MIDDLES  # the band -> share of machines reclaimed in a month (its middle)
DEFAULT_BAND = "15-20%"


def interruption_rate(instance_type: str, region: str | None = None) -> tuple[float, str]:
    """(reclaims per machine-hour, where the band comes from) for `instance_type` (module doc)."""
    found = interruption_band(instance_type, region)
    if found is None:
        where = f" in {region}" if region else ""
        return (
            BANDS[DEFAULT_BAND] / HOURS_PER_MONTH,
            f"assumed band {DEFAULT_BAND}: the Spot Instance Advisor copy lists no band for "
            f"{instance_type}{where}",
        )
    return (
        found.monthly_share / HOURS_PER_MONTH,
        f"Spot Instance Advisor band {found.band} for {found.name} in {found.region}"
        f" (copy of {found.as_of.isoformat()}, {found.source})",
    )


def interruptions_per_machine_hour(instance_type: str, region: str | None = None) -> float:
    """Reclaims per machine-hour for `instance_type` (module doc)."""
    return interruption_rate(instance_type, region)[0]
