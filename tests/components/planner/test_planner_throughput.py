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


def test_estimate_matches_a_hand_computed_bandwidth_bound_decode():
    # Llama-2-7B bf16 on one A10G (600 GB/s), one sequence, 4,096 context = 3,584 prompt + 512 generated.
    spec, traffic, precision = (
        model_spec("llama-2-7b"),
        Traffic(context_tokens=4096, concurrency=1),
        Precision(),
    )
    layout = fit(spec, traffic, precision, Assumptions(), instance_type("g5.xlarge"))
    est = estimate(spec, traffic, precision, Assumptions(), layout)
    weights = 6_738_415_616 * 2
    kv = (3584 + 256) * 2 * 32 * 32 * 128 * 2  # average cached tokens x bytes per token
    a = Assumptions().efficiency("nvidia-gpu")
    step = (weights + kv) / 600e9 / a.bandwidth + 1 * a.sequence_overhead_us / 1e6  # one sequence's host time
    assert a.sequence_overhead_us > 0
    assert est.decode_bound == "memory bandwidth"
    assert est.per_sequence_tokens_per_s == pytest.approx(1 / step)
    prefill_flops = 3584 * (2 * spec.params + 4 * 32 * 32 * 128 * 3584 / 2)
    bw = a.bandwidth
    prefill = max(prefill_flops / 125e12 / a.compute, weights / 600e9 / bw + 3584 * 524288 / 600e9 / bw)
    assert est.tokens_per_s == pytest.approx(512 / (prefill + 512 * step))


def test_estimate_reads_a_fixed_size_slot_when_told_to():
    # An engine whose attention runs over the whole allocated slot (MaxText) reads more per step.
    spec, traffic, precision = (
        model_spec("llama-2-7b"),
        Traffic(context_tokens=4096, concurrency=1),
        Precision(),
    )
    layout = fit(spec, traffic, precision, Assumptions(), instance_type("g5.xlarge"))
    paged = estimate(spec, traffic, precision, Assumptions(), layout)
    slot = estimate(spec, traffic, precision, Assumptions(), layout, decode_kv_tokens=4096)
    weights, kv_token = 6_738_415_616 * 2, 2 * 32 * 32 * 128 * 2
    eff = Assumptions().efficiency("nvidia-gpu")
    step = (weights + 4096 * kv_token) / 600e9 / eff.bandwidth + eff.sequence_overhead_us / 1e6
    assert slot.per_sequence_tokens_per_s == pytest.approx(1 / step)
    assert slot.tokens_per_s < paged.tokens_per_s


def test_host_time_per_sequence_is_added_to_every_decode_step():
    # 256 sequences of Llama-3.1-8B on one H100: the step is the kernels' time plus 256 x the host
    # time, so the same batch with no host time is faster by exactly that.
    spec, traffic, precision = (
        model_spec("llama-3.1-8b"),
        Traffic(context_tokens=2048, concurrency=256),
        Precision(weights=Quantization.FP8, kv_cache=Quantization.FP8),
    )
    layout = fit(spec, traffic, precision, Assumptions(), instance_type("p5.4xlarge"))
    assert layout.sequences_per_replica == 256
    with_host = estimate(spec, traffic, precision, Assumptions(), layout)
    bare = estimate(spec, traffic, precision, Assumptions(sequence_overhead_us=0.0), layout)
    host = 256 * Assumptions().efficiency("nvidia-gpu").sequence_overhead_us / 1e6
    assert 1 / with_host.per_sequence_tokens_per_s == pytest.approx(1 / bare.per_sequence_tokens_per_s + host)
    assert with_host.tokens_per_s < bare.tokens_per_s


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
            bandwidth_efficiency=efficiency, compute_efficiency=efficiency, sequence_overhead_us=0.0
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
