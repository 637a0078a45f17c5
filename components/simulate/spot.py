"""Spot interruptions per machine-hour, from the interruption bands AWS publishes.

AWS's Spot Instance Advisor (https://aws.amazon.com/ec2/spot/instance-advisor/) gives each instance
type and region a "frequency of interruption" band from the previous month's reclaims: <5%, 5-10%,
10-15%, 15-20% or >20% (the bands as described in https://sparecores.com/article/spot-instance-terminate-rates-per-az,
2024-04-16, read 2026-12-02; the advisor page itself is not stored here). The replay takes the
band's middle (25% for >20%) spread evenly over a 30-day month. The accelerator catalog has no
per-type band yet (components/catalog/spot.py holds prices only), so every type takes DEFAULT_BAND:
an assumption of ours (2026-12-02), one of the advisor's higher bands, because GPU Spot capacity is
scarce; it is not read from the advisor for any type. GCP publishes no rate for Spot VMs; the same
band stands in. `--interruptions-per-hour` sets a rate directly.
"""

from __future__ import annotations

from types import MappingProxyType

HOURS_PER_MONTH = 30 * 24
BANDS = MappingProxyType(
    {"<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25}
)  # share of machines reclaimed in a month, the band's middle
DEFAULT_BAND = "15-20%"
BAND_BY_TYPE: MappingProxyType[str, str] = MappingProxyType({})  # filled when the catalog carries bands


def interruptions_per_machine_hour(instance_type: str) -> float:
    """Reclaims per machine-hour for `instance_type` (module doc)."""
    band = BAND_BY_TYPE.get(instance_type, DEFAULT_BAND)
    return BANDS[band] / HOURS_PER_MONTH
