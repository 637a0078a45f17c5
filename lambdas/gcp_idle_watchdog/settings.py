"""The GCP watchdog's settings, read from the function's environment.

The same contract as the AWS watchdog (`lambdas/idle_gpu_watchdog/settings.py`), read with the
shared core's reader (`lambdas/watchdog_core/settings.py`): the same variable names where a variable
means the same thing, the same defaults where they apply, every variable checked at once, and a bad
value fails the run with a message naming every bad variable, its value and what is allowed (Cloud
Scheduler then records a failed attempt). An empty string counts as unset.

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

from ..watchdog_core import settings as core

__all__ = ["LABEL_KEY_RE", "LABEL_VALUE_RE", "Settings", "SettingsError", "default_period_seconds"]

SettingsError = core.SettingsError
default_period_seconds = core.default_period_seconds

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


@dataclass(frozen=True, kw_only=True)
class Settings(core.WatchdogSettings):
    # The contract's variables (docs/reference.md), meaning what they mean on AWS; the rest of them
    # are WatchdogSettings'
    tag_key: str = "auto-shutdown"
    metric_name: str = GPU_METRIC
    pubsub_topic: str | None = None
    # Refinements, as on AWS
    tpu_metric_name: str = TPU_METRIC
    tpu_resource_type: str = TPU_RESOURCE_TYPE
    exclude_tag_key: str = "auto-shutdown-exclude-until"
    # GCP only
    projects: tuple[str, ...] = ()
    tpu_locations: tuple[str, ...] = ("-",)
    discard_local_ssd: bool = True

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Settings from environment variables; SettingsError lists every bad one."""
        reader = core.Reader(env)
        values: dict[str, Any] = {
            "tag_key": reader.pattern("TAG_KEY", cls.tag_key, LABEL_KEY_RE, "a label key"),
            "tag_value": reader.pattern("TAG_VALUE", cls.tag_value, LABEL_VALUE_RE, "a label value"),
            "idle_minutes": reader.integer("IDLE_MINUTES", cls.idle_minutes, minimum=1),
            "util_threshold_percent": reader.percent("UTIL_THRESHOLD_PERCENT", cls.util_threshold_percent),
            "grace_minutes": reader.integer("GRACE_MINUTES", cls.grace_minutes, minimum=0),
            "metric_name": reader.pattern("METRIC_NAME", cls.metric_name, _METRIC_TYPE_RE, "a metric type"),
            "dry_run": reader.boolean("DRY_RUN", cls.dry_run),
            "pubsub_topic": reader.optional(
                "PUBSUB_TOPIC", _TOPIC_RE.match, "projects/<project>/topics/<topic>"
            ),
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
        values["metric_period_seconds"] = reader.period(values["idle_minutes"], cls.idle_minutes)
        reader.raise_if_any()
        return cls(**values)

    def as_env(self) -> dict[str, str]:
        """The environment that reproduces these settings (what a deployment sets)."""
        env = {
            **self.opt_in_env(),
            "METRIC_NAME": self.metric_name,
            "DRY_RUN": core.flag(self.dry_run),
            "TPU_METRIC_NAME": self.tpu_metric_name,
            "TPU_RESOURCE_TYPE": self.tpu_resource_type,
            "METRIC_PERIOD_SECONDS": str(self.metric_period_seconds),
            "EXCLUDE_TAG_KEY": self.exclude_tag_key,
            "STOP_RESERVED_CAPACITY": core.flag(self.stop_reserved_capacity),
            "PROJECTS": ",".join(self.projects),
            "TPU_LOCATIONS": ",".join(self.tpu_locations),
            "DISCARD_LOCAL_SSD": core.flag(self.discard_local_ssd),
        }
        if self.pubsub_topic:
            env["PUBSUB_TOPIC"] = self.pubsub_topic
        return env
