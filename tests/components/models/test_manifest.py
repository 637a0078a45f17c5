"""The weight manifest: built from local trees and S3 (moto), written by `inference-infra models manifest`
(its digest printed, a disagreeing manifest kept unless --force), checked by `models verify`."""

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
    assert main(["models", "manifest", str(tree), "--allow-code"]) == 0


def test_models_manifest_cli_rejects_unsafe_keys_and_unknown_formats(tree, capsys):
    (tree / "run.sh").write_text("#!/bin/sh")
    (tree / "modeling.py").write_text("import os")
    assert main(["models", "manifest", str(tree)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "run.sh is not an allowed format" in err
    assert "modeling.py is Python code" in err


def test_models_manifest_cli_prints_the_digest_to_pin(tree, capsys):
    assert main(["models", "manifest", str(tree)]) == 0
    out = capsys.readouterr()
    assert f"manifest sha256: {hashlib.sha256(out.out.encode()).hexdigest()}" in out.err


def test_models_manifest_cli_write_prints_the_digest_of_what_it_wrote(tree, capsys):
    assert main(["models", "manifest", str(tree), "--write"]) == 0
    written = (tree / m.MANIFEST_NAME).read_bytes()
    assert capsys.readouterr().out == hashlib.sha256(written).hexdigest() + "\n"


def test_models_manifest_cli_write_rejects_replacing_a_disagreeing_manifest(tree, capsys):
    assert main(["models", "manifest", str(tree), "--write"]) == 0
    before = (tree / m.MANIFEST_NAME).read_bytes()
    (tree / "model.safetensors").write_bytes(b"other bytes")
    capsys.readouterr()
    assert main(["models", "manifest", str(tree), "--write"]) == 2
    assert "--force" in capsys.readouterr().err
    assert (tree / m.MANIFEST_NAME).read_bytes() == before
    assert main(["models", "manifest", str(tree), "--write", "--force"]) == 0
    assert (tree / m.MANIFEST_NAME).read_bytes() != before


def test_models_manifest_cli_write_accepts_rewriting_an_agreeing_manifest(tree):
    assert main(["models", "manifest", str(tree), "--write"]) == 0
    assert main(["models", "manifest", str(tree), "--write"]) == 0


@mock_aws
def test_models_manifest_cli_write_rejects_replacing_a_disagreeing_manifest_in_s3(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="models")
    s3.put_object(Bucket="models", Key="llama/model.safetensors", Body=b"abc")
    assert main(["models", "manifest", "s3://models/llama", "--write"]) == 0
    s3.put_object(Bucket="models", Key="llama/model.safetensors", Body=b"tampered")
    assert main(["models", "manifest", "s3://models/llama", "--write"]) == 2
    assert main(["models", "manifest", "s3://models/llama", "--write", "--force"]) == 0


def test_models_verify_cli_accepts_an_intact_copy_with_its_pinned_digest(tree, capsys):
    assert main(["models", "manifest", str(tree), "--write"]) == 0
    digest = capsys.readouterr().out.strip()
    assert main(["models", "verify", str(tree), "--expect-sha256", digest]) == 0
    assert main(["models", "verify", str(tree)]) == 0


def test_models_verify_cli_rejects_a_tampered_copy(tree, capsys):
    assert main(["models", "manifest", str(tree), "--write"]) == 0
    digest = capsys.readouterr().out.strip()
    (tree / "config.json").write_text('{"layers": 9}')
    assert main(["models", "verify", str(tree), "--expect-sha256", digest]) == 1
    assert "config.json: sha256" in capsys.readouterr().err


def test_models_verify_cli_rejects_another_manifest_than_the_pinned_one(tree, capsys):
    assert main(["models", "manifest", str(tree), "--write"]) == 0
    assert main(["models", "verify", str(tree), "--expect-sha256", "0" * 64]) == 1
    assert "is not the pinned" in capsys.readouterr().err


def test_models_verify_cli_rejects_a_malformed_digest(tree, capsys):
    assert main(["models", "verify", str(tree), "--expect-sha256", "abc"]) == 2
    assert "--expect-sha256" in capsys.readouterr().err


def test_models_manifest_cli_rejects_a_missing_directory(tmp_path, capsys):
    assert main(["models", "manifest", str(tmp_path / "nope")]) == 2
    assert "SOURCE" in capsys.readouterr().err


# -- symbolic links out of the folder (#33 item 9) ------------------------------------------------


@pytest.mark.parametrize(
    ("where", "target"),
    [
        ("stolen.safetensors", "secret"),  # a file link to a file beside the folder
        ("sub/creds.json", "secret"),  # deeper in the tree
        ("outside", "elsewhere"),  # a folder link: its files would be read as the model's
        ("dangling.safetensors", "nowhere"),  # points at nothing
        ("sub/climb.json", "../../secret"),  # relative, climbing out through ..
    ],
)
def test_models_manifest_cli_refuses_a_link_out_of_the_folder(tree, capsys, where, target):
    secret = tree.parent / "secret"
    secret.write_text("aws_secret_access_key = not-a-weight")
    (tree.parent / "elsewhere").mkdir()
    (tree.parent / "elsewhere" / "id_rsa.json").write_text("{}")
    link = tree / where
    if target == "../../secret":
        link.symlink_to(target)
    else:
        link.symlink_to(tree.parent / target)
    assert main(["models", "manifest", str(tree)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing of the secret's digest is printed
    assert "\n\n" not in captured.err.strip()
    assert "Traceback" not in captured.err
    err = " ".join(captured.err.split())
    assert f"{where} -> " in err
    assert "point out of the folder" in err
    assert "cp -rL" in err
    with pytest.raises(ValueError, match=r"links out of the folder"):
        list(m.local_entries(tree))  # the domain refuses it too, whoever calls it


def test_models_manifest_keeps_links_inside_the_folder(tree):
    (tree / "alias.json").symlink_to("config.json")  # relative, stays inside
    (tree / "sub" / "again").symlink_to(tree / "sub")  # a folder link inside, even a loop
    assert m.links_outside(tree) == []
    paths = {e.path for e in m.local_entries(tree)}
    assert "alias.json" in paths
    assert "config.json" in paths


def test_models_manifest_walks_a_folder_reached_through_a_link(tmp_path):
    # the folder named on the command line may itself be a link (e.g. /models/current -> v2): its
    # own files are inside it, so nothing is refused
    real = tmp_path / "v2"
    real.mkdir()
    (real / "config.json").write_text("{}")
    (real / "alias.json").symlink_to(real / "config.json")  # absolute, through the real path
    current = tmp_path / "current"
    current.symlink_to(real)
    assert m.links_outside(current) == []
    assert {e.path for e in m.local_entries(current)} == {"alias.json", "config.json"}


def test_models_manifest_lists_many_outside_links_briefly(tree, capsys):
    for i in range(8):
        (tree / f"l{i}.json").symlink_to(tree.parent)
    assert main(["models", "manifest", str(tree)]) == 2
    assert "and 3 more" in capsys.readouterr().err
