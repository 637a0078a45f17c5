"""Shared by the Lambda tests: test credentials, moto running as a separate server process on
loopback, and a function's archive unpacked into an empty folder and run from there alone.

Every call to the server crosses HTTP: a handler builds its own clients from the environment
(AWS_ENDPOINT_URL points them at the server), exactly as it does in Lambda.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from inference_infra.components.function_source import zip_bytes

REGION = "us-east-1"
READY_SECONDS = 30


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Test credentials and region REGION; no profile, config file or endpoint of the machine's."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_CLOUDWATCH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))


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
    """A moto server subprocess on 127.0.0.1 (a free port); killed after the module's tests."""
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
def moto_server_session(
    moto_server: str, aws_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> boto3.Session:
    """A clean server state per test, the test credentials with every client pointed at the server,
    and a session in that environment for the test's own clients."""
    reset = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    with urllib.request.urlopen(reset, timeout=10):
        pass
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    return boto3.session.Session(region_name=REGION)


# --- a function's archive, unpacked and run alone ----------------------------------------------


@pytest.fixture
def archive_files() -> Callable[[dict[str, Any]], dict[str, bytes]]:
    return _archive_files


@pytest.fixture
def alone() -> Callable[..., dict[str, Any]]:
    return _run_alone


def _archive_files(assets: dict[str, Any]) -> dict[str, bytes]:
    """The members of an AssetArchive as the engine receives it (the plan's `{"assets": {name:
    {"path": ...} | {"text": ...}}}`): name -> content."""
    files = {}
    for name, asset in assets.items():
        files[name] = Path(asset["path"]).read_bytes() if "path" in asset else asset["text"].encode()
    return files


@pytest.fixture
def unpack(tmp_path: Path) -> Callable[[dict[str, bytes]], Path]:
    """Zip `files` the way the engine does (components/function_source.py), write the zip, and extract
    it into an empty folder: the folder holds what the archive holds, nothing else."""

    def run(files: dict[str, bytes]) -> Path:
        archive = tmp_path / "function.zip"
        archive.write_bytes(zip_bytes(files))
        root = tmp_path / "unpacked"
        with zipfile.ZipFile(archive) as opened:
            opened.extractall(root)
        return root

    return run


def _run_alone(root: Path, probe: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    """Run `probe` in a fresh interpreter that has only `root` (the unpacked archive) of ours: `-I`
    drops PYTHONPATH, the current folder and the user's site; the probe puts `root` on sys.path
    (or lets the loader under test do it). The probe prints one JSON object last; the modules it
    loaded from `lambdas` must all come from `root`, and nothing of the installed project."""
    epilogue = (
        "\nimport json as _json, sys as _sys\n"
        "_ours = {m: getattr(mod, '__file__', None) for m, mod in _sys.modules.items()"
        " if m.split('.')[0] in ('lambdas', 'inference_infra', 'components')}\n"
        "print(_json.dumps({'out': OUT, 'modules': _ours}, default=str), file=_sys.__stdout__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe + epilogue, str(root), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    strays = {m: f for m, f in report["modules"].items() if not (f or "").startswith(str(root))}
    assert strays == {}, f"modules from outside the archive: {strays}"
    return report
