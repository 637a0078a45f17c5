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
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.spot_drain_args import SpotDrainArgs, validate_spot_drain
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import check_types
from inference_infra.lambdas import spot_drain as lambda_package
from inference_infra.lambdas.spot_drain.events import DETAIL_TYPES, SOURCE
from inference_infra.lambdas.spot_drain.settings import Settings

LAMBDA_DIR = Path(lambda_package.__file__).resolve().parent
PACKAGE = LAMBDA_DIR.name
HANDLER = f"{PACKAGE}.handler.handler"
RUNTIME = "python3.13"
# A notice older than the two minutes an interruption leaves is moot: the instance is gone. Both
# EventBridge's retry window and Lambda's asynchronous one take at least 60 s.
EVENT_AGE_SECONDS = 120

__all__ = ["EVENT_PATTERN", "SpotDrain", "SpotDrainArgs", "execution_policy", "lambda_archive"]

EVENT_PATTERN = {"source": [SOURCE], "detail-type": list(DETAIL_TYPES)}


def lambda_archive() -> pulumi.AssetArchive:
    return pulumi.AssetArchive(
        {f"{PACKAGE}/{path.name}": pulumi.FileAsset(str(path)) for path in sorted(LAMBDA_DIR.glob("*.py"))}
    )


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

        self.dead_letter_queue = aws.sqs.Queue(
            f"{name}-dlq",
            message_retention_seconds=14 * 24 * 3600,
            sqs_managed_sse_enabled=None if args.kms_key is not None else True,
            kms_master_key_id=args.kms_key,
            tags={"Name": f"{name}-dlq", **role_tag},
            opts=child,
        )
        self.log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name_prefix=f"/aws/lambda/{name}-",
            retention_in_days=args.log_retention_days,
            kms_key_id=args.kms_key,
            tags=role_tag,
            opts=child,
        )
        partition, region, account = (
            self.log_group.arn.apply(lambda arn, i=i: arn.split(":")[i]) for i in (1, 3, 4)
        )
        self.role = aws.iam.Role(
            f"{name}-role",
            description=f"Spot drain {name}: deregisters interrupted Spot instances of the stack",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
            tags=role_tag,
            opts=child,
        )
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=execution_policy(
                args,
                partition=partition,
                region=region,
                account=account,
                log_group_arn=self.log_group.arn,
                dead_letter_arn=self.dead_letter_queue.arn,
            ),
            opts=child,
        )
        self.function = aws.lambda_.Function(
            f"{name}-function",
            description="Drains interrupted or at-risk Spot instances from the stack's target groups",
            role=self.role.arn,
            runtime=RUNTIME,
            architectures=["arm64"],
            handler=HANDLER,
            code=lambda_archive(),
            timeout=args.timeout_seconds,
            memory_size=128,
            tracing_config={"mode": "Active"},
            logging_config={"log_format": "Text", "log_group": self.log_group.name},
            environment={"variables": settings.as_env()},
            kms_key_arn=args.kms_key,
            tags=role_tag,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role_policy, self.log_group]),
        )
        self.invoke_config = aws.lambda_.FunctionEventInvokeConfig(
            f"{name}-async",
            function_name=self.function.name,
            maximum_event_age_in_seconds=EVENT_AGE_SECONDS,
            maximum_retry_attempts=2,  # every step is idempotent: a retry finishes what failed
            destination_config={"on_failure": {"destination": self.dead_letter_queue.arn}},
            opts=child,
        )
        self.rule = aws.cloudwatch.EventRule(
            f"{name}-rule",
            description="EC2 Spot interruption warnings and rebalance recommendations",
            event_pattern=json.dumps(EVENT_PATTERN),
            tags=role_tag,
            opts=child,
        )
        self.permission = aws.lambda_.Permission(
            f"{name}-invoke",
            action="lambda:InvokeFunction",
            function=self.function.name,
            principal="events.amazonaws.com",
            source_arn=self.rule.arn,
            opts=child,
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
            policy=pulumi.Output.json_dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "EventBridgeDeadLetter",  # events the rule could not deliver
                            "Effect": "Allow",
                            "Principal": {"Service": "events.amazonaws.com"},
                            "Action": "sqs:SendMessage",
                            "Resource": self.dead_letter_queue.arn,
                            "Condition": {"ArnEquals": {"aws:SourceArn": self.rule.arn}},
                        }
                    ],
                }
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
    *,
    partition: pulumi.Input[str],
    region: pulumi.Input[str],
    account: pulumi.Input[str],
    log_group_arn: pulumi.Input[str],
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
            ],
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:RequestedRegion": region}},
        },
        {
            "Sid": "DeregisterFromStackTargetGroups",
            "Effect": "Allow",
            "Action": "elasticloadbalancing:DeregisterTargets",
            "Resource": pulumi.Output.format(
                "arn:{0}:elasticloadbalancing:{1}:{2}:targetgroup/*/*", partition, region, account
            ),
            "Condition": scoped,
        },
        {
            "Sid": "ReplaceInStackGroups",
            "Effect": "Allow",
            "Action": ["autoscaling:DetachInstances", "autoscaling:SetInstanceHealth"],
            "Resource": pulumi.Output.format(
                "arn:{0}:autoscaling:{1}:{2}:autoScalingGroup:*:autoScalingGroupName/*",
                partition,
                region,
                account,
            ),
            "Condition": scoped,
        },
        {
            "Sid": "WriteOwnLogs",
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": pulumi.Output.concat(log_group_arn, ":*"),
        },
        {
            "Sid": "Tracing",
            "Effect": "Allow",
            "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
            "Resource": "*",
        },
        {"Sid": "DeadLetter", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": dead_letter_arn},
    ]
    if args.kms_key is not None:
        statements.append(
            {
                "Sid": "UseKey",
                "Effect": "Allow",
                "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
                "Resource": args.kms_key,
            }
        )
    return pulumi.Output.json_dumps({"Version": "2012-10-17", "Statement": statements})
