"""The served-model block fleets embed to size themselves with the planner."""

import pytest
from pydantic import ValidationError

from inference_infra.components.planner import Quantization
from inference_infra.infra.config import ServedModelSettings


def test_served_model_settings_read_camel_case_keys_into_planner_inputs():
    s = ServedModelSettings.model_validate(
        {
            "name": "meta-llama/Llama-3.1-70B",
            "quantization": "fp8",
            "kvCacheQuantization": "fp8",
            "contextTokens": 8192,
            "concurrency": 32,
        }
    )
    assert s.name == "llama-3.1-70b"
    model = s.to_args()
    assert model.traffic().context_tokens == 8192
    assert model.traffic().output == 512
    assert model.precision().weights is Quantization.FP8
    assert model.precision().kv is Quantization.FP8


def test_served_model_settings_default_to_bf16_weights_and_cache():
    s = ServedModelSettings.model_validate({"name": "mistral-7b", "contextTokens": 4096, "concurrency": 8})
    assert s.to_args().precision().describe() == "bf16 weights, bf16 KV cache"


def test_served_model_settings_reject_unknown_model_with_close_matches():
    with pytest.raises(ValidationError, match=r"is not a model preset; did you mean llama-3\.1-8b"):
        ServedModelSettings.model_validate({"name": "llama-3.1-8", "contextTokens": 4096, "concurrency": 1})


def test_served_model_settings_reject_context_beyond_the_models_window():
    with pytest.raises(ValidationError, match=r"contextTokens 8192 exceeds llama-2-7b's window of 4,096"):
        ServedModelSettings.model_validate({"name": "llama-2-7b", "contextTokens": 8192, "concurrency": 1})


def test_served_model_settings_reject_bad_numbers_and_formats():
    with pytest.raises(ValidationError) as caught:
        ServedModelSettings.model_validate(
            {"name": "llama-2-7b", "quantization": "int3", "contextTokens": 0, "concurrency": 1, "typo": 1}
        )
    assert {e["loc"][0] for e in caught.value.errors()} == {"quantization", "contextTokens", "typo"}
