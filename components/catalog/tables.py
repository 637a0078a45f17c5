"""Reading the catalog's data files (``data/``): CSV and JSON rows, each with ``source`` and ``as_of``.

Each file is read once, on first use, and cached. ``data/generated/`` holds the rows ``make catalog``
rebuilds from the committed SkyPilot copies (``build.py``); every other file is kept by hand. The
catalog README says which rows live where and how they are rebuilt.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


@cache
def rows(name: str) -> tuple[Mapping[str, str], ...]:
    """The rows of ``data/<name>`` (a CSV with a header), in file order."""
    with (DATA / name).open(newline="") as f:
        return tuple(csv.DictReader(f))


@cache
def document(name: str) -> Any:
    """The parsed ``data/<name>`` JSON file."""
    return json.loads((DATA / name).read_text())


def day(text: str) -> date:
    return date.fromisoformat(text)


def flag(text: str) -> bool:
    """A CSV boolean: "true" or empty."""
    if text not in ("", "true"):
        raise ValueError(f"expected 'true' or an empty cell, got {text!r}")
    return text == "true"


def by_region(items: Iterable[Mapping[str, str]], column: str = "hourly_usd") -> dict[str, float]:
    """Region -> figure, in file order (the first row is the reference region)."""
    return {r["region"]: float(r[column]) for r in items}


def joined(sources: Iterable[str]) -> str:
    """Several rows' ``source`` cells as one: each URL once, in order of first appearance."""
    parts = (p.strip() for s in sources for p in s.split(" ; "))
    return " ; ".join(dict.fromkeys(p for p in parts if p))
