"""IdleGpuWatchdog (GCP)'s arguments and their validation (pure: no provider SDK).

The vocabulary of the AWS `IdleGpuWatchdogArgs` (components/aws/idle_watchdog_args.py): the same
names mean the same things, with GCP's values where the clouds differ (labels are lowercase, so the
opt-in is `auto-shutdown=true`; metric types are fully qualified, so there is no namespace; a
Pub/Sub topic instead of an SNS topic; the TPU metric plays the Neuron metric's part). Apart from
`idle_watchdog.py` so that the stack config reads them without loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem
from inference_infra.components.validation import between, idle_window_problems
from inference_infra.lambdas.gcp_idle_watchdog.settings import LABEL_KEY_RE, LABEL_VALUE_RE, Settings

_DEFAULTS = Settings()
_RATE_RE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_UNIX_CRON_RE = re.compile(r"^\S+( \S+){4}$")
_METRIC_TYPE_RE = re.compile(r"^[a-z0-9.-]+\.[a-z]+/[A-Za-z0-9_./-]+$")
_PROJECT_RE = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_REGION_RE = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_LOCATION_RE = re.compile(r"^(-|[a-z]+-[a-z]+[0-9]+-[a-z])$")
_TOPIC_RE = re.compile(r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/topics/[A-Za-z][A-Za-z0-9._~%+-]{2,254}$")
MEMORY_MIB = (128, 256, 512, 1024, 2048, 4096)


@dataclass(frozen=True, kw_only=True)
class IdleGpuWatchdogArgs:
    """What the watchdog stops, when, and how it reports. Defaults are the safe choice."""

    tag_key: str = arg(
        _DEFAULTS.tag_key, "The opt-in label: only machines labelled tag_key=tag_value are touched."
    )
    tag_value: str = arg(_DEFAULTS.tag_value, "The opt-in label's value.")
    idle_minutes: int = arg(
        _DEFAULTS.idle_minutes, "Idle for this long (every period below the threshold).", ge=10, le=1440
    )
    util_threshold_percent: float = arg(
        _DEFAULTS.util_threshold_percent, "Idle means utilization below this (percent, above 0).", le=100
    )
    grace_minutes: int = arg(
        _DEFAULTS.grace_minutes, "Never stop a machine started less than this ago.", ge=0, le=10080
    )
    dry_run: bool = arg(False, "Log and report what would stop; stop nothing.")
    schedule_expression: str = arg(
        "rate(5 minutes)",
        "rate(N minutes|hours|days) (N dividing an hour or a day) or a 5-field unix cron, in UTC.",
    )
    metric_name: str = arg(_DEFAULTS.metric_name, "The GPU utilization metric type (percent per GPU).")
    tpu_metric_name: str = arg(
        _DEFAULTS.tpu_metric_name, "The TPU utilization metric type (percent per chip)."
    )
    metric_period_seconds: int | None = arg(
        None,
        "Metric period in seconds (a multiple of 60); default: 300 when it divides the idle window, else 60.",
        le=3600,
    )
    exclude_tag_key: str = arg(
        _DEFAULTS.exclude_tag_key,
        "A machine labelled with this key (a UTC time such as 2026-12-01 or 2026-12-01t18-00) is left "
        "running until then.",
    )
    stop_reserved_capacity: bool = arg(
        False, "Also stop machines that consume a reservation (billed whether they run or not)."
    )
    discard_local_ssd: bool = arg(
        True, "Stop VMs with local SSDs, whose contents are then discarded (the fleets' SSDs are caches)."
    )
    pubsub_topic: pulumi.Input[str] | None = arg(
        None, "Publish run summaries to this existing topic (projects/<project>/topics/<topic>)."
    )
    create_pubsub_topic: bool = arg(False, "Or create a topic for the run summaries.")
    timeout_seconds: int = arg(300, "The function's timeout (Cloud Scheduler waits as long).", ge=60, le=1800)
    memory_size_mib: int = arg(
        256, "The function's memory: 128, 256, 512, 1024, 2048 or 4096.", ge=128, le=4096
    )
    project: str | None = arg(None, "Project the function runs in; default: the provider's (gcp:project).")
    projects: Sequence[str] = arg((), "Projects whose machines it watches; default: the function's project.")
    tpu_locations: Sequence[str] = arg(("-",), "Zones whose TPU nodes it lists; '-' lists every zone.")
    region: str | None = arg(
        None,
        "Region the function and schedule run in, and whose prices estimate savings; default: gcp:region.",
    )


def validate_idle_watchdog(args: IdleGpuWatchdogArgs) -> list[Problem]:
    """Every problem with the arguments (pure; runs before any resource is registered)."""
    problems: list[Problem] = []

    def check(ok: bool, field_name: str, allowed: str) -> None:
        if not ok:
            problems.append(Problem(field_name, getattr(args, field_name), allowed))

    label_key = "must be a label key: 1-63 of a-z, 0-9, '-' and '_', starting with a letter"
    check(_match(args.tag_key, LABEL_KEY_RE), "tag_key", label_key)
    check(
        _match(args.tag_value, LABEL_VALUE_RE),
        "tag_value",
        "must be a label value: 1-63 of a-z, 0-9, '-', '_'",
    )
    check(_match(args.exclude_tag_key, LABEL_KEY_RE), "exclude_tag_key", label_key)
    problems.extend(idle_window_problems(args))
    check(
        cron_schedule(args.schedule_expression) is not None,
        "schedule_expression",
        "must be 'rate(N minutes|hours|days)' with N dividing an hour (or a day), or a 5-field unix cron "
        "such as '*/10 * * * *' (AWS's 6-field cron(...) is not Cloud Scheduler's)",
    )
    for name in ("metric_name", "tpu_metric_name"):
        check(_match(getattr(args, name), _METRIC_TYPE_RE), name, "must be a Cloud Monitoring metric type")
    check(
        not (args.create_pubsub_topic and args.pubsub_topic is not None),
        "pubsub_topic",
        "cannot be set together with create_pubsub_topic=True (choose one topic)",
    )
    check(
        not isinstance(args.pubsub_topic, str) or bool(_TOPIC_RE.fullmatch(args.pubsub_topic)),
        "pubsub_topic",
        "must be projects/<project>/topics/<topic>",
    )
    check(
        between(args.timeout_seconds, 60, 1800), "timeout_seconds", "must be a whole number from 60 to 1800"
    )
    check(
        args.memory_size_mib in MEMORY_MIB,
        "memory_size_mib",
        f"must be one of {', '.join(map(str, MEMORY_MIB))}",
    )
    check(args.project is None or _match(args.project, _PROJECT_RE), "project", "must be a GCP project id")
    check(
        _items(args.projects, _PROJECT_RE, allow_empty=True),
        "projects",
        "must be a list of GCP project ids (6-30 of a-z, 0-9, '-')",
    )
    check(
        _items(args.tpu_locations, _LOCATION_RE, allow_empty=False),
        "tpu_locations",
        "must be a non-empty list of zones such as 'us-west4-a', or ['-'] for every zone",
    )
    check(
        args.region is None or _match(args.region, _REGION_RE),
        "region",
        "must be a GCP region such as 'us-central1'",
    )
    return problems


def _match(value: Any, pattern: re.Pattern[str]) -> bool:
    return isinstance(value, str) and bool(pattern.fullmatch(value))


def _items(values: Any, pattern: re.Pattern[str], *, allow_empty: bool) -> bool:
    if isinstance(values, str) or not isinstance(values, Sequence):
        return False
    return (allow_empty or bool(values)) and all(_match(v, pattern) for v in values)


def cron_schedule(expression: Any) -> str | None:
    """Cloud Scheduler's unix cron for the expression, or None when it is not one we accept."""
    if not isinstance(expression, str):
        return None
    if match := _RATE_RE.fullmatch(expression):
        count, unit = int(match.group(1)), match.group(2).rstrip("s")
        if count < 1 or (count == 1) != (not match.group(2).endswith("s")):
            return None  # "1 minute", "5 minutes"
        if unit == "minute" and 60 % count == 0:
            return "* * * * *" if count == 1 else f"*/{count} * * * *"
        if unit == "hour" and 24 % count == 0:
            return "0 * * * *" if count == 1 else f"0 */{count} * * *"
        if unit == "day" and count == 1:
            return "0 0 * * *"
        return None
    return expression if _UNIX_CRON_RE.fullmatch(expression) and not expression.startswith("cron(") else None


def schedule_seconds(expression: str) -> int:
    """Seconds between runs for a rate(); 300 assumed for a cron."""
    if match := _RATE_RE.fullmatch(expression):
        unit = match.group(2).rstrip("s")
        return int(match.group(1)) * {"minute": 60, "hour": 3600, "day": 86400}[unit]
    return 300
