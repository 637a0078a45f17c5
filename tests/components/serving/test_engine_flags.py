"""Engine flags from the capacity plan, per accelerator family, checked against vLLM's own options."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from inference_infra.components.planner import Precision, Quantization, Traffic
from inference_infra.components.serving import (
    IMAGES,
    EngineFamily,
    engine_args,
    plan_engines,
    validate_engine,
    validate_extra_args,
    vllm_options,
)
from inference_infra.components.serving.flags import known_option


def _args(args: list[str]) -> dict[str, str | None]:
    """--option value pairs (None for a bare flag)."""
    found: dict[str, str | None] = {}
    for i, token in enumerate(args):
        if token.startswith("--"):
            following = args[i + 1] if i + 1 < len(args) else "--"
            found[token] = None if following.startswith("--") else following
    return found


def test_plan_engines_nvidia_one_engine_per_tensor_parallel_group():
    config = plan_engines(
        model="llama-3.1-70b",
        traffic=Traffic(context_tokens=8192, concurrency=64),
        precision=None,
        instance_type_name="p5.48xlarge",
        cloud="aws",
    )
    assert config.family is EngineFamily.NVIDIA_VLLM
    assert (config.tensor_parallel, config.engines, config.ports) == (4, 2, [8000, 8001])
    assert config.units_of(1) == [4, 5, 6, 7]
    flags = _args(engine_args(config, 1, "/models"))
    assert flags["--port"] == "8001"
    assert flags["--tensor-parallel-size"] == "4"
    assert flags["--max-model-len"] == "8192"
    assert flags["--max-num-seqs"] == "32"  # 64 sequences over 2 replicas
    assert flags["--gpu-memory-utilization"] == "0.9"  # the planner's ceiling
    assert flags["--served-model-name"] == "llama-3.1-70b"
    assert flags["--dtype"] == "bfloat16"
    assert flags["--kv-cache-dtype"] == "auto"
    assert "--enable-prefix-caching" in flags


def test_plan_engines_fp8_weights_and_cache_set_quantization_flags():
    config = plan_engines(
        model="llama-3.1-70b",
        traffic=Traffic(context_tokens=8192, concurrency=32),
        precision=Precision(weights=Quantization.FP8, kv_cache=Quantization.FP8),
        instance_type_name="p5.48xlarge",
        cloud="aws",
    )
    flags = _args(engine_args(config, 0, "/models"))
    assert flags["--quantization"] == "fp8"
    assert "--dtype" not in flags
    assert flags["--kv-cache-dtype"] == "auto"  # same as the weights: vLLM follows them


def test_plan_engines_fp8_cache_on_bf16_weights():
    config = plan_engines(
        model="llama-3.1-8b",
        traffic=Traffic(context_tokens=8192, concurrency=16),
        precision=Precision(kv_cache=Quantization.FP8),
        instance_type_name="g6e.xlarge",
        cloud="aws",
    )
    assert _args(engine_args(config, 0, "/models"))["--kv-cache-dtype"] == "fp8"


def test_plan_engines_neuron_uses_neuron_cores_and_no_memory_fraction():
    config = plan_engines(
        model="llama-3.1-8b",
        traffic=Traffic(context_tokens=4096, concurrency=4),
        precision=None,
        instance_type_name="inf2.8xlarge",
        cloud="aws",
    )
    assert config.family is EngineFamily.NEURON_VLLM
    assert (config.tensor_parallel, config.engines) == (2, 1)
    flags = _args(engine_args(config, 0, "/models"))
    assert flags["--tensor-parallel-size"] == "2"
    assert "--gpu-memory-utilization" not in flags


def test_plan_engines_tpu_splits_the_slice_into_groups():
    config = plan_engines(
        model="qwen2.5-7b",
        traffic=Traffic(context_tokens=8192, concurrency=32),
        precision=None,
        instance_type_name="v5litepod-4",
        cloud="gcp",
    )
    assert config.family is EngineFamily.TPU_VLLM
    assert (config.tensor_parallel, config.engines, config.ports) == (2, 2, [8000, 8001])
    assert _args(engine_args(config, 0, "/models"))["--max-num-seqs"] == "16"


@pytest.mark.parametrize("family", list(EngineFamily))
def test_engine_args_are_all_options_of_the_pinned_vllm(family):
    cases = {
        EngineFamily.NVIDIA_VLLM: ("llama-3.1-8b", "g6e.xlarge", "aws"),
        EngineFamily.NEURON_VLLM: ("llama-3.1-8b", "inf2.8xlarge", "aws"),
        EngineFamily.TPU_VLLM: ("qwen2.5-7b", "v5litepod-4", "gcp"),
    }
    model, machine, cloud = cases[family]
    config = plan_engines(
        model=model,
        traffic=Traffic(context_tokens=4096, concurrency=4),
        precision=None,
        instance_type_name=machine,
        cloud=cloud,
        extra_args=["--enforce-eager"],
    )
    options = [t for t in engine_args(config, 0, "/models") if t.startswith("--")]
    assert options
    assert [o for o in options if not known_option(o)] == []


def test_vllm_options_data_names_its_source_and_date():
    text = (
        resources.files("inference_infra.components.serving.data").joinpath("vllm-options.json").read_text()
    )
    document = json.loads(text)
    assert document["version"] == IMAGES[EngineFamily.NVIDIA_VLLM].engine_version == "0.28.0"
    assert "wheel" in document["source"]
    assert document["as_of"]
    options = vllm_options()
    assert len(options) > 200
    assert options["--enable-prefix-caching"] is True  # a bool config field: --no-enable-prefix-caching too
    assert options["--max-num-seqs"] is False


def test_validate_extra_args_accepts_vllm_options_and_values():
    assert (
        validate_extra_args(
            ["--enforce-eager", "--max-num-batched-tokens", "8192", "--no-enable-log-requests"]
        )
        == []
    )
    assert validate_extra_args(["--max-num-batched-tokens=8192"]) == []


def test_validate_extra_args_rejects_unknown_option():
    [problem] = validate_extra_args(["--max-batch-size", "8"])
    assert problem.input == "engine_args[0]"
    assert "not an option of vLLM 0.28.0" in problem.allowed


def test_validate_extra_args_rejects_options_the_plan_sets():
    problems = validate_extra_args(["--port", "9000", "--tensor-parallel-size", "8"])
    assert [p.input for p in problems] == ["engine_args[0]", "engine_args[2]"]
    assert all("capacity plan" in p.allowed for p in problems)


def test_validate_extra_args_rejects_short_options_unsafe_values_and_orphan_values():
    problems = validate_extra_args(["8192", "-tp", "--chat-template", "$(curl evil)", "--api-key=a%b"])
    assert {p.value for p in problems} == {"8192", "-tp", "$(curl evil)", "--api-key=a%b"}


def test_validate_extra_args_rejects_no_prefix_on_a_non_boolean_option():
    [problem] = validate_extra_args(["--no-max-num-seqs"])
    assert "not an option" in problem.allowed


def test_validate_engine_rejects_ports_past_65535():
    config = plan_engines(
        model="llama-3.1-70b",
        traffic=Traffic(context_tokens=8192, concurrency=64),
        precision=None,
        instance_type_name="p5.48xlarge",
        cloud="aws",
        first_port=65535,
    )
    [problem] = validate_engine(config)
    assert problem.input == "inference_port"
    assert "2 engine ports" in problem.allowed


@pytest.mark.parametrize("family", list(EngineFamily))
def test_images_are_pinned_by_digest_with_source(family):
    image = IMAGES[family]
    assert image.digest.startswith("sha256:")
    assert len(image.digest) == 71
    assert image.reference == f"{image.repository}@{image.digest}"
    assert image.source
    assert image.as_of
