"""The weight manifest: built from local trees and S3 (moto), verified with tampered, missing and pickle
files, written by `inference-infra models manifest`."""

from __future__ import annotations

import hashlib
import json

import boto3
import pytest
from moto import mock_aws

from inference_infra.components.cli import main
from inference_infra.components.models import manifest as m


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "llama"
    (root / "sub").mkdir(parents=True)
    (root / "model.safetensors").write_bytes(b"\x00weights" * 100)
    (root / "config.json").write_text('{"layers": 2}')
    (root / "sub" / "tokenizer.json").write_text("{}")
    return root


def test_manifest_lists_every_file_with_size_and_sha256(tree):
    manifest = m.build(m.local_entries(tree))
    by_path = {f["path"]: f for f in manifest["files"]}
    assert sorted(by_path) == ["config.json", "model.safetensors", "sub/tokenizer.json"]
    data = (tree / "model.safetensors").read_bytes()
    assert by_path["model.safetensors"] == {
        "path": "model.safetensors",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def test_manifest_verify_accepts_an_intact_tree(tree):
    assert m.verify(tree, m.build(m.local_entries(tree))) == []


def test_manifest_verify_rejects_a_tampered_file(tree):
    manifest = m.build(m.local_entries(tree))
    (tree / "config.json").write_text('{"layers": 3}')  # same size, other bytes
    assert [(f.path, f.reason) for f in m.verify(tree, manifest)] == [("config.json", "sha256")]


def test_manifest_verify_rejects_a_missing_file(tree):
    manifest = m.build(m.local_entries(tree))
    (tree / "sub" / "tokenizer.json").unlink()
    failures = m.verify(tree, manifest)
    assert [f.line() for f in failures] == ["weights verification failed: sub/tokenizer.json: missing"]


def test_manifest_verify_rejects_pickle_unless_allowed(tree):
    (tree / "pytorch_model.bin").write_bytes(b"pickle")
    manifest = m.build(m.local_entries(tree))
    assert [(f.path, f.reason) for f in m.verify(tree, manifest)] == [("pytorch_model.bin", "pickle")]
    assert m.verify(tree, manifest, allow_pickle=True) == []


def test_manifest_verify_rejects_files_the_manifest_does_not_list(tree):
    manifest = m.build(m.local_entries(tree))
    (tree / "extra.py").write_text("import os")
    assert [(f.path, f.reason) for f in m.verify(tree, manifest)] == [("extra.py", "unlisted")]


@mock_aws
def test_manifest_from_s3_matches_the_local_tree(tree):
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="models")
    for path in tree.rglob("*"):
        if path.is_file():
            s3.put_object(
                Bucket="models", Key=f"llama/{path.relative_to(tree).as_posix()}", Body=path.read_bytes()
            )
    s3.put_object(Bucket="models", Key="llama-other/x.safetensors", Body=b"not this model")
    assert m.build(m.s3_entries("s3://models/llama/", client=s3)) == m.build(m.local_entries(tree))


@mock_aws
def test_models_manifest_cli_writes_the_manifest_beside_the_weights_in_s3(tree, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="models")
    s3.put_object(Bucket="models", Key="llama/model.safetensors", Body=b"abc")
    assert main(["models", "manifest", "s3://models/llama", "--write"]) == 0
    written = json.loads(s3.get_object(Bucket="models", Key=f"llama/{m.MANIFEST_NAME}")["Body"].read())
    assert written["files"] == [
        {"path": "model.safetensors", "size": 3, "sha256": hashlib.sha256(b"abc").hexdigest()}
    ]


def test_models_manifest_cli_prints_the_manifest_of_a_directory(tree, capsys):
    assert main(["models", "manifest", str(tree)]) == 0
    assert json.loads(capsys.readouterr().out) == m.build(m.local_entries(tree))


def test_models_manifest_cli_rejects_pickle_files_unless_allowed(tree, capsys):
    (tree / "weights.pt").write_bytes(b"pickle")
    assert main(["models", "manifest", str(tree)]) == 2
    assert "weights.pt" in capsys.readouterr().err
    assert main(["models", "manifest", str(tree), "--allow-pickle"]) == 0


def test_models_manifest_cli_rejects_a_missing_directory(tmp_path, capsys):
    assert main(["models", "manifest", str(tmp_path / "nope")]) == 2
    assert "SOURCE" in capsys.readouterr().err
