"""A fleet's own serving plan from its model: engines, ports from serving_port, cold start, keyed problems."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.serving import WeightSource
from inference_infra.components.serving.model import ServedModel, choose_machine, plan_serving

LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)


def test_plan_serving_plans_engines_and_cold_start() -> None:
    serving, problems = plan_serving(
        LLAMA_8B, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3, first_port=8200
    )
    assert problems == []
    assert serving is not None
    assert serving.ports[0] == 8200
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


def _config_json(tmp_path, name_or_path: str):
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "_name_or_path": name_or_path,
                "num_hidden_layers": 32,
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "intermediate_size": 14336,
                "vocab_size": 128256,
                "max_position_embeddings": 131072,
            }
        )
    )
    return str(path)


@pytest.mark.parametrize(
    "payload",
    [
        "x\nExecStartPre=/bin/sh -c id",  # a systemd directive on the next line
        "llama --trust-remote-code",  # an extra vllm flag
        "llama\nENGINE_FILE\nrm -rf /",  # ends the GCP heredoc
        "100%n",  # a systemd specifier
        "$(id)",
        "../../etc",
    ],
)
def test_plan_serving_rejects_a_hostile_name_in_config_json(tmp_path, payload) -> None:
    model = ServedModel(name=_config_json(tmp_path, payload), context_tokens=4096, concurrency=1)
    serving, problems = plan_serving(model, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    assert serving is None
    [problem] = problems
    assert problem.input == "model.name"
    assert "config.json's _name_or_path" in problem.allowed
    assert "no spaces, quotes, '%', '$'" in problem.allowed


def test_plan_serving_accepts_a_hugging_face_id_in_config_json(tmp_path) -> None:
    model = ServedModel(
        name=_config_json(tmp_path, "meta-llama/Llama-3.1-8B-Instruct"), context_tokens=4096, concurrency=1
    )
    serving, problems = plan_serving(model, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    assert problems == []
    assert serving.model == "meta-llama/Llama-3.1-8B-Instruct"


def test_plan_serving_rejects_secret_flags_even_with_a_reason() -> None:
    model = ServedModel(
        name="llama-3.1-8b",
        context_tokens=4096,
        concurrency=1,
        engine_args=["--api-key", "sk-abc"],
        engine_args_reasons={"--api-key": "we really want it in user data"},
    )
    _, problems = plan_serving(model, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    assert [p.input for p in problems] == ["model.engine_args"]
    assert "is refused: it puts the API key in clear" in problems[0].allowed


def test_plan_serving_allows_remote_code_only_with_a_reason() -> None:
    base = ServedModel(
        name="llama-3.1-8b", context_tokens=4096, concurrency=1, engine_args=["--trust-remote-code"]
    )
    _, problems = plan_serving(base, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    [problem] = problems
    assert problem.input == "model.engine_args"
    assert "is refused without a reason: it runs the checkpoint's own Python code" in problem.allowed
    allowed = ServedModel(
        **{**base.__dict__, "engine_args_reasons": {"--trust-remote-code": "vendor code reviewed in SEC-123"}}
    )
    serving, problems = plan_serving(allowed, machine="g6e.12xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    assert problems == []
    assert serving.engines.allows_code  # the verifier then accepts the checkpoint's .py files
