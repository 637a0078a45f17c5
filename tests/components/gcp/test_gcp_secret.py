"""The engines' API key from Secret Manager (components/gcp/node/gcp_secret.py), against loopback fakes."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from inference_infra.components.gcp.startup import FETCHER_FILE, SECRET_FILE, node_source
from inference_infra.components.models.manifest import VERIFIER_FILE, verifier_source

KEY = "sk-inference-0123456789abcdef"


class FakeGoogle:
    """The metadata server (token, project id) and Secret Manager's versions.access, on one port."""

    def __init__(self, payload: bytes | None = KEY.encode()) -> None:
        self.paths: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                fake.paths.append(self.path)
                if self.path.startswith("/computeMetadata/"):
                    if self.headers.get("Metadata-Flavor") != "Google":
                        return self._send(403, b"")
                    if self.path.endswith("/token"):
                        return self._send(200, b'{"access_token": "t0k3n", "expires_in": 3599}')
                    return self._send(200, b"node-project")
                if self.headers.get("Authorization") != "Bearer t0k3n" or payload is None:
                    return self._send(403, b"")
                data = base64.b64encode(payload).decode()
                return self._send(200, json.dumps({"name": self.path, "payload": {"data": data}}).encode())

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def node(tmp_path: Path) -> Path:
    for name in (SECRET_FILE, FETCHER_FILE):
        (tmp_path / name).write_text(node_source(name))
    (tmp_path / VERIFIER_FILE).write_text(verifier_source())
    return tmp_path


def run(node: Path, fake: FakeGoogle, secret: str, key_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "/usr/bin/python3",  # the system interpreter: no inference_infra installed
            str(node / SECRET_FILE),
            "--secret",
            secret,
            "--metadata-url",
            fake.url,
            "--api-url",
            fake.url,
            str(key_file),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_gcp_secret_writes_the_key_for_the_engine_only_readable_by_its_owner(node, tmp_path):
    fake = FakeGoogle()
    try:
        result = run(node, fake, "llm-api-key/versions/latest", tmp_path / "api-key.env")
    finally:
        fake.close()
    assert result.returncode == 0, result.stderr
    written = tmp_path / "api-key.env"
    assert written.read_text() == f"{KEY}\n"  # the bare key: the container mounts the file
    assert stat.S_IMODE(os.stat(written).st_mode) == 0o400
    # Without a project in the name, the node's own project (from the metadata server).
    assert "/v1/projects/node-project/secrets/llm-api-key/versions/latest:access" in fake.paths
    assert KEY not in result.stderr


def test_gcp_secret_reads_a_secret_of_another_project(node, tmp_path):
    fake = FakeGoogle()
    try:
        secret = "projects/shared-secrets/secrets/llm-api-key/versions/3"
        result = run(node, fake, secret, tmp_path / "api-key.env")
    finally:
        fake.close()
    assert result.returncode == 0, result.stderr
    assert f"/v1/{secret}:access" in fake.paths


@pytest.mark.parametrize("payload", [b"short", b"has a space in it, long enough", b"line\nbreak-0123456789"])
def test_gcp_secret_rejects_a_value_that_is_not_a_usable_key(node, tmp_path, payload):
    fake = FakeGoogle(payload)
    try:
        result = run(node, fake, "llm-api-key/versions/latest", tmp_path / "api-key.env")
    finally:
        fake.close()
    assert result.returncode == 1
    assert "not a usable API key" in result.stderr
    assert not (tmp_path / "api-key.env").exists()


def test_gcp_secret_fails_when_secret_manager_refuses(node, tmp_path):
    fake = FakeGoogle(None)
    try:
        result = run(node, fake, "llm-api-key/versions/latest", tmp_path / "api-key.env")
    finally:
        fake.close()
    assert result.returncode == 1
    assert "Secret Manager answered HTTP 403" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("secret", ["llm-api-key", "a b/versions/1", "x/versions/latest; rm -rf /"])
def test_gcp_secret_rejects_a_malformed_secret_name_with_exit_2(node, tmp_path, secret):
    fake = FakeGoogle()
    try:
        result = run(node, fake, secret, tmp_path / "api-key.env")
    finally:
        fake.close()
    assert result.returncode == 2
    assert fake.paths == []
