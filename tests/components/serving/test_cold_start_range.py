"""The cold start is a range of stages; the plan's health-check grace and the replay read the same one."""

from __future__ import annotations

import math
from datetime import date

import pytest

from inference_infra.components.catalog import Cloud
from inference_infra.components.serving.cold_start import WeightSource, cold_start, weights_gib
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.serving.model import ServedModel, plan_serving
from inference_infra.components.simulate import Trace, build_pool

MODEL = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)


@pytest.mark.parametrize(
    ("source", "machine", "family"),
    [
        (WeightSource.S3, "g6e.xlarge", EngineFamily.NVIDIA_VLLM),
        (WeightSource.GCS, "g2-standard-8", EngineFamily.NVIDIA_VLLM),
        (WeightSource.EFS, "inf2.8xlarge", EngineFamily.NEURON_VLLM),
        (WeightSource.LOCAL_NVME, "p5.48xlarge", EngineFamily.NVIDIA_VLLM),
    ],
)
def test_cold_start_stages_sum_to_the_estimate_and_bound_it(source, machine, family):
    estimate = cold_start(
        weights_gib=weights_gib("llama-3.1-8b"), source=source, instance_type=machine, family=family
    )
    stages = estimate.stages()
    # A Neuron estimate without precompiled artifacts adds its compile (test_cold_start_neuron.py).
    compile_on_node = ["Neuron compile on the node"] if family is EngineFamily.NEURON_VLLM else []
    assert [s.name for s in stages] == [
        "machine boot", "image pull", "weights download", "engine load", "compile and graph capture",
        *compile_on_node,
    ]  # fmt: skip
    assert sum(s.typical for s in stages) == pytest.approx(estimate.seconds)
    assert all(0 <= s.fastest <= s.typical <= s.slowest for s in stages)
    fastest, slowest = estimate.range_seconds()
    assert fastest < estimate.seconds < slowest
    # every figure says where it comes from and when
    assert all(s.figure.source and isinstance(s.figure.as_of, date) for s in stages)


def test_cold_start_grace_covers_the_slowest_start_in_whole_minutes():
    estimate = cold_start(
        weights_gib=weights_gib("llama-3.1-70b"),
        source=WeightSource.S3,
        instance_type="p5.48xlarge",
        family=EngineFamily.NVIDIA_VLLM,
    )
    slowest = estimate.range_seconds()[1]
    assert estimate.grace_seconds() % 60 == 0
    assert slowest <= estimate.grace_seconds() < slowest + 60
    assert "(1.9..11.3)" in estimate.note()  # minutes: the range beside the typical 4.9


def test_cold_start_the_replay_and_the_plan_read_the_same_numbers():
    serving, _ = plan_serving(MODEL, machine="g6e.xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    trace = Trace.of([(0.0, 1000, 100)])
    for which, expected in (
        ("fastest", serving.cold_start.range_seconds()[0]),
        ("typical", serving.cold_start.seconds),
        ("slowest", serving.cold_start.range_seconds()[1]),
    ):
        pool = build_pool(name="p", model=MODEL, machine="g6e.xlarge", peak=4, trace=trace, cold_start=which)
        assert pool.cold_start_seconds == expected
        assert pool.cold_start_range == serving.cold_start.range_seconds()
        # the plan's warm-up (the group's health-check grace) is the same estimate's slowest end
        assert pool.plan.warmup_seconds == serving.grace_seconds() == serving.cold_start.grace_seconds()


def test_cold_start_warm_resume_is_a_range_around_the_plans_warm_start():
    from inference_infra.components.fleet.elastic import WARM_BOOT_SECONDS, WARM_CACHE_READ_GIB_S

    serving, _ = plan_serving(MODEL, machine="g6e.xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    warm = serving.cold_start.warm_stages(boot_seconds=WARM_BOOT_SECONDS, read_gib_s=WARM_CACHE_READ_GIB_S)
    assert [s.name for s in warm] == ["warm restart", "weights from disk", "compile and graph capture"]
    trace = Trace.of([(0.0, 1000, 100)])
    typical = build_pool(name="p", model=MODEL, machine="g6e.xlarge", peak=4, trace=trace)
    # the typical sum is the fleet plan's own warm start (rounded up to a second)
    assert typical.plan.warm_start_seconds == math.ceil(sum(s.typical for s in warm))
    fastest, slowest = serving.cold_start.warm_range_seconds(
        boot_seconds=WARM_BOOT_SECONDS, read_gib_s=WARM_CACHE_READ_GIB_S
    )
    assert typical.warm_start_range == (fastest, slowest)
    slow = build_pool(name="p", model=MODEL, machine="g6e.xlarge", peak=4, trace=trace, cold_start="slowest")
    assert slow.plan.warm_start_seconds == math.ceil(slowest)
