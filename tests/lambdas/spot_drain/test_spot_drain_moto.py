"""The drain against moto in-process: real boto3 calls on a mocked account."""

from __future__ import annotations

from inference_infra.lambdas.spot_drain.drain import DETACH, NONE, SET_UNHEALTHY, run
from inference_infra.lambdas.spot_drain.events import parse_event
from inference_infra.lambdas.spot_drain.settings import Settings

SETTINGS = Settings(scope_tags={"CostCenter": "ml-platform", "Environment": "dev"})


def drain(account, event, settings=SETTINGS):
    return run(parse_event(event), settings, autoscaling=account.autoscaling, elbv2=account.elbv2)


def test_drain_takes_an_interrupted_group_instance_out_of_every_target_group_and_replaces_it(
    account, interruption
):
    api, metrics = account.target_group("pool-api"), account.target_group("pool-metrics", port=9400)
    first, second = account.group("pool", [api, metrics])

    result = drain(account, interruption(first))

    assert result.group == "pool"
    assert result.group_action == DETACH
    assert sorted((d["target_group_arn"], d["port"]) for d in result.deregistered) == sorted(
        [(api, 8000), (metrics, 9400)]
    )
    assert first not in {i for i, _ in account.targets(api)} | {i for i, _ in account.targets(metrics)}
    members = account.members("pool")
    assert first not in members
    assert second in members
    assert len(members) == 2
    assert result.failed == []


def test_drain_leaves_a_rebalance_to_a_group_that_rebalances_itself(account, rebalance):
    api = account.target_group("pool-api")
    first, _ = account.group("pool", [api], capacity_rebalance=True)

    result = drain(account, rebalance(first))

    assert (result.group_action, result.deregistered) == (NONE, [])
    assert "rebalances its capacity itself" in result.reason
    assert first in {i for i, _ in account.targets(api)}


def test_drain_replaces_an_at_risk_instance_of_a_group_without_capacity_rebalancing(account, rebalance):
    api = account.target_group("pool-api")
    first, second = account.group("pool", [api])

    result = drain(account, rebalance(first))

    assert result.group_action == SET_UNHEALTHY
    assert [d["target_group_arn"] for d in result.deregistered] == [api]
    assert account.targets(api) == [(second, 8000)]
    assert account.health("pool")[first] == "Unhealthy"


def test_drain_finds_the_target_groups_of_an_instance_outside_any_group(account, interruption):
    api, other = account.target_group("fixed-api"), account.target_group("foreign", tags={"Owner": "x"})
    lone = account.lone_instance([api, other])

    result = drain(account, interruption(lone))

    assert result.group is None
    assert result.group_action == NONE
    assert [d["target_group_arn"] for d in result.deregistered] == [api]
    assert result.skipped_target_groups == [other]  # not the stack's: left alone
    assert account.targets(api) == []
    assert account.targets(other) == [(lone, 8000)]


def test_drain_leaves_a_fixed_instance_serving_on_a_rebalance(account, rebalance):
    api = account.target_group("fixed-api")
    lone = account.lone_instance([api])
    result = drain(account, rebalance(lone))
    assert result.deregistered == []
    assert account.targets(api) == [(lone, 8000)]


def test_drain_does_not_touch_a_group_outside_its_scope(account, interruption):
    api = account.target_group("pool-api")
    first, _ = account.group("pool", [api], tags={"CostCenter": "someone-else", "Environment": "dev"})

    result = drain(account, interruption(first))

    assert (result.group_action, result.deregistered) == (NONE, [])
    assert "does not carry the scope tags" in result.reason
    assert first in account.members("pool")


def test_drain_in_dry_run_changes_nothing(account, interruption):
    api = account.target_group("pool-api")
    first, second = account.group("pool", [api])
    settings = Settings(scope_tags=SETTINGS.scope_tags, dry_run=True)

    result = drain(account, interruption(first), settings)

    assert result.group_action == DETACH
    assert [d["port"] for d in result.deregistered] == [8000]
    assert account.targets(api) == sorted([(first, 8000), (second, 8000)])
    assert account.members("pool") == sorted([first, second])


def test_drain_twice_is_harmless(account, interruption):
    api = account.target_group("pool-api")
    first, _ = account.group("pool", [api])
    drain(account, interruption(first))
    again = drain(account, interruption(first))  # EventBridge delivers at least once
    assert again.failed == []
    assert again.deregistered == []
    assert again.group is None


def _refuse(client, operation: str, code: str) -> None:
    """Fail every call of operation with an error code, before it reaches moto (as IAM would)."""
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse

    service_id = client.meta.service_model.service_id.hyphenize()

    def answer(params, **_):
        error = {"Error": {"Code": code, "Message": f"injected {code}"}, "ResponseMetadata": {}}
        return AWSResponse(params.get("url", ""), 403, {}, MockRawResponse(b"")), error

    client.meta.events.register_first(f"before-call.{service_id}.{operation}", answer)


def test_drain_reports_a_refused_deregistration_and_still_replaces_the_instance(account, interruption):
    api = account.target_group("pool-api")
    first, _ = account.group("pool", [api])
    _refuse(account.elbv2, "DeregisterTargets", "AccessDenied")

    result = drain(account, interruption(first))

    assert result.failed == [f"DeregisterTargets {api}: AccessDenied: injected AccessDenied"]
    assert result.deregistered == []
    assert first not in account.members("pool")  # the group still starts its replacement


def test_handler_fails_the_invocation_when_a_step_failed(monkeypatch, interruption, scope_env):
    import pytest

    from inference_infra.lambdas.spot_drain import handler as module
    from inference_infra.lambdas.spot_drain.drain import DrainError, Result

    def failing_run(notice, settings, **_):
        return Result(
            notice.instance_id, notice.kind.value, notice.action, "pool", "x", False, failed=["boom"]
        )

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(module, "run", failing_run)
    with pytest.raises(DrainError, match="spot drain of i-1234567890abcdef0 failed: boom"):
        module.handler(interruption("i-1234567890abcdef0"), None)
