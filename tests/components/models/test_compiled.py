"""The weights manifest's index of Neuron compiled sets (components/models/compiled.py): pinned through the
weights manifest, keyed by the exact compile key, tied to the weights it was compiled from, and invisible
to a verifier that reads only the file list."""

from __future__ import annotations

import hashlib
import json

import pytest

from inference_infra.components.models import compiled as c
from inference_infra.components.models import manifest as m
from inference_infra.components.models import verify_weights as vw

KEY = {"version": 1, "tensor_parallel_size": 2, "max_model_len": 8192, "max_num_seqs": 4, "args": []}
SET_SHA = "cd" * 32


def _weights(tmp_path, files=None):
    files = files or {"model.safetensors": b"\x01" * 100, "config.json": b"{}"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return m.build(m.FileEntry(n, len(d), hashlib.sha256(d).hexdigest()) for n, d in files.items())


def test_compiled_manifest_without_artifacts_has_no_entry(tmp_path):
    document = _weights(tmp_path)
    assert vw.compiled_entry(document, KEY) is None
    assert c.indexed_keys(document) == []


def test_compiled_manifest_with_artifacts_indexes_the_key(tmp_path):
    document = c.with_artifacts(_weights(tmp_path), KEY, SET_SHA)
    entry = vw.compiled_entry(document, KEY)
    assert entry is not None
    assert entry["sha256"] == SET_SHA
    assert entry["manifest"] == f"neuron-compiled/{vw.compile_key_id(KEY)}/{m.MANIFEST_NAME}"
    assert c.indexed_keys(document) == [vw.compile_key_id(KEY)]


@pytest.mark.parametrize(
    "other",
    [
        {**KEY, "tensor_parallel_size": 4},
        {**KEY, "max_model_len": 4096},
        {**KEY, "max_num_seqs": 8},
        {**KEY, "args": ["--override-neuron-config", "{}"]},
    ],
)
def test_compiled_entry_is_for_the_exact_key_only(tmp_path, other):
    document = c.with_artifacts(_weights(tmp_path), KEY, SET_SHA)
    assert vw.compiled_entry(document, other) is None


def test_compiled_entry_copied_into_another_models_manifest_is_not_used(tmp_path):
    indexed = c.with_artifacts(_weights(tmp_path), KEY, SET_SHA)
    (tmp_path / "other").mkdir()
    other = _weights(tmp_path / "other", {"model.safetensors": b"\x02" * 100, "config.json": b"{}"})
    other[vw.COMPILED_INDEX] = indexed[vw.COMPILED_INDEX]
    assert vw.compiled_entry(other, KEY) is None


def test_compiled_index_is_ignored_by_the_weights_verifier(tmp_path):
    document = c.with_artifacts(_weights(tmp_path), KEY, SET_SHA)
    text = m.dumps(document)
    (tmp_path / m.MANIFEST_NAME).write_text(text)
    assert vw.verify(str(tmp_path), str(tmp_path / m.MANIFEST_NAME), m.digest(text)) == []


def test_compiled_artifacts_allow_model_pt_and_nothing_else_that_runs_code():
    entries = [
        m.FileEntry("model.pt", 10, "ab" * 32),
        m.FileEntry("neuron_config.json", 10, "ab" * 32),
        m.FileEntry("weights/tp0_sharded_checkpoint.safetensors", 10, "ab" * 32),
        m.FileEntry("graph.neff", 10, "ab" * 32),
    ]
    assert c.artifacts_problems(entries) == []
    refused = c.artifacts_problems(
        [m.FileEntry("weights/model.pt", 1, "ab" * 32), m.FileEntry("x.py", 1, "ab" * 32)]
    )
    assert [p.split(" ", 1)[0] for p in refused] == ["weights/model.pt", "x.py"]


def test_compiled_key_file_must_name_key_and_weights():
    assert c.read_key_file(json.dumps({"key": KEY, "weights": "ab" * 32}))[:2] == (KEY, "ab" * 32)
    assert c.read_key_file("{}")[2] is not None
    assert "weights" in c.read_key_file(json.dumps({"key": KEY}))[2]
    assert c.read_key_file("not json")[2] == "is not JSON"


def test_models_manifest_leaves_the_compiled_folder_out(tmp_path):
    _weights(tmp_path)
    (tmp_path / "neuron-compiled" / "abc").mkdir(parents=True)
    (tmp_path / "neuron-compiled" / "abc" / "model.pt").write_bytes(b"x")
    assert sorted(e.path for e in m.local_entries(tmp_path)) == ["config.json", "model.safetensors"]
