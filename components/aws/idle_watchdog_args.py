"""IdleGpuWatchdog's arguments and their validation (pure: no provider SDK).

Apart from `idle_watchdog.py` so that the stack config reads them without loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.aws.names import is_region
from inference_infra.components.errors import Problem
from inference_infra.components.tagging import AUTO_SHUTDOWN
from inference_infra.components.validation import between, idle_window_problems
from inference_infra.lambdas.idle_gpu_watchdog.settings import (
    MAX_SCOPE_TAGS,
    Settings,
    scope_tag_ok,
    tag_text_ok,
)

LOG_RETENTION_DAYS = frozenset(
    {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
)


_RATE_RE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")


_CRON_RE = re.compile(r"^cron\(\S+( \S+){5}\)$")


_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9.\-_/#:]{1,255}$")


_SNS_ARN_RE = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$")


_KMS_ARN_RE = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")


_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


_DEFAULTS = Settings()


@renamed_inputs(Renamed("kms_key_arn", "kms_key"), Renamed("price_region", "region"))
@dataclass(frozen=True, kw_only=True)
class IdleGpuWatchdogArgs:
    """What the watchdog stops, when, and how it reports. Defaults are the safe choice."""

    tag_key: str = arg(AUTO_SHUTDOWN, "The opt-in tag: only instances tagged tag_key=tag_value are touched.")
    tag_value: str = arg("true", "The opt-in tag's value.")
    scope_tags: Mapping[str, str] | None = arg(
        None,
        "More tags an instance must carry to be stopped: the watchdog lists only those and its role may stop "
        "only those (aws:ResourceTag conditions). None: the stack's own Environment cost tag when cost tags "
        "are registered (tagging.register_cost_tags puts it on every instance), so one stack's watchdog "
        "cannot stop another stack's machines; {}: every opted-in instance of the account and region.",
        stack=False,
    )
    idle_minutes: int = arg(
        _DEFAULTS.idle_minutes, "Idle for this long (every period below the threshold).", ge=10, le=1440
    )
    util_threshold_percent: float = arg(
        _DEFAULTS.util_threshold_percent, "Idle means utilization below this (percent, above 0).", le=100
    )
    grace_minutes: int = arg(
        _DEFAULTS.grace_minutes, "Never stop an instance started less than this ago.", ge=0, le=10080
    )
    dry_run: bool = arg(False, "Log and report what would stop; stop nothing.")
    schedule_expression: str = arg(
        "rate(5 minutes)", "EventBridge Scheduler expression: rate(N minutes|hours|days) or cron(...)."
    )
    metric_namespace: str = arg(
        _DEFAULTS.metric_namespace, "CloudWatch namespace of the GPU utilization metric."
    )
    metric_name: str = arg(_DEFAULTS.metric_name, "The GPU utilization metric the fleets' agent publishes.")
    neuron_metric_namespace: str = arg(
        _DEFAULTS.neuron_metric_namespace, "CloudWatch namespace of the NeuronCore utilization metric."
    )
    neuron_metric_name: str = arg(
        _DEFAULTS.neuron_metric_name, "The NeuronCore utilization metric (Inferentia and Trainium instances)."
    )
    metric_period_seconds: int | None = arg(
        None,
        "Metric period in seconds (a multiple of 60); default: 300 when it divides the idle window, else 60.",
        le=3600,
    )
    exclude_tag_key: str = arg(
        _DEFAULTS.exclude_tag_key,
        "An instance tagged with this key (an ISO 8601 time) is left running until then.",
    )
    stop_reserved_capacity: bool = arg(
        False,
        "Also stop instances in capacity reservations or Capacity Blocks (billed whether they run or not).",
    )
    summary_metric_namespace: str = arg(
        _DEFAULTS.summary_namespace, "CloudWatch namespace of each run's summary metrics (not AWS/...)."
    )
    sns_topic_arn: pulumi.Input[str] | None = arg(None, "Publish run summaries to this existing SNS topic.")
    create_sns_topic: bool = arg(False, "Or create an encrypted topic for the run summaries.")
    kms_key: pulumi.Input[str] | None = arg(
        None,
        "Customer KMS key (ARN, not an alias) for the logs, queue, topic and environment variables; default: "
        "the AWS-managed keys.",
    )
    log_retention_days: int = arg(30, "Days the Lambda's logs are kept (one of CloudWatch Logs' values).")
    timeout_seconds: int = arg(300, "The Lambda's timeout.", ge=30, le=900)
    memory_size_mib: int = arg(256, "The Lambda's memory.", ge=128, le=10240)
    region: str | None = arg(
        None,
        "Region whose prices estimate what each stop saves; default: the provider's region (aws:region).",
    )


def validate_idle_watchdog(args: IdleGpuWatchdogArgs) -> list[Problem]:
    """Every problem with the arguments (pure; runs before any resource is registered)."""
    problems: list[Problem] = []

    def check(ok: bool, field_name: str, allowed: str) -> None:
        if not ok:
            problems.append(Problem(field_name, getattr(args, field_name), allowed))

    check(
        _tag_key(args.tag_key),
        "tag_key",
        _TAG_KEY_ALLOWED,
    )
    check(
        tag_text_ok(args.tag_value, 256),
        "tag_value",
        "must be a tag value of 1-256 characters (letters, digits, spaces, + - = . _ : / @)",
    )
    check(
        _tag_key(args.exclude_tag_key),
        "exclude_tag_key",
        _TAG_KEY_ALLOWED,
    )
    scope = args.scope_tags
    check(
        scope is None
        or (
            isinstance(scope, Mapping)
            and len(scope) <= MAX_SCOPE_TAGS
            and all(scope_tag_ok(k, v) for k, v in scope.items())
            and args.tag_key not in scope
        ),
        "scope_tags",
        f"must map at most {MAX_SCOPE_TAGS} tag keys (1-128 characters, not 'aws:', not tag_key) to "
        "values of 1-256 characters",
    )
    problems.extend(idle_window_problems(args))
    check(
        schedule_seconds(args.schedule_expression) is not None,
        "schedule_expression",
        "must be 'rate(1 minute)', 'rate(N minutes|hours|days)' or 'cron(<6 fields>)'",
    )
    for field_name in ("metric_namespace", "neuron_metric_namespace", "summary_metric_namespace"):
        check(
            isinstance(getattr(args, field_name), str)
            and bool(_NAMESPACE_RE.fullmatch(getattr(args, field_name))),
            field_name,
            "must be a CloudWatch namespace (1-255 letters, digits and . - _ / # :)",
        )
    check(
        not str(args.summary_metric_namespace).startswith("AWS/"),
        "summary_metric_namespace",
        "must not start with 'AWS/' (reserved for AWS services)",
    )
    check(_text(args.metric_name, 255), "metric_name", "must be a metric name")
    check(_text(args.neuron_metric_name, 255), "neuron_metric_name", "must be a metric name")
    check(
        not (args.create_sns_topic and args.sns_topic_arn is not None),
        "sns_topic_arn",
        "cannot be set together with create_sns_topic=True (choose one topic)",
    )
    check(_arn_or_output(args.sns_topic_arn, _SNS_ARN_RE), "sns_topic_arn", "must be an SNS topic ARN")
    check(
        _arn_or_output(args.kms_key, _KMS_ARN_RE),
        "kms_key",
        "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), not an alias",
    )
    check(
        args.log_retention_days in LOG_RETENTION_DAYS,
        "log_retention_days",
        f"must be one of CloudWatch Logs' values: {', '.join(map(str, sorted(LOG_RETENTION_DAYS)))}",
    )
    check(between(args.timeout_seconds, 30, 900), "timeout_seconds", "must be a whole number from 30 to 900")
    check(
        between(args.memory_size_mib, 128, 10240), "memory_size_mib", "must be a whole number, 128 to 10240"
    )
    check(
        args.region is None or is_region(str(args.region)),
        "region",
        "must be an AWS region such as 'us-east-1'",
    )
    return problems


_TAG_KEY_ALLOWED = (
    "must be a tag key of 1-128 characters not starting with 'aws:' "
    "(letters, digits, spaces, + - = . _ : / @)"
)


def _text(value: Any, limit: int) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= limit


def _tag_key(value: Any) -> bool:
    return tag_text_ok(value, 128) and not value.lower().startswith("aws:")


def _arn_or_output(value: Any, pattern: re.Pattern[str]) -> bool:
    """A plain string must match; an Output is checked by AWS at deploy time."""
    return not isinstance(value, str) or bool(pattern.fullmatch(value))


def schedule_seconds(expression: str) -> int | None:
    """Seconds between runs for rate(); 300 assumed for cron(); None when the expression is invalid."""
    if not isinstance(expression, str):
        return None
    if match := _RATE_RE.fullmatch(expression):
        count, unit = int(match.group(1)), match.group(2)
        if count < 1 or (count == 1) != (not unit.endswith("s")):
            return None  # AWS wants "1 minute" and "5 minutes"
        return count * _UNIT_SECONDS[unit.rstrip("s")]
    return 300 if _CRON_RE.fullmatch(expression) else None
