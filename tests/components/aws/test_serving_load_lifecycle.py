"""The node publishes its load only while the group has it in service (node/serving_load.py, review6).

A machine the group is terminating still runs through the load balancer's drain and its termination hook,
and a warm-pool machine answers before it stops; their datapoints would count in the Average per machine
the scaling policies and the low-load alarm read (EC2 Auto Scaling User Guide, "Amazon EC2 Auto Scaling
instance lifecycle" and "Retrieve the target lifecycle state through instance metadata", read 2026-12-02).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from inference_infra.components.aws.node import serving_load as sl


class _StopError(Exception):
    pass


def _run_main(monkeypatch: pytest.MonkeyPatch, states: list[str | None]) -> list[list[str]]:
    """One loop iteration per state; the aws commands the node ran."""
    ran: list[list[str]] = []
    left = iter(states)
    monkeypatch.setattr(sl.shutil, "which", lambda _: "/usr/bin/aws")
    monkeypatch.setattr(sl, "instance_id", lambda: "i-0123456789abcdef0")
    monkeypatch.setattr(sl, "group_name", lambda *_: "pool-asg")
    monkeypatch.setattr(sl, "machine_load", lambda *_: 3.0)
    state = {"now": None}

    def next_state() -> str | None:
        return state["now"]

    def sleep(_: float) -> None:
        try:
            state["now"] = next(left)
        except StopIteration:
            raise _StopError from None

    monkeypatch.setattr(sl, "target_lifecycle_state", next_state, raising=False)
    monkeypatch.setattr(sl.time, "sleep", sleep)

    def run(command: list[str], **_: object):
        ran.append(command)
        return sl.subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(sl.subprocess, "run", run)
    state["now"] = next(left)
    with pytest.raises(_StopError):
        sl.main(["--ports", "8000", "--region", "us-east-1"])
    return ran


def _puts(commands: list[list[str]]) -> int:
    return sum(1 for c in commands if c[1:3] == ["cloudwatch", "put-metric-data"])


def test_a_terminating_or_warm_pool_machine_publishes_no_load(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _run_main(monkeypatch, ["InService", "Terminated", "Terminated", "Warmed:Stopped"])
    assert _puts(ran) == 1


def test_a_machine_without_the_metadata_item_publishes_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _puts(_run_main(monkeypatch, [None, None])) == 2


@pytest.fixture
def imds(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, tuple[int, str]]]:
    """A loopback instance metadata service: path -> (status, body)."""
    items: dict[str, tuple[int, str]] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_PUT(self) -> None:  # the IMDSv2 token
            self._answer(200, "token")

        def do_GET(self) -> None:
            assert self.headers.get("X-aws-ec2-metadata-token") == "token"
            self._answer(*items.get(self.path, (404, "")))

        def _answer(self, status: int, body: str) -> None:
            self.send_response(status)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(sl, "IMDS", f"http://127.0.0.1:{server.server_port}/latest")
    yield items
    server.shutdown()
    server.server_close()


def test_target_lifecycle_state_reads_the_metadata_item(imds: dict[str, tuple[int, str]]) -> None:
    imds["/latest/meta-data/autoscaling/target-lifecycle-state"] = (200, "Terminated\n")
    assert sl.target_lifecycle_state() == "Terminated"
    assert not sl.publishes("Terminated")
    assert sl.publishes("InService")


def test_target_lifecycle_state_missing_is_none(imds: dict[str, tuple[int, str]]) -> None:
    assert sl.target_lifecycle_state() is None
    assert sl.publishes(None)
