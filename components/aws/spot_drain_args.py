"""SpotDrain's arguments and their validation (pure: no provider SDK)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.aws.idle_watchdog_args import LOG_RETENTION_DAYS
from inference_infra.components.errors import Problem

_KMS_ARN_RE = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")
# An interruption warning comes two minutes before EC2 reclaims the instance; the drain's few
# calls take seconds, so a run that needs more than a minute has failed. 10-120 s allowed.
DEFAULT_TIMEOUT_SECONDS = 60


@dataclass(frozen=True, kw_only=True)
class SpotDrainArgs:
    """Which groups and target groups the drain may touch, and how it runs."""

    scope_tags: Mapping[str, str] = arg(
        doc="Tags every Auto Scaling group and target group the drain may touch carries (the stack's cost "
        "tags in the reference stack); its IAM policy is conditioned on them.",
        stack=False,
    )
    dry_run: bool = arg(False, "Look up and report what would be drained; change nothing.")
    replace_on_rebalance: bool = arg(
        True,
        "On a rebalance recommendation in a group without capacity rebalancing, drain the instance and "
        "mark it unhealthy so the group replaces it.",
    )
    kms_key: pulumi.Input[str] | None = arg(
        None, "Customer KMS key (ARN) for the logs, the dead-letter queue and the environment."
    )
    log_retention_days: int = arg(30, "Days the Lambda's logs are kept (one of CloudWatch Logs' values).")
    timeout_seconds: int = arg(DEFAULT_TIMEOUT_SECONDS, "The Lambda's timeout.", ge=10, le=120)


def validate_spot_drain(args: SpotDrainArgs) -> list[Problem]:
    problems: list[Problem] = []
    tags = args.scope_tags
    if (
        not isinstance(tags, Mapping)
        or not tags
        or not all(_tag_key(k) and isinstance(v, str) and 0 < len(v) <= 256 for k, v in tags.items())
    ):
        problems.append(
            Problem(
                "scope_tags",
                tags,
                "must name at least one tag (key: value) the stack's groups and target groups carry; keys "
                "1-128 characters not starting with 'aws:', values 1-256 characters",
            )
        )
    # timeout_seconds' type and 10..120 (arg(ge=10, le=120): an interruption leaves 120 s) are
    # check_types', which SpotDrain runs first.
    if args.log_retention_days not in LOG_RETENTION_DAYS:
        problems.append(
            Problem(
                "log_retention_days",
                args.log_retention_days,
                f"must be one of CloudWatch Logs' values: {', '.join(map(str, sorted(LOG_RETENTION_DAYS)))}",
            )
        )
    if isinstance(args.kms_key, str) and not _KMS_ARN_RE.fullmatch(args.kms_key):
        problems.append(Problem("kms_key", args.kms_key, "must be a KMS key ARN, not an alias"))
    for name in ("dry_run", "replace_on_rebalance"):
        if not isinstance(getattr(args, name), bool):
            problems.append(Problem(name, getattr(args, name), "must be true or false"))
    return problems


def _tag_key(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 128 and not value.lower().startswith("aws:")
