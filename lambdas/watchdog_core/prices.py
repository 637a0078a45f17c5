"""Hourly prices for the "estimated hourly saving" figure.

The deploying component renders a `prices.json` into each function's package from the project's
accelerator catalog (the archive cannot import the catalog). Without the file, savings are reported
as 0 and the types without a price are named in the run's log.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

FORMAT_VERSION = 1


class Priced(Protocol):
    @property
    def type_name(self) -> str: ...

    @property
    def is_spot(self) -> bool: ...

    @property
    def on_reserved_capacity(self) -> bool: ...


@dataclass(frozen=True)
class PriceTable:
    region: str | None = None
    basis: str = "no price table"
    on_demand: Mapping[str, float] = field(default_factory=dict)
    spot: Mapping[str, float] = field(default_factory=dict)

    def hourly_usd(self, machine: Priced) -> float | None:
        """What the machine costs per hour while running; 0 when stopping it saves nothing."""
        if machine.on_reserved_capacity:
            return 0.0  # the reservation or Capacity Block is billed whether it runs or not
        table = self.spot if machine.is_spot else self.on_demand
        return table.get(machine.type_name)


def parse_prices(document: Mapping) -> PriceTable:
    if document.get("version") != FORMAT_VERSION:
        raise ValueError(f"prices.json has version {document.get('version')!r}; expected {FORMAT_VERSION}")
    types = document.get("types", {})
    return PriceTable(
        region=document.get("region"),
        basis=document.get("basis", ""),
        on_demand={name: float(p["on_demand"]) for name, p in types.items()},
        spot={name: float(p["spot"]) for name, p in types.items() if p.get("spot") is not None},
    )


def load_prices(path: Path) -> PriceTable:
    if not path.exists():
        return PriceTable()
    return parse_prices(json.loads(path.read_text()))
