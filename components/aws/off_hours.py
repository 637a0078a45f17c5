"""OffHours: an elastic pool that sleeps outside working hours, and the 503 its endpoint answers then.

- Two Auto Scaling scheduled actions on the pool's group, in the schedule's time zone: at end_hour
  minimum and desired drop to off_hours_size; at start_hour they return to the pool's minimum
  (`components.fleet.off_hours`). Not with `scheduled_actions=False`: an elastic fleet given
  `elastic.schedule` makes them on its own group (so a user's program gets them without OffHours).
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

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws import lambda_function as aws_lambda
from inference_infra.components.aws.off_hours_args import OffHoursArgs, validate_off_hours
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.fleet.off_hours import OffHoursPlan, day_set, off_hours_plan
from inference_infra.components.validation import input_problems
from inference_infra.lambdas import pool_asleep as lambda_package

CODE = aws_lambda.LambdaPackage.of(lambda_package)
ROLE_TAG = {"Role": "pool-asleep"}
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
        raise_if_invalid(f"OffHours {name!r}", input_problems(args, validate_off_hours))
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
            for action in (plan.actions if args.scheduled_actions else ())
        ]
        days = day_set(args.schedule.days) or list(range(7))
        plumbing = aws_lambda.lambda_function(
            name,
            parent=self,
            description=f"Answers 503 + Retry-After while {args.pool_name} sleeps outside working hours",
            role_description=f"Pool-asleep responder {name}: writes its own logs, nothing else",
            policy=lambda scope: aws_lambda.policy_document(
                [aws_lambda.write_logs_statement(scope.log_group_arn)]
            ),
            code=CODE.archive(),
            handler=CODE.handler,
            environment={
                "TIME_ZONE": args.schedule.time_zone,
                "DAYS": ",".join(map(str, days)),
                "START_HOUR": str(args.schedule.start_hour),
                "END_HOUR": str(args.schedule.end_hour),
                "WARMUP_SECONDS": str(plan.awake_delay_seconds),
                "POOL_NAME": args.pool_name,
            },
            timeout_seconds=3,  # pure arithmetic on the clock; the ALB waits for the answer
            reserved_concurrency=5,  # a sleeping pool's callers cannot run it (and its bill) without bound
            memory_size_mib=128,
            log_retention_days=args.log_retention_days,
            kms_key=args.kms_key,
            tags=ROLE_TAG,
            tracing=False,
        )
        self.log_group, self.role, self.role_policy = plumbing.log_group, plumbing.role, plumbing.role_policy
        self.function = plumbing.function
        self.target_group = aws.lb.TargetGroup(
            f"{name}-asleep",
            target_type="lambda",  # no port, protocol or VPC for a Lambda target group
            lambda_multi_value_headers_enabled=False,  # the responder returns `headers`, one value each
            tags=ROLE_TAG,
            opts=child,
        )
        self.permission = aws_lambda.invoke_permission(
            name,
            function=self.function,
            principal="elasticloadbalancing.amazonaws.com",
            source_arn=self.target_group.arn,
            parent=self,
        )
        self.attachment = aws.lb.TargetGroupAttachment(
            f"{name}-responder",
            target_group_arn=self.target_group.arn,
            target_id=self.function.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.permission]),
        )

        self.switches: list[aws.scheduler.Schedule] = []
        if args.listener_rule_arns:
            self._switch(name, args, plan, plumbing.scope.account)

        self.target_group_arn = self.target_group.arn
        self.function_name = self.function.name
        self.register_outputs(
            {
                "target_group_arn": self.target_group_arn,
                "function_name": self.function_name,
                "scheduled_actions": [a.scheduled_action_name for a in self.scheduled_actions],
            }
        )

    def _switch(self, name: str, args: OffHoursArgs, plan: OffHoursPlan, account: pulumi.Output[str]) -> None:
        self.scheduler_role, self.scheduler_policy = aws_lambda.service_role(
            f"{name}-switch",
            service="scheduler.amazonaws.com",
            account=account,
            description=f"EventBridge Scheduler: switches the listener rule of {args.pool_name}",
            policy=aws_lambda.policy_document(
                [
                    {
                        "Sid": "SwitchThePoolsRules",  # these rules, nothing else
                        "Effect": "Allow",
                        "Action": "elasticloadbalancing:ModifyRule",
                        "Resource": list(args.listener_rule_arns),
                    }
                ]
            ),
            tags=ROLE_TAG,
            parent=self,
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
