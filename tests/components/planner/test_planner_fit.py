import pytest

from inference_infra.components.catalog import instance_type, instance_types
from inference_infra.components.planner import (
    Assumptions,
    Precision,
    Quantization,
    Traffic,
    fit,
    hardware,
    model_spec,
    tensor_parallel_degrees,
)

BF16, FP8, INT4 = (Precision(weights=Quantization(q)) for q in ("bf16", "fp8", "int4"))


def fit_on(model, machine, context=4096, concurrency=8, precision=BF16, assumptions=None):
    return fit(
        model_spec(model),
        Traffic(context_tokens=context, concurrency=concurrency),
        precision,
        assumptions or Assumptions(),
        instance_type(machine),
    )


@pytest.mark.parametrize("spec", ["llama-3.1-70b", "qwen2.5-7b", "llama-2-13b", "mixtral-8x22b"])
def test_tensor_parallel_degrees_divide_the_attention_heads(spec):
    s = model_spec(spec)
    for t in tensor_parallel_degrees(s, 32):
        assert s.attention_heads % t == 0
        assert s.kv_heads % t == 0 or t % s.kv_heads == 0


def test_tensor_parallel_degrees_for_qwen_7b_skip_degrees_that_split_heads_unevenly():
    # 28 query heads (divisors 1, 2, 4, 7, 14, 28); 4 KV heads rule out 7 and 14, which neither divide
    # 4 nor are multiples of it.
    assert tensor_parallel_degrees(model_spec("qwen2.5-7b"), 32) == [1, 2, 4, 28]


def test_fit_chooses_the_smallest_degree_that_fits():
    f = fit_on("llama-3.1-70b", "p4de.24xlarge", precision=BF16)  # 8 x A100 80GB; 131 GiB of weights
    assert f.fits
    assert f.tensor_parallel == 2
    assert f.replicas == 4
    assert f.per_device.total_gib <= f.ceiling_gib == pytest.approx(72.0)


def test_fit_uses_whole_machine_as_replicas_and_spreads_the_sequences():
    f = fit_on("llama-3.1-8b", "p5.48xlarge", concurrency=20)
    assert (f.tensor_parallel, f.replicas, f.active_replicas, f.sequences_per_replica) == (1, 8, 8, 3)


def test_fit_leaves_replicas_idle_when_there_are_fewer_sequences():
    f = fit_on("llama-3.1-8b", "p5.48xlarge", concurrency=3)
    assert (f.replicas, f.active_replicas, f.sequences_per_replica) == (8, 3, 1)


def test_llama_405b_fits_eight_h100s_at_fp8_but_not_at_bf16():
    fp8 = fit_on("llama-3.1-405b", "p5.48xlarge", context=8192, concurrency=4, precision=FP8)
    assert fp8.fits
    assert fp8.tensor_parallel == 8
    bf16 = fit_on("llama-3.1-405b", "p5.48xlarge", context=8192, concurrency=4, precision=BF16)
    assert not bf16.fits
    assert "each GPU needs 94.5 GiB weights" in bf16.problem
    assert "over the 72.0 GiB ceiling (90% of 80 GiB)" in bf16.problem


def test_llama_405b_bf16_fits_eight_h200s():
    f = fit_on("llama-3.1-405b", "p5en.48xlarge", context=8192, concurrency=4, precision=BF16)
    assert f.fits
    assert f.tensor_parallel == 8


def test_inferentia2_shards_over_neuroncores_with_half_a_chip_each():
    hw = hardware(instance_type("inf2.48xlarge"))
    assert (hw.units, hw.unit_name, hw.unit_memory_gib) == (24, "NeuronCore", 16)
    f = fit_on("llama-3.1-70b", "inf2.48xlarge", context=4096, concurrency=8, precision=FP8)
    assert f.fits
    assert f.tensor_parallel == 8  # 65.7 GiB of fp8 weights over 16 GiB cores; 24 does not divide 64 heads
    assert f.replicas == 3


def test_tpu_slices_shard_over_chips():
    hw = hardware(instance_type("v5litepod-8"))
    assert (hw.units, hw.unit_name, hw.unit_memory_gib) == (8, "TPU chip", 16)
    f = fit_on("llama-3.1-8b", "v5litepod-8", concurrency=8)
    assert f.fits
    assert f.tensor_parallel == 2


def test_fit_respects_a_lower_memory_ceiling():
    loose = fit_on("llama-3.1-8b", "g6.12xlarge", context=8192, concurrency=16)
    tight = fit_on(
        "llama-3.1-8b",
        "g6.12xlarge",
        context=8192,
        concurrency=16,
        assumptions=Assumptions(max_memory_utilization=0.5),
    )
    assert loose.fits
    assert tight.fits
    assert tight.tensor_parallel > loose.tensor_parallel
    assert tight.memory_utilization <= 0.5


def test_fit_rejects_a_machine_that_is_too_small_with_memory_figures():
    f = fit_on("llama-3.1-70b", "g5.xlarge", precision=BF16)
    assert not f.fits
    assert f.problem.startswith(
        "g5.xlarge (1 x NVIDIA A10G 24GB) is too small for llama-3.1-70b with bf16 weights, bf16 KV cache"
    )
    assert "131.4 GiB weights" in f.problem
    assert "over the 21.6 GiB ceiling (90% of 24 GiB)" in f.problem


def test_fit_rejects_int4_weights_on_neuron():
    f = fit_on("llama-3.1-8b", "inf2.xlarge", precision=INT4)
    assert not f.fits
    assert "Neuron quantizes weights to int8 or fp8 only, not int4" in f.problem


def test_fit_rejects_fp8_weights_on_t4():
    f = fit_on("llama-2-7b", "g4dn.12xlarge", precision=FP8)
    assert not f.fits
    assert "the T4 (Turing) has no FP8 weight kernels" in f.problem


def test_every_catalog_machine_either_fits_under_the_ceiling_or_says_why():
    spec, traffic = model_spec("llama-3.1-70b"), Traffic(context_tokens=8192, concurrency=16)
    for machine in instance_types():
        f = fit(spec, traffic, FP8, Assumptions(), machine)
        if f.fits:
            assert f.per_device.total_gib <= f.ceiling_gib + 1e-9
            assert f.memory_utilization <= 0.9 + 1e-9
            assert f.tensor_parallel * f.replicas <= f.hardware.units
        else:
            assert machine.name in f.problem
