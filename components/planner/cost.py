"""From an hourly price and a token rate to USD per million tokens, and the ranking."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inference_infra.components.catalog import Cloud, InstanceType, Price, PriceModel, hourly_price
from inference_infra.components.planner.fit import Fit
from inference_infra.components.planner.throughput import Throughput


def usd_per_million_tokens(hourly_usd: float, tokens_per_s: float) -> float:
    """hourly_usd / (tokens_per_s x 3600) x 1e6."""
    if tokens_per_s <= 0:
        return float("inf")
    return hourly_usd / (tokens_per_s * 3600) * 1e6


@dataclass(frozen=True, kw_only=True)
class Option:
    """One machine that fits, what it would do and what it costs."""

    fit: Fit
    throughput: Throughput
    price: Price
    purchase: PriceModel
    spot_share: float | None = None  # a mixed fleet: the share of its machines at the spot rate

    @property
    def cloud(self) -> Cloud:
        return self.fit.hardware.instance.cloud

    @property
    def instance_type(self) -> str:
        return self.fit.hardware.instance.name

    @property
    def hourly_usd(self) -> float:
        return self.price.hourly_usd

    @property
    def est_tokens_per_s(self) -> float:
        return self.throughput.tokens_per_s

    @property
    def usd_per_million_tokens(self) -> float:
        return usd_per_million_tokens(self.hourly_usd, self.est_tokens_per_s)

    @property
    def memory_utilization(self) -> float:
        return self.fit.memory_utilization

    def explanation(self) -> str:
        return (
            f"{self.instance_type} ({self.fit.hardware.describe()}): {self.fit.describe()}. "
            f"{self.throughput.describe()}. ${self.hourly_usd:,.2f}/h ({self.price.basis}) at"
            f" {self.est_tokens_per_s:,.0f} tokens/s = ${self.usd_per_million_tokens:,.3f}"
            " per million generated tokens."
        )

    def as_json(self) -> dict[str, Any]:
        """The option as `inference-infra size --json` prints it (docs/reference.md)."""
        hw = self.fit.hardware
        hosts = (
            {"hosts_per_replica": self.fit.hosts, "pipeline_parallel": self.fit.hosts}
            if self.fit.hosts > 1
            else {}
        )
        return {
            **hosts,
            "cloud": self.cloud.value,
            "instance_type": self.instance_type,
            "accelerator": hw.device.key,
            "accelerators": hw.instance.accelerator_count,
            "tensor_parallel": self.fit.tensor_parallel,
            "hourly_usd": round(self.hourly_usd, 4),
            "est_tokens_per_s": round(self.est_tokens_per_s, 1),
            "usd_per_million_tokens": round(self.usd_per_million_tokens, 4),
            "memory_utilization": round(self.memory_utilization, 3),
        }


def blended_price(item: InstanceType, region: str | None, spot_share: float) -> Price:
    """One machine's hourly price in a fleet with `spot_share` of its machines on spot (spot and
    preemptible) and the rest at the on-demand rate (on-demand, reserved and Capacity Block
    machines, as the plan's cost table prices them): the weighted mean, its basis naming both."""
    spot = hourly_price(item, region=region, model=PriceModel.SPOT)
    on_demand = hourly_price(item, region=region, model=PriceModel.ON_DEMAND)
    hourly = spot_share * spot.hourly_usd + (1 - spot_share) * on_demand.hourly_usd
    basis = (
        f"blended by the fleet's capacity: {spot_share:.0%} at {spot.basis} +"
        f" {1 - spot_share:.0%} at {on_demand.basis}"
    )
    return Price(round(hourly, 6), basis)


def rank(options: Iterable[Option]) -> list[Option]:
    """Cheapest per million tokens first; ties go to the cheaper hour, then the name."""
    return sorted(options, key=lambda o: (o.usd_per_million_tokens, o.hourly_usd, o.cloud, o.instance_type))
