"""The GCP watchdog's environment: the AWS contract's names and defaults, every bad value named at once,
and the handler's request (a body can only make a run safer)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.auth.credentials import AnonymousCredentials

from inference_infra.lambdas.gcp_idle_watchdog import handler as handler_module
from inference_infra.lambdas.gcp_idle_watchdog.decide import parse_until
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings, SettingsError


def test_gcp_settings_defaults_match_the_aws_contract_where_they_apply():
    settings = Settings.from_env({"PROJECTS": "acme-inference-prod"})
    assert (settings.idle_minutes, settings.util_threshold_percent, settings.grace_minutes) == (30, 5.0, 60)
    assert settings.dry_run is False
    assert settings.pubsub_topic is None
    assert (settings.tag_key, settings.tag_value) == ("auto-shutdown", "true")
    assert settings.metric_name == "agent.googleapis.com/gpu/utilization"
    assert settings.tpu_metric_name == "tpu.googleapis.com/accelerator/duty_cycle"
    assert settings.metric_period_seconds == 300
    assert Settings.from_env(settings.as_env()) == settings


def test_gcp_settings_rejects_every_bad_variable_at_once():
    env = {
        "PROJECTS": "Acme",
        "TAG_KEY": "AutoShutdown",
        "IDLE_MINUTES": "0",
        "UTIL_THRESHOLD_PERCENT": "150",
        "DRY_RUN": "maybe",
        "PUBSUB_TOPIC": "arn:aws:sns:us-east-1:1:x",
        "METRIC_PERIOD_SECONDS": "420",
    }
    with pytest.raises(SettingsError) as error:
        Settings.from_env(env)
    message = str(error.value)
    for name in ("PROJECTS", "TAG_KEY", "IDLE_MINUTES", "UTIL_THRESHOLD_PERCENT", "DRY_RUN", "PUBSUB_TOPIC"):
        assert f"{name}=" in message
    with pytest.raises(SettingsError, match="PROJECTS='' must be set"):
        Settings.from_env({})


def test_gcp_settings_rejects_a_period_that_does_not_divide_the_window():
    with pytest.raises(SettingsError, match="METRIC_PERIOD_SECONDS='420' must divide the idle window"):
        Settings.from_env({"PROJECTS": "acme-inference-prod", "METRIC_PERIOD_SECONDS": "420"})


def test_gcp_opt_out_label_parses_label_safe_utc_times():
    assert parse_until("2026-12-01") == datetime(2026, 12, 1, tzinfo=UTC)
    assert parse_until("2026-12-01t18-30") == datetime(2026, 12, 1, 18, 30, tzinfo=UTC)
    assert parse_until("2026-12-01t18-30-15z") == datetime(2026, 12, 1, 18, 30, 15, tzinfo=UTC)
    assert parse_until("2026-13-01") is None
    assert parse_until("tomorrow") is None


class _Request:
    def __init__(self, body):
        self._body = body

    def get_json(self, silent: bool = False):
        return self._body


@pytest.mark.parametrize(
    ("body", "dry_run"), [({"dry_run": True}, True), ({"dry_run": False}, False), (None, False)]
)
def test_gcp_handler_request_can_only_make_a_run_safer(fake, fake_gcp, monkeypatch, body, dry_run):
    monkeypatch.setenv("PROJECTS", "acme-inference-prod")
    monkeypatch.setenv("DRY_RUN", "false")
    real = handler_module.make_clients
    monkeypatch.setattr(
        handler_module,
        "make_clients",
        lambda settings: real(settings, endpoint=fake.url, credentials=AnonymousCredentials()),
    )
    vm = fake.add_vm("acme-inference-prod", "us-central1-a", "idle")
    now = datetime.now(UTC)
    fake.add_gpu_series(
        "acme-inference-prod", vm, 0, fake_gcp.samples(now.replace(hour=0, minute=0), now, 0.0)
    )
    out = handler_module.handler(_Request(body))
    assert out["dry_run"] is dry_run
    assert set(out) == {
        "checked",
        "idle",
        "stopped",
        "dry_run",
        "skipped",
        "failed",
        "estimated_hourly_saving_usd",
    }
    assert set(out["skipped"]) == {
        "no_metrics",
        "grace",
        "busy",
        "excluded",
        "not_stoppable",
        "reserved_capacity",
        "managed",
    }
