"""SpotDrain: drains a Spot instance from its target groups when EC2 warns it will reclaim it.

An EventBridge rule on the default bus matches the two signals EC2 sends for Spot instances
("EC2 Spot Instance Interruption Warning", two minutes ahead; "EC2 Instance Rebalance
Recommendation", elevated risk) and invokes the Lambda in `lambdas/spot_drain/` (standard library
and boto3), which deregisters the instance from the stack's target groups and lets its Auto
Scaling group replace it (docs/reference.md, "Spot drain"). Around it: an execution role that may
deregister targets and detach or mark instances only in groups and target groups carrying the
stack's tags, a log group with retention, an encrypted dead-letter queue for invocations that
failed after their retries, X-Ray tracing.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws import lambda_function as aws_lambda
from inference_infra.components.aws.spot_drain_args import SpotDrainArgs, validate_spot_drain
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import check_types
from inference_infra.lambdas import spot_drain as lambda_package
from inference_infra.lambdas.spot_drain.events import DETAIL_TYPES, RUNNING, SOURCE, Kind
from inference_infra.lambdas.spot_drain.settings import Settings

CODE = aws_lambda.LambdaPackage.of(lambda_package)
LAMBDA_DIR = CODE.directory
HANDLER = CODE.handler
# A notice older than the two minutes an interruption leaves is moot: the instance is gone. Both
# EventBridge's retry window and Lambda's asynchronous one take at least 60 s.
EVENT_AGE_SECONDS = 120

__all__ = ["EVENT_PATTERN", "SpotDrain", "SpotDrainArgs", "execution_policy", "lambda_archive"]

EVENT_PATTERN = {"source": [SOURCE], "detail-type": list(DETAIL_TYPES)}
# A stopped Spot instance running again: the drain registers it back where it took it out (issue #38).
RESTART_PATTERN = {
    "source": [SOURCE],
    "detail-type": [Kind.STATE_CHANGE.value],
    "detail": {"state": [RUNNING]},
}


def lambda_archive() -> pulumi.AssetArchive:
    return CODE.archive()


# A whole pool interrupted at once (up to 20 instances per fleet is common) drains in parallel; more waits
# in Lambda's asynchronous queue, which retries throttled events (EVENT_AGE_SECONDS bounds the wait).
RESERVED_CONCURRENCY = 20


class SpotDrain(pulumi.ComponentResource):
    """Takes interrupted or at-risk Spot instances out of the stack's target groups first."""

    def __init__(self, name: str, args: SpotDrainArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        raise_if_invalid(f"SpotDrain {name!r}", check_types(args) or validate_spot_drain(args))
        super().__init__("inference-infra:aws:SpotDrain", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        settings = Settings(
            scope_tags=dict(args.scope_tags),
            dry_run=args.dry_run,
            replace_on_rebalance=args.replace_on_rebalance,
        )
        role_tag = {"Role": "spot-drain"}

        self.dead_letter_queue = aws_lambda.dead_letter_queue(
            name, kms_key=args.kms_key, tags=role_tag, parent=self
        )
        plumbing = aws_lambda.lambda_function(
            name,
            parent=self,
            description="Drains interrupted or at-risk Spot instances from the stack's target groups",
            role_description=f"Spot drain {name}: deregisters interrupted Spot instances of the stack",
            policy=lambda scope: execution_policy(args, scope, dead_letter_arn=self.dead_letter_queue.arn),
            code=lambda_archive(),
            handler=HANDLER,
            environment=settings.as_env(),
            timeout_seconds=args.timeout_seconds,
            memory_size_mib=128,
            log_retention_days=args.log_retention_days,
            kms_key=args.kms_key,
            tags=role_tag,
            # Held for the drain (a burst elsewhere in the account cannot starve it inside the two-minute
            # warning) and capped (a flood of events cannot run it without bound); one event per instance.
            reserved_concurrency=RESERVED_CONCURRENCY,
            on_failure=aws_lambda.AsyncInvoke(
                dead_letter_arn=self.dead_letter_queue.arn,
                maximum_event_age_seconds=EVENT_AGE_SECONDS,
                maximum_retry_attempts=2,  # every step is idempotent: a retry finishes what failed
            ),
        )
        self.log_group, self.role, self.role_policy = plumbing.log_group, plumbing.role, plumbing.role_policy
        self.function, self.invoke_config = plumbing.function, plumbing.invoke_config
        self.rule = aws.cloudwatch.EventRule(
            f"{name}-rule",
            description="EC2 Spot interruption warnings and rebalance recommendations",
            event_pattern=json.dumps(EVENT_PATTERN),
            tags=role_tag,
            opts=child,
        )
        self.permission = aws_lambda.invoke_permission(
            name,
            function=self.function,
            principal="events.amazonaws.com",
            source_arn=self.rule.arn,
            parent=self,
        )
        self.restart_rule = aws.cloudwatch.EventRule(
            f"{name}-restarted",
            description="EC2 instances running again (a Spot instance stopped on interruption, restarted)",
            event_pattern=json.dumps(RESTART_PATTERN),
            tags=role_tag,
            opts=child,
        )
        self.restart_permission = aws_lambda.invoke_permission(
            f"{name}-restarted",
            function=self.function,
            principal="events.amazonaws.com",
            source_arn=self.restart_rule.arn,
            parent=self,
        )
        self.restart_target = aws.cloudwatch.EventTarget(
            f"{name}-restarted-target",
            rule=self.restart_rule.name,
            arn=self.function.arn,
            retry_policy={"maximum_event_age_in_seconds": 3600, "maximum_retry_attempts": 10},
            dead_letter_config={"arn": self.dead_letter_queue.arn},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.restart_permission]),
        )
        self.target = aws.cloudwatch.EventTarget(
            f"{name}-target",
            rule=self.rule.name,
            arn=self.function.arn,
            retry_policy={"maximum_event_age_in_seconds": EVENT_AGE_SECONDS, "maximum_retry_attempts": 3},
            dead_letter_config={"arn": self.dead_letter_queue.arn},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.permission]),
        )
        self.queue_policy = aws.sqs.QueuePolicy(
            f"{name}-dlq-policy",
            queue_url=self.dead_letter_queue.url,
            policy=aws_lambda.policy_document(
                [
                    {
                        "Sid": "EventBridgeDeadLetter",  # events the rule could not deliver
                        "Effect": "Allow",
                        "Principal": {"Service": "events.amazonaws.com"},
                        "Action": "sqs:SendMessage",
                        "Resource": self.dead_letter_queue.arn,
                        "Condition": {"ArnEquals": {"aws:SourceArn": [self.rule.arn, self.restart_rule.arn]}},
                    }
                ]
            ),
            opts=child,
        )

        self.function_name = self.function.name
        self.function_arn = self.function.arn
        self.rule_arn = self.rule.arn
        self.dead_letter_queue_url = self.dead_letter_queue.url
        self.register_outputs(
            {
                "function_name": self.function_name,
                "function_arn": self.function_arn,
                "role_arn": self.role.arn,
                "rule_arn": self.rule_arn,
                "log_group_name": self.log_group.name,
                "dead_letter_queue_url": self.dead_letter_queue_url,
            }
        )


def execution_policy(
    args: SpotDrainArgs,
    scope: aws_lambda.AccountScope,
    *,
    dead_letter_arn: pulumi.Input[str],
) -> pulumi.Output[str]:
    """Least privilege: read-only look-ups; deregister, detach and mark unhealthy only in the stack's
    tagged target groups and Auto Scaling groups (aws:ResourceTag conditions, which both services
    support on these actions per the Service Authorization Reference, read 2026-11-25:
    https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2autoscaling.html,
    .../list_awselasticloadbalancingv2.html)."""
    scoped = {"StringEquals": {f"aws:ResourceTag/{k}": v for k, v in sorted(args.scope_tags.items())}}
    statements: list[dict[str, Any]] = [
        {
            "Sid": "LookUp",  # these describe calls take no resource-level permissions
            "Effect": "Allow",
            "Action": [
                "autoscaling:DescribeAutoScalingInstances",
                "autoscaling:DescribeAutoScalingGroups",
                "elasticloadbalancing:DescribeTargetGroups",
                "elasticloadbalancing:DescribeTargetHealth",
                "elasticloadbalancing:DescribeTags",
                "ec2:DescribeInstances",
            ],
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:RequestedRegion": scope.region}},
        },
        {
            "Sid": "DeregisterFromStackTargetGroups",
            "Effect": "Allow",
            "Action": "elasticloadbalancing:DeregisterTargets",
            "Resource": scope.arn("elasticloadbalancing", "targetgroup/*/*"),
            "Condition": scoped,
        },
        {
            # A stopped Spot instance's target groups, back after its restart (lambdas/spot_drain/drain.py).
            "Sid": "RestoreToStackTargetGroups",
            "Effect": "Allow",
            "Action": "elasticloadbalancing:RegisterTargets",
            "Resource": scope.arn("elasticloadbalancing", "targetgroup/*/*"),
            "Condition": scoped,
        },
        {
            "Sid": "RememberDrainedRegistrations",  # its own tags, on the stack's instances only
            "Effect": "Allow",
            "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
            "Resource": scope.arn("ec2", "instance/*"),
            "Condition": {
                **scoped,
                "ForAllValues:StringLike": {"aws:TagKeys": ["inference-infra:drained:*"]},
            },
        },
        {
            "Sid": "ReplaceInStackGroups",
            "Effect": "Allow",
            "Action": ["autoscaling:DetachInstances", "autoscaling:SetInstanceHealth"],
            "Resource": scope.arn("autoscaling", "autoScalingGroup:*:autoScalingGroupName/*"),
            "Condition": scoped,
        },
        aws_lambda.write_logs_statement(scope.log_group_arn),
        aws_lambda.tracing_statement(),
        aws_lambda.dead_letter_statement(dead_letter_arn),
    ]
    if args.kms_key is not None:
        statements.append(aws_lambda.use_key_statement(args.kms_key))
    return aws_lambda.policy_document(statements)
