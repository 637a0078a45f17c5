"""The one weights verifier (components/models/verify_weights.py): the pinned manifest digest, every file
against it, the allow-list of formats, unsafe keys, links; its command line as the nodes run it, on the
oldest Python a node has (Amazon Linux 2023: 3.9) when one is installed here."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inference_infra.components.models import manifest as m
from inference_infra.components.models import verify_weights as v

SCRIPT = Path(v.__file__)


def _python39() -> str | None:
    """A Python 3.9 interpreter, when this machine has one (Amazon Linux 2023's python3 is 3.9)."""
    for candidate in (
        os.path.expanduser("~/.pyenv/versions/3.9.18/bin/python3"),
        shutil.which("python3.9"),
    ):
        if not candidate or not os.path.exists(candidate):
            continue
        probe = [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 9))"]
        if subprocess.run(probe, capture_output=True, text=True, check=False).stdout.strip() == "True":
            return candidate
    return None


PY39 = _python39()


def _write_manifest(root: Path) -> str:
    text = m.dumps(m.build(m.local_entries(root)))
    (root / m.MANIFEST_NAME).write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def model(tmp_path):
    root = tmp_path / "llama"
    (root / "original").mkdir(parents=True)
    (root / "model-00001-of-00002.safetensors").write_bytes(b"\x00weights" * 100)
    (root / "model-00002-of-00002.safetensors").write_bytes(b"\x01weights" * 100)
    (root / "model.safetensors.index.json").write_text("{}")
    (root / "config.json").write_text('{"layers": 2}')
    (root / "generation_config.json").write_text("{}")
    (root / "tokenizer.json").write_text("{}")
    (root / "tokenizer.model").write_bytes(b"\x0a\x0bspm")
    (root / "merges.txt").write_text("a b\n")
    (root / "vocab.json").write_text("{}")
    (root / "qwen.tiktoken").write_text("YQ== 0\n")
    (root / "README.md").write_text("# card\n")
    (root / "LICENSE").write_text("license\n")
    (root / "original" / "params.json").write_text("{}")
    return root


def _pin(root: Path) -> tuple[str, str]:
    return str(root / m.MANIFEST_NAME), _write_manifest(root)


def test_verify_weights_accepts_an_intact_model(model):
    manifest, digest = _pin(model)
    assert v.verify(str(model), manifest, digest) == []


def test_verify_weights_accepts_the_marker_and_bookkeeping_files(model):
    manifest, digest = _pin(model)
    v.write_marker(str(model), digest)
    (model / ".prefetch.lock").write_text("")
    assert v.verify(str(model), manifest, digest) == []
    assert v.read_marker(str(model)) == digest


def test_verify_weights_rejects_a_manifest_other_than_the_pinned_one(model):
    manifest, digest = _pin(model)
    # Whoever can write the bucket replaces a shard and regenerates the manifest: it verifies on its
    # own, but its digest is not the pinned one.
    (model / "model-00001-of-00002.safetensors").write_bytes(b"\x66" * 800)
    _write_manifest(model)
    problems = v.verify(str(model), manifest, digest)
    assert len(problems) == 1
    assert f"is not the pinned {digest}" in problems[0]


def test_verify_weights_rejects_a_tampered_file(model):
    manifest, digest = _pin(model)
    (model / "config.json").write_text('{"layers": 3}')  # same size, other bytes
    [problem] = v.verify(str(model), manifest, digest)
    assert problem.startswith("config.json: sha256 ")


def test_verify_weights_rejects_a_missing_file_and_a_wrong_size(model):
    manifest, digest = _pin(model)
    (model / "tokenizer.json").unlink()
    (model / "vocab.json").write_text("{ }")
    assert v.verify(str(model), manifest, digest) == [
        "tokenizer.json: is missing",
        "vocab.json: size 3 is not the manifest's 2",
    ]


def test_verify_weights_rejects_files_the_manifest_does_not_list(model):
    manifest, digest = _pin(model)
    (model / "extra.safetensors").write_bytes(b"x")
    (model / "original" / m.VERIFIED_MARKER).write_text(digest)  # skipped only at the top
    assert v.verify(str(model), manifest, digest) == [
        "extra.safetensors: is not in the manifest",
        f"original/{m.VERIFIED_MARKER}: is not in the manifest",
    ]


@pytest.mark.parametrize(
    "name",
    ["modeling_llama.py", "pytorch_model.bin", "consolidated.00.pth", "model.pt", "state.pkl", "x.ckpt"],
)
def test_verify_weights_rejects_code_and_pickle_unless_code_is_allowed(model, name):
    (model / name).write_bytes(b"import os")
    manifest, digest = _pin(model)
    [problem] = v.verify(str(model), manifest, digest)
    assert problem.startswith(f"{name}: is ")
    assert "code" in problem
    assert v.verify(str(model), manifest, digest, allow_code=True) == []


@pytest.mark.parametrize("name", ["run.sh", "libx.so", "tf_model.h5", "flax_model.msgpack", "notes"])
def test_verify_weights_rejects_formats_outside_the_allow_list(model, name):
    (model / name).write_bytes(b"#!/bin/sh\n")
    manifest, digest = _pin(model)
    [problem] = v.verify(str(model), manifest, digest, allow_code=True)
    assert problem.startswith(f"{name}: is not an allowed format (safetensors, JSON, tokenizer files")


@pytest.mark.parametrize(
    "path",
    [
        "neuron-compiled-artifacts/0123abcd/neuron_config.json",
        "neuron-compiled-artifacts/0123abcd/weights/tp0_sharded_checkpoint.safetensors",
        "graph.neff",
        "chat_template.jinja",
        "spiece.model",
        "vocab.txt",
    ],
)
def test_verify_weights_accepts_neuron_artifacts_and_tokenizer_files(path):
    assert v.format_problem(path) is None


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("../etc/passwd", "has a '.' or '..' segment"),
        ("a/../../b", "has a '.' or '..' segment"),
        ("./a", "has a '.' or '..' segment"),
        ("/etc/passwd", "is an absolute path"),
        ("a\\..\\b", "holds a backslash"),
        ("a\nb", "holds a control character"),
        ("a\x00b", "holds a control character"),
        ("a\x7fb", "holds a control character"),
        ("a//b", "has an empty segment (// or a trailing /)"),
        ("a/", "has an empty segment (// or a trailing /)"),
        ("", "is empty"),
    ],
)
def test_check_key_rejects_unsafe_paths(key, why):
    assert v.check_key(key) == why


@pytest.mark.parametrize("key", ["config.json", "original/params.json", "a b/c d.safetensors", "x..y.json"])
def test_check_key_accepts_relative_paths(key):
    assert v.check_key(key) is None


def test_verify_weights_rejects_a_manifest_with_a_traversal_path(tmp_path):
    root = tmp_path / "model"
    root.mkdir()
    document = {
        "version": 1,
        "algorithm": "sha256",
        "files": [{"path": "../x.json", "size": 1, "sha256": "0" * 64}],
    }
    text = json.dumps(document)
    (root / m.MANIFEST_NAME).write_text(text)
    problems = v.verify(str(root), str(root / m.MANIFEST_NAME), hashlib.sha256(text.encode()).hexdigest())
    assert problems == [f"{root / m.MANIFEST_NAME}: files[0].path '../x.json' has a '.' or '..' segment"]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"version": 2, "algorithm": "sha256", "files": []}, "is not a version 1 sha256 manifest"),
        ({"version": 1, "algorithm": "sha256", "files": []}, "lists no files"),
        (
            {
                "version": 1,
                "algorithm": "sha256",
                "files": [{"path": "a.json", "size": -1, "sha256": "0" * 64}],
            },
            "files[0].size -1 is not a size in bytes",
        ),
        (
            {"version": 1, "algorithm": "sha256", "files": [{"path": "a.json", "size": 1, "sha256": "X"}]},
            "files[0].sha256 'X' is not 64 lower-case hex digits",
        ),
        (
            {
                "version": 1,
                "algorithm": "sha256",
                "files": [{"path": m.VERIFIED_MARKER, "size": 1, "sha256": "0" * 64}],
            },
            f"files[0].path '{m.VERIFIED_MARKER}' is a bookkeeping file",
        ),
    ],
)
def test_verify_weights_rejects_malformed_manifests(tmp_path, document, problem):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(document))
    problems = v.verify(str(tmp_path), str(path), None)
    assert problems == [f"{path}: {problem}"]


def test_verify_weights_rejects_symbolic_links(model, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    manifest, digest = _pin(model)
    (model / "config.json").unlink()
    (model / "config.json").symlink_to(secret)
    (model / "linked").symlink_to(tmp_path)
    problems = v.verify(str(model), manifest, digest)
    assert "config.json: is a symbolic link" in problems
    assert "linked: is a symbolic link" in problems


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cli(python: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, str(SCRIPT), *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("python", [sys.executable, *([PY39] if PY39 else [])])
def test_verify_weights_cli_writes_the_marker_only_when_verified(model, python):
    manifest, digest = _pin(model)
    done = _cli(python, "--dir", str(model), "--manifest", manifest, "--expect-sha256", digest, "--marker")
    assert done.returncode == 0, done.stderr
    assert (model / m.VERIFIED_MARKER).read_text() == digest + "\n"
    before, after = _sha((model / "config.json").read_bytes()), _sha(b'{"layers": 9}')
    (model / "config.json").write_text('{"layers": 9}')
    done = _cli(python, "--dir", str(model), "--manifest", manifest, "--expect-sha256", digest, "--marker")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"weights verification failed: {model}: config.json: sha256 {after} is not the manifest's {before}"
    ]
    assert not (model / m.VERIFIED_MARKER).exists()


def test_verify_weights_cli_writes_the_failure_gauge(model, tmp_path):
    manifest, digest = _pin(model)
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    (model / "extra.py").write_text("x")
    done = _cli(
        sys.executable,
        "--dir",
        str(model),
        "--manifest",
        manifest,
        "--expect-sha256",
        digest,
        "--textfile-dir",
        str(textfiles),
    )
    assert done.returncode == 1
    [gauge] = textfiles.iterdir()
    assert f'{v.METRIC}{{directory="{model}"}} 1' in gauge.read_text().splitlines()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--dir", "d", "--manifest", "m"],
        ["--dir", "d", "--manifest", "m", "--expect-sha256", "abc"],
        ["--dir", "d", "--manifest", "m", "--expect-sha256", "0" * 64, "--unknown"],
    ],
)
def test_verify_weights_cli_rejects_bad_usage_with_exit_2(args):
    assert _cli(sys.executable, *args).returncode == 2


def test_verify_weights_is_standard_library_only():
    # It runs on nodes as a single file: nothing but the standard library may be imported.
    tree = ast.parse(SCRIPT.read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {name.split(".")[0] for name in imported} <= set(sys.stdlib_module_names)


def test_verifier_source_is_the_module_the_cli_imports():
    assert m.verifier_source() == SCRIPT.read_text()
