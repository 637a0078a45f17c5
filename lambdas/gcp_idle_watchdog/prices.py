"""Hourly prices for the "estimated hourly saving" figure: the `prices.json` the deploying component
renders next to this module from the project's catalog (GCE machine types and TPU accelerator
types), read with the shared core's price table (`lambdas/watchdog_core/prices.py`)."""

from __future__ import annotations

from pathlib import Path

from ..watchdog_core import prices as core
from ..watchdog_core.prices import FORMAT_VERSION, PriceTable, parse_prices

__all__ = ["FORMAT_VERSION", "PRICES_FILE", "PriceTable", "load_prices", "parse_prices"]

PRICES_FILE = Path(__file__).with_name("prices.json")


def load_prices(path: Path = PRICES_FILE) -> PriceTable:
    return core.load_prices(path)
