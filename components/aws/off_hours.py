"""OffHours: an elastic pool that sleeps outside working hours, and the 503 its endpoint answers then.

- Two Auto Scaling scheduled actions on the pool's group, in the schedule's time zone: at end_hour
  minimum and desired drop to off_hours_size; at start_hour they return to the pool's minimum
  (`components.fleet.off_hours`).
- A responder: the Lambda in `lambdas/pool_asleep/` behind a target group of type `lambda`, which
  answers every request with 503 and `Retry-After` (seconds until working hours plus the warm-up).
- With the endpoint's listener rule for the pool given, two EventBridge Scheduler schedules switch
  that rule with ModifyRule (a universal target, no code of ours): to the responder at end_hour, back
  to the pool's target group once the morning's machines are warm. An ALB rule has no fallback when
  its target group is empty (it answers a bare 503 itself, without Retry-After), hence the switch.
  The rule's forward action belongs to the endpoint; the switch only ever sets it to one of the two
  target groups, so run `pulumi up` without `--refresh` outside working hours or expect the rule to
  be put back to the pool.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.off_hours_args import OffHoursArgs, validate_off_hours
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.fleet.off_hours import OffHoursPlan, day_set, off_hours_plan
from inference_infra.lambdas import pool_asleep as lambda_package

LAMBDA_DIR = Path(lambda_package.__file__).resolve().parent
PACKAGE = LAMBDA_DIR.name
HANDLER = f"{PACKAGE}.handler.handler"
RUNTIME = "python3.13"
# EventBridge Scheduler's universal target for ELBv2 ModifyRule: the service part is the AWS SDK's
# service identifier ("Elastic Load Balancing v2" -> elasticloadbalancingv2), per
# https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-universal.html (2026-11-25).
MODIFY_RULE_TARGET = "arn:aws:scheduler:::aws-sdk:elasticloadbalancingv2:modifyRule"

__all__ = ["MODIFY_RULE_TARGET", "OffHours", "OffHoursArgs", "rule_switch_input"]


def rule_switch_input(
    rule_arn: pulumi.Input[str], target_group_arns: Sequence[pulumi.Input[str]]
) -> pulumi.Output[str]:
    """ModifyRule's request: the rule forwards to these target groups, equal weights (one: all of it).
    ALB weights are 0-999 per target group (ELBv2 API TargetGroupTuple)."""
    groups = [{"TargetGroupArn": arn, "Weight": 1} for arn in target_group_arns]
    return pulumi.Output.json_dumps(
        {"RuleArn": rule_arn, "Actions": [{"Type": "forward", "ForwardConfig": {"TargetGroups": groups}}]}
    )


class OffHours(pulumi.ComponentResource):
    """Working hours for an elastic pool: scheduled actions, the 503 responder, the rule switch."""

    def __init__(self, name: str, args: OffHoursArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        raise_if_invalid(f"OffHours {name!r}", validate_off_hours(args))
        super().__init__("inference-infra:aws:OffHours", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        plan: OffHoursPlan = off_hours_plan(
            args.schedule, min_size=args.min_size, warmup_seconds=args.warmup_seconds
        )
        self.plan = plan

        self.scheduled_actions = [
            aws.autoscaling.Schedule(
                f"{name}-{action.name}",
                autoscaling_group_name=args.group_name,
                scheduled_action_name=action.name,
                recurrence=action.recurrence,
                time_zone=action.time_zone,
                min_size=action.min_size,
                desired_capacity=action.desired,
                max_size=action.max_size,
                opts=child,
            )
            for action in plan.actions
        ]

        role_tag = {"Role": "pool-asleep"}
        self.log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name_prefix=f"/aws/lambda/{name}-",
            retention_in_days=args.log_retention_days,
            kms_key_id=args.kms_key,
            tags=role_tag,
            opts=child,
        )
        self.role = aws.iam.Role(
            f"{name}-role",
            description=f"Pool-asleep responder {name}: writes its own logs, nothing else",
            assume_role_policy=json.dumps(_trust("lambda.amazonaws.com")),
            tags=role_tag,
            opts=child,
        )
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=pulumi.Output.json_dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "WriteOwnLogs",
                            "Effect": "Allow",
                            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                            "Resource": pulumi.Output.concat(self.log_group.arn, ":*"),
                        }
                    ],
                }
            ),
            opts=child,
        )
        days = day_set(args.schedule.days) or list(range(7))
        self.function = aws.lambda_.Function(
            f"{name}-function",
            description=f"Answers 503 + Retry-After while {args.pool_name} sleeps outside working hours",
            role=self.role.arn,
            runtime=RUNTIME,
            architectures=["arm64"],
            handler=HANDLER,
            code=pulumi.AssetArchive(
                {f"{PACKAGE}/{p.name}": pulumi.FileAsset(str(p)) for p in sorted(LAMBDA_DIR.glob("*.py"))}
            ),
            timeout=3,  # pure arithmetic on the clock; the ALB waits for the answer
            memory_size=128,
            logging_config={"log_format": "Text", "log_group": self.log_group.name},
            environment={
                "variables": {
                    "TIME_ZONE": args.schedule.time_zone,
                    "DAYS": ",".join(map(str, days)),
                    "START_HOUR": str(args.schedule.start_hour),
                    "END_HOUR": str(args.schedule.end_hour),
                    "WARMUP_SECONDS": str(plan.awake_delay_seconds),
                    "POOL_NAME": args.pool_name,
                }
            },
            kms_key_arn=args.kms_key,
            tags=role_tag,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role_policy, self.log_group]),
        )
        self.target_group = aws.lb.TargetGroup(
            f"{name}-asleep",
            target_type="lambda",  # no port, protocol or VPC for a Lambda target group
            lambda_multi_value_headers_enabled=False,  # the responder returns `headers`, one value each
            tags=role_tag,
            opts=child,
        )
        self.permission = aws.lambda_.Permission(
            f"{name}-invoke",
            action="lambda:InvokeFunction",
            function=self.function.name,
            principal="elasticloadbalancing.amazonaws.com",
            source_arn=self.target_group.arn,
            opts=child,
        )
        self.attachment = aws.lb.TargetGroupAttachment(
            f"{name}-responder",
            target_group_arn=self.target_group.arn,
            target_id=self.function.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.permission]),
        )

        self.switches: list[aws.scheduler.Schedule] = []
        if args.listener_rule_arns:
            self._switch(name, args, plan, child)

        self.target_group_arn = self.target_group.arn
        self.function_name = self.function.name
        self.register_outputs(
            {
                "target_group_arn": self.target_group_arn,
                "function_name": self.function_name,
                "scheduled_actions": [a.scheduled_action_name for a in self.scheduled_actions],
            }
        )

    def _switch(
        self, name: str, args: OffHoursArgs, plan: OffHoursPlan, child: pulumi.ResourceOptions
    ) -> None:
        partition_account = self.log_group.arn.apply(lambda arn: arn.split(":")[4])
        self.scheduler_role = aws.iam.Role(
            f"{name}-switch-role",
            description=f"EventBridge Scheduler: switches the listener rule of {args.pool_name}",
            assume_role_policy=partition_account.apply(
                lambda account: json.dumps(_trust("scheduler.amazonaws.com", account=account))
            ),
            tags={"Role": "pool-asleep"},
            opts=child,
        )
        self.scheduler_policy = aws.iam.RolePolicy(
            f"{name}-switch-policy",
            role=self.scheduler_role.id,
            policy=pulumi.Output.json_dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "SwitchThePoolsRules",  # these rules, nothing else
                            "Effect": "Allow",
                            "Action": "elasticloadbalancing:ModifyRule",
                            "Resource": list(args.listener_rule_arns),
                        }
                    ],
                }
            ),
            opts=child,
        )
        for n, rule_arn in enumerate(args.listener_rule_arns):
            for when, cron, targets in (
                ("asleep", plan.asleep_cron, [self.target_group.arn]),
                ("awake", plan.awake_cron, list(args.pool_target_group_arns)),
            ):
                self.switches.append(
                    aws.scheduler.Schedule(
                        f"{name}-{when}-{n}",
                        description=f"{args.pool_name}: its endpoint rule forwards to the "
                        + ("503 responder" if when == "asleep" else "pool"),
                        schedule_expression=cron,
                        schedule_expression_timezone=plan.time_zone,
                        flexible_time_window={"mode": "OFF"},
                        state="ENABLED",
                        target={
                            "arn": MODIFY_RULE_TARGET,
                            "role_arn": self.scheduler_role.arn,
                            "input": rule_switch_input(rule_arn, targets),
                            # a switch that cannot run at once keeps trying for an hour
                            "retry_policy": {
                                "maximum_event_age_in_seconds": 3600,
                                "maximum_retry_attempts": 10,
                            },
                        },
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[self.scheduler_policy]),
                    )
                )


def _trust(service: str, *, account: str | None = None) -> dict[str, Any]:
    statement: dict[str, Any] = {
        "Effect": "Allow",
        "Principal": {"Service": service},
        "Action": "sts:AssumeRole",
    }
    if account is not None:  # confused-deputy guard: only this account's schedules
        statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account}}
    return {"Version": "2012-10-17", "Statement": [statement]}
