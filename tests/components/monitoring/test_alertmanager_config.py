from __future__ import annotations

import pytest
import yaml

from inference_infra.components.monitoring.alertmanager import (
    Receiver,
    ReceiverKind,
    alertmanager_config,
    render_alertmanager_yaml,
    validate_receivers,
)

RECEIVERS = [
    Receiver(name="ml-oncall", kind=ReceiverKind.PAGERDUTY, severities=("critical",)),
    Receiver(name="ml-slack", kind=ReceiverKind.SLACK, channel="#ml-alerts"),
    Receiver(name="audit-hook", kind=ReceiverKind.WEBHOOK, severities=("critical", "warning", "info")),
]
SECRETS = [
    "pd-routing-key-1234",
    "https://hooks.slack.com/services/T0/B0/xyz",
    "https://hooks.example.com/am",
]


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "alertmanager.yml"
    path.write_text(render_alertmanager_yaml(RECEIVERS, SECRETS))
    return path


def test_alertmanager_config_passes_amtool_check_config(config_file, amtool, run):
    result = run(amtool, "check-config", config_file)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize(
    ("labels", "receivers"),
    [
        (["alertname=GpuXidErrors", "severity=critical"], "ml-oncall,ml-slack,audit-hook"),
        (["alertname=GpuIdle", "severity=warning"], "ml-slack,audit-hook"),
        (["alertname=Watchdog", "severity=none"], "null"),
        (["alertname=SomethingElse", "severity=info"], "audit-hook"),
    ],
    ids=["critical", "warning", "watchdog", "info"],
)
def test_alertmanager_routes_each_severity_to_its_receivers(config_file, amtool, run, labels, receivers):
    result = run(amtool, "config", "routes", "test", f"--config.file={config_file}", *labels)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == receivers


def test_alertmanager_secrets_land_in_their_receivers_only():
    config = alertmanager_config(RECEIVERS, SECRETS)
    by_name = {r["name"]: r for r in config["receivers"]}
    assert by_name["ml-oncall"]["pagerduty_configs"][0]["routing_key"] == SECRETS[0]
    assert by_name["ml-slack"]["slack_configs"][0]["api_url"] == SECRETS[1]
    assert by_name["ml-slack"]["slack_configs"][0]["channel"] == "#ml-alerts"
    assert by_name["audit-hook"]["webhook_configs"][0]["url"] == SECRETS[2]
    assert all(
        c["send_resolved"]
        for r in config["receivers"][1:]
        for key, cs in r.items()
        if key != "name"
        for c in cs
    )
    assert yaml.safe_load(render_alertmanager_yaml(RECEIVERS, SECRETS)) == config


def test_alertmanager_rejects_a_secret_count_that_does_not_match():
    with pytest.raises(ValueError, match="3 receivers but 2 secrets"):
        alertmanager_config(RECEIVERS, SECRETS[:2])


def test_alertmanager_rejects_bad_receivers_naming_each_problem():
    bad = [
        Receiver(name="null", kind=ReceiverKind.WEBHOOK),
        Receiver(name="pager", kind=ReceiverKind.PAGERDUTY, channel="#ops", severities=("page",)),
        Receiver(name="pager", kind=ReceiverKind.SLACK, channel="ops"),
    ]
    assert [str(p) for p in validate_receivers(bad)] == [
        "alert_receivers[0].name 'null' must be 1-63 of letters, digits, '_', '.', '-' and not 'null'",
        "alert_receivers[1].channel '#ops' is for Slack receivers only",
        "alert_receivers[1].severities ['page'] must be one or more of critical, warning, info",
        "alert_receivers[2].name 'pager' is used by another receiver",
        "alert_receivers[2].channel 'ops' must look like '#channel' or '@user'",
    ]
