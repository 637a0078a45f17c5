"""The real handler against moto running as a separate server process on loopback.

Every call crosses HTTP: the handler builds its own clients from the environment
(AWS_ENDPOINT_URL points them at the server), as it does in Lambda.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from inference_infra.lambdas.spot_drain.handler import handler


@pytest.fixture
def server_account(moto_server_session: boto3.Session, account_class: Any) -> Any:
    """An account on the server (tests/lambdas/conftest.py), a clean state per test."""
    return account_class(moto_server_session)


@pytest.fixture
def account_class() -> Any:
    # The in-process fixture's class, without entering mock_aws (the server is the mock here).
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "spot_drain_conftest", Path(__file__).with_name("conftest.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Account


def test_handler_against_moto_server_drains_an_interrupted_instance(server_account, interruption, scope_env):
    api = server_account.target_group("pool-api")
    first, second = server_account.group("pool", [api])

    result = handler(interruption(first), None)

    assert (result["group"], result["group_action"], result["failed"]) == ("pool", "detach", [])
    assert result["deregistered"] == [{"target_group_arn": api, "port": 8000}]
    serving = dict(server_account.targets(api))
    assert first not in serving
    assert second in serving
    members = server_account.members("pool")
    assert first not in members
    assert len(members) == 2
    assert set(serving) == set(members)


def test_handler_against_moto_server_replaces_on_rebalance(server_account, rebalance, scope_env):
    api = server_account.target_group("pool-api")
    first, _ = server_account.group("pool", [api])

    result = handler(rebalance(first), None)

    assert result["group_action"] == "set_unhealthy"
    assert server_account.health("pool")[first] == "Unhealthy"


def test_handler_rejects_an_event_it_does_not_handle(server_account, scope_env):
    with pytest.raises(ValueError, match="detail-type 'EC2 Instance Launch Successful'"):
        handler({"source": "aws.ec2", "detail-type": "EC2 Instance Launch Successful"}, None)
