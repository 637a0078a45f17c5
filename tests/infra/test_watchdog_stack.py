"""The reference stack's watchdog part: prod and dev deploy it; config errors are named by key."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.aws.bootstrap import (
    GPU_UTILIZATION_METRIC,
    METRIC_NAMESPACE,
    NEURON_UTILIZATION_METRIC,
)
from inference_infra.components.errors import InputError
from inference_infra.infra import watchdog_stack
from inference_infra.infra.stack_file import parse_stack_settings
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings

WATCHDOG = "inference-infra:aws:IdleGpuWatchdog"
FUNCTION = "aws:lambda/function:Function"
BASE = {"costCenter": "ml-platform", "owner": "ml-team@example.com"}


def _problems(watchdog: dict) -> list[str]:
    settings = parse_stack_settings({**BASE, "watchdog": json.dumps(watchdog)}, stack="dev")
    return [str(p) for p in watchdog_stack.validate(settings)]


def _environment(capture) -> dict[str, str]:
    component = capture.one(WATCHDOG)
    (function,) = [r for r in capture.descendants(component) if r.type == FUNCTION]
    return function.props["environment"]["variables"]


def test_prod_stack_runs_a_conservative_watchdog(plan_stack):
    capture = plan_stack("prod").capture
    env = _environment(capture)
    assert (env["IDLE_MINUTES"], env["GRACE_MINUTES"], env["UTIL_THRESHOLD_PERCENT"]) == ("60", "120", "3")
    assert env["DRY_RUN"] == "false"
    assert env["STOP_RESERVED_CAPACITY"] == "false"
    assert env["SNS_TOPIC_ARN"] == "arn:aws:sns:us-east-1:123456789012:ml-platform-oncall"
    assert capture.one("aws:scheduler/schedule:Schedule").props["scheduleExpression"] == "rate(10 minutes)"
    assert (
        capture.one("aws:cloudwatch/logGroup:LogGroup", "idle-gpu-watchdog-logs").props["retentionInDays"]
        == 90
    )
    assert {"idleWatchdogFunction", "idleWatchdogSchedule", "idleWatchdogTopic"} <= set(capture.stack_outputs)


def test_dev_stack_stops_idle_gpus_sooner_and_creates_its_topic(plan_stack):
    capture = plan_stack("dev").capture
    env = _environment(capture)
    assert (env["IDLE_MINUTES"], env["GRACE_MINUTES"], env["DRY_RUN"]) == ("20", "30", "false")
    assert env["SNS_TOPIC_ARN"].startswith("arn:aws:sns:us-west-2:")
    assert capture.one("aws:sns/topic:Topic").props["kmsMasterKeyId"] == "alias/aws/sns"
    # The dev GPU (a group's machines, from its launch template) carries the opt-in tag the watchdog's
    # stop permission requires.
    template = capture.one("aws:ec2/launchTemplate:LaunchTemplate").props
    tags = next(s["tags"] for s in template["tagSpecifications"] if s["resourceType"] == "instance")
    assert tags["AutoShutdown"] == env["TAG_VALUE"] == "true"


def test_watchdog_reads_the_metrics_the_fleets_publish(plan_stack):
    env = _environment(plan_stack("prod").capture)
    assert (env["METRIC_NAMESPACE"], env["METRIC_NAME"]) == (METRIC_NAMESPACE, GPU_UTILIZATION_METRIC)
    assert (env["NEURON_METRIC_NAMESPACE"], env["NEURON_METRIC_NAME"]) == (
        METRIC_NAMESPACE,
        NEURON_UTILIZATION_METRIC,
    )
    # The Lambda's own defaults agree with the fleets' bootstrap, so a bare deployment works too.
    defaults = Settings()
    assert (defaults.metric_namespace, defaults.metric_name) == (METRIC_NAMESPACE, GPU_UTILIZATION_METRIC)
    assert defaults.neuron_metric_name == NEURON_UTILIZATION_METRIC


def test_watchdog_stack_rejects_bad_values_by_config_key():
    problems = _problems({"scheduleExpression": "hourly", "logRetentionDays": 10})
    assert any(p.startswith("inference-infra:watchdog.scheduleExpression 'hourly' must be") for p in problems)
    assert any(p.startswith("inference-infra:watchdog.logRetentionDays 10 must be one of") for p in problems)


def test_watchdog_config_rejects_values_out_of_the_inputs_bounds():
    with pytest.raises(
        InputError,
        match=r"in Pulumi\.dev\.yaml: inference-infra:watchdog\.idleMinutes = 3: must be 10 to 1440",
    ):
        parse_stack_settings({**BASE, "watchdog": json.dumps({"idleMinutes": 3})}, stack="dev")


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("schedule", "scheduleExpression", "rate(10 minutes)"),
        (
            "kmsKeyArn",
            "kmsKey",
            "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        ),
    ],
)
def test_watchdog_config_accepts_an_old_key_with_a_warning_naming_the_new_one(old, new, value):
    settings = parse_stack_settings({**BASE, "watchdog": json.dumps({old: value})}, stack="prod")
    assert settings.warnings == [
        f"Pulumi.prod.yaml: inference-infra:watchdog.{old} is now inference-infra:watchdog.{new}; "
        "the old key is accepted until the next release, rename it"
    ]
    assert settings.watchdog.model_dump(by_alias=True)[new] == value


def test_watchdog_config_rejects_an_old_key_next_to_its_new_one():
    section = {"schedule": "rate(10 minutes)", "scheduleExpression": "rate(5 minutes)"}
    with pytest.raises(
        InputError,
        match=r"invalid stack config in Pulumi\.prod\.yaml: inference-infra:watchdog\.schedule "
        r"'rate\(10 minutes\)' is the old name of "
        r"inference-infra:watchdog\.scheduleExpression; set only the new key",
    ):
        parse_stack_settings({**BASE, "watchdog": json.dumps(section)}, stack="prod")


def test_watchdog_stack_rejects_two_topics():
    problems = _problems({"createSnsTopic": True, "snsTopicArn": "arn:aws:sns:us-east-1:123456789012:x"})
    assert problems == [
        "inference-infra:watchdog.snsTopicArn 'arn:aws:sns:us-east-1:123456789012:x' cannot be set together "
        "with create_sns_topic=True (choose one topic)"
    ]


def test_watchdog_config_rejects_an_unknown_key_with_a_suggestion():
    with pytest.raises(
        InputError, match=r"inference-infra:watchdog\.idleMinute is not a setting here \(did you mean"
    ):
        parse_stack_settings({**BASE, "watchdog": json.dumps({"idleMinute": 30})}, stack="dev")


def test_watchdog_stack_is_absent_without_its_section():
    settings = parse_stack_settings(BASE, stack="dev")
    assert watchdog_stack.validate(settings) == []
    assert settings.watchdog is None


GCP_WATCHDOG = "inference-infra:gcp:IdleGpuWatchdog"


def test_prod_stack_watches_its_gcp_gpus_and_tpus_with_the_sections_settings(plan_stack):
    """Prod has GCP GPU fleets and TPU VMs: the GCP watchdog runs with the section's window, threshold,
    grace and schedule, in the stack's project and region."""
    from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings as GcpSettings

    capture = plan_stack("prod").capture
    component = capture.one(GCP_WATCHDOG)
    (function,) = [
        r for r in capture.descendants(component) if r.type == "gcp:cloudfunctionsv2/function:Function"
    ]
    settings = GcpSettings.from_env(function.props["serviceConfig"]["environmentVariables"])
    assert (settings.idle_minutes, settings.grace_minutes, settings.util_threshold_percent) == (60, 120, 3.0)
    assert settings.projects == ("acme-inference-prod",)
    assert (settings.tag_key, settings.tag_value) == ("auto-shutdown", "true")
    assert function.props["location"] == "us-central1"
    (job,) = [r for r in capture.descendants(component) if r.type == "gcp:cloudscheduler/job:Job"]
    assert job.props["schedule"] == "*/10 * * * *"
    assert {"gcpIdleWatchdogFunction", "gcpIdleWatchdogSchedule"} <= set(capture.stack_outputs)


def test_watchdog_section_values_the_gcp_watchdog_cannot_take_are_named():
    settings = parse_stack_settings(
        {
            **BASE,
            "watchdog": json.dumps({"scheduleExpression": "rate(7 minutes)"}),
        },
        stack="dev",
    )
    settings = settings.model_copy(update={"tpu_vms": [object()]})
    problems = [str(p) for p in watchdog_stack.validate(settings)]
    assert any("watchdog.scheduleExpression (GCP watchdog)" in p and "rate(7 minutes)" in p for p in problems)
