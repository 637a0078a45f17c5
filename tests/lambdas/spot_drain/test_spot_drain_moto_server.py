"""The real handler against moto running as a separate server process on loopback.

Every call crosses HTTP: the handler builds its own clients from the environment
(AWS_ENDPOINT_URL points them at the server), as it does in Lambda.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from inference_infra.lambdas.spot_drain.handler import handler

READY_SECONDS = 30


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/moto-api/data.json", timeout=1) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="module")
def moto_server() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_SECONDS
        while not _ready(url):
            if process.poll() is not None:
                raise RuntimeError(f"moto server exited: {process.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"moto server not ready on {url} after {READY_SECONDS} s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        process.stderr.close()


@pytest.fixture
def server_account(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, request) -> Any:
    reset = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    with urllib.request.urlopen(reset, timeout=10):
        pass
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    account_class = request.getfixturevalue("account_class")
    return account_class(boto3.session.Session(region_name="us-east-1"))


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
    with pytest.raises(ValueError, match="detail-type 'EC2 Instance State-change Notification'"):
        handler({"source": "aws.ec2", "detail-type": "EC2 Instance State-change Notification"}, None)
