"""The watchdog's settings, read from the Lambda environment.

Every variable is checked at once; a bad value fails the invocation with a
message naming every bad variable, its value and what is allowed (the run goes
to the dead-letter queue and Lambda's Errors metric rises), rather than running
with a guessed default. An empty string counts as unset.

The first nine variables are the project's watchdog contract (docs/reference.md); the
rest refine it and default to the safe choice. The reader and the variables both clouds
share are the core's (`lambdas/watchdog_core/settings.py`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..watchdog_core.settings import (
    Reader,
    SettingsError,
    WatchdogSettings,
    default_period_seconds,
    flag,
)

__all__ = ["Settings", "SettingsError", "default_period_seconds", "scope_tag_ok", "tag_text_ok"]

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9.\-_/#:]{1,255}$")
_FAMILY_RE = re.compile(r"^[a-z][a-z0-9-]*$")


@dataclass(frozen=True, kw_only=True)
class Settings(WatchdogSettings):
    # The contract's first nine (docs/reference.md); the rest of them are WatchdogSettings'
    tag_key: str = "AutoShutdown"
    metric_namespace: str = "CWAgent"
    metric_name: str = "nvidia_smi_utilization_gpu"
    sns_topic_arn: str | None = None
    # Refinements
    neuron_metric_namespace: str = "CWAgent"
    neuron_metric_name: str = "neuroncore_utilization"
    neuron_families: tuple[str, ...] = ("inf1", "inf2", "trn1", "trn1n", "trn2", "trn2u")
    exclude_tag_key: str = "AutoShutdownExcludeUntil"
    summary_namespace: str = "InferenceInfra/IdleWatchdog"
    # More tags an instance must carry to be a candidate (the stack's, e.g. Environment=prod): the role's
    # stop permission carries the same condition, so the watchdog never tries another stack's instance.
    scope_tags: tuple[tuple[str, str], ...] = ()

    def uses_neuron_metric(self, instance_type: str) -> bool:
        return instance_type.split(".", 1)[0] in self.neuron_families

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Settings from environment variables; SettingsError lists every bad one."""
        reader = _Reader(env)
        values: dict[str, Any] = {
            "tag_key": reader.text("TAG_KEY", cls.tag_key),
            "tag_value": reader.text("TAG_VALUE", cls.tag_value),
            "idle_minutes": reader.integer("IDLE_MINUTES", cls.idle_minutes, minimum=1),
            "util_threshold_percent": reader.percent("UTIL_THRESHOLD_PERCENT", cls.util_threshold_percent),
            "grace_minutes": reader.integer("GRACE_MINUTES", cls.grace_minutes, minimum=0),
            "metric_namespace": reader.namespace("METRIC_NAMESPACE", cls.metric_namespace),
            "metric_name": reader.text("METRIC_NAME", cls.metric_name),
            "dry_run": reader.boolean("DRY_RUN", cls.dry_run),
            "sns_topic_arn": reader.optional("SNS_TOPIC_ARN", _is_sns_arn, "an SNS topic ARN"),
            "neuron_metric_namespace": reader.namespace(
                "NEURON_METRIC_NAMESPACE", cls.neuron_metric_namespace
            ),
            "neuron_metric_name": reader.text("NEURON_METRIC_NAME", cls.neuron_metric_name),
            "neuron_families": reader.families("NEURON_INSTANCE_FAMILIES", cls.neuron_families),
            "exclude_tag_key": reader.text("EXCLUDE_TAG_KEY", cls.exclude_tag_key),
            "stop_reserved_capacity": reader.boolean("STOP_RESERVED_CAPACITY", cls.stop_reserved_capacity),
            "summary_namespace": reader.namespace("SUMMARY_METRIC_NAMESPACE", cls.summary_namespace),
            "scope_tags": reader.tags("SCOPE_TAGS"),
        }
        values["metric_period_seconds"] = reader.period(values["idle_minutes"], cls.idle_minutes)
        if values["summary_namespace"] and values["summary_namespace"].startswith("AWS/"):
            reader.problem("SUMMARY_METRIC_NAMESPACE", "must not start with 'AWS/' (reserved by AWS)")
        reader.raise_if_any()
        return cls(**values)

    def as_env(self) -> dict[str, str]:
        """The environment that reproduces these settings (what a deployment sets)."""
        env = {
            **self.opt_in_env(),
            "METRIC_NAMESPACE": self.metric_namespace,
            "METRIC_NAME": self.metric_name,
            "DRY_RUN": flag(self.dry_run),
            "NEURON_METRIC_NAMESPACE": self.neuron_metric_namespace,
            "NEURON_METRIC_NAME": self.neuron_metric_name,
            "NEURON_INSTANCE_FAMILIES": ",".join(self.neuron_families),
            "METRIC_PERIOD_SECONDS": str(self.metric_period_seconds),
            "EXCLUDE_TAG_KEY": self.exclude_tag_key,
            "STOP_RESERVED_CAPACITY": flag(self.stop_reserved_capacity),
            "SUMMARY_METRIC_NAMESPACE": self.summary_namespace,
        }
        if self.sns_topic_arn:
            env["SNS_TOPIC_ARN"] = self.sns_topic_arn
        if self.scope_tags:
            env["SCOPE_TAGS"] = json.dumps(dict(self.scope_tags), sort_keys=True, separators=(",", ":"))
        return env


MAX_SCOPE_TAGS = 10  # DescribeInstances takes up to 200 filter values; ten tags is plenty for a scope


# EC2's tag characters: letters, digits and spaces, and + - = . _ : / @ (EC2 User Guide, "Tag
# restrictions"). No newline, tab or other control character can reach an IAM condition or a filter.
TAG_TEXT = re.compile(r"[\w .:/=+\-@]+")


def tag_text_ok(value: object, limit: int) -> bool:
    """A tag key or value of 1 to `limit` of EC2's tag characters, not blank."""
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value) <= limit
        and TAG_TEXT.fullmatch(value) is not None
    )


def scope_tag_ok(key: object, value: object) -> bool:
    """An EC2 tag key (1-128 characters, not aws:) and value (1-256 characters)."""
    return tag_text_ok(key, 128) and not str(key).lower().startswith("aws:") and tag_text_ok(value, 256)


def _is_sns_arn(value: str) -> bool:
    parts = value.split(":")
    return len(parts) == 6 and parts[0] == "arn" and parts[2] == "sns" and bool(parts[5])


class _Reader(Reader):
    """The shared reader, with what only AWS values need."""

    def namespace(self, name: str, default: str) -> str:
        raw = self.raw(name) or default
        if not _NAMESPACE_RE.fullmatch(raw):
            self.problem(name, "must be a CloudWatch namespace (letters, digits and . - _ / # :)")
        return raw

    def families(self, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
        raw = self.raw(name)
        if raw is None:
            return default
        items = tuple(part.strip() for part in raw.split(",") if part.strip())
        if not items or not all(_FAMILY_RE.fullmatch(i) for i in items):
            self.problem(name, "must be comma-separated instance families such as 'inf2,trn1'")
            return default
        return items

    def tags(self, name: str) -> tuple[tuple[str, str], ...]:
        """A JSON object of tag key -> value (at most MAX_SCOPE_TAGS), sorted by key."""
        raw = self.raw(name)
        if raw is None:
            return ()
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if (
            not isinstance(value, dict)
            or not 0 < len(value) <= MAX_SCOPE_TAGS
            or not all(scope_tag_ok(k, v) for k, v in value.items())
        ):
            self.problem(
                name,
                f"must be a JSON object of 1-{MAX_SCOPE_TAGS} tags, keys of 1-128 characters not starting "
                "with 'aws:', values of 1-256 characters",
            )
            return ()
        return tuple(sorted(value.items()))
