"""A fleet's own serving plan from its model: engines, ports from serving_port, cold start, keyed problems."""

from __future__ import annotations

from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.serving import WeightSource
from inference_infra.components.serving.model import ServedModel, choose_machine, plan_serving

LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)


def test_plan_serving_plans_engines_and_cold_start() -> None:
    serving, problems = plan_serving(
        LLAMA_8B, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3, first_port=8100
    )
    assert problems == []
    assert serving is not None
    assert serving.ports[0] == 8100
    assert serving.model == "llama-3.1-8b"
    assert serving.grace_seconds() >= 60
    assert serving.cold_start.source is WeightSource.S3


def test_plan_serving_rejects_unknown_model_with_close_matches() -> None:
    serving, problems = plan_serving(
        ServedModel(name="llama-3.1-8", context_tokens=8192, concurrency=1),
        machine="g6e.12xlarge",
        cloud=Cloud.AWS,
        source=WeightSource.S3,
    )
    assert serving is None
    assert problems[0].input == "model.name"
    assert "did you mean" in problems[0].allowed


def test_plan_serving_rejects_context_beyond_the_window() -> None:
    _, problems = plan_serving(
        ServedModel(name="llama-2-7b", context_tokens=100_000, concurrency=1),
        machine="g6e.12xlarge",
        cloud=Cloud.AWS,
        source=WeightSource.S3,
    )
    assert [p.input for p in problems] == ["model.context_tokens"]


def test_plan_serving_keys_bad_engine_args_to_the_model() -> None:
    _, problems = plan_serving(
        ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=4, engine_args=["--no-such-flag"]),
        machine="g6e.12xlarge",
        cloud=Cloud.AWS,
        source=WeightSource.S3,
    )
    assert problems
    assert all(p.input.startswith("model.engine_args") for p in problems)


def test_plan_serving_rejects_a_model_that_does_not_fit() -> None:
    _, problems = plan_serving(
        ServedModel(name="llama-3.1-405b", context_tokens=8192, concurrency=4),
        machine="g6e.xlarge",
        cloud=Cloud.AWS,
        source=WeightSource.S3,
    )
    assert problems[0].input == "model"
    assert "does not fit" in problems[0].allowed


def test_choose_machine_picks_a_type_when_none_is_given() -> None:
    resolution = choose_machine(LLAMA_8B, None, cloud=Cloud.AWS, family=AcceleratorFamily.NVIDIA_GPU)
    assert resolution.problems == ()
    assert resolution.instance_type is not None
