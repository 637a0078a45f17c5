"""The planner against published vLLM measurements: fitted on a fixed two thirds, checked on the rest."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from inference_infra.components.catalog import AcceleratorFamily, find_instance_type
from inference_infra.components.planner import Assumptions, calibration, hardware, model_spec
from inference_infra.components.planner.assumptions import FAMILY_EFFICIENCY
from inference_infra.components.planner.calibration import (
    ALL_MEASUREMENTS,
    FREE,
    TOLERANCE,
    derive,
    errors,
    family_of,
    points,
    summary,
)
from inference_infra.components.planner.measurements import (
    MEASUREMENTS,
    Split,
    neuronx_decode_kv_tokens,
)
from inference_infra.components.planner.precision import Quantization
from inference_infra.components.planner.vllm_measurements import VLLM_MEASUREMENTS

POINTS = points()
ERRORS = errors(table=POINTS)
VLLM = [(p, e) for p, e in ERRORS if p.split is not Split.REFERENCE]

# What the planner README's calibration table reports: (family, split) -> (points, worst |error|).
README_TABLE = {
    (AcceleratorFamily.NVIDIA_GPU, Split.FIT): (9, 0.141),
    (AcceleratorFamily.NVIDIA_GPU, Split.HOLDOUT): (5, 0.290),
    (AcceleratorFamily.AWS_NEURON, Split.FIT): (5, 0.051),
    (AcceleratorFamily.AWS_NEURON, Split.HOLDOUT): (3, 0.082),
    (AcceleratorFamily.GOOGLE_TPU, Split.FIT): (1, 0.006),
    (AcceleratorFamily.GOOGLE_TPU, Split.HOLDOUT): (1, 0.078),
}


def _id(point) -> str:
    m = point.measurement
    shape = f"{m.prompt_tokens}-{m.output_tokens}-b{m.max_batch}"
    return f"{m.split.value}-{m.model}-{m.instance_type}-x{m.devices}-{shape}"


def test_measurements_every_point_is_sourced_dated_and_known_to_the_planner():
    for m in ALL_MEASUREMENTS:
        assert m.source.startswith("https://github.com/"), m.source
        assert "/blob/" in m.source  # pinned to a commit, not a moving page
        assert m.as_of.year >= 2025
        assert m.engine
        assert m.engine_version
        assert min(m.tokens_per_s, m.prompt_tokens, m.output_tokens, m.max_batch) > 0
        model_spec(m.model)  # raises for an unknown preset
        machine = find_instance_type(m.instance_type)
        assert machine is not None
        assert 1 <= m.devices <= machine.accelerator_count
        Quantization(m.weights)
        Quantization(m.kv_cache)
        if m.tensor_parallel is not None:  # in planner units: GPUs, NeuronCores, TPU chips
            units = hardware(machine).units * m.devices // machine.accelerator_count
            assert 1 <= m.tensor_parallel <= units


def test_vllm_measurements_state_their_settings_and_a_split_fixed_in_the_table():
    assert VLLM_MEASUREMENTS
    for m in VLLM_MEASUREMENTS:
        assert m.engine.startswith("vLLM"), m.engine
        assert m.split in (Split.FIT, Split.HOLDOUT)
        assert m.tensor_parallel is not None  # every vLLM run stated its degree
        assert m.offline or m.exact_batch  # an offline batch, or a stated client concurrency
    for m in MEASUREMENTS:
        assert m.split is Split.REFERENCE
        assert not m.engine.startswith("vLLM")


@pytest.mark.parametrize("family", list(AcceleratorFamily), ids=lambda f: f.value)
def test_vllm_measurements_hold_out_about_a_third_of_each_family(family):
    mine = [m for m in VLLM_MEASUREMENTS if family_of(m) is family]
    held = [m for m in mine if m.split is Split.HOLDOUT]
    assert held
    assert len(held) < len(mine)
    assert 0.3 <= len(held) / len(mine) <= 0.5


def test_vllm_measurements_reach_eight_per_family_except_tpu():
    # Eight or more published vLLM points per family, except TPU: only the two v6e-8 runs of
    # tpu-recipes state lengths and concurrency (vllm_measurements says what else was read).
    count = {f: sum(family_of(m) is f for m in VLLM_MEASUREMENTS) for f in AcceleratorFamily}
    assert count[AcceleratorFamily.NVIDIA_GPU] >= 8
    assert count[AcceleratorFamily.AWS_NEURON] >= 8
    assert count[AcceleratorFamily.GOOGLE_TPU] == 2


@pytest.mark.parametrize(
    ("point", "error"),
    [(p, e) for p, e in VLLM if p.split is Split.FIT],
    ids=[_id(p) for p, _ in VLLM if p.split is Split.FIT],
)
def test_planner_estimate_is_within_25_percent_of_each_fitted_vllm_point(point, error):
    assert abs(error) <= TOLERANCE, (point.measurement, f"{error:+.1%}")


def test_planner_holdout_errors_are_the_ones_the_readme_reports():
    found = summary(VLLM)
    assert set(found) == set(README_TABLE)
    for key, (count, worst) in README_TABLE.items():
        assert found[key][0] == count, key
        assert found[key][2] == pytest.approx(worst, abs=0.0006), key
    readme = (Path(calibration.__file__).parent / "README.md").read_text()
    for family, name in ((AcceleratorFamily.NVIDIA_GPU, "NVIDIA"), (AcceleratorFamily.AWS_NEURON, "Neuron")):
        row = next(line for line in readme.splitlines() if line.startswith(f"| {name} |"))
        for split in (Split.FIT, Split.HOLDOUT):
            _, mean, worst = found[family, split]
            assert f"{mean:.1%}" in row, (name, split)
            assert f"{worst:.1%}" in row, (name, split)
    # the one miss: vLLM 0.6's offline batch of 8 x 32,784-token prompts on 405B, whose throughput
    # barely moved from 4 prompts to 8; everything else held out lands within 25%
    misses = [p.measurement for p, e in VLLM if abs(e) > TOLERANCE]
    assert [(m.split, m.prompt_tokens, m.max_batch) for m in misses] == [(Split.HOLDOUT, 32784, 8)]


def test_planner_calibration_holds_each_run_to_its_concurrency_or_its_kv_cache():
    for p in POINTS:
        m = p.measurement
        assert p.layout.fits
        assert p.layout.tensor_parallel * p.layout.replicas <= p.layout.hardware.units
        assert 1 <= p.traffic.concurrency <= m.max_batch
        if m.exact_batch:
            assert p.traffic.concurrency == m.max_batch
        if m.tensor_parallel is not None:
            assert p.layout.tensor_parallel == m.tensor_parallel


def test_planner_calibration_runs_an_offline_batch_the_cache_cannot_hold_in_waves():
    # 405B FP8 on 8 x H100 holds about 93 sequences of 4,096 tokens; the engine runs 256 prompts in
    # waves, and the planner times each wave at its own batch.
    nvidia = [p for p in POINTS if p.measurement.offline and p.measurement.prompt_tokens == 2048]
    assert nvidia
    assert all(p.traffic.concurrency == p.measurement.max_batch for p in nvidia)
    big = replace(nvidia[0].measurement, max_batch=256)
    point = calibration._setup(big, Assumptions())
    assert 60 < point.traffic.concurrency < 256
    whole = calibration._tokens_per_s(point, point.traffic, point.layout, Assumptions())
    assert calibration.predicted(point, Assumptions()) < whole


def test_derive_searches_only_the_fit_split(monkeypatch):
    tpu = AcceleratorFamily.GOOGLE_TPU
    before, _ = derive(tpu)
    moved = tuple(
        replace(m, tokens_per_s=m.tokens_per_s * 10) if m.split is Split.HOLDOUT else m
        for m in ALL_MEASUREMENTS
    )
    monkeypatch.setattr(calibration, "ALL_MEASUREMENTS", moved)
    after, _ = derive(tpu)
    assert after == before


@pytest.mark.slow
@pytest.mark.parametrize("family", list(AcceleratorFamily), ids=lambda f: f.value)
def test_family_factors_are_the_ones_derived_from_the_familys_own_vllm_points(family):
    derived, worst = derive(family)
    table = FAMILY_EFFICIENCY[family]
    for f in fields(table):
        if f.name != "basis":
            assert getattr(derived, f.name) == pytest.approx(getattr(table, f.name)), f.name
    assert worst == pytest.approx(summary(VLLM)[family, Split.FIT][2])


@pytest.mark.slow
def test_nvidia_vllm_0_6_points_need_the_v0_cost_per_cached_token():
    # Without it the best shares, tensor-parallel factor and host times leave vLLM 0.6's 405B runs
    # 24% out at best (the step time grew with the tokens the batch held, far past the KV cache's
    # bandwidth); with it, 14%.
    nvidia = AcceleratorFamily.NVIDIA_GPU
    assert "v0_cached_token_ns" in FREE[nvidia]
    free = tuple(f for f in FREE[nvidia] if f != "v0_cached_token_ns")
    _, without = derive(nvidia, free=free, fixed={"v0_cached_token_ns": 0.0})
    assert without > summary(VLLM)[nvidia, Split.FIT][2] + 0.05


def test_served_engines_never_pay_the_v0_cost():
    from inference_infra.components.planner.engine import served_engine

    assert not any(served_engine(f).rebuilds_block_tables for f in AcceleratorFamily)
    assert FAMILY_EFFICIENCY[AcceleratorFamily.NVIDIA_GPU].v0_cached_token_ns > 0


def test_tpu_factors_include_the_collectives_of_eight_chips():
    eff = FAMILY_EFFICIENCY[AcceleratorFamily.GOOGLE_TPU]
    assert eff.tensor_parallel_included == 8
    assert eff.tensor_parallel_share(4) == eff.tensor_parallel_share(8) == 1.0
    assert eff.tensor_parallel_share(32) == pytest.approx(eff.tensor_parallel**2)
    assert eff.bandwidth != FAMILY_EFFICIENCY[AcceleratorFamily.NVIDIA_GPU].bandwidth


def test_families_say_which_factors_they_borrow():
    nvidia = FAMILY_EFFICIENCY[AcceleratorFamily.NVIDIA_GPU]
    for family, eff in FAMILY_EFFICIENCY.items():
        assert "fitted on" in eff.basis
        if family is AcceleratorFamily.NVIDIA_GPU:
            assert not eff.borrows
            continue
        assert "borrowed from NVIDIA" in eff.basis
        for name in ("compute", "sequence_overhead_us"):
            if name not in FREE[family]:
                assert getattr(eff, name) == getattr(nvidia, name), (family, name)


def test_neuronx_decode_reads_whole_position_buckets():
    # Buckets double from 128 to the sequence length; a step reads the smallest bucket holding
    # the position it writes (Transformers NeuronX 0.10's bucket.token_sizes and bucket.find).
    assert neuronx_decode_kv_tokens(128, 128) == (128 + 127 * 256) / 128  # 128, then the 256 bucket
    assert neuronx_decode_kv_tokens(4096, 4096) == (4096 + 4095 * 8192) / 4096
    expected = (128 + 256 * 128 + 512 * 256 + 1024 * 512 + 1152 * 127) / 1024
    assert neuronx_decode_kv_tokens(128, 1024) == pytest.approx(expected)


def test_a_caller_override_replaces_the_family_factor_and_says_so():
    a = Assumptions(bandwidth_efficiency=0.5)
    for family in AcceleratorFamily:
        eff = a.efficiency(family)
        assert eff.bandwidth == 0.5
        assert "set by the caller" in eff.basis
    assert Assumptions().efficiency("google-tpu") is FAMILY_EFFICIENCY[AcceleratorFamily.GOOGLE_TPU]
