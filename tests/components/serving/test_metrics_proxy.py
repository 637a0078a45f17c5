"""The metrics-only proxy (components/serving/metrics_proxy.py) run for real against a stand-in engine:
GET /metrics is relayed, every other path and method refused, and a silent engine is a failed scrape."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from inference_infra.components.serving import metrics_proxy

SCRIPT = Path(metrics_proxy.__file__)
PYTHON39 = Path.home() / ".pyenv/versions/3.9.18/bin/python3"


class Engine(BaseHTTPRequestHandler):
    """A stand-in vLLM: /metrics and an OpenAI route."""

    def do_GET(self) -> None:
        body = (
            b'vllm:num_requests_running{model_name="m"} 1\n' if self.path == "/metrics" else b'{"data": []}'
        )
        self.send_response(200)
        self.send_header(
            "Content-Type", "text/plain; version=0.0.4" if self.path == "/metrics" else "application/json"
        )
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def engine():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Engine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def _proxy(python: str, upstream: int):
    port = _free_port()
    process = subprocess.Popen(
        [python, str(SCRIPT), "--listen", str(port), "--upstream", str(upstream), "--bind", "127.0.0.1"]
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, port


def _request(port: int, method: str, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request(method, path)
    response = connection.getresponse()
    return response.status, response.read()


@pytest.mark.parametrize("python", [sys.executable, *([str(PYTHON39)] if PYTHON39.exists() else [])])
def test_metrics_proxy_serves_get_metrics_and_nothing_else(engine, python):
    process, port = _proxy(python, engine)
    try:
        status, body = _request(port, "GET", "/metrics")
        assert (status, body) == (200, b'vllm:num_requests_running{model_name="m"} 1\n')
        assert _request(port, "GET", "/v1/models")[0] == 404
        assert _request(port, "GET", "/metrics/../v1/models")[0] == 404
        assert _request(port, "POST", "/metrics")[0] == 405
        assert _request(port, "POST", "/v1/chat/completions")[0] == 405
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_metrics_proxy_fails_the_scrape_when_the_engine_is_down():
    process, port = _proxy(sys.executable, _free_port())  # nothing listens upstream
    try:
        assert _request(port, "GET", "/metrics")[0] == 503  # Prometheus then records up == 0
    finally:
        process.terminate()
        process.wait(timeout=5)
