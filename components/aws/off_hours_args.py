"""OffHours' arguments and their validation (pure: no provider SDK)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.aws.idle_watchdog_args import LOG_RETENTION_DAYS
from inference_infra.components.errors import Problem
from inference_infra.components.fleet.elastic import ScheduleArgs, schedule_problems

# The name goes into the responder's and the schedules' descriptions (Lambda: at most 256 characters,
# API Reference CreateFunction) and the 503 body: a fleet's name or a few words, never a line break.
_POOL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}")


@dataclass(frozen=True, kw_only=True)
class OffHoursArgs:
    """An elastic pool's working hours on AWS, and the 503 its endpoint answers outside them."""

    group_name: pulumi.Input[str] = arg(doc="The pool's Auto Scaling group.", stack=False)
    schedule: ScheduleArgs = arg(doc="Working hours (time zone, days, hours, size outside them).")
    min_size: int = arg(doc="The pool's minimum in working hours (its elastic minimum).", ge=0, le=10_000)
    warmup_seconds: int = arg(
        doc="The pool's cold start: how long after start_hour a machine serves.", ge=0, le=86400
    )
    pool_name: str = arg("the pool", "The pool's name in the 503 message.")
    listener_rule_arns: Sequence[pulumi.Input[str]] = arg(
        doc="The endpoint's listener rules that send traffic to this pool alone: switched to the 503 "
        "responder outside working hours.",
        factory=tuple,
        stack=False,
    )
    pool_target_group_arns: Sequence[pulumi.Input[str]] = arg(
        doc="The pool's target groups the rules forward to (equal weights) in working hours.",
        factory=tuple,
        stack=False,
    )
    scheduled_actions: bool = arg(
        True,
        "Make the two scheduled actions on the group. False for an elastic GpuFleet/InferentiaFleet with "
        "elastic.schedule: the pool makes them itself (components/aws/elastic_group.py).",
    )
    log_retention_days: int = arg(30, "Days the responder's logs are kept.")
    kms_key: pulumi.Input[str] | None = arg(None, "Customer KMS key (ARN) for the responder's logs.")


def validate_off_hours(args: OffHoursArgs) -> list[Problem]:
    problems = (
        schedule_problems(args.schedule, key="schedule")
        if isinstance(args.schedule, ScheduleArgs)
        else [Problem("schedule", args.schedule, "must be a ScheduleArgs")]
    )
    # min_size's and warmup_seconds' types and bounds (their arg(ge=..., le=...)) are check_types',
    # which runs first: OffHours validates with input_problems.
    if isinstance(args.schedule, ScheduleArgs) and args.schedule.off_hours_size >= max(args.min_size, 1):
        problems.append(
            Problem(
                "schedule.off_hours_size",
                args.schedule.off_hours_size,
                f"must be below the working-hours minimum ({args.min_size}): off hours shrink the pool",
            )
        )
    if bool(args.listener_rule_arns) != bool(args.pool_target_group_arns):
        problems.append(
            Problem(
                "listener_rule_arns",
                list(args.listener_rule_arns),
                "and pool_target_group_arns go together (each rule is switched between the pool's target "
                "groups and the responder)",
            )
        )
    if not isinstance(args.pool_name, str) or not _POOL_NAME.fullmatch(args.pool_name):
        problems.append(
            Problem(
                "pool_name",
                args.pool_name,
                "must be 1-63 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit",
            )
        )
    if args.log_retention_days not in LOG_RETENTION_DAYS:
        problems.append(
            Problem("log_retention_days", args.log_retention_days, "must be one of CloudWatch Logs' values")
        )
    return problems
