"""IdleGpuWatchdog under Pulumi's mock runtime: what the engine would receive."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pulumi
import pytest

from inference_infra.components.aws import IdleGpuWatchdog, IdleGpuWatchdogArgs
from inference_infra.components.aws.idle_watchdog import (
    HANDLER,
    LAMBDA_DIR,
    lambda_archive,
    price_table,
    validate_idle_watchdog,
)
from inference_infra.components.catalog import Cloud, instance_types
from inference_infra.components.errors import InputError
from inference_infra.lambdas.idle_gpu_watchdog.prices import parse_prices
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings

FUNCTION = "aws:lambda/function:Function"
POLICY = "aws:iam/rolePolicy:RolePolicy"
SCHEDULE = "aws:scheduler/schedule:Schedule"


def statements(policy_json: str) -> dict[str, dict]:
    return {s["Sid"]: s for s in json.loads(policy_json)["Statement"]}


def actions(statement: dict) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def test_idle_watchdog_stop_permission_requires_the_opt_in_tag(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(tag_key="Idle", tag_value="stop-me"))
    policy = statements(plan_of().one(POLICY, "watchdog-policy").props["policy"])
    stop = policy["StopOptedInInstances"]
    assert actions(stop) == ["ec2:StopInstances"]
    assert stop["Resource"] == "arn:aws:ec2:us-east-1:123456789012:instance/*"
    assert stop["Condition"] == {"StringEquals": {"aws:ResourceTag/Idle": "stop-me"}}


def test_idle_watchdog_stop_permission_is_scoped_to_the_stack_environment_by_default(plan_of, tagged):
    """With cost tags registered, the watchdog lists and may stop only instances of its own Environment:
    another stack's opted-in machine in the same account is out of its reach (#33 item 9)."""
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())
    capture = plan_of()
    stop = statements(capture.one(POLICY, "watchdog-policy").props["policy"])["StopOptedInInstances"]
    assert stop["Condition"] == {
        "StringEquals": {
            "aws:ResourceTag/AutoShutdown": "true",
            "aws:ResourceTag/Environment": tagged.environment,
        }
    }
    variables = capture.one(FUNCTION).props["environment"]["variables"]
    assert json.loads(variables["SCOPE_TAGS"]) == {"Environment": tagged.environment}


def test_idle_watchdog_explicit_scope_replaces_the_default_and_empty_means_account_wide(plan_of, tagged):
    IdleGpuWatchdog("scoped", IdleGpuWatchdogArgs(scope_tags={"Team": "ml", "Environment": "prod"}))
    IdleGpuWatchdog("wide", IdleGpuWatchdogArgs(scope_tags={}))
    capture = plan_of()
    scoped = statements(capture.one(POLICY, "scoped-policy").props["policy"])["StopOptedInInstances"]
    assert scoped["Condition"]["StringEquals"] == {
        "aws:ResourceTag/AutoShutdown": "true",
        "aws:ResourceTag/Environment": "prod",
        "aws:ResourceTag/Team": "ml",
    }
    wide = statements(capture.one(POLICY, "wide-policy").props["policy"])["StopOptedInInstances"]
    assert wide["Condition"] == {"StringEquals": {"aws:ResourceTag/AutoShutdown": "true"}}
    functions = {f.name: f.props["environment"]["variables"] for f in capture.of_type(FUNCTION)}
    assert len(functions) == 2
    wide_env = next(v for name, v in functions.items() if name.startswith("wide"))
    assert "SCOPE_TAGS" not in wide_env


@pytest.mark.parametrize(
    "scope",
    [
        {"aws:cloudformation:stack-name": "x"},
        {"AutoShutdown": "true"},  # the opt-in tag itself is not a scope
        {"Environment": ""},
        {"": "prod"},
        {"Environment": 3},
        {f"k{i}": "v" for i in range(11)},
        ["Environment", "prod"],
        # what would reach the IAM condition or the DescribeInstances filter: EC2's tag characters only
        {"Environment": "prod\n"},
        {"Env\nironment": "prod"},
        {"Environment": "pr*d"},
        {"Environment": "$(id)"},
        {"Environment": "100%"},
    ],
)
def test_idle_watchdog_rejects_a_careless_scope(scope):
    with pytest.raises(
        InputError, match=r"scope_tags .* must (map at most 10 tag keys|be a mapping of a string to a string)"
    ):
        IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(scope_tags=scope))


def test_idle_watchdog_role_can_never_terminate_and_grants_no_wildcard_actions(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(create_sns_topic=True))
    capture = plan_of()
    granted = [
        a
        for r in capture.of_type(POLICY)
        for s in json.loads(r.props["policy"])["Statement"]
        for a in actions(s)
    ]
    assert not [a for a in granted if "Terminate" in a or a.endswith("*")]
    assert all(
        s["Effect"] == "Allow"
        for r in capture.of_type(POLICY)
        for s in json.loads(r.props["policy"])["Statement"]
    )
    wildcard_resource = {
        a
        for r in capture.of_type(POLICY)
        for s in json.loads(r.props["policy"])["Statement"]
        if s["Resource"] == "*"
        for a in actions(s)
    }
    # Only calls that support no resource-level permissions get Resource "*".
    assert wildcard_resource == {
        "ec2:DescribeInstances",
        "ec2:DescribeSpotInstanceRequests",
        "cloudwatch:GetMetricData",
        "cloudwatch:PutMetricData",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }


def test_idle_watchdog_scopes_metrics_logs_queue_and_topic(plan_of):
    watchdog = IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(create_sns_topic=True))
    capture = plan_of()
    policy = statements(capture.one(POLICY, "watchdog-policy").props["policy"])
    assert policy["PublishSummaryMetric"]["Condition"] == {
        "StringEquals": {"cloudwatch:namespace": "InferenceInfra/IdleWatchdog"}
    }
    assert policy["ListCandidates"]["Condition"] == {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}
    assert re.fullmatch(
        r"arn:aws:logs:us-east-1:123456789012:log-group:.+:\*", policy["WriteOwnLogs"]["Resource"]
    )
    assert re.fullmatch(
        r"arn:aws:sqs:us-east-1:123456789012:watchdog-dlq-\w+", policy["DeadLetter"]["Resource"]
    )
    assert policy["Notify"]["Resource"].startswith("arn:aws:sns:us-east-1:123456789012:watchdog-topic")
    assert watchdog.topic is not None


def test_idle_watchdog_schedule_runs_every_five_minutes_with_its_own_role(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())
    capture = plan_of()
    schedule = capture.one(SCHEDULE).props
    function = capture.one(FUNCTION)
    assert schedule["scheduleExpression"] == "rate(5 minutes)"
    assert schedule["flexibleTimeWindow"] == {"mode": "OFF"}
    assert schedule["target"]["arn"].startswith(
        "arn:aws:lambda:us-east-1:123456789012:function:watchdog-function"
    )
    assert schedule["target"]["retryPolicy"] == {"maximumEventAgeInSeconds": 300, "maximumRetryAttempts": 2}
    assert schedule["target"]["deadLetterConfig"]["arn"].startswith("arn:aws:sqs:")
    assert re.fullmatch(
        r"arn:aws:iam::123456789012:role/watchdog-scheduler-role-\w+", schedule["target"]["roleArn"]
    )
    scheduler_role = capture.one("aws:iam/role:Role", "watchdog-scheduler-role").props
    trust = json.loads(scheduler_role["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
    invoke = statements(capture.one(POLICY, "watchdog-scheduler-policy").props["policy"])["InvokeWatchdog"]
    assert invoke["Action"] == "lambda:InvokeFunction"
    assert invoke["Resource"] == schedule["target"]["arn"]
    assert re.fullmatch(r"arn:aws:iam::123456789012:role/watchdog-role-\w+", function.props["role"])


def test_idle_watchdog_takes_a_custom_schedule(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(schedule_expression="rate(15 minutes)"))
    schedule = plan_of().one(SCHEDULE).props
    assert schedule["scheduleExpression"] == "rate(15 minutes)"
    assert schedule["target"]["retryPolicy"]["maximumEventAgeInSeconds"] == 900


def test_idle_watchdog_function_is_single_flight_traced_and_logged(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(log_retention_days=14))
    capture = plan_of()
    function = capture.one(FUNCTION).props
    logs = capture.one("aws:cloudwatch/logGroup:LogGroup").props
    assert function["reservedConcurrentExecutions"] == 1
    assert function["tracingConfig"] == {"mode": "Active"}
    assert function["runtime"] == "python3.13"
    # the package under lambdas/ beside the shared core (components/function_source.py); the runtime
    # imports everything before the last dot (awslambdaric/bootstrap.py `_get_handler`, 4.0.1)
    assert function["handler"] == HANDLER == "lambdas.idle_gpu_watchdog.handler.handler"
    # CreateFunction's Handler: at most 128 characters, no whitespace (Lambda API reference,
    # CreateFunction; terraform-provider-aws checks the length since hashicorp/terraform-provider-aws#12411)
    assert re.fullmatch(r"\S{1,128}", HANDLER)
    assert logs["retentionInDays"] == 14
    assert logs["namePrefix"] == "/aws/lambda/watchdog-"
    assert function["loggingConfig"]["logFormat"] == "Text"  # the JSON lines pass through unwrapped
    assert function["loggingConfig"]["logGroup"]
    invoke = capture.one("aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig").props
    assert invoke["maximumRetryAttempts"] == 0
    assert invoke["destinationConfig"]["onFailure"]["destination"].startswith("arn:aws:sqs:")


def test_idle_watchdog_dead_letter_queue_and_topic_are_encrypted(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(create_sns_topic=True))
    capture = plan_of()
    assert capture.one("aws:sqs/queue:Queue").props["sqsManagedSseEnabled"] is True
    assert capture.one("aws:sns/topic:Topic").props["kmsMasterKeyId"] == "alias/aws/sns"


def test_idle_watchdog_uses_a_customer_key_everywhere_when_given(plan_of):
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(create_sns_topic=True, kms_key=key))
    capture = plan_of()
    assert capture.one("aws:sqs/queue:Queue").props["kmsMasterKeyId"] == key
    assert "sqsManagedSseEnabled" not in capture.one("aws:sqs/queue:Queue").props
    assert capture.one("aws:sns/topic:Topic").props["kmsMasterKeyId"] == key
    assert capture.one("aws:cloudwatch/logGroup:LogGroup").props["kmsKeyId"] == key
    assert capture.one(FUNCTION).props["kmsKeyArn"] == key
    assert capture.one(SCHEDULE).props["kmsKeyArn"] == key
    for name in ("watchdog-policy", "watchdog-scheduler-policy"):
        assert statements(capture.one(POLICY, name).props["policy"])["UseKey"]["Resource"] == key


def test_idle_watchdog_environment_carries_the_settings(plan_of):
    topic = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"
    args = IdleGpuWatchdogArgs(
        idle_minutes=20, util_threshold_percent=3, grace_minutes=45, dry_run=True, sns_topic_arn=topic
    )
    IdleGpuWatchdog("watchdog", args)
    env = plan_of().one(FUNCTION).props["environment"]["variables"]
    assert env["IDLE_MINUTES"] == "20"
    assert env["UTIL_THRESHOLD_PERCENT"] == "3"
    assert env["GRACE_MINUTES"] == "45"
    assert env["DRY_RUN"] == "true"
    assert env["SNS_TOPIC_ARN"] == topic
    assert (env["TAG_KEY"], env["TAG_VALUE"]) == ("AutoShutdown", "true")
    assert (env["METRIC_NAMESPACE"], env["METRIC_NAME"]) == ("CWAgent", "nvidia_smi_utilization_gpu")
    # What the component sets is exactly what the Lambda reads back.
    settings = Settings.from_env(env)
    assert settings.as_env() | {"SNS_TOPIC_ARN": topic} == env
    assert settings.metric_period_seconds == 300


def test_idle_watchdog_without_a_topic_sets_no_topic_and_no_publish_permission(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())
    capture = plan_of()
    assert "SNS_TOPIC_ARN" not in capture.one(FUNCTION).props["environment"]["variables"]
    assert "Notify" not in statements(capture.one(POLICY, "watchdog-policy").props["policy"])
    assert capture.of_type("aws:sns/topic:Topic") == []


def test_idle_watchdog_packages_every_module_and_a_price_table(plan_of):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(region="us-east-1"))
    assets = plan_of().one(FUNCTION).props["code"]["assets"]
    modules = {f"lambdas/idle_gpu_watchdog/{p.name}" for p in LAMBDA_DIR.glob("*.py")}
    core = {f"lambdas/watchdog_core/{p.name}" for p in (LAMBDA_DIR.parent / "watchdog_core").glob("*.py")}
    assert set(assets) == modules | core | {"lambdas/__init__.py", "lambdas/idle_gpu_watchdog/prices.json"}
    assert "lambdas/idle_gpu_watchdog/handler.py" in assets
    assert "lambdas/watchdog_core/loop.py" in assets
    assert not any(name.startswith(("lambdas/spot_drain", "lambdas/pool_asleep")) for name in assets)
    prices = parse_prices(json.loads(assets["lambdas/idle_gpu_watchdog/prices.json"]["text"]))
    assert prices.region == "us-east-1"
    assert set(prices.on_demand) == {i.name for i in instance_types(Cloud.AWS)}


def test_idle_watchdog_lambda_source_never_terminates():
    source = "\n".join(p.read_text() for p in LAMBDA_DIR.glob("*.py"))
    assert "terminate_instances" not in source
    assert "TerminateInstances" not in source.replace("never TerminateInstances", "")
    assert "from components" not in source
    assert "import components" not in source


def test_idle_watchdog_package_runs_alone(tmp_path):
    """Unpack the archive the component ships and import the handler from it in a fresh interpreter."""
    archive = lambda_archive(price_table("us-west-2"))
    for name, asset in archive.assets.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            asset.text if isinstance(asset, pulumi.StringAsset) else Path(asset.path).read_text()
        )
    probe = (
        "import sys, lambdas.idle_gpu_watchdog.handler as h\n"
        "from lambdas.idle_gpu_watchdog.prices import load_prices\n"
        "assert h.__file__.startswith(sys.argv[1]), h.__file__\n"
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('components', 'inference_infra'))\n"
        "print(load_prices().region, ours)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["us-west-2", "[]"]


def test_price_table_prices_spot_at_or_below_on_demand():
    table = price_table("us-east-1")
    assert table["version"] == 1
    assert table["types"]["g5.xlarge"]["spot"] < table["types"]["g5.xlarge"]["on_demand"]
    for prices in table["types"].values():  # no spot discount in the catalog: priced as on-demand
        assert 0 < prices["spot"] <= prices["on_demand"]


def test_idle_watchdog_children_are_named_after_the_instance(plan_of):
    IdleGpuWatchdog("a", IdleGpuWatchdogArgs())
    IdleGpuWatchdog("b", IdleGpuWatchdogArgs())
    capture = plan_of()
    for component in capture.of_type("inference-infra:aws:IdleGpuWatchdog"):
        children = capture.children(component)
        assert len(children) == 9
        assert all(c.name.startswith(f"{component.name}-") for c in children)


def test_idle_watchdog_registers_its_outputs(plan_of):
    watchdog = IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())
    component = plan_of().one("inference-infra:aws:IdleGpuWatchdog")
    assert set(component.outputs) >= {"function_name", "function_arn", "schedule_arn", "log_group_name"}
    assert isinstance(watchdog.function_arn, pulumi.Output)


# -- rejections -----------------------------------------------------------------------------------


def test_idle_watchdog_rejects_every_bad_input_at_once(plan_of):
    args = IdleGpuWatchdogArgs(
        tag_key="aws:owner",
        idle_minutes=3,
        util_threshold_percent=0,
        grace_minutes=-5,
        schedule_expression="every 5 minutes",
        log_retention_days=10,
    )
    with pytest.raises(InputError) as caught:
        IdleGpuWatchdog("watchdog", args)
    message = str(caught.value)
    assert message.startswith("IdleGpuWatchdog 'watchdog': 6 problems:")
    assert "tag_key 'aws:owner' must be a tag key of 1-128 characters not starting with 'aws:'" in message
    assert "idle_minutes 3 must be a whole number of minutes, 10 to 1440" in message
    assert "util_threshold_percent 0 must be a number above 0 and at most 100" in message
    assert "grace_minutes -5 must be a whole number of minutes, 0 to 10080" in message
    assert (
        "schedule_expression 'every 5 minutes' must be 'rate(1 minute)', 'rate(N minutes|hours|days)'"
        in message
    )
    assert "log_retention_days 10 must be one of CloudWatch Logs' values" in message
    assert plan_of().of_type(FUNCTION) == []  # nothing was registered


def test_idle_watchdog_rejects_a_topic_twice():
    args = IdleGpuWatchdogArgs(create_sns_topic=True, sns_topic_arn="arn:aws:sns:us-east-1:123456789012:t")
    with pytest.raises(
        InputError, match="sns_topic_arn 'arn:aws:sns:us-east-1:123456789012:t' cannot be set"
    ):
        IdleGpuWatchdog("watchdog", args)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"metric_period_seconds": 90}, "metric_period_seconds 90 must be a multiple of 60 seconds"),
        (
            {"idle_minutes": 12, "metric_period_seconds": 300},
            "metric_period_seconds 300 must divide the idle window",
        ),
        ({"schedule_expression": "rate(1 minutes)"}, "schedule_expression 'rate(1 minutes)'"),
        ({"schedule_expression": "rate(0 minutes)"}, "schedule_expression 'rate(0 minutes)'"),
        ({"sns_topic_arn": "gpu-alerts"}, "sns_topic_arn 'gpu-alerts' must be an SNS topic ARN"),
        ({"kms_key": "alias/mine"}, "kms_key 'alias/mine' must be a KMS key ARN"),
        (
            {"summary_metric_namespace": "AWS/EC2"},
            "summary_metric_namespace 'AWS/EC2' must not start with 'AWS/'",
        ),
        ({"timeout_seconds": 901}, "timeout_seconds 901 must be a whole number from 30 to 900"),
        ({"region": "Virginia"}, "region 'Virginia' must be an AWS region"),
        ({"util_threshold_percent": True}, "util_threshold_percent True must be a number above 0"),
        ({"tag_key": "Auto\nShutdown"}, "tag_key 'Auto\\nShutdown' must be a tag key"),
        ({"tag_value": "true\n"}, "tag_value 'true\\n' must be a tag value"),
        ({"exclude_tag_key": "Keep*"}, "exclude_tag_key 'Keep*' must be a tag key"),
    ],
)
def test_validate_idle_watchdog_rejects_bad_values(overrides, words):
    problems = validate_idle_watchdog(IdleGpuWatchdogArgs(**overrides))
    assert any(words in str(p) for p in problems), [str(p) for p in problems]


@pytest.mark.parametrize(("old", "new"), [("kms_key_arn", "kms_key"), ("price_region", "region")])
def test_idle_watchdog_args_accept_the_old_input_names_with_a_warning(old, new):
    with pytest.warns(
        DeprecationWarning, match=rf"IdleGpuWatchdogArgs\({old}=\.\.\.\) is deprecated.*use {new}"
    ):
        args = IdleGpuWatchdogArgs(**{old: "us-east-2"})
    assert getattr(args, new) == "us-east-2"


def test_validate_idle_watchdog_accepts_the_defaults_and_cron():
    assert validate_idle_watchdog(IdleGpuWatchdogArgs()) == []
    assert validate_idle_watchdog(IdleGpuWatchdogArgs(schedule_expression="cron(0/10 * * * ? *)")) == []
    assert validate_idle_watchdog(IdleGpuWatchdogArgs(schedule_expression="rate(1 minute)")) == []
