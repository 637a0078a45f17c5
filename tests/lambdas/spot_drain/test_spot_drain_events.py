"""The drain reads AWS's two documented event shapes and refuses anything else."""

from __future__ import annotations

import pytest

from inference_infra.lambdas.spot_drain.events import EventError, Kind, parse_event
from inference_infra.lambdas.spot_drain.settings import Settings, SettingsError


def test_parse_event_reads_the_interruption_warning(interruption):
    notice = parse_event(interruption("i-1234567890abcdef0"))
    assert (notice.kind, notice.instance_id, notice.action) == (
        Kind.INTERRUPTION,
        "i-1234567890abcdef0",
        "terminate",
    )
    assert (notice.region, notice.time) == ("us-east-1", "2026-11-25T17:00:00Z")


def test_parse_event_reads_the_rebalance_recommendation(rebalance):
    notice = parse_event(rebalance("i-0abc1234def567890"))
    assert (notice.kind, notice.instance_id, notice.action) == (Kind.REBALANCE, "i-0abc1234def567890", None)


@pytest.mark.parametrize("action", ["stop", "hibernate", "terminate"])
def test_parse_event_accepts_every_documented_instance_action(interruption, action):
    event = interruption("i-1234567890abcdef0")
    event["detail"]["instance-action"] = action
    assert parse_event(event).action == action


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.update({"source": "aws.autoscaling"}), "source 'aws.autoscaling'"),
        (lambda e: e.update({"detail-type": "EC2 Instance Launch Successful"}), "detail-type"),
        (lambda e: e["detail"].update({"instance-id": "sg-123"}), "detail.instance-id 'sg-123'"),
        (lambda e: e["detail"].update({"instance-action": "reboot"}), "detail.instance-action 'reboot'"),
        (lambda e: e.pop("detail"), "detail.instance-id None"),
    ],
)
def test_parse_event_rejects_other_events(interruption, change, message):
    event = interruption("i-1234567890abcdef0")
    change(event)
    with pytest.raises(EventError, match=message.replace("(", r"\(")):
        parse_event(event)


def test_settings_rejects_a_missing_or_malformed_scope():
    with pytest.raises(SettingsError, match="SCOPE_TAGS='' must be a non-empty JSON object"):
        Settings.from_env({})
    with pytest.raises(SettingsError, match=r"SCOPE_TAGS='\[1\]'.*DRY_RUN='maybe' must be true or false"):
        Settings.from_env({"SCOPE_TAGS": "[1]", "DRY_RUN": "maybe"})


def test_settings_round_trip_through_the_environment():
    settings = Settings(scope_tags={"Environment": "dev"}, dry_run=True, replace_on_rebalance=False)
    assert Settings.from_env(settings.as_env()) == settings
