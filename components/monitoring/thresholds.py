"""Alert thresholds for GPU fleets: typed, validated, each with its source.

The defaults are the seed documents' figures (the "Key GPU Metrics" table:
utilization below 30% is waste and above 95% is saturation, framebuffer more
than 90% used risks OOM kills, 83 °C is where thermal throttling starts) plus
this project's choices for how long a condition must last before it alerts.
`threshold_sources()` says which is which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from inference_infra.components.errors import Problem, did_you_mean, raise_if_invalid

_SEED = "seed doc 004, 'Key GPU Metrics' table"
_CHOICE = "inference-infra default"
_MAX_MINUTES = 24 * 60


def _threshold(default: float, source: str) -> Any:
    return field(default=default, metadata={"source": source})


@dataclass(frozen=True, kw_only=True)
class Thresholds:
    """When each GPU alert fires. Percentages are 0-100; windows are whole minutes."""

    idle_utilization_percent: float = _threshold(30.0, f"{_SEED}: utilization < 30% is waste")
    idle_minutes: int = _threshold(30, f"{_CHOICE}; the seed's idle-shutdown function also waits 30 minutes")
    saturated_utilization_percent: float = _threshold(95.0, f"{_SEED}: utilization > 95% is saturated")
    saturated_minutes: int = _threshold(15, f"{_CHOICE}: saturation that lasts, not a burst")
    memory_used_percent: float = _threshold(90.0, f"{_SEED}: memory used > 90% of total risks OOM kills")
    memory_minutes: int = _threshold(5, _CHOICE)
    temperature_celsius: float = _threshold(83.0, f"{_SEED}: > 83 C, thermal throttling starts")
    temperature_minutes: int = _threshold(5, _CHOICE)
    exporter_down_minutes: int = _threshold(5, f"{_CHOICE}: several missed scrapes, not one")
    # Utilization is averaged over this window before it is compared, so a GPU
    # serving bursty traffic is judged on its mean rather than on one scrape.
    smoothing_minutes: int = _threshold(5, f"{_CHOICE}: utilization is averaged over this window")

    def with_overrides(self, overrides: Mapping[str, Any]) -> Thresholds:
        """A copy with some fields replaced (names in snake_case or camelCase); unknown names raise."""

        snake = [f.name for f in fields(self)]
        known = {name: name for name in snake} | {_camel(name): name for name in snake}
        problems = []
        for key in overrides:
            if key not in known:
                choices = snake if "_" in key else [_camel(n) for n in snake]
                problems.append(
                    Problem("threshold", key, f"is not a threshold name{did_you_mean(key, choices)}")
                )
        raise_if_invalid("thresholds", problems)
        return replace(self, **{known[k]: v for k, v in overrides.items()})


def threshold_sources() -> dict[str, str]:
    """Where each default comes from: a seed document's figure or this project's choice."""
    return {f.name: f.metadata["source"] for f in fields(Thresholds)}


def threshold_names() -> list[str]:
    return [f.name for f in fields(Thresholds)]


def validate_thresholds(t: Thresholds, where: str = "thresholds") -> list[Problem]:
    """Every problem with the thresholds (empty when they make sense together)."""
    problems: list[Problem] = []
    for name in ("idle_utilization_percent", "saturated_utilization_percent", "memory_used_percent"):
        value = getattr(t, name)
        if not _is_number(value) or not 0 < value < 100:
            problems.append(Problem(f"{where}.{name}", value, "must be a percentage above 0 and below 100"))
    if (
        _is_number(t.idle_utilization_percent)
        and _is_number(t.saturated_utilization_percent)
        and t.idle_utilization_percent >= t.saturated_utilization_percent
    ):
        problems.append(
            Problem(
                f"{where}.idle_utilization_percent",
                t.idle_utilization_percent,
                f"must be below saturated_utilization_percent ({t.saturated_utilization_percent})",
            )
        )
    if not _is_number(t.temperature_celsius) or not 30 <= t.temperature_celsius <= 120:
        problems.append(
            Problem(f"{where}.temperature_celsius", t.temperature_celsius, "must be between 30 and 120 (°C)")
        )
    for f in fields(t):
        if f.name.endswith("_minutes"):
            value = getattr(t, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_MINUTES:
                problems.append(
                    Problem(
                        f"{where}.{f.name}", value, f"must be a whole number of minutes, 1 to {_MAX_MINUTES}"
                    )
                )
    return problems


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
