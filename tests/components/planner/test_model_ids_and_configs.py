"""`size` for the models people have: Hugging Face ids, and any transformer from its config.json.

The three config.json files below carry the fields the published checkpoints'
config.json files have (meta-llama/Llama-3.1-8B-Instruct,
mistralai/Mixtral-8x7B-Instruct-v0.1, Qwen/Qwen2.5-7B-Instruct on Hugging Face,
read 2026-11-21, the same day as the presets).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.planner.models import model_from_config, model_spec

CONFIGS = {
    "llama-3.1-8b": {
        "_name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 131072,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    },
    "mixtral-8x7b": {
        "_name_or_path": "mistralai/Mixtral-8x7B-Instruct-v0.1",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
        "torch_dtype": "bfloat16",
    },
    "qwen2.5-7b": {
        "_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "max_position_embeddings": 32768,
        "num_attention_heads": 28,
        "num_hidden_layers": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    },
}


@pytest.mark.parametrize(
    ("given", "preset"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("LLAMA-3.1-405B", "llama-3.1-405b"),
    ],
)
def test_model_spec_accepts_hugging_face_ids(given, preset):
    assert model_spec(given).name == preset


def test_model_spec_rejects_a_near_miss_with_did_you_mean():
    with pytest.raises(
        InputError, match=r"'meta-llama/Llama-3\.1-7B-Instruct' is not a model preset; did you"
    ):
        model_spec("meta-llama/Llama-3.1-7B-Instruct")


@pytest.mark.parametrize("preset", sorted(CONFIGS))
def test_model_from_config_matches_the_preset_shape(preset, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS[preset]))
    spec, reference = model_from_config(path), model_spec(preset)
    assert spec.params == reference.params
    assert spec.kv_bytes_per_token(2) == reference.kv_bytes_per_token(2)
    assert spec.active_params == reference.active_params
    assert spec.name == CONFIGS[preset]["_name_or_path"]


def test_model_spec_reads_a_config_json_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS["qwen2.5-7b"]))
    assert model_spec(str(path)).params == model_spec("qwen2.5-7b").params


@pytest.mark.parametrize(
    "field", ["num_hidden_layers", "hidden_size", "vocab_size", "max_position_embeddings"]
)
def test_model_from_config_rejects_a_missing_field_naming_it_and_the_file(field, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in CONFIGS["llama-3.1-8b"].items() if k != field}))
    with pytest.raises(InputError, match=rf"{field} \(unset\) must be a positive whole number in {path}"):
        model_from_config(path)


def test_model_from_config_rejects_a_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"--model-config '.*nope\.json' is not a file"):
        model_from_config(tmp_path / "nope.json", "--model-config")  # as size calls it


def _size(*args):
    return subprocess.run(
        [sys.executable, "-m", "inference_infra.components.cli", "size", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_size_cli_sizes_a_model_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS["mixtral-8x7b"]))
    result = _size("--model-config", str(path), "--context", "8192", "--concurrency", "8", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["model"] == "mistralai/Mixtral-8x7B-Instruct-v0.1"
    assert report["options"]


def test_size_cli_rejects_a_config_missing_a_field_with_exit_2(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": 4096}))
    result = _size("--model-config", str(path), "--context", "8192", "--concurrency", "8")
    assert result.returncode == 2
    assert "num_hidden_layers (unset)" in result.stderr
    assert "Traceback" not in result.stderr


def test_size_cli_rejects_both_model_and_model_config(tmp_path):
    result = _size(
        "--model", "llama-3.1-8b", "--model-config", "x.json", "--context", "8", "--concurrency", "1"
    )
    assert result.returncode == 2
    assert "one of them, not both" in result.stderr
