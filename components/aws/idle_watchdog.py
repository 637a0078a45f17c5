"""IdleGpuWatchdog: a scheduled Lambda that stops accelerator instances that are provably idle.

The Lambda source is `lambdas/idle_gpu_watchdog/` with the watchdogs' shared
core `lambdas/watchdog_core/` beside it under `lambdas/` (standard library and
boto3 only; handler `lambdas.idle_gpu_watchdog.handler.handler`), packaged with
a price table rendered from the catalog so it can estimate what each stop saves.
Around it: an EventBridge Scheduler schedule with its own role and retry
policy, an execution role that may stop only instances carrying the opt-in tag,
a log group with retention, reserved concurrency 1 (runs never overlap), an
encrypted dead-letter queue for failed invocations, X-Ray tracing and,
optionally, an encrypted SNS topic.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws import lambda_function as aws_lambda
from inference_infra.components.aws.idle_watchdog_args import (
    LOG_RETENTION_DAYS,
    IdleGpuWatchdogArgs,
    schedule_seconds,
    validate_idle_watchdog,
)
from inference_infra.components.catalog import Cloud, PriceModel, hourly_price, instance_types
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.tagging import ENVIRONMENT, registered_cost_tags
from inference_infra.components.validation import input_problems
from inference_infra.lambdas import idle_gpu_watchdog as lambda_package
from inference_infra.lambdas import watchdog_core
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings, default_period_seconds

CODE = aws_lambda.LambdaPackage.of(lambda_package, shared=(watchdog_core,))
LAMBDA_DIR = CODE.directory
HANDLER = CODE.handler
ROLE_TAG = {"Role": "idle-gpu-watchdog"}

__all__ = [
    "LOG_RETENTION_DAYS",
    "IdleGpuWatchdog",
    "IdleGpuWatchdogArgs",
    "lambda_archive",
    "price_table",
    "validate_idle_watchdog",
]


def lambda_settings(args: IdleGpuWatchdogArgs) -> Settings:
    """The Lambda's settings (all but the SNS topic, which may be an Output)."""
    return Settings(
        tag_key=args.tag_key,
        tag_value=args.tag_value,
        idle_minutes=args.idle_minutes,
        util_threshold_percent=float(args.util_threshold_percent),
        grace_minutes=args.grace_minutes,
        metric_namespace=args.metric_namespace,
        metric_name=args.metric_name,
        dry_run=args.dry_run,
        neuron_metric_namespace=args.neuron_metric_namespace,
        neuron_metric_name=args.neuron_metric_name,
        metric_period_seconds=args.metric_period_seconds or default_period_seconds(args.idle_minutes),
        exclude_tag_key=args.exclude_tag_key,
        stop_reserved_capacity=args.stop_reserved_capacity,
        summary_namespace=args.summary_metric_namespace,
        scope_tags=tuple(sorted(scope_tags(args).items())),
    )


def scope_tags(args: IdleGpuWatchdogArgs) -> dict[str, str]:
    """The tags besides the opt-in one that an instance must carry to be stopped
    (IdleGpuWatchdogArgs.scope_tags; None: the registered cost tags' Environment, if any)."""
    if args.scope_tags is not None:
        return dict(args.scope_tags)
    registered = registered_cost_tags()
    return {ENVIRONMENT: registered.environment} if registered is not None else {}


def price_table(region: str | None) -> dict[str, Any]:
    """The Lambda's prices.json: on-demand and spot USD/hour of every AWS catalog type."""
    types = {}
    for item in sorted(instance_types(Cloud.AWS), key=lambda i: i.name):
        types[item.name] = {
            "on_demand": hourly_price(item, region=region, model=PriceModel.ON_DEMAND).hourly_usd,
            "spot": hourly_price(item, region=region, model=PriceModel.SPOT).hourly_usd,
        }
    where = region or "each type's reference region"
    basis = f"inference-infra catalog, {where}; spot at the catalog's typical discount"
    return {"version": 1, "region": region, "basis": basis, "types": types}


def lambda_archive(prices: dict[str, Any]) -> pulumi.AssetArchive:
    """The Lambda package: the watchdog's modules and the shared core's, and its price table beside
    the watchdog's."""
    return CODE.archive({"prices.json": json.dumps(prices, indent=1, sort_keys=True)})


class IdleGpuWatchdog(pulumi.ComponentResource):
    """Stops opted-in accelerator instances that CloudWatch shows idle for `idle_minutes`."""

    def __init__(
        self, name: str, args: IdleGpuWatchdogArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(f"IdleGpuWatchdog {name!r}", input_problems(args, validate_idle_watchdog))
        super().__init__("inference-infra:aws:IdleGpuWatchdog", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        settings = lambda_settings(args)
        opt_in = f"{args.tag_key}={args.tag_value}"
        every_seconds = schedule_seconds(args.schedule_expression) or 300
        # A run older than one interval is stale: the next scheduled run does its work.
        event_age_seconds = min(max(every_seconds, 60), 21600)

        self.dead_letter_queue = aws_lambda.dead_letter_queue(
            name, kms_key=args.kms_key, tags=ROLE_TAG, parent=self
        )
        self.topic: aws.sns.Topic | None = None
        topic_arn: pulumi.Input[str] | None = args.sns_topic_arn
        if args.create_sns_topic:
            self.topic = aws.sns.Topic(
                f"{name}-topic",
                kms_master_key_id=args.kms_key or "alias/aws/sns",
                tags={"Name": f"{name}-topic", **ROLE_TAG},
                opts=child,
            )
            topic_arn = self.topic.arn
        variables: dict[str, pulumi.Input[str]] = dict(settings.as_env())
        if topic_arn is not None:
            variables["SNS_TOPIC_ARN"] = topic_arn
        plumbing = aws_lambda.lambda_function(
            name,
            parent=self,
            description=f"Stops instances tagged {opt_in} idle for {args.idle_minutes} min",
            role_description=f"Idle GPU watchdog {name}: stops idle instances tagged {opt_in}",
            policy=lambda scope: execution_policy(
                args, scope, dead_letter_arn=self.dead_letter_queue.arn, topic_arn=topic_arn
            ),
            code=lambda_archive(price_table(args.region or pulumi.Config("aws").get("region"))),
            handler=HANDLER,
            environment=variables,
            timeout_seconds=args.timeout_seconds,
            memory_size_mib=args.memory_size_mib,
            log_retention_days=args.log_retention_days,
            kms_key=args.kms_key,
            tags=ROLE_TAG,
            reserved_concurrency=1,  # runs never overlap
            on_failure=aws_lambda.AsyncInvoke(
                dead_letter_arn=self.dead_letter_queue.arn,
                maximum_event_age_seconds=event_age_seconds,
                maximum_retry_attempts=0,  # a failed run is retried by the next scheduled one
            ),
        )
        self.log_group, self.role, self.role_policy = plumbing.log_group, plumbing.role, plumbing.role_policy
        self.function, self.invoke_config = plumbing.function, plumbing.invoke_config
        self.scheduler_role, self.scheduler_policy = aws_lambda.service_role(
            f"{name}-scheduler",
            service="scheduler.amazonaws.com",
            account=plumbing.scope.account,
            description=f"EventBridge Scheduler: invokes the idle GPU watchdog {name}",
            policy=scheduler_policy(self.function.arn, self.dead_letter_queue.arn, args.kms_key),
            tags=ROLE_TAG,
            parent=self,
        )
        self.schedule = aws.scheduler.Schedule(
            f"{name}-schedule",
            description=f"Runs the idle GPU watchdog {name}",
            schedule_expression=args.schedule_expression,
            flexible_time_window={"mode": "OFF"},
            state="ENABLED",
            kms_key_arn=args.kms_key,
            target={
                "arn": self.function.arn,
                "role_arn": self.scheduler_role.arn,
                "input": json.dumps({}),
                "retry_policy": {
                    "maximum_event_age_in_seconds": event_age_seconds,
                    "maximum_retry_attempts": 2,
                },
                "dead_letter_config": {"arn": self.dead_letter_queue.arn},
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.scheduler_policy]),
        )

        self.function_name = self.function.name
        self.function_arn = self.function.arn
        self.schedule_arn = self.schedule.arn
        self.log_group_name = self.log_group.name
        self.dead_letter_queue_url = self.dead_letter_queue.url
        self.topic_arn: pulumi.Output[str] | None = pulumi.Output.from_input(topic_arn) if topic_arn else None
        self.register_outputs(
            {
                "function_name": self.function_name,
                "function_arn": self.function_arn,
                "role_arn": self.role.arn,
                "schedule_arn": self.schedule_arn,
                "log_group_name": self.log_group_name,
                "dead_letter_queue_url": self.dead_letter_queue_url,
                "topic_arn": self.topic_arn,
            }
        )


def execution_policy(
    args: IdleGpuWatchdogArgs,
    scope: aws_lambda.AccountScope,
    *,
    dead_letter_arn: pulumi.Input[str],
    topic_arn: pulumi.Input[str] | None,
) -> pulumi.Output[str]:
    """Least privilege: stop only opted-in instances; read-only describes and metrics; no terminate."""
    in_region = {"StringEquals": {"aws:RequestedRegion": scope.region}}
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ListCandidates",  # describe calls support no resource-level permissions
            "Effect": "Allow",
            "Action": ["ec2:DescribeInstances", "ec2:DescribeSpotInstanceRequests"],
            "Resource": "*",
            "Condition": in_region,
        },
        {
            "Sid": "StopOptedInInstances",
            "Effect": "Allow",
            "Action": "ec2:StopInstances",
            "Resource": scope.arn("ec2", "instance/*"),
            # The opt-in tag and the stack's scope (scope_tags): another stack's opted-in machine is not
            # stoppable, even if its tags are mistaken for this stack's by a careless filter.
            "Condition": {
                "StringEquals": {
                    f"aws:ResourceTag/{args.tag_key}": args.tag_value,
                    **{f"aws:ResourceTag/{k}": v for k, v in sorted(scope_tags(args).items())},
                }
            },
        },
        {
            "Sid": "ReadUtilization",
            "Effect": "Allow",
            "Action": "cloudwatch:GetMetricData",
            "Resource": "*",
            "Condition": in_region,
        },
        {
            "Sid": "PublishSummaryMetric",
            "Effect": "Allow",
            "Action": "cloudwatch:PutMetricData",
            "Resource": "*",
            "Condition": {"StringEquals": {"cloudwatch:namespace": args.summary_metric_namespace}},
        },
        aws_lambda.write_logs_statement(scope.log_group_arn),
        aws_lambda.tracing_statement(),
        aws_lambda.dead_letter_statement(dead_letter_arn),
    ]
    if topic_arn is not None:
        statements.append(
            {"Sid": "Notify", "Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn}
        )
    if args.kms_key is not None:  # publish to an encrypted topic, send to an encrypted queue
        statements.append(aws_lambda.use_key_statement(args.kms_key))
    return aws_lambda.policy_document(statements)


def scheduler_policy(
    function_arn: pulumi.Input[str], dead_letter_arn: pulumi.Input[str], kms_key_arn: pulumi.Input[str] | None
) -> pulumi.Output[str]:
    statements: list[dict[str, Any]] = [
        {
            "Sid": "InvokeWatchdog",
            "Effect": "Allow",
            "Action": "lambda:InvokeFunction",
            "Resource": function_arn,
        },
        aws_lambda.dead_letter_statement(dead_letter_arn),
    ]
    if kms_key_arn is not None:
        statements.append(aws_lambda.use_key_statement(kms_key_arn))
    return aws_lambda.policy_document(statements)
