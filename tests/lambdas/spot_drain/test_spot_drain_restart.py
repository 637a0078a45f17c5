"""Spot machines return (issue #38 item 4): a fixed pool's Spot instance that EC2 stops on interruption is
drained, remembers its registrations, and is registered back when EC2 starts it again; against moto with
AWS's documented event shapes (conftest.py; the state change's from
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitoring-instance-state-changes.html, read 2026-12-02).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inference_infra.components.aws.spot_drain import RESTART_PATTERN
from inference_infra.lambdas.spot_drain.drain import DRAINED_TAG, drained_registrations, run
from inference_infra.lambdas.spot_drain.events import EventError, Kind, parse_event
from inference_infra.lambdas.spot_drain.settings import Settings

SETTINGS = Settings(scope_tags={"CostCenter": "ml-platform", "Environment": "dev"})
STATE_CHANGE: dict[str, Any] = {
    "version": "0",
    "id": "7bf73129-1428-4cd3-a780-95db273d1602",
    "detail-type": "EC2 Instance State-change Notification",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2026-11-25T17:30:00Z",
    "region": "us-east-1",
    "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111"],
    "detail": {"instance-id": "i-abcd1111", "state": "running"},
}


def _state(instance_id: str, state: str = "running") -> dict[str, Any]:
    event = copy.deepcopy(STATE_CHANGE)
    event["resources"] = [f"arn:aws:ec2:us-east-1:123456789012:instance/{instance_id}"]
    event["detail"] = {"instance-id": instance_id, "state": state}
    return event


def _stop_warning(interruption, instance_id: str) -> dict[str, Any]:
    event = interruption(instance_id)
    event["detail"]["instance-action"] = "stop"
    return event


def _run(account, event, settings=SETTINGS):
    return run(
        parse_event(event), settings, autoscaling=account.autoscaling, elbv2=account.elbv2, ec2=account.ec2
    )


def _tags(account, instance_id: str) -> dict[str, str]:
    reservations = account.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
    return {t["Key"]: t["Value"] for t in reservations[0]["Instances"][0].get("Tags", [])}


def test_drain_puts_a_stopped_spot_instance_back_when_it_runs_again(account, interruption):
    api, metrics = account.target_group("fixed-api"), account.target_group("fixed-api-2", port=8001)
    lone = account.lone_instance([api])
    account.elbv2.register_targets(TargetGroupArn=metrics, Targets=[{"Id": lone, "Port": 8001}])

    # idle -> warned (stop) -> drained: out of both target groups, the registrations kept on the instance
    drained = _run(account, _stop_warning(interruption, lone))
    assert {(d["target_group_arn"], d["port"]) for d in drained.deregistered} == {
        (api, 8000),
        (metrics, 8001),
    }
    assert account.targets(api) == account.targets(metrics) == []
    kept = drained_registrations(_tags(account, lone))
    assert {(arn, port) for _, arn, port in kept} == {(api, 8000), (metrics, 8001)}

    # EC2 stops it, then starts it again: "pending" does nothing, "running" registers it back
    account.ec2.stop_instances(InstanceIds=[lone])
    assert _run(account, _state(lone, "pending")).registered == []
    account.ec2.start_instances(InstanceIds=[lone])
    restored = _run(account, _state(lone))

    assert {(r["target_group_arn"], r["port"]) for r in restored.registered} == {(api, 8000), (metrics, 8001)}
    assert account.targets(api) == [(lone, 8000)]
    assert account.targets(metrics) == [(lone, 8001)]
    assert not [k for k in _tags(account, lone) if k.startswith(DRAINED_TAG)]  # forgotten once back
    assert restored.failed == []


def test_drain_restore_twice_is_harmless(account, interruption):
    api = account.target_group("fixed-api")
    lone = account.lone_instance([api])
    _run(account, _stop_warning(interruption, lone))
    _run(account, _state(lone))
    again = _run(account, _state(lone))
    assert again.registered == []
    assert again.reason == "running: the drain took nothing out of service for it"
    assert account.targets(api) == [(lone, 8000)]


def test_drain_does_not_remember_a_terminating_instance(account, interruption):
    api = account.target_group("fixed-api")
    lone = account.lone_instance([api])
    _run(account, interruption(lone))  # instance-action terminate: it never comes back
    assert not [k for k in _tags(account, lone) if k.startswith(DRAINED_TAG)]


def test_drain_leaves_group_instances_to_their_group(account, interruption):
    api = account.target_group("pool-api")
    first, _ = account.group("pool", [api])
    result = _run(account, _stop_warning(interruption, first))
    assert result.group == "pool"
    assert not [k for k in _tags(account, first) if k.startswith(DRAINED_TAG)]


def test_drain_restore_in_dry_run_changes_nothing(account, interruption):
    api = account.target_group("fixed-api")
    lone = account.lone_instance([api])
    _run(account, _stop_warning(interruption, lone))
    result = _run(account, _state(lone), Settings(scope_tags=SETTINGS.scope_tags, dry_run=True))
    assert result.registered == [{"target_group_arn": api, "port": 8000}]
    assert account.targets(api) == []
    assert drained_registrations(_tags(account, lone))


def test_spot_drain_restart_rule_matches_only_running_state_changes():
    assert RESTART_PATTERN == {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
        "detail": {"state": ["running"]},
    }
    notice = parse_event(copy.deepcopy(STATE_CHANGE))
    assert (notice.kind, notice.instance_id, notice.action) == (Kind.STATE_CHANGE, "i-abcd1111", "running")


def test_spot_drain_rejects_a_state_change_without_a_state():
    event = copy.deepcopy(STATE_CHANGE)
    del event["detail"]["state"]
    with pytest.raises(EventError, match=r"detail\.state None is not an instance state"):
        parse_event(event)
