"""Neuron compiled artifacts kept beside the weights, pinned through the weights' own manifest.

A Neuron engine compiles its model before it serves (vLLM's NxD loader calls NxDI's `compile` when
`load` finds nothing at $NEURON_COMPILED_ARTIFACTS: aws-neuron/upstreaming-to-vllm dd417b3,
vllm/model_executor/model_loader/neuronx_distributed.py:168-203). What it compiles depends on the
model's config and the neuron config vLLM derives from its flags (tp_degree = --tensor-parallel-size,
batch_size = --max-num-seqs, seq_len and max_context_length = --max-model-len, torch_dtype = --dtype,
plus --override-neuron-config: same file, `_get_default_neuron_config`, :594-617), and on the compiler
the image carries (the Neuron SDK). NxDI's `load` then takes its config from the artifacts' own
neuron_config.json (models/application_base.py and models/config.py, v0.5.9230), not from the flags: a
set compiled for another tensor-parallel degree would be loaded as it is. So a node uses a set only when
its compile key (components/serving/neuron_compile.py: image and SDK, every compile-relevant flag) is
exactly the node's own.

Layout in the model store, beside the weights:

    <weights>/inference-manifest.json          the weights' manifest, pinned by the fleet, with an index:
        {"neuron_compiled": {"<key id>": {"key": {...}, "weights": "<weights digest>",
                                          "manifest": "neuron-compiled/<key id>/inference-manifest.json",
                                          "sha256": "<that manifest's SHA-256>"}}, "files": [...], ...}
    <weights>/neuron-compiled/<key id>/inference-manifest.json   the set's manifest (the weights' format)
    <weights>/neuron-compiled/<key id>/model.pt, neuron_config.json, weights/...

Every file is pinned: the fleet pins the weights manifest, which pins each set's manifest, which pins each
file. `weights` (the SHA-256 of the weights' file list) ties a set to the weights it was compiled from, so
an index entry copied into another model's manifest is not used. Verifiers of the previous release read
`files` only and ignore the index.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from inference_infra.components.models.manifest import FileEntry, build, dumps
from inference_infra.components.models.verify_weights import (
    COMPILED_FOLDER,
    COMPILED_INDEX,
    MANIFEST_NAME,
    artifact_format_problem,
    canonical_json,
    check_key,
    compile_key_id,
    compiled_entry,
    is_sha256,
    weights_digest,
)

KEY_FILE = "neuron-compile-key.json"  # what a node writes beside its compiled folders (compile key, weights)

__all__ = [
    "COMPILED_FOLDER",
    "COMPILED_INDEX",
    "KEY_FILE",
    "artifact_prefix",
    "artifacts_manifest",
    "artifacts_problems",
    "canonical_json",
    "compile_key_id",
    "compiled_entry",
    "indexed_keys",
    "read_key_file",
    "weights_digest",
    "with_artifacts",
]


def artifact_prefix(key: Mapping[str, Any]) -> str:
    """The folder of a key's artifact set, relative to the weights: neuron-compiled/<key id>/."""
    return f"{COMPILED_FOLDER}/{compile_key_id(dict(key))}/"


def artifacts_problems(entries: Iterable[FileEntry]) -> list[str]:
    """Files a node would refuse in an artifact set: unsafe paths and formats (model.pt allowed)."""
    problems = []
    for e in entries:
        why = check_key(e.path) or artifact_format_problem(e.path)
        if why is not None:
            problems.append(f"{e.path} {why}")
    return problems


def artifacts_manifest(entries: Iterable[FileEntry]) -> str:
    """The artifact set's own manifest, in the weights' format (the same verifier checks it)."""
    return dumps(build(entries))


def with_artifacts(
    document: Mapping[str, Any], key: Mapping[str, Any], artifacts_manifest_sha256: str
) -> dict[str, Any]:
    """The weights manifest with the set compiled for `key` indexed (an entry for the same key replaced)."""
    if not is_sha256(artifacts_manifest_sha256):
        raise ValueError(f"artifacts manifest sha256 {artifacts_manifest_sha256!r} is not 64 hex digits")
    updated = copy.deepcopy(dict(document))
    index = dict(updated.get(COMPILED_INDEX) or {})
    index[compile_key_id(dict(key))] = {
        "key": copy.deepcopy(dict(key)),
        "manifest": artifact_prefix(key) + MANIFEST_NAME,
        "sha256": artifacts_manifest_sha256.lower(),
        "weights": weights_digest(updated.get("files") or []),
    }
    updated[COMPILED_INDEX] = index
    return updated


def indexed_keys(document: Mapping[str, Any]) -> list[str]:
    """The key ids a weights manifest indexes artifacts for (those whose entry names these weights)."""
    index = document.get(COMPILED_INDEX)
    if not isinstance(index, dict):
        return []
    return sorted(
        key_id
        for key_id, entry in index.items()
        if isinstance(entry, dict)
        and isinstance(entry.get("key"), dict)
        and compiled_entry(dict(document), entry["key"]) is not None
    )


def read_key_file(text: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """(key, weights digest, problem) from a node's neuron-compile-key.json."""
    try:
        document = json.loads(text)
    except ValueError:
        return None, None, "is not JSON"
    if not isinstance(document, dict) or not isinstance(document.get("key"), dict):
        return None, None, 'must be {"key": {...}, "weights": "<64 hex>"} as a Neuron node writes it'
    weights = document.get("weights")
    if not isinstance(weights, str) or not is_sha256(weights):
        return None, None, "must name the weights it was compiled from (weights: 64 hex digits)"
    return document["key"], weights.lower(), None
