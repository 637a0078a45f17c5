"""The roofline never beats the bandwidth or the compute limit, checked on every catalog machine."""

import dataclasses

import pytest

from inference_infra.components.catalog import instance_type, instance_types
from inference_infra.components.planner import (
    PRESETS,
    Assumptions,
    Precision,
    Quantization,
    Traffic,
    estimate,
    fit,
    hardware,
    model_spec,
)
from inference_infra.components.planner.engine import (
    Engine,
    Scheduling,
    bucket_for,
    bucket_kv_tokens,
    neuron_buckets,
    served_engine,
)
from inference_infra.components.planner.throughput import decode_step_seconds, first_token_seconds

TRAFFICS = [
    Traffic(context_tokens=2048, concurrency=1),
    Traffic(context_tokens=4096, concurrency=24, output_tokens=1024),
    Traffic(context_tokens=4096, concurrency=256),
]


def independent_bounds(spec, traffic, precision, layout):
    """Upper bounds from first principles and catalog figures, not from the planner's code."""
    hw = hardware(layout.hardware.instance)
    device = hw.device
    split = hw.units // hw.instance.accelerator_count
    bandwidth = device.memory_bandwidth_gb_s * 1e9 / split
    best_peak = max(p for p in (device.fp16_tflops, device.fp8_tflops, device.int8_tops) if p) * 1e12 / split
    t, active = layout.tensor_parallel, layout.active_replicas
    weights = spec.active_params * precision.weights.bytes_per_element  # a step reads at least these
    kv_len = traffic.prompt + traffic.output / 2
    kv = kv_len * spec.kv_bytes_per_token(precision.kv.bytes_per_element)
    n = traffic.concurrency
    # A replica with b sequences reads >= weights + b * kv per step over its t units; summed over the
    # active replicas (concave in b), the machine makes at most this many tokens per second:
    bandwidth_bound = n * t * bandwidth / (weights + (n / active) * kv)
    compute_bound = active * t * best_peak / (2 * spec.active_params)
    return bandwidth_bound, compute_bound, t * best_peak / (2 * spec.active_params)


@pytest.mark.parametrize("spec", PRESETS, ids=lambda s: s.name)
def test_estimate_never_beats_bandwidth_or_compute_bound_on_any_catalog_machine(spec):
    checked = 0
    for quant in Quantization:
        precision = Precision(weights=quant)
        for traffic in TRAFFICS:
            for machine in instance_types():
                layout = fit(spec, traffic, precision, Assumptions(), machine)
                if not layout.fits:
                    continue
                est = estimate(spec, traffic, precision, Assumptions(), layout)
                bandwidth_bound, compute_bound, prefill_bound = independent_bounds(
                    spec, traffic, precision, layout
                )
                assert 0 < est.tokens_per_s <= bandwidth_bound * (1 + 1e-9), (machine.name, quant, traffic)
                assert est.tokens_per_s <= compute_bound * (1 + 1e-9), (machine.name, quant, traffic)
                assert est.tokens_per_s <= min(
                    est.bandwidth_bound_tokens_per_s, est.compute_bound_tokens_per_s
                )
                assert est.prefill_tokens_per_s <= prefill_bound * (1 + 1e-9)
                checked += 1
    assert checked > 100


PLAIN = Assumptions(  # round shares and no host time, so the figures below can be checked by hand
    bandwidth_efficiency=0.5, compute_efficiency=0.5, step_overhead_ms=0.0, sequence_overhead_us=0.0
)
SEPARATE = Engine(name="fixed-batch", scheduling=Scheduling.SEPARATE)


def _llama2_on_a10g(concurrency: int = 1):
    # Llama-2-7B bf16 on one A10G (600 GB/s, 125 TFLOPS), 4,096 context = 3,584 prompt + 512 generated
    spec = model_spec("llama-2-7b")
    traffic = Traffic(context_tokens=4096, concurrency=concurrency)
    layout = fit(spec, traffic, Precision(), PLAIN, instance_type("g5.xlarge"))
    return spec, traffic, layout


WEIGHTS = 6_738_415_616 * 2
KV_TOKEN = 2 * 32 * 32 * 128 * 2  # bytes per cached token


def test_estimate_matches_a_hand_computed_separate_prefill_round():
    # One sequence, prompts in steps of their own: prefill, then 511 decode steps reading the paged
    # average (prompt + half the output) and writing one token each.
    spec, traffic, layout = _llama2_on_a10g()
    est = estimate(spec, traffic, Precision(), PLAIN, layout, engine=SEPARATE)
    step = (WEIGHTS + (3584 + 256 + 1) * KV_TOKEN) / 600e9 / 0.5
    prefill_flops = 3584 * (2 * spec.active_params + 4 * 32 * 32 * 128 * 3584 / 2)
    prefill = max(prefill_flops / 125e12 / 0.5, (WEIGHTS + 3584 * KV_TOKEN) / 600e9 / 0.5)
    assert est.decode_bound == "memory bandwidth"
    assert est.per_sequence_tokens_per_s == pytest.approx(1 / step)
    assert est.tokens_per_s == pytest.approx(512 / (prefill + 511 * step))


def test_estimate_puts_the_prompt_into_a_decode_step_under_chunked_prefill():
    # vLLM's scheduler (the served engine on GPUs) gives a new prompt the budget left in the next
    # step: one step carries the prompt (compute-bound, 3,584 tokens within the A10G's 2,048-token
    # budget? no: 2 chunks), the rest decode; a round is 511 + 2 steps.
    spec, traffic, layout = _llama2_on_a10g()
    engine = served_engine("nvidia-gpu")
    assert engine.budget(layout.hardware.device, 4096) == 2048  # vLLM 0.28.0's default for a 24 GB GPU
    est = estimate(spec, traffic, Precision(), PLAIN, layout)
    separate = estimate(spec, traffic, Precision(), PLAIN, layout, engine=SEPARATE)
    steps = 511 + 2  # ceil(3584 / 2048) prefill steps, 511 decodes
    mixed_steps = 2
    decode_lines = 511 / steps
    decode = (WEIGHTS + (decode_lines * (3584 + 256) + decode_lines) * KV_TOKEN) / 600e9 / 0.5
    chunk = 3584 / mixed_steps
    tokens = decode_lines + chunk
    mixed_bytes = (
        WEIGHTS + (decode_lines * (3584 + 256) + (3584 - 2048) / 2 * chunk / 2048 + tokens) * KV_TOKEN
    )
    mixed_flops = tokens * 2 * spec.active_params + 4 * 32 * 32 * 128 * (
        decode_lines * (3584 + 256) + chunk * 3584 / 2
    )
    mixed = max(mixed_bytes / 600e9 / 0.5, mixed_flops / 125e12 / 0.5)
    assert est.tokens_per_s == pytest.approx(512 / (mixed_steps * mixed + (steps - mixed_steps) * decode))
    assert est.tokens_per_s >= separate.tokens_per_s  # sharing steps never costs more than taking turns


def test_estimate_takes_the_larger_of_compute_and_memory_in_a_mixed_step_not_their_sum():
    # 64 sequences of 1,024 + 1,024 on one H100: prefill chunks ride in memory-bound decode steps.
    spec = model_spec("llama-3.1-8b")
    traffic = Traffic(context_tokens=2048, concurrency=64, output_tokens=1024, prompt_tokens=1024)
    layout = fit(spec, traffic, Precision(), PLAIN, instance_type("p5.4xlarge"))
    chunked = estimate(spec, traffic, Precision(), PLAIN, layout)
    separate = estimate(spec, traffic, Precision(), PLAIN, layout, engine=SEPARATE)
    decode_only = estimate(
        spec,
        Traffic(context_tokens=2048, concurrency=64, output_tokens=1024, prompt_tokens=1),
        Precision(),
        PLAIN,
        layout,
        engine=SEPARATE,
    )
    assert chunked.tokens_per_s > separate.tokens_per_s
    assert chunked.tokens_per_s <= decode_only.tokens_per_s * 1.5  # still bounded by a decode's cost


def test_estimate_reads_a_fixed_size_slot_when_told_to():
    # An engine whose attention runs over the whole allocated slot (MaxText) reads more per step.
    spec, traffic, layout = _llama2_on_a10g()
    paged = estimate(spec, traffic, Precision(), PLAIN, layout, engine=SEPARATE)
    slot = estimate(spec, traffic, Precision(), PLAIN, layout, decode_kv_tokens=4096, engine=SEPARATE)
    step = (WEIGHTS + (4096 + 1) * KV_TOKEN) / 600e9 / 0.5
    assert slot.per_sequence_tokens_per_s == pytest.approx(1 / step)
    assert slot.tokens_per_s < paged.tokens_per_s


def test_host_time_per_sequence_is_added_to_every_decode_step():
    # 256 sequences of Llama-3.1-8B on one H100, decode only: the step is the kernels' time plus 256 x
    # the host time, so the same batch with no host time is faster by exactly that.
    spec, precision = (
        model_spec("llama-3.1-8b"),
        Precision(weights=Quantization.FP8, kv_cache=Quantization.FP8),
    )
    traffic = Traffic(context_tokens=2048, concurrency=256, output_tokens=1024, prompt_tokens=1)
    layout = fit(spec, traffic, precision, Assumptions(), instance_type("p5.4xlarge"))
    assert layout.sequences_per_replica == 256
    host = Assumptions(sequence_overhead_us=10.0)
    with_host = estimate(spec, traffic, precision, host, layout, engine=SEPARATE)
    bare = estimate(spec, traffic, precision, Assumptions(sequence_overhead_us=0.0), layout, engine=SEPARATE)
    assert 1 / with_host.per_sequence_tokens_per_s == pytest.approx(
        1 / bare.per_sequence_tokens_per_s + 256 * 10e-6
    )
    assert with_host.tokens_per_s < bare.tokens_per_s


def test_neuron_decode_reads_the_bucket_above_the_batch_longest_position():
    # NxD Inference 0.5.9230: buckets 128..2048 then 4,096 for max_length 4,096 (round(log2) stops at
    # 2**12), a step reads the first bucket above the longest position in the batch.
    assert neuron_buckets(4096) == [128, 256, 512, 1024, 2048, 4096]
    assert neuron_buckets(3000) == [128, 256, 512, 1024, 2048, 3000]
    assert neuron_buckets(2500) == [128, 256, 512, 1024, 2500]
    assert bucket_for(127, [128, 256]) == 128
    assert bucket_for(128, [128, 256]) == 256
    # one sequence reads its own buckets; a busy batch mostly reads its longest member's
    alone = bucket_kv_tokens(1000, 1000, 1, 4096)
    busy = bucket_kv_tokens(1000, 1000, 32, 4096)
    # positions 1,000-1,023 read the 1,024 bucket, 1,024-1,999 the 2,048 one
    assert alone == pytest.approx((24 * 1024 + 976 * 2048) / 1000)
    # 32 staggered requests: the longest is past 1,024 in all but (24/1000)^32 of the steps
    assert busy == pytest.approx(2048, rel=1e-6)
    assert bucket_kv_tokens(3000, 1000, 32, 4096) == pytest.approx(4096, rel=1e-6)
    # and a served Neuron estimate reads more than the paged average would
    spec, traffic = (
        model_spec("llama-3.1-8b"),
        Traffic(context_tokens=4096, concurrency=8, output_tokens=1024),
    )
    layout = fit(spec, traffic, Precision(), Assumptions(), instance_type("inf2.8xlarge"))
    served = estimate(spec, traffic, Precision(), Assumptions(), layout)
    paged = estimate(spec, traffic, Precision(), Assumptions(), layout, engine=SEPARATE)
    assert served.tokens_per_s < paged.tokens_per_s
    assert served.engine.startswith("vLLM 0.9.1 + NxD Inference")


def test_estimate_is_compute_bound_at_large_batch():
    # Short sequences, big batch: the weights are read once for 1,024 tokens, and FLOPs dominate.
    spec, traffic = model_spec("llama-3.1-8b"), Traffic(context_tokens=128, concurrency=1024)
    layout = fit(spec, traffic, Precision(), Assumptions(), instance_type("p5.4xlarge"))
    assert layout.fits
    est = estimate(spec, traffic, Precision(), Assumptions(), layout)
    assert est.decode_bound == "compute"
    small = Traffic(context_tokens=128, concurrency=4)
    small_layout = fit(spec, small, Precision(), Assumptions(), instance_type("p5.4xlarge"))
    assert estimate(spec, small, Precision(), Assumptions(), small_layout).decode_bound == "memory bandwidth"


def test_estimate_uses_fp8_peak_only_where_the_device_has_it():
    spec, traffic, fp8 = (
        model_spec("llama-3.1-8b"),
        Traffic(context_tokens=4096, concurrency=8),
        Precision(weights=Quantization.FP8),
    )
    h100 = fit(spec, traffic, fp8, Assumptions(), instance_type("p5.4xlarge"))
    a100 = fit(spec, traffic, fp8, Assumptions(), instance_type("a2-ultragpu-1g"))
    assert estimate(spec, traffic, fp8, Assumptions(), h100).compute_basis == "fp8"
    assert estimate(spec, traffic, fp8, Assumptions(), a100).compute_basis == "fp16/bf16"


def test_estimate_runs_neuron_quantized_weights_at_the_fp16_peak():
    spec, traffic = model_spec("llama-3.1-8b"), Traffic(context_tokens=4096, concurrency=8)
    int8 = Precision(weights=Quantization.INT8)
    inf2 = fit(spec, traffic, int8, Assumptions(), instance_type("inf2.8xlarge"))
    l4 = fit(spec, traffic, int8, Assumptions(), instance_type("g6.xlarge"))
    assert estimate(spec, traffic, int8, Assumptions(), inf2).compute_basis.startswith("fp16/bf16 (Neuron")
    assert estimate(spec, traffic, int8, Assumptions(), l4).compute_basis == "int8"


def test_estimate_scales_with_the_efficiency_factor_and_never_past_the_bound():
    spec, traffic = model_spec("llama-3.1-70b"), Traffic(context_tokens=4096, concurrency=16)
    machine, precision = instance_type("p5.48xlarge"), Precision(weights=Quantization.FP8)
    rates = []
    for efficiency in (0.3, 0.6, 1.0):
        a = Assumptions(
            bandwidth_efficiency=efficiency,
            compute_efficiency=efficiency,
            step_overhead_ms=0.0,
            sequence_overhead_us=0.0,
        )
        est = estimate(spec, traffic, precision, a, fit(spec, traffic, precision, a, machine))
        assert est.tokens_per_s <= min(est.bandwidth_bound_tokens_per_s, est.compute_bound_tokens_per_s)
        rates.append(est.tokens_per_s)
    assert rates[0] < rates[1] < rates[2]
    assert rates[1] == pytest.approx(2 * rates[0])


def test_moe_decode_reads_fewer_bytes_than_a_dense_model_of_the_same_size():
    mixtral = model_spec("mixtral-8x7b")
    dense = dataclasses.replace(
        mixtral, name="dense-8x", experts=1, experts_per_token=1, intermediate_size=8 * 14336
    )
    traffic, precision = Traffic(context_tokens=1024, concurrency=1), Precision()
    machine = instance_type("p5.48xlarge")
    moe_rate = estimate(
        mixtral, traffic, precision, Assumptions(), fit(mixtral, traffic, precision, Assumptions(), machine)
    )
    dense_rate = estimate(
        dense, traffic, precision, Assumptions(), fit(dense, traffic, precision, Assumptions(), machine)
    )
    assert dense.params == pytest.approx(mixtral.params, rel=0.001)
    assert moe_rate.per_sequence_tokens_per_s > 2.5 * dense_rate.per_sequence_tokens_per_s


def test_decode_step_seconds_grows_with_the_cache_each_line_reads_and_the_lines():
    spec, precision = model_spec("llama-3.1-8b"), Precision(weights=Quantization.BF16)
    traffic, a = Traffic(context_tokens=8192, concurrency=8), Assumptions()
    layout = fit(spec, traffic, precision, a, instance_type("p5.4xlarge"))
    short = decode_step_seconds(spec, precision, a, layout, 1, 1000)
    long = decode_step_seconds(spec, precision, a, layout, 1, 100_000)
    wide = decode_step_seconds(spec, precision, a, layout, 8, 1000)
    assert short < long
    assert short < wide
    # the extra cache is read at the family's bandwidth share: 99,000 tokens x 128 KiB
    kv_bytes = 99_000 * spec.kv_bytes_per_token(2)
    expected = kv_bytes / (3350e9 * a.efficiency("nvidia-gpu").bandwidth)
    assert long - short == pytest.approx(expected, rel=0.01)


def test_first_token_seconds_chunks_a_prompt_through_the_budget_left_by_running_decodes():
    spec, precision, a = model_spec("llama-3.1-8b"), Precision(weights=Quantization.BF16), Assumptions()
    h100 = instance_type("p5.4xlarge")
    alone = Traffic(context_tokens=22000, concurrency=1, prompt_tokens=20000, output_tokens=2000)
    busy = dataclasses.replace(alone, concurrency=8)
    t_alone = first_token_seconds(spec, alone, precision, a, fit(spec, alone, precision, a, h100))
    t_busy = first_token_seconds(spec, busy, precision, a, fit(spec, busy, precision, a, h100))
    assert 0 < t_alone < t_busy  # the 7 running sequences take budget and bandwidth from each chunk
    # separate prefill (a fixed-batch engine) encodes the whole prompt in one step
    separate = Engine(name="fixed batch", scheduling=Scheduling.SEPARATE)
    layout = fit(spec, alone, precision, a, h100)
    assert first_token_seconds(spec, alone, precision, a, layout, engine=separate) > 0
