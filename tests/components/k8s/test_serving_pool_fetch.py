"""The pool's weight fetch, run as the pod runs it: the ConfigMap's files in one folder, S3 through moto,
Cloud Storage through a loopback server speaking the metadata token and JSON media endpoints.

The fetch takes only a manifest whose SHA-256 is the pin and only the files it lists; the shared
verifier then passes the folder (and writes its marker), and refuses a tampered file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from inference_infra.components.k8s.serving_pool import pool_scripts
from inference_infra.components.models import manifest as m

FILES = {
    "model.safetensors": b"\x00weights" * 100,
    "config.json": b'{"layers": 2}',
    "sub/tokenizer.json": b"{}",
}


@pytest.fixture
def scripts(tmp_path):
    folder = tmp_path / "opt"
    folder.mkdir()
    for name, text in pool_scripts().items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def fetcher(scripts):
    spec = importlib.util.spec_from_file_location(
        "pool_fetch_weights_under_test", scripts / "pool_fetch_weights.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _manifest(files: dict[str, bytes]) -> bytes:
    entries = [m.FileEntry(path, len(data), hashlib.sha256(data).hexdigest()) for path, data in files.items()]
    return m.dumps(m.build(entries)).encode()


def _verify(scripts: Path, folder: Path, pin: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(scripts / "verify_weights.py"), "--dir", str(folder)]
    command += ["--manifest", str(folder / m.MANIFEST_NAME), "--expect-sha256", pin, "--marker"]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _bucket(files: dict[str, bytes], manifest: bytes, extra: dict[str, bytes] | None = None):
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="models")
    for path, data in {**files, **(extra or {})}.items():
        s3.put_object(Bucket="models", Key=f"llama/{path}", Body=data)
    s3.put_object(Bucket="models", Key=f"llama/{m.MANIFEST_NAME}", Body=manifest)
    return s3


@mock_aws
def test_fetch_takes_the_pinned_manifests_files_only_and_the_verifier_passes_them(
    fetcher, scripts, tmp_path, monkeypatch
):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    manifest = _manifest(FILES)
    _bucket(FILES, manifest, extra={"evil.py": b"import os"})
    dest = tmp_path / "models" / "model"
    pin = m.digest(manifest)
    assert fetcher.main(["--source", "s3://models/llama", "--dest", str(dest), "--expect-sha256", pin]) == 0
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert got == sorted([*FILES, m.MANIFEST_NAME])  # evil.py, not listed, is not fetched
    result = _verify(scripts, dest, pin)
    assert result.returncode == 0, result.stderr
    assert (dest / ".inference-verified").read_text().strip() == pin


@mock_aws
def test_fetch_refuses_a_manifest_that_is_not_the_pin(fetcher, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    _bucket(FILES, _manifest(FILES))
    dest = tmp_path / "model"
    assert (
        fetcher.main(["--source", "s3://models/llama", "--dest", str(dest), "--expect-sha256", "b" * 64]) == 1
    )
    assert "is not the pinned" in capsys.readouterr().err
    assert [p.name for p in dest.iterdir()] == [m.MANIFEST_NAME]  # nothing else was downloaded


@mock_aws
def test_verifier_refuses_a_file_changed_after_the_manifest(fetcher, scripts, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    manifest = _manifest(FILES)
    _bucket({**FILES, "config.json": b'{"layers": 3}'}, manifest)
    dest = tmp_path / "model"
    pin = m.digest(manifest)
    assert fetcher.main(["--source", "s3://models/llama", "--dest", str(dest), "--expect-sha256", pin]) == 0
    result = _verify(scripts, dest, pin)
    assert result.returncode == 1
    assert "config.json" in result.stderr
    assert not (dest / ".inference-verified").exists()


def test_fetch_refuses_a_manifest_path_outside_the_folder(fetcher, tmp_path):
    evil = json.dumps(
        {"version": 1, "algorithm": "sha256", "files": [{"path": "../escape", "size": 1, "sha256": "a" * 64}]}
    ).encode()

    class Reader:
        def download(self, key, dest):
            Path(dest).write_bytes(evil if key.endswith(m.MANIFEST_NAME) else b"x")

    problems = fetcher.fetch(Reader(), "llama", str(tmp_path / "model"), m.digest(evil))
    assert problems
    assert "'..'" in problems[0]
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize("source", ["http://models/llama", "s3:/models", "gs://", "file:///etc"])
def test_fetch_rejects_a_source_that_is_not_s3_or_gcs(fetcher, tmp_path, source):
    assert fetcher.main(["--source", source, "--dest", str(tmp_path), "--expect-sha256", "a" * 64]) == 2


class _Gcs(BaseHTTPRequestHandler):
    objects: dict[str, bytes] = {}

    def do_GET(self) -> None:
        if self.path.startswith("/token"):
            assert self.headers["Metadata-Flavor"] == "Google"
            self._send(json.dumps({"access_token": "t0k", "expires_in": 3600}).encode())
            return
        assert self.headers["Authorization"] == "Bearer t0k"
        name = urllib.parse.unquote(self.path.split("/o/", 1)[1].split("?", 1)[0])
        if name not in self.objects:
            self.send_error(404)
            return
        self._send(self.objects[name])

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_fetch_from_gcs_with_the_workload_identity_token(fetcher, scripts, tmp_path, monkeypatch):
    manifest = _manifest(FILES)
    _Gcs.objects = {f"llama/{p}": d for p, d in FILES.items()} | {f"llama/{m.MANIFEST_NAME}": manifest}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gcs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setattr(fetcher, "GCE_TOKEN_URL", f"{base}/token")
        monkeypatch.setattr(fetcher, "GCS_MEDIA_URL", base + "/storage/v1/b/{bucket}/o/{name}?alt=media")
        dest = tmp_path / "model"
        pin = m.digest(manifest)
        assert (
            fetcher.main(["--source", "gs://acme-models/llama", "--dest", str(dest), "--expect-sha256", pin])
            == 0
        )
    finally:
        server.shutdown()
    assert _verify(scripts, dest, pin).returncode == 0
