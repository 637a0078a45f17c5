import dataclasses

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.planner import (
    PRESETS,
    ModelSpec,
    model_spec,
    preset_names,
    validate_model_spec,
)

SPEC_PRESETS = [
    "llama-2-7b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen2.5-72b",
]

# Parameter counts the model cards / safetensors indexes publish.
PUBLISHED_PARAMS = {
    "llama-2-7b": 6.74e9,
    "llama-2-13b": 13.0e9,
    "llama-2-70b": 69.0e9,
    "llama-3.1-8b": 8.03e9,
    "llama-3.1-70b": 70.6e9,
    "llama-3.3-70b": 70.6e9,
    "llama-3.1-405b": 405.9e9,
    "mistral-7b": 7.25e9,
    "mixtral-8x7b": 46.7e9,
    "mixtral-8x22b": 140.6e9,
    "qwen2.5-7b": 7.61e9,
    "qwen2.5-72b": 72.7e9,
}


def test_presets_include_every_spec_model():
    assert set(SPEC_PRESETS) <= set(preset_names())


@pytest.mark.parametrize("spec", PRESETS, ids=lambda s: s.name)
def test_preset_param_count_matches_published_figure(spec):
    assert spec.params == pytest.approx(PUBLISHED_PARAMS[spec.name], rel=0.005)


@pytest.mark.parametrize("spec", PRESETS, ids=lambda s: s.name)
def test_preset_carries_source_and_date_and_is_consistent(spec):
    assert spec.source.startswith("https://huggingface.co/")
    assert spec.hf_id in spec.source
    assert spec.as_of is not None
    assert validate_model_spec(spec) == []
    assert spec.attention_heads * spec.head_dim == spec.hidden_size


def test_mixtral_active_params_are_the_two_routed_experts():
    mixtral = model_spec("mixtral-8x7b")
    assert mixtral.is_moe
    assert mixtral.active_params == pytest.approx(12.9e9, rel=0.005)
    assert mixtral.shared_params + mixtral.expert_params == mixtral.params


def test_dense_model_shares_all_its_params():
    llama = model_spec("llama-3.1-8b")
    assert llama.shared_params == llama.params == llama.active_params
    assert llama.expert_params == 0


def test_model_spec_accepts_hugging_face_id_and_any_case():
    assert model_spec("meta-llama/Llama-3.1-70B").name == "llama-3.1-70b"
    assert model_spec(" LLAMA-2-7B ").name == "llama-2-7b"


def test_model_spec_rejects_unknown_name_with_close_matches():
    with pytest.raises(
        InputError, match=r"'llama-3-70b' is not a model preset; did you mean llama-3\.3-70b"
    ) as e:
        model_spec("llama-3-70b")
    assert e.value.problems[0].input == "model"


def test_model_spec_accepts_custom_spec():
    custom = ModelSpec(
        name="tiny",
        layers=2,
        hidden_size=64,
        attention_heads=4,
        kv_heads=2,
        head_dim=16,
        intermediate_size=128,
        vocab_size=1000,
        max_context_tokens=2048,
    )
    assert model_spec(custom) is custom
    assert custom.params == 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128 + 2 * 64) + 2 * 1000 * 64 + 64


def test_model_spec_rejects_inconsistent_custom_spec():
    bad = dataclasses.replace(model_spec("llama-3.1-8b"), name="bad", kv_heads=5, experts_per_token=2)
    with pytest.raises(InputError, match=r"model\.kv_heads 5 must divide attention_heads \(32\)") as e:
        model_spec(bad)
    assert [p.input for p in e.value.problems] == ["model.kv_heads", "model.experts_per_token"]


def test_validate_model_spec_rejects_non_positive_sizes():
    bad = dataclasses.replace(model_spec("llama-3.1-8b"), layers=0)
    assert [str(p) for p in validate_model_spec(bad)] == ["model.layers 0 must be a positive whole number"]
