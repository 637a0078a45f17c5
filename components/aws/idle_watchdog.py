"""IdleGpuWatchdog: a scheduled Lambda that stops accelerator instances that are provably idle.

The Lambda source is `lambdas/idle_gpu_watchdog/` (standard library and boto3
only), packaged with a price table rendered from the catalog so it can
estimate what each stop saves. Around it: an EventBridge Scheduler schedule
with its own role and retry policy, an execution role that may stop only
instances carrying the opt-in tag, a log group with retention, reserved
concurrency 1 (runs never overlap), an encrypted dead-letter queue for failed
invocations, X-Ray tracing and, optionally, an encrypted SNS topic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.idle_watchdog_args import (
    LOG_RETENTION_DAYS,
    IdleGpuWatchdogArgs,
    schedule_seconds,
    validate_idle_watchdog,
)
from inference_infra.components.catalog import Cloud, PriceModel, hourly_price, instance_types
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import check_types
from inference_infra.lambdas import idle_gpu_watchdog as lambda_package
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings, default_period_seconds

LAMBDA_DIR = Path(lambda_package.__file__).resolve().parent
PACKAGE = LAMBDA_DIR.name  # the folder inside the archive, so the modules' relative imports work
HANDLER = f"{PACKAGE}.handler.handler"
RUNTIME = "python3.13"

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
    )


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
    """The Lambda package: the watchdog's modules under PACKAGE/, and its price table."""
    assets: dict[str, pulumi.Asset | pulumi.Archive] = {
        f"{PACKAGE}/{path.name}": pulumi.FileAsset(str(path)) for path in sorted(LAMBDA_DIR.glob("*.py"))
    }
    assets[f"{PACKAGE}/prices.json"] = pulumi.StringAsset(json.dumps(prices, indent=1, sort_keys=True))
    return pulumi.AssetArchive(assets)


class IdleGpuWatchdog(pulumi.ComponentResource):
    """Stops opted-in accelerator instances that CloudWatch shows idle for `idle_minutes`."""

    def __init__(
        self, name: str, args: IdleGpuWatchdogArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(f"IdleGpuWatchdog {name!r}", check_types(args) or validate_idle_watchdog(args))
        super().__init__("inference-infra:aws:IdleGpuWatchdog", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        settings = lambda_settings(args)
        opt_in = f"{args.tag_key}={args.tag_value}"
        every_seconds = schedule_seconds(args.schedule_expression) or 300
        # A run older than one interval is stale: the next scheduled run does its work.
        event_age_seconds = min(max(every_seconds, 60), 21600)

        self.dead_letter_queue = aws.sqs.Queue(
            f"{name}-dlq",
            message_retention_seconds=14 * 24 * 3600,
            sqs_managed_sse_enabled=None if args.kms_key is not None else True,
            kms_master_key_id=args.kms_key,
            tags={"Name": f"{name}-dlq", "Role": "idle-gpu-watchdog"},
            opts=child,
        )
        self.topic: aws.sns.Topic | None = None
        topic_arn: pulumi.Input[str] | None = args.sns_topic_arn
        if args.create_sns_topic:
            self.topic = aws.sns.Topic(
                f"{name}-topic",
                kms_master_key_id=args.kms_key or "alias/aws/sns",
                tags={"Name": f"{name}-topic", "Role": "idle-gpu-watchdog"},
                opts=child,
            )
            topic_arn = self.topic.arn
        self.log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name_prefix=f"/aws/lambda/{name}-",
            retention_in_days=args.log_retention_days,
            kms_key_id=args.kms_key,
            tags={"Role": "idle-gpu-watchdog"},
            opts=child,
        )
        # The log group's ARN names the partition, region and account: no data-source look-ups needed.
        partition, region, account = (_arn_field(self.log_group.arn, i) for i in (1, 3, 4))
        self.role = aws.iam.Role(
            f"{name}-role",
            description=f"Idle GPU watchdog {name}: stops idle instances tagged {opt_in}",
            assume_role_policy=json.dumps(_trust("lambda.amazonaws.com")),
            tags={"Role": "idle-gpu-watchdog"},
            opts=child,
        )
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=execution_policy(
                args,
                account=account,
                region=region,
                partition=partition,
                log_group_arn=self.log_group.arn,
                dead_letter_arn=self.dead_letter_queue.arn,
                topic_arn=topic_arn,
            ),
            opts=child,
        )
        variables: dict[str, pulumi.Input[str]] = dict(settings.as_env())
        if topic_arn is not None:
            variables["SNS_TOPIC_ARN"] = topic_arn
        self.function = aws.lambda_.Function(
            f"{name}-function",
            description=f"Stops instances tagged {opt_in} idle for {args.idle_minutes} min",
            role=self.role.arn,
            runtime=RUNTIME,
            architectures=["arm64"],
            handler=HANDLER,
            code=lambda_archive(price_table(args.region or pulumi.Config("aws").get("region"))),
            timeout=args.timeout_seconds,
            memory_size=args.memory_size_mib,
            reserved_concurrent_executions=1,
            tracing_config={"mode": "Active"},
            logging_config={"log_format": "Text", "log_group": self.log_group.name},
            environment={"variables": variables},
            kms_key_arn=args.kms_key,
            tags={"Role": "idle-gpu-watchdog"},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role_policy, self.log_group]),
        )
        self.invoke_config = aws.lambda_.FunctionEventInvokeConfig(
            f"{name}-async",
            function_name=self.function.name,
            maximum_event_age_in_seconds=event_age_seconds,
            maximum_retry_attempts=0,  # a failed run is retried by the next scheduled one
            destination_config={"on_failure": {"destination": self.dead_letter_queue.arn}},
            opts=child,
        )
        self.scheduler_role = aws.iam.Role(
            f"{name}-scheduler-role",
            description=f"EventBridge Scheduler: invokes the idle GPU watchdog {name}",
            assume_role_policy=account.apply(
                lambda a: json.dumps(_trust("scheduler.amazonaws.com", account=a))
            ),
            tags={"Role": "idle-gpu-watchdog"},
            opts=child,
        )
        self.scheduler_policy = aws.iam.RolePolicy(
            f"{name}-scheduler-policy",
            role=self.scheduler_role.id,
            policy=scheduler_policy(self.function.arn, self.dead_letter_queue.arn, args.kms_key),
            opts=child,
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


def _arn_field(arn: pulumi.Output[str], index: int) -> pulumi.Output[str]:
    """arn:<partition>:<service>:<region>:<account>:<resource> -> the field at index."""
    return arn.apply(lambda value: value.split(":")[index])


def _trust(service: str, *, account: str | None = None) -> dict[str, Any]:
    statement: dict[str, Any] = {
        "Effect": "Allow",
        "Principal": {"Service": service},
        "Action": "sts:AssumeRole",
    }
    if account is not None:  # confused-deputy guard: only schedules of this account
        statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account}}
    return {"Version": "2012-10-17", "Statement": [statement]}


def execution_policy(
    args: IdleGpuWatchdogArgs,
    *,
    account: pulumi.Input[str],
    region: pulumi.Input[str],
    partition: pulumi.Input[str],
    log_group_arn: pulumi.Input[str],
    dead_letter_arn: pulumi.Input[str],
    topic_arn: pulumi.Input[str] | None,
) -> pulumi.Output[str]:
    """Least privilege: stop only opted-in instances; read-only describes and metrics; no terminate."""
    in_region = {"StringEquals": {"aws:RequestedRegion": region}}
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
            "Resource": pulumi.Output.format("arn:{0}:ec2:{1}:{2}:instance/*", partition, region, account),
            "Condition": {"StringEquals": {f"aws:ResourceTag/{args.tag_key}": args.tag_value}},
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
        {
            "Sid": "WriteOwnLogs",
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": pulumi.Output.concat(log_group_arn, ":*"),
        },
        {
            "Sid": "Tracing",  # X-Ray takes no resource-level permissions
            "Effect": "Allow",
            "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
            "Resource": "*",
        },
        {"Sid": "DeadLetter", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": dead_letter_arn},
    ]
    if topic_arn is not None:
        statements.append(
            {"Sid": "Notify", "Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn}
        )
    if args.kms_key is not None:
        statements.append(
            {
                "Sid": "UseKey",  # publish to an encrypted topic, send to an encrypted queue
                "Effect": "Allow",
                "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
                "Resource": args.kms_key,
            }
        )
    return pulumi.Output.json_dumps({"Version": "2012-10-17", "Statement": statements})


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
        {"Sid": "DeadLetter", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": dead_letter_arn},
    ]
    if kms_key_arn is not None:
        statements.append(
            {
                "Sid": "UseKey",
                "Effect": "Allow",
                "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
                "Resource": kms_key_arn,
            }
        )
    return pulumi.Output.json_dumps({"Version": "2012-10-17", "Statement": statements})
