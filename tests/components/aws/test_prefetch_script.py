"""prefetch-model.sh run for real (bash, sha256sum, python3) with a stub s5cmd that copies from a local
"bucket": the verified marker only when every file matches the manifest; a tampered, missing or pickle
file logs one line naming it, publishes the failure metric and leaves no marker."""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

from inference_infra.components.models import manifest as m

SCRIPT = Path(str(files("inference_infra.components.aws").joinpath("node/prefetch-model.sh")))
S5CMD_STUB = """#!/usr/bin/env bash
# cp [flags] SRC DEST: SRC is s3://bucket/prefix/* or s3://bucket/prefix/file, served from $BUCKET_DIR
set -euo pipefail
args=("$@"); src="${args[-2]}"; dest="${args[-1]}"
path="${src#s3://}"
if [[ "$src" == *"/*" ]]; then cp -r "$BUCKET_DIR/${path%/\\*}/." "$dest"; else
  [ -f "$BUCKET_DIR/$path" ] || exit 1; cp "$BUCKET_DIR/$path" "$dest"; fi
"""


@pytest.fixture
def bucket(tmp_path):
    model = tmp_path / "bucket" / "models" / "llama"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"\x01" * 4096)
    (model / "config.json").write_text('{"layers": 2}')
    (model / m.MANIFEST_NAME).write_text(m.dumps(m.build(m.local_entries(model))))
    stub = tmp_path / "s5cmd"
    stub.write_text(S5CMD_STUB)
    stub.chmod(0o755)
    (tmp_path / "textfile").mkdir()
    return tmp_path


def run(bucket: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {
        "PATH": "/usr/bin:/bin",
        "S5CMD": str(bucket / "s5cmd"),
        "BUCKET_DIR": str(bucket / "bucket"),
        "TEXTFILE_DIR": str(bucket / "textfile"),
        **env,
    }
    dest = bucket / "cache" / "llama"
    return subprocess.run(
        ["bash", str(SCRIPT), "s3://models/llama", str(dest)], env=environ, capture_output=True, text=True
    )


def metric(bucket: Path) -> str:
    return (bucket / "textfile" / "inference_model_verification.prom").read_text()


def test_prefetch_script_marks_verified_weights(bucket):
    result = run(bucket)
    assert result.returncode == 0, result.stderr
    assert (bucket / "cache/llama" / m.VERIFIED_MARKER).is_file()
    assert metric(bucket).endswith(" 0\n")


def test_prefetch_script_rejects_a_tampered_file(bucket):
    (bucket / "bucket/models/llama/config.json").write_text('{"layers": 9}')
    result = run(bucket)
    assert result.returncode != 0
    lines = [x for x in result.stderr.splitlines() if "verification failed" in x]
    assert len(lines) == 1
    assert "/cache/llama/config.json: sha256" in lines[0]
    assert not (bucket / "cache/llama" / m.VERIFIED_MARKER).exists()
    assert metric(bucket).endswith(" 1\n")


def test_prefetch_script_rejects_a_missing_file(bucket):
    (bucket / "bucket/models/llama/model.safetensors").unlink()
    result = run(bucket)
    assert result.returncode != 0
    assert "model.safetensors: missing" in result.stderr
    assert not (bucket / "cache/llama" / m.VERIFIED_MARKER).exists()


def test_prefetch_script_rejects_pickle_unless_the_fleet_allows_it(bucket):
    model = bucket / "bucket/models/llama"
    (model / "pytorch_model.bin").write_bytes(b"pickle")
    (model / m.MANIFEST_NAME).write_text(m.dumps(m.build(m.local_entries(model))))
    result = run(bucket)
    assert result.returncode != 0
    assert "pytorch_model.bin: pickle format refused" in result.stderr
    assert run(bucket, ALLOW_PICKLE="1").returncode == 0


def test_prefetch_script_removes_an_old_marker_when_verification_fails(bucket):
    assert run(bucket).returncode == 0
    (bucket / "bucket/models/llama/config.json").write_text('{"layers": 99}')
    assert run(bucket).returncode != 0
    assert not (bucket / "cache/llama" / m.VERIFIED_MARKER).exists()


def test_prefetch_script_rejects_a_model_without_manifest(bucket):
    (bucket / "bucket/models/llama" / m.MANIFEST_NAME).unlink()
    result = run(bucket)
    assert result.returncode != 0
    assert f"{m.MANIFEST_NAME}: missing beside the weights" in result.stderr
    assert metric(bucket).endswith(" 1\n")
    assert not (bucket / "cache/llama" / m.VERIFIED_MARKER).exists()


def test_prefetch_script_passes_shellcheck():
    if shutil.which("shellcheck") is None:
        pytest.fail("shellcheck is not installed; run .ci/system-deps")
    result = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True, env=os.environ)
    assert result.returncode == 0, result.stdout
