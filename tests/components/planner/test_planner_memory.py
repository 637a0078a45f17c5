import dataclasses

import pytest

from inference_infra.components.planner import (
    GIB,
    Assumptions,
    Precision,
    Quantization,
    Traffic,
    device_memory,
    memory_budget,
    model_spec,
    validate_traffic,
)

FP16 = Precision(weights=Quantization.FP16)


def budget(model, context, concurrency, precision=FP16):
    return memory_budget(
        model_spec(model), Traffic(context_tokens=context, concurrency=concurrency), precision, Assumptions()
    )


def test_llama2_7b_fp16_4096_context_holds_2_gib_of_kv_per_sequence():
    # 2 (K and V) x 32 layers x 32 KV heads x 128 head dim x 2 bytes x 4,096 tokens = 2 GiB exactly.
    b = budget("llama-2-7b", 4096, 1)
    assert b.kv_cache_per_sequence_gib == 2.0
    assert b.kv_cache_gib == 2.0


def test_kv_cache_scales_with_concurrency():
    assert budget("llama-2-7b", 4096, 16).kv_cache_gib == 32.0


def test_llama31_70b_grouped_query_attention_cuts_kv_cache_eightfold():
    gqa = model_spec("llama-3.1-70b")
    mha = dataclasses.replace(gqa, name="llama-3.1-70b-mha", kv_heads=gqa.attention_heads)
    traffic = Traffic(context_tokens=8192, concurrency=8)
    kv_gqa = memory_budget(gqa, traffic, FP16, Assumptions()).kv_cache_gib
    kv_mha = memory_budget(mha, traffic, FP16, Assumptions()).kv_cache_gib
    assert kv_mha == 8 * kv_gqa
    # 2 x 80 layers x 8 KV heads x 128 x 2 bytes = 320 KiB per token; x 8,192 tokens x 8 sequences = 20 GiB.
    assert kv_gqa == 20.0


def test_kv_quantization_is_separate_from_weight_quantization():
    fp8_kv = budget("llama-3.1-8b", 8192, 4, Precision(weights=Quantization.FP16, kv_cache=Quantization.FP8))
    int4_weights = budget("llama-3.1-8b", 8192, 4, Precision(weights=Quantization.INT4))
    plain = budget("llama-3.1-8b", 8192, 4)
    assert fp8_kv.kv_cache_gib == plain.kv_cache_gib / 2
    assert fp8_kv.weights_gib == plain.weights_gib
    assert int4_weights.weights_gib == plain.weights_gib / 4
    assert int4_weights.kv_cache_gib == plain.kv_cache_gib  # quantized weights keep a 16-bit cache


@pytest.mark.parametrize(
    ("quant", "bytes_per_weight"),
    [("fp32", 4), ("fp16", 2), ("bf16", 2), ("fp8", 1), ("int8", 1), ("int4", 0.5)],
)
def test_weights_take_params_times_bytes_per_weight(quant, bytes_per_weight):
    spec = model_spec("llama-3.1-70b")
    b = budget("llama-3.1-70b", 1024, 1, Precision(weights=Quantization(quant)))
    assert b.weights_gib == pytest.approx(spec.params * bytes_per_weight / GIB)


def test_mixtral_weights_hold_every_expert():
    b = budget("mixtral-8x7b", 4096, 1)
    assert b.weights_gib == pytest.approx(46.7e9 * 2 / GIB, rel=0.005)


def test_default_kv_cache_follows_the_weights_float_type():
    assert Precision(weights=Quantization.FP32).kv is Quantization.FP32
    assert Precision(weights=Quantization.FP16).kv is Quantization.FP16
    assert Precision(weights=Quantization.INT4).kv is Quantization.BF16
    assert Precision(weights=Quantization.FP8, kv_cache=Quantization.INT4).kv is Quantization.INT4


def test_total_is_the_sum_of_the_terms():
    b = budget("llama-3.1-8b", 8192, 32)
    assert b.total_gib == pytest.approx(b.weights_gib + b.kv_cache_gib + b.activation_gib)
    assert 0 < b.activation_gib < 2  # one 8,192-token chunk's workspace, not a multiple of the context


def test_device_memory_shards_weights_and_kv_and_adds_the_runtime_reserve():
    spec, traffic = model_spec("llama-3.1-70b"), Traffic(context_tokens=8192, concurrency=8)
    one = device_memory(spec, traffic, FP16, Assumptions(), tensor_parallel=1, sequences=8)
    four = device_memory(
        spec, traffic, FP16, Assumptions(runtime_reserve_gib=2.5), tensor_parallel=4, sequences=8
    )
    assert four.weights_gib == one.weights_gib / 4
    assert four.kv_cache_gib == one.kv_cache_gib / 4
    assert four.activation_gib < one.activation_gib
    assert four.runtime_gib == 2.5
    assert four.total_gib == pytest.approx(
        four.weights_gib + four.kv_cache_gib + four.activation_gib + four.runtime_gib
    )


def test_device_memory_replicates_kv_heads_beyond_the_kv_head_count():
    spec, traffic = model_spec("llama-3.1-70b"), Traffic(context_tokens=8192, concurrency=8)  # 8 KV heads
    eight = device_memory(spec, traffic, FP16, Assumptions(), tensor_parallel=8, sequences=8)
    sixteen = device_memory(spec, traffic, FP16, Assumptions(), tensor_parallel=16, sequences=8)
    assert sixteen.kv_cache_gib == eight.kv_cache_gib  # each device still holds a whole KV head
    assert sixteen.weights_gib == eight.weights_gib / 2


def test_traffic_default_output_is_512_tokens_or_half_the_context():
    assert Traffic(context_tokens=8192, concurrency=1).output == 512
    assert Traffic(context_tokens=8192, concurrency=1).prompt == 7680
    assert Traffic(context_tokens=600, concurrency=1).output == 300
    assert Traffic(context_tokens=8192, concurrency=1, output_tokens=2048).prompt == 6144


def test_validate_traffic_rejects_non_positive_values():
    problems = validate_traffic(Traffic(context_tokens=0, concurrency=-2))
    assert [str(p) for p in problems] == [
        "context_tokens 0 must be a positive whole number",
        "concurrency -2 must be a positive whole number",
    ]


def test_validate_traffic_rejects_context_beyond_the_models_window():
    problems = validate_traffic(Traffic(context_tokens=8192, concurrency=1), model_spec("llama-2-7b"))
    assert [str(p) for p in problems] == [
        "context_tokens 8192 exceeds llama-2-7b's context window of 4,096 tokens"
    ]


def test_validate_traffic_rejects_output_longer_than_context():
    problems = validate_traffic(Traffic(context_tokens=1024, concurrency=1, output_tokens=2048))
    assert [str(p) for p in problems] == [
        "output_tokens 2048 must be a whole number from 1 to context_tokens (1024)"
    ]
