"""The GCP watchdog's settings, read from the function's environment.

The same contract as the AWS watchdog (`lambdas/idle_gpu_watchdog/settings.py`): the same
variable names where a variable means the same thing, the same defaults where they apply, every
variable checked at once, and a bad value fails the run with a message naming every bad variable,
its value and what is allowed (Cloud Scheduler then records a failed attempt). An empty string
counts as unset.

What differs, and why: GCP has labels, not tags, so TAG_KEY/TAG_VALUE name a label (lowercase:
`auto-shutdown=true`); a Cloud Monitoring metric type is fully qualified, so there is no
METRIC_NAMESPACE; notices go to a Pub/Sub topic (PUBSUB_TOPIC) instead of SNS; TPU VMs read their
own metric (TPU_METRIC_NAME) as Inferentia instances do on AWS.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})
# Compute Engine and Cloud TPU label keys and values (lowercase letters, digits, '-' and '_').
LABEL_KEY_RE = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
LABEL_VALUE_RE = re.compile(r"^[a-z0-9_-]{1,63}$")
_METRIC_TYPE_RE = re.compile(r"^[a-z0-9.-]+\.[a-z]+/[A-Za-z0-9_./-]+$")
_RESOURCE_TYPE_RE = re.compile(r"^[A-Za-z0-9_./-]{1,128}$")
_PROJECT_RE = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_LOCATION_RE = re.compile(r"^(-|[a-z]+-[a-z]+[0-9]+-[a-z])$")
_TOPIC_RE = re.compile(r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/topics/[A-Za-z][A-Za-z0-9._~%+-]{2,254}$")

GPU_METRIC = "agent.googleapis.com/gpu/utilization"  # the Ops Agent's NVML metric, percent per GPU
TPU_METRIC = "tpu.googleapis.com/accelerator/duty_cycle"  # the TPU runtime's, percent per chip
TPU_RESOURCE_TYPE = "tpu_worker"


class SettingsError(ValueError):
    """One or more environment variables are invalid."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    # The contract's variables (docs/reference.md), meaning what they mean on AWS
    tag_key: str = "auto-shutdown"
    tag_value: str = "true"
    idle_minutes: int = 30
    util_threshold_percent: float = 5.0
    grace_minutes: int = 60
    metric_name: str = GPU_METRIC
    dry_run: bool = False
    pubsub_topic: str | None = None
    # Refinements, as on AWS
    tpu_metric_name: str = TPU_METRIC
    tpu_resource_type: str = TPU_RESOURCE_TYPE
    metric_period_seconds: int = 300
    exclude_tag_key: str = "auto-shutdown-exclude-until"
    stop_reserved_capacity: bool = False
    # GCP only
    projects: tuple[str, ...] = ()
    tpu_locations: tuple[str, ...] = ("-",)
    discard_local_ssd: bool = True

    @property
    def window_seconds(self) -> int:
        return self.idle_minutes * 60

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Settings from environment variables; SettingsError lists every bad one."""
        reader = _Reader(env)
        values: dict[str, Any] = {
            "tag_key": reader.pattern("TAG_KEY", cls.tag_key, LABEL_KEY_RE, "a label key"),
            "tag_value": reader.pattern("TAG_VALUE", cls.tag_value, LABEL_VALUE_RE, "a label value"),
            "idle_minutes": reader.integer("IDLE_MINUTES", cls.idle_minutes, minimum=1),
            "util_threshold_percent": reader.percent("UTIL_THRESHOLD_PERCENT", cls.util_threshold_percent),
            "grace_minutes": reader.integer("GRACE_MINUTES", cls.grace_minutes, minimum=0),
            "metric_name": reader.pattern("METRIC_NAME", cls.metric_name, _METRIC_TYPE_RE, "a metric type"),
            "dry_run": reader.boolean("DRY_RUN", cls.dry_run),
            "pubsub_topic": reader.optional("PUBSUB_TOPIC", _TOPIC_RE, "projects/<project>/topics/<topic>"),
            "tpu_metric_name": reader.pattern(
                "TPU_METRIC_NAME", cls.tpu_metric_name, _METRIC_TYPE_RE, "a metric type"
            ),
            "tpu_resource_type": reader.pattern(
                "TPU_RESOURCE_TYPE", cls.tpu_resource_type, _RESOURCE_TYPE_RE, "a monitored resource type"
            ),
            "exclude_tag_key": reader.pattern(
                "EXCLUDE_TAG_KEY", cls.exclude_tag_key, LABEL_KEY_RE, "a label key"
            ),
            "stop_reserved_capacity": reader.boolean("STOP_RESERVED_CAPACITY", cls.stop_reserved_capacity),
            "projects": reader.items(
                "PROJECTS", (), _PROJECT_RE, "comma-separated project ids", required=True
            ),
            "tpu_locations": reader.items(
                "TPU_LOCATIONS", cls.tpu_locations, _LOCATION_RE, "comma-separated zones, or '-' for all"
            ),
            "discard_local_ssd": reader.boolean("DISCARD_LOCAL_SSD", cls.discard_local_ssd),
        }
        default_period = default_period_seconds(values["idle_minutes"] or cls.idle_minutes)
        values["metric_period_seconds"] = reader.integer("METRIC_PERIOD_SECONDS", default_period, minimum=60)
        reader.check_window(values["idle_minutes"], values["metric_period_seconds"])
        reader.raise_if_any()
        return cls(**values)

    def as_env(self) -> dict[str, str]:
        """The environment that reproduces these settings (what a deployment sets)."""
        env = {
            "TAG_KEY": self.tag_key,
            "TAG_VALUE": self.tag_value,
            "IDLE_MINUTES": str(self.idle_minutes),
            "UTIL_THRESHOLD_PERCENT": _number(self.util_threshold_percent),
            "GRACE_MINUTES": str(self.grace_minutes),
            "METRIC_NAME": self.metric_name,
            "DRY_RUN": "true" if self.dry_run else "false",
            "TPU_METRIC_NAME": self.tpu_metric_name,
            "TPU_RESOURCE_TYPE": self.tpu_resource_type,
            "METRIC_PERIOD_SECONDS": str(self.metric_period_seconds),
            "EXCLUDE_TAG_KEY": self.exclude_tag_key,
            "STOP_RESERVED_CAPACITY": "true" if self.stop_reserved_capacity else "false",
            "PROJECTS": ",".join(self.projects),
            "TPU_LOCATIONS": ",".join(self.tpu_locations),
            "DISCARD_LOCAL_SSD": "true" if self.discard_local_ssd else "false",
        }
        if self.pubsub_topic:
            env["PUBSUB_TOPIC"] = self.pubsub_topic
        return env


def default_period_seconds(idle_minutes: int) -> int:
    """5-minute buckets when they tile the window (robust to a missed sample), else 1-minute."""
    return 300 if idle_minutes % 5 == 0 else 60


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class _Reader:
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._problems: list[str] = []

    def problem(self, name: str, allowed: str) -> None:
        self._problems.append(f"{name}={self._env.get(name, '')!r} {allowed}")

    def raise_if_any(self) -> None:
        if self._problems:
            raise SettingsError("invalid watchdog environment: " + "; ".join(self._problems) + ".")

    def _raw(self, name: str) -> str | None:
        value = self._env.get(name)
        return value.strip() if value is not None and value.strip() else None

    def pattern(self, name: str, default: str, regex: re.Pattern[str], what: str) -> str:
        raw = self._raw(name) or default
        if not regex.match(raw):
            self.problem(name, f"must be {what}")
        return raw

    def optional(self, name: str, regex: re.Pattern[str], what: str) -> str | None:
        raw = self._raw(name)
        if raw is not None and not regex.match(raw):
            self.problem(name, f"must be {what}")
        return raw

    def items(
        self,
        name: str,
        default: tuple[str, ...],
        regex: re.Pattern[str],
        what: str,
        *,
        required: bool = False,
    ) -> tuple[str, ...]:
        raw = self._raw(name)
        if raw is None:
            if required:
                self.problem(name, f"must be set: {what}")
            return default
        items = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
        if not items or not all(regex.match(i) for i in items):
            self.problem(name, f"must be {what}")
            return default
        return items

    def integer(self, name: str, default: int, *, minimum: int) -> int:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            self.problem(name, f"must be a whole number >= {minimum}")
            return 0
        return value

    def percent(self, name: str, default: float) -> float:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0 < value <= 100:
            self.problem(name, "must be a number above 0 and at most 100 (percent)")
            return default
        return value

    def boolean(self, name: str, default: bool) -> bool:
        raw = self._raw(name)
        if raw is None:
            return default
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        self.problem(name, "must be true or false")
        return default

    def check_window(self, idle_minutes: int, period: int) -> None:
        if not idle_minutes or not period:
            return  # already reported
        if period % 60:
            self.problem("METRIC_PERIOD_SECONDS", "must be a multiple of 60")
        elif (idle_minutes * 60) % period:
            self.problem(
                "METRIC_PERIOD_SECONDS",
                f"must divide the idle window (IDLE_MINUTES={idle_minutes} is {idle_minutes * 60} s)",
            )
