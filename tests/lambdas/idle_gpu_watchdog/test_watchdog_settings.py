"""Settings from the Lambda environment: docs/reference.md defaults, every bad variable named at once."""

from __future__ import annotations

import pytest

from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings, SettingsError


def test_settings_defaults_match_the_spec():
    settings = Settings.from_env({})
    assert (settings.tag_key, settings.tag_value) == ("AutoShutdown", "true")
    assert settings.idle_minutes == 30
    assert settings.util_threshold_percent == 5.0
    assert settings.grace_minutes == 60
    assert (settings.metric_namespace, settings.metric_name) == ("CWAgent", "nvidia_smi_utilization_gpu")
    assert settings.dry_run is False
    assert settings.sns_topic_arn is None
    assert settings.metric_period_seconds == 300
    assert settings.stop_reserved_capacity is False


def test_settings_reads_every_variable():
    env = {
        "TAG_KEY": "Idle",
        "TAG_VALUE": "stop",
        "IDLE_MINUTES": "45",
        "UTIL_THRESHOLD_PERCENT": "2.5",
        "GRACE_MINUTES": "0",
        "METRIC_NAMESPACE": "Custom/GPU",
        "METRIC_NAME": "gpu_util",
        "DRY_RUN": "TRUE",
        "SNS_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:watchdog",
        "NEURON_METRIC_NAMESPACE": "NeuronMonitor",
        "NEURON_METRIC_NAME": "neuroncore_utilization",
        "NEURON_INSTANCE_FAMILIES": "inf2, trn1",
        "METRIC_PERIOD_SECONDS": "60",
        "EXCLUDE_TAG_KEY": "KeepUntil",
        "STOP_RESERVED_CAPACITY": "yes",
        "SUMMARY_METRIC_NAMESPACE": "Team/Watchdog",
    }
    settings = Settings.from_env(env)
    assert settings.as_env() == {
        **env,
        "UTIL_THRESHOLD_PERCENT": "2.5",
        "DRY_RUN": "true",
        "NEURON_INSTANCE_FAMILIES": "inf2,trn1",
        "STOP_RESERVED_CAPACITY": "true",
    }
    assert settings.uses_neuron_metric("inf2.xlarge")
    assert not settings.uses_neuron_metric("g5.xlarge")


def test_settings_round_trip_through_the_environment():
    settings = Settings.from_env({"IDLE_MINUTES": "20", "DRY_RUN": "true"})
    assert Settings.from_env(settings.as_env()) == settings


def test_settings_empty_strings_count_as_unset():
    assert Settings.from_env({"IDLE_MINUTES": "", "SNS_TOPIC_ARN": "  "}) == Settings()


def test_settings_rejects_every_bad_variable_at_once():
    env = {
        "IDLE_MINUTES": "half an hour",
        "UTIL_THRESHOLD_PERCENT": "0",
        "GRACE_MINUTES": "-1",
        "DRY_RUN": "maybe",
        "SNS_TOPIC_ARN": "my-topic",
    }
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)
    message = str(caught.value)
    assert "IDLE_MINUTES='half an hour' must be a whole number >= 1" in message
    assert "UTIL_THRESHOLD_PERCENT='0' must be a number above 0 and at most 100" in message
    assert "GRACE_MINUTES='-1' must be a whole number >= 0" in message
    assert "DRY_RUN='maybe' must be true or false" in message
    assert "SNS_TOPIC_ARN='my-topic' must be an SNS topic ARN" in message


def test_settings_rejects_a_period_that_does_not_divide_the_window():
    with pytest.raises(SettingsError, match=r"METRIC_PERIOD_SECONDS='300' must divide the idle window"):
        Settings.from_env({"IDLE_MINUTES": "12", "METRIC_PERIOD_SECONDS": "300"})


def test_settings_rejects_a_period_that_is_not_whole_minutes():
    with pytest.raises(SettingsError, match=r"METRIC_PERIOD_SECONDS='90' must be a multiple of 60"):
        Settings.from_env({"METRIC_PERIOD_SECONDS": "90"})


def test_settings_rejects_an_aws_summary_namespace():
    with pytest.raises(SettingsError, match=r"SUMMARY_METRIC_NAMESPACE='AWS/EC2' must not start with 'AWS/'"):
        Settings.from_env({"SUMMARY_METRIC_NAMESPACE": "AWS/EC2"})


def test_settings_rejects_bad_neuron_families():
    with pytest.raises(
        SettingsError, match=r"NEURON_INSTANCE_FAMILIES='inf2.xlarge' must be comma-separated"
    ):
        Settings.from_env({"NEURON_INSTANCE_FAMILIES": "inf2.xlarge"})


def test_settings_scope_tags_round_trip_through_the_environment():
    settings = Settings.from_env({"SCOPE_TAGS": '{"Team": "ml", "Environment": "prod"}'})
    assert settings.scope_tags == (("Environment", "prod"), ("Team", "ml"))
    assert settings.as_env()["SCOPE_TAGS"] == '{"Environment":"prod","Team":"ml"}'
    assert Settings.from_env(settings.as_env()) == settings
    assert "SCOPE_TAGS" not in Settings().as_env()  # no scope: the variable is absent


@pytest.mark.parametrize(
    "raw",
    [
        "Environment=prod",  # not JSON
        '["Environment", "prod"]',  # not an object
        "{}",  # an empty scope is spelled by leaving the variable out
        '{"Environment": 1}',  # a value that is not a string
        '{"aws:cloudformation:stack-name": "x"}',  # reserved prefix
        '{"": "prod"}',
        '{"Environment": ""}',
        '{"k": "' + "v" * 257 + '"}',
        "{" + ",".join(f'"k{i}": "v"' for i in range(11)) + "}",  # more than ten
    ],
)
def test_settings_refuse_a_careless_scope(raw):
    with pytest.raises(SettingsError, match=r"SCOPE_TAGS=.* must be a JSON object of 1-10 tags"):
        Settings.from_env({"SCOPE_TAGS": raw})
