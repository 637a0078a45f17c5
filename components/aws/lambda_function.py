"""The Lambda plumbing the AWS components that run code of ours share (IdleGpuWatchdog, SpotDrain,
OffHours): the package archive, the log group, the execution role and its inline policy, the function,
its asynchronous-invocation settings, the dead-letter queue and the invoke permission.

Plain functions, not a ComponentResource: every resource is a child of the calling component and
keeps the name the component gave it before this module existed (`{name}-logs`, `{name}-role`,
`{name}-policy`, `{name}-function`, `{name}-async`, `{name}-dlq`, `{name}-invoke`), so moving a
component onto these helpers replaces nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pulumi
import pulumi_aws as aws

from inference_infra.components.function_source import FunctionSource

RUNTIME = "python3.13"
ARCHITECTURE = "arm64"
DEAD_LETTER_RETENTION_SECONDS = 14 * 24 * 3600  # SQS's maximum

__all__ = [
    "RUNTIME",
    "AccountScope",
    "AsyncInvoke",
    "LambdaFunction",
    "LambdaPackage",
    "assume_role_policy",
    "dead_letter_queue",
    "dead_letter_statement",
    "invoke_permission",
    "lambda_function",
    "policy_document",
    "service_role",
    "tracing_statement",
    "use_key_statement",
    "write_logs_statement",
]


@dataclass(frozen=True)
class LambdaPackage:
    """A package under lambdas/ and the sibling packages it imports (`shared`), laid out in the
    archive as components/function_source.py says: alone under its own folder name, or, with shared
    packages, under `lambdas/` beside them. Its entry point is `handler.handler` in the package."""

    source: FunctionSource

    @classmethod
    def of(cls, module: ModuleType, *, shared: tuple[ModuleType, ...] = ()) -> LambdaPackage:
        return cls(FunctionSource.of(module, shared=shared))

    @property
    def directory(self) -> Path:
        return self.source.directory

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def handler(self) -> str:
        # The runtime splits the handler at its last dot and imports the module path before it
        # (aws-lambda-python-runtime-interface-client, awslambdaric/bootstrap.py `_get_handler`, read
        # 2026-12-02 at 4.0.1), from the function's root, which is on sys.path.
        return self.source.handler()

    def archive(self, extra: Mapping[str, str] | None = None) -> pulumi.AssetArchive:
        """The package's modules (and its shared packages'), plus `extra` files (name -> text) beside
        them."""
        assets: dict[str, pulumi.Asset | pulumi.Archive] = {
            name: pulumi.FileAsset(str(path)) for name, path in self.source.members().items()
        }
        for file_name, text in (extra or {}).items():
            assets[f"{self.source.prefix}/{file_name}"] = pulumi.StringAsset(text)
        return pulumi.AssetArchive(assets)


def assume_role_policy(service: str, *, account: str | None = None) -> str:
    """A trust policy for one AWS service; with `account`, only on behalf of that account."""
    statement: dict[str, Any] = {
        "Effect": "Allow",
        "Principal": {"Service": service},
        "Action": "sts:AssumeRole",
    }
    if account is not None:  # confused-deputy guard: only this account's schedules and rules
        statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account}}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def policy_document(statements: Sequence[Mapping[str, Any]]) -> pulumi.Output[str]:
    return pulumi.Output.json_dumps({"Version": "2012-10-17", "Statement": list(statements)})


def write_logs_statement(log_group_arn: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "Sid": "WriteOwnLogs",
        "Effect": "Allow",
        "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
        "Resource": pulumi.Output.concat(log_group_arn, ":*"),
    }


def tracing_statement() -> dict[str, Any]:
    return {
        "Sid": "Tracing",  # X-Ray takes no resource-level permissions
        "Effect": "Allow",
        "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
        "Resource": "*",
    }


def dead_letter_statement(dead_letter_arn: pulumi.Input[str]) -> dict[str, Any]:
    return {"Sid": "DeadLetter", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": dead_letter_arn}


def use_key_statement(kms_key: pulumi.Input[str]) -> dict[str, Any]:
    """Encrypt to and decrypt from the customer-managed key (encrypted queues and topics)."""
    return {
        "Sid": "UseKey",
        "Effect": "Allow",
        "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
        "Resource": kms_key,
    }


def service_role(
    prefix: str,
    *,
    service: str,
    description: str,
    policy: pulumi.Input[str],
    tags: Mapping[str, str],
    parent: pulumi.Resource,
    account: pulumi.Output[str] | None = None,
) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
    """`{prefix}-role`, which `service` may assume (for `account` only, when given), and its inline
    policy `{prefix}-policy`."""
    child = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        f"{prefix}-role",
        description=description,
        assume_role_policy=(
            assume_role_policy(service)
            if account is None
            else account.apply(lambda a: assume_role_policy(service, account=a))
        ),
        tags=dict(tags),
        opts=child,
    )
    role_policy = aws.iam.RolePolicy(f"{prefix}-policy", role=role.id, policy=policy, opts=child)
    return role, role_policy


def dead_letter_queue(
    name: str, *, kms_key: pulumi.Input[str] | None, tags: Mapping[str, str], parent: pulumi.Resource
) -> aws.sqs.Queue:
    """`{name}-dlq`: encrypted with the customer key when there is one, else SQS-managed."""
    return aws.sqs.Queue(
        f"{name}-dlq",
        message_retention_seconds=DEAD_LETTER_RETENTION_SECONDS,
        sqs_managed_sse_enabled=None if kms_key is not None else True,
        kms_master_key_id=kms_key,
        tags={"Name": f"{name}-dlq", **tags},
        opts=pulumi.ResourceOptions(parent=parent),
    )


@dataclass(frozen=True)
class AccountScope:
    """Where the function lives, read from its log group's ARN (arn:partition:logs:region:account:...):
    no data-source look-ups needed."""

    partition: pulumi.Output[str]
    region: pulumi.Output[str]
    account: pulumi.Output[str]
    log_group_arn: pulumi.Output[str]

    def arn(self, service: str, resource: str) -> pulumi.Output[str]:
        """The ARN of `resource` (a path, wildcards allowed) of `service` in this account and region."""
        return pulumi.Output.format(
            "arn:{0}:{1}:{2}:{3}:{4}", self.partition, service, self.region, self.account, resource
        )


@dataclass(frozen=True)
class AsyncInvoke:
    """Lambda's own retries of an asynchronous invocation, and where a failed one goes."""

    dead_letter_arn: pulumi.Input[str]
    maximum_event_age_seconds: int
    maximum_retry_attempts: int


@dataclass(frozen=True)
class LambdaFunction:
    log_group: aws.cloudwatch.LogGroup
    role: aws.iam.Role
    role_policy: aws.iam.RolePolicy
    function: aws.lambda_.Function
    invoke_config: aws.lambda_.FunctionEventInvokeConfig | None
    scope: AccountScope


def lambda_function(
    name: str,
    *,
    parent: pulumi.Resource,
    description: str,
    role_description: str,
    policy: Callable[[AccountScope], pulumi.Input[str]],
    code: pulumi.Archive,
    handler: str,
    environment: Mapping[str, pulumi.Input[str]],
    timeout_seconds: int,
    memory_size_mib: int,
    log_retention_days: int,
    kms_key: pulumi.Input[str] | None,
    tags: Mapping[str, str],
    reserved_concurrency: int | None = None,
    tracing: bool = True,
    on_failure: AsyncInvoke | None = None,
) -> LambdaFunction:
    """The log group `{name}-logs`, the execution role `{name}-role` with the inline policy
    `{name}-policy` (`policy` of the function's account scope), the function `{name}-function` and,
    with `on_failure`, its asynchronous-invocation settings `{name}-async`."""
    child = pulumi.ResourceOptions(parent=parent)
    log_group = aws.cloudwatch.LogGroup(
        f"{name}-logs",
        name_prefix=f"/aws/lambda/{name}-",
        retention_in_days=log_retention_days,
        kms_key_id=kms_key,
        tags=dict(tags),
        opts=child,
    )
    partition, region, account = (log_group.arn.apply(lambda arn, i=i: arn.split(":")[i]) for i in (1, 3, 4))
    scope = AccountScope(partition=partition, region=region, account=account, log_group_arn=log_group.arn)
    role, role_policy = service_role(
        name,
        service="lambda.amazonaws.com",
        description=role_description,
        policy=policy(scope),
        tags=tags,
        parent=parent,
    )
    function = aws.lambda_.Function(
        f"{name}-function",
        description=description,
        role=role.arn,
        runtime=RUNTIME,
        architectures=[ARCHITECTURE],
        handler=handler,
        code=code,
        timeout=timeout_seconds,
        memory_size=memory_size_mib,
        reserved_concurrent_executions=reserved_concurrency,
        tracing_config={"mode": "Active"} if tracing else None,
        logging_config={"log_format": "Text", "log_group": log_group.name},
        environment={"variables": dict(environment)},
        kms_key_arn=kms_key,
        tags=dict(tags),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[role_policy, log_group]),
    )
    invoke_config = None
    if on_failure is not None:
        invoke_config = aws.lambda_.FunctionEventInvokeConfig(
            f"{name}-async",
            function_name=function.name,
            maximum_event_age_in_seconds=on_failure.maximum_event_age_seconds,
            maximum_retry_attempts=on_failure.maximum_retry_attempts,
            destination_config={"on_failure": {"destination": on_failure.dead_letter_arn}},
            opts=child,
        )
    return LambdaFunction(
        log_group=log_group,
        role=role,
        role_policy=role_policy,
        function=function,
        invoke_config=invoke_config,
        scope=scope,
    )


def invoke_permission(
    name: str,
    *,
    function: aws.lambda_.Function,
    principal: str,
    source_arn: pulumi.Input[str],
    parent: pulumi.Resource,
) -> aws.lambda_.Permission:
    """`{name}-invoke`: `principal` may invoke the function on behalf of `source_arn` only."""
    return aws.lambda_.Permission(
        f"{name}-invoke",
        action="lambda:InvokeFunction",
        function=function.name,
        principal=principal,
        source_arn=source_arn,
        opts=pulumi.ResourceOptions(parent=parent),
    )
