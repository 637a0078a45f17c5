"""node/engine-api-key.sh run for real with a stub `aws`: the bare key lands in a 0400 file the engine mounts,
from SSM (with decryption) or Secrets Manager; an empty, short or multi-line key is refused."""

from __future__ import annotations

import stat
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

SCRIPT = Path(str(files("inference_infra.components.aws").joinpath("node/engine-api-key.sh")))
KEY = "sk-0123456789abcdefXYZ"


@pytest.fixture
def stub(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    aws = bin_dir / "aws"
    aws.write_text('#!/bin/sh\necho "$@" >"$CALLS"\nprintf "%s\\n" "$KEY"\n')
    aws.chmod(0o755)
    return tmp_path


def run(stub: Path, kind: str, ident: str, key: str = KEY) -> subprocess.CompletedProcess:
    environ = {"PATH": f"{stub / 'bin'}:/usr/bin:/bin", "CALLS": str(stub / "calls"), "KEY": key}
    command = ["bash", str(SCRIPT), kind, ident, "us-east-1", str(stub / "api-key.env")]
    return subprocess.run(command, env=environ, capture_output=True, text=True, check=False)


def test_engine_api_key_writes_a_private_key_file_from_ssm(stub):
    result = run(stub, "ssm", "/inference-infra/llama/api-key")
    assert result.returncode == 0, result.stderr
    out = stub / "api-key.env"
    assert out.read_text() == f"{KEY}\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o400
    call = (stub / "calls").read_text()
    assert (
        "ssm get-parameter --region us-east-1 --name /inference-infra/llama/api-key --with-decryption" in call
    )


def test_engine_api_key_reads_secrets_manager(stub):
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:llm-AbCdEf"
    assert run(stub, "secretsmanager", arn).returncode == 0
    assert (
        f"secretsmanager get-secret-value --region us-east-1 --secret-id {arn}"
        in (stub / "calls").read_text()
    )


@pytest.mark.parametrize("key", ["", "short", "two words here and more", "tab\there-and-long-enough"])
def test_engine_api_key_rejects_keys_docker_would_misread(stub, key):
    result = run(stub, "ssm", "/x", key=key)
    assert result.returncode == 1
    assert "must be 16 or more printable characters" in result.stderr
    assert not (stub / "api-key.env").exists()


def test_engine_api_key_rejects_an_unknown_source(stub):
    assert run(stub, "vault", "/x").returncode == 2
