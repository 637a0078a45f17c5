"""Alert thresholds for GPU fleets: typed, validated, each with its source.

Every default is this project's choice, made for inference fleets where an
idle accelerator hour is the costliest waste; each says why, and where a public
document defines what the figure is measured against (what NVML's utilization
means, where a GPU's own thermal slowdown point is reported, how much memory
vLLM claims up front), the source names it with the date it was read.
`threshold_sources()` returns them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from inference_infra.components.errors import Problem, did_you_mean, raise_if_invalid

_DEFAULT = "inference-infra default"
_MAX_MINUTES = 24 * 60

# Public documents the defaults are measured against (read 2026-11-25).
NVML_UTILIZATION = "https://docs.nvidia.com/deploy/nvml-api/structnvmlAccountingStats__t.html"
NVML_TEMPERATURE = (
    "https://nvidia.github.io/cuda-python/cuda-core/latest/generated/cuda.core.system.Temperature.html"
)
VLLM_CACHE_CONFIG = "https://docs.vllm.ai/en/stable/api/vllm/config/cache/"
_READ = "read 2026-11-25"


def _threshold(default: float, source: str) -> Any:
    return field(default=default, metadata={"source": source})


@dataclass(frozen=True, kw_only=True)
class Thresholds:
    """When each GPU alert fires. Percentages are 0-100; windows are whole minutes."""

    idle_utilization_percent: float = _threshold(
        30.0,
        f"{_DEFAULT}: a GPU that runs kernels less than 30% of the time is paid for mostly while idle "
        f"(utilization is the share of time a kernel ran: NVML, {NVML_UTILIZATION}, {_READ})",
    )
    idle_minutes: int = _threshold(30, f"{_DEFAULT}: the idle watchdog's own window (IDLE_MINUTES 30)")
    saturated_utilization_percent: float = _threshold(
        95.0, f"{_DEFAULT}: kernels running more than 95% of the time leave no room for a burst"
    )
    saturated_minutes: int = _threshold(15, f"{_DEFAULT}: saturation that lasts, not a burst")
    memory_used_percent: float = _threshold(
        90.0,
        f"{_DEFAULT}: little room left for a longer context before an out-of-memory error. vLLM claims "
        f"a fixed share of device memory when it starts (gpu_memory_utilization: {VLLM_CACHE_CONFIG}, "
        f"{_READ}), 0.9 on this project's fleets, so raise this to 95 for vLLM fleets",
    )
    memory_minutes: int = _threshold(5, f"{_DEFAULT}: several scrapes, not one")
    temperature_celsius: float = _threshold(
        83.0,
        f"{_DEFAULT}; the temperature at which a GPU slows itself down differs by model and NVML reports "
        f"it per GPU ({NVML_TEMPERATURE}, {_READ}): keep this below your GPUs' value",
    )
    temperature_minutes: int = _threshold(5, f"{_DEFAULT}: several scrapes, not one")
    exporter_down_minutes: int = _threshold(5, f"{_DEFAULT}: several missed scrapes, not one")
    # Utilization is averaged over this window before it is compared, so a GPU
    # serving bursty traffic is judged on its mean rather than on one scrape.
    smoothing_minutes: int = _threshold(5, f"{_DEFAULT}: utilization is averaged over this window")

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
    """Why each default is what it is, with the public documents it is measured against."""
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
