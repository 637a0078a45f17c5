"""Engine flags from the capacity plan, per accelerator family, checked against vLLM's own options."""

from __future__ import annotations

import dataclasses
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
from inference_infra.components.serving import flags as flags_module
from inference_infra.components.serving.flags import known_option, option_table


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


_CASES = {
    EngineFamily.NVIDIA_VLLM: ("llama-3.1-8b", "g6e.xlarge", "aws"),
    EngineFamily.NEURON_VLLM: ("llama-3.1-8b", "inf2.8xlarge", "aws"),
    EngineFamily.TPU_VLLM: ("qwen2.5-7b", "v5litepod-4", "gcp"),
}


def _config(family, extra_args=(), precision=None):
    model, machine, cloud = _CASES[family]
    return plan_engines(
        model=model,
        traffic=Traffic(context_tokens=4096, concurrency=4),
        precision=precision,
        instance_type_name=machine,
        cloud=cloud,
        extra_args=list(extra_args),
    )


@pytest.mark.parametrize("family", list(EngineFamily))
def test_engine_args_are_all_options_of_the_familys_own_pinned_vllm(family):
    config = _config(family, ["--enforce-eager"])
    options = [t for t in engine_args(config, 0, "/models") if t.startswith("--")]
    assert options
    assert [o for o in options if not known_option(o, family)] == []
    assert validate_engine(config) == []


@pytest.mark.parametrize("family", list(EngineFamily))
def test_each_family_has_a_table_of_its_own_pinned_version_with_sources(family):
    document = json.loads(
        resources.files("inference_infra.components.serving.data")
        .joinpath(f"vllm-options-{family.value}.json")
        .read_text()
    )
    assert document["family"] == family.value
    assert document["engine_version"] == IMAGES[family].engine_version
    assert document["sources"]
    assert document["as_of"]
    assert document["note"]
    table = option_table(family)
    assert table is not None
    assert table.engine_version == IMAGES[family].engine_version
    assert table.options["--enable-prefix-caching"][0] is True  # bool field: --no-enable-prefix-caching too
    assert table.options["--max-num-seqs"] == (False, None)


def test_tables_say_which_are_exact_and_how_the_others_were_bracketed():
    nvidia, neuron, tpu = (option_table(f) for f in EngineFamily)
    assert nvidia.exact
    assert "vllm-0.28.0" in nvidia.sources[0]
    assert not neuron.exact
    assert "vllm-0.9.1" in neuron.sources[0]
    assert "aws-neuron/upstreaming-to-vllm" in neuron.sources[1]
    assert "2.25.0" in neuron.note
    assert not tpu.exact
    assert "vllm_tpu-0.29.0" in tpu.sources[0]
    assert "vllm_tpu-0.30.0" in tpu.sources[1]
    assert len(nvidia.options) > 200
    assert len(neuron.options) > 100


def test_versions_differ_where_upstream_differs():
    nvidia, neuron = vllm_options(EngineFamily.NVIDIA_VLLM), vllm_options(EngineFamily.NEURON_VLLM)
    assert "--override-neuron-config" in neuron
    assert "--override-neuron-config" not in nvidia
    assert "--device" in neuron
    assert "--device" not in nvidia
    # vLLM 0.9.1's CacheDType: no 16-bit names (0.28.0 has them).
    assert "bfloat16" not in option_table(EngineFamily.NEURON_VLLM).options["--kv-cache-dtype"][1]
    assert "bfloat16" in option_table(EngineFamily.NVIDIA_VLLM).options["--kv-cache-dtype"][1]


def test_neuron_engine_names_its_device_and_leaves_prefix_caching_off():
    flags = _args(engine_args(_config(EngineFamily.NEURON_VLLM), 0, "/models"))
    assert flags["--device"] == "neuron"
    assert "--enable-prefix-caching" not in flags
    for family in (EngineFamily.NVIDIA_VLLM, EngineFamily.TPU_VLLM):
        flags = _args(engine_args(_config(family), 0, "/models"))
        assert "--enable-prefix-caching" in flags
        assert "--device" not in flags


def test_neuron_refuses_a_cache_dtype_its_vllm_does_not_accept():
    config = _config(
        EngineFamily.NEURON_VLLM, precision=Precision(weights=Quantization.FP16, kv_cache=Quantization.BF16)
    )
    assert _args(engine_args(config, 0, "/models"))["--kv-cache-dtype"] == "bfloat16"
    [problem] = validate_engine(config)
    assert problem.input == "engine"
    assert problem.value == "--kv-cache-dtype bfloat16"
    assert "vLLM 0.9.1 (neuron-vllm)" in problem.allowed
    assert "fp8_e4m3" in problem.allowed
    nvidia = _config(
        EngineFamily.NVIDIA_VLLM, precision=Precision(weights=Quantization.FP16, kv_cache=Quantization.BF16)
    )
    assert validate_engine(nvidia) == []


def test_extra_args_are_checked_against_the_familys_own_version():
    [problem] = validate_extra_args(["--override-neuron-config", "{}"], family=EngineFamily.NVIDIA_VLLM)
    assert "not an option of vLLM 0.28.0 (nvidia-vllm)" in problem.allowed
    assert validate_extra_args(["--override-neuron-config", "{}"], family=EngineFamily.NEURON_VLLM) == []
    [problem] = validate_extra_args(["--async-scheduling"], family=EngineFamily.NEURON_VLLM)
    assert "not an option of vLLM 0.9.1 (neuron-vllm)" in problem.allowed
    # A value outside the version's choices (0.9.1's BlockSize literal is 1..128).
    [problem] = validate_extra_args(["--block-size", "4096"], family=EngineFamily.NEURON_VLLM)
    assert problem.input == "engine_args[1]"
    assert "1, 8, 16, 32, 64, 128" in problem.allowed
    [problem] = validate_extra_args(["--block-size=4096"], family=EngineFamily.NEURON_VLLM)
    assert problem.input == "engine_args[0]"
    assert validate_extra_args(["--block-size", "32"], family=EngineFamily.NEURON_VLLM) == []


def test_a_family_without_a_table_of_its_pinned_version_fails_closed(monkeypatch):
    pinned = IMAGES[EngineFamily.TPU_VLLM]
    other = dataclasses.replace(pinned, engine_version="0.31.0")
    monkeypatch.setattr(
        flags_module, "engine_image", lambda family: other if family is pinned.family else IMAGES[family]
    )
    option_table.cache_clear()
    try:
        assert option_table(EngineFamily.TPU_VLLM) is None
        [problem] = validate_engine(_config(EngineFamily.TPU_VLLM))
        assert problem.input == "engine"
        assert problem.value == "tpu-vllm (vLLM 0.31.0)"
        assert "no option table" in problem.allowed
        assert "another version is not used" in problem.allowed
        [problem] = validate_extra_args(["--enforce-eager"], family=EngineFamily.TPU_VLLM)
        assert problem.input == "engine_args"
        assert validate_engine(_config(EngineFamily.NVIDIA_VLLM)) == []
    finally:
        option_table.cache_clear()


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
    assert "not an option of vLLM 0.28.0 (nvidia-vllm)" in problem.allowed


def test_validate_extra_args_rejects_options_the_plan_sets():
    problems = validate_extra_args(["--port", "9000", "--tensor-parallel-size", "8"])
    assert [p.input for p in problems] == ["engine_args[0]", "engine_args[2]"]
    assert all("capacity plan" in p.allowed for p in problems)


def test_validate_extra_args_rejects_short_options_unsafe_values_and_orphan_values():
    problems = validate_extra_args(["8192", "-tp", "--chat-template", "$(curl evil)", "--root-path=a%b"])
    assert {p.value for p in problems} == {"8192", "-tp", "$(curl evil)", "--root-path=a%b"}


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
    assert problem.input == "serving_port"
    assert "2 engine ports" in problem.allowed


@pytest.mark.parametrize("family", list(EngineFamily))
def test_images_are_pinned_by_digest_with_source(family):
    image = IMAGES[family]
    assert image.digest.startswith("sha256:")
    assert len(image.digest) == 71
    assert image.reference == f"{image.repository}@{image.digest}"
    assert image.source
    assert image.as_of


@pytest.mark.parametrize(
    "args",
    [
        ["--trust-remote-code"],
        ["--tool-parser-plugin", "/models/parser.py"],
        ["--middleware", "my.module.Middleware"],
        ["--worker-extension-cls", "my.Ext"],
        ["--allowed-local-media-path", "/"],
        ["--load-format", "pt"],
        ["--load-format=npcache"],
        ["--logits-processors", "my.Proc"],
        ["--scheduler-cls", "my.Scheduler"],
    ],
)
def test_validate_extra_args_rejects_code_loading_flags_without_a_reason(args):
    problems = [p for p in validate_extra_args(args) if "without a reason" in p.allowed]
    assert len(problems) == 1
    assert "engine_args_reasons" in problems[0].allowed
    option = args[0].split("=")[0]
    assert validate_extra_args(args, reasons={option: "reviewed by the platform team, SEC-42"}) == []


@pytest.mark.parametrize("args", [["--api-key", "sk-123"], ["--api-key=sk-123"], ["--hf-token", "hf_abc"]])
def test_validate_extra_args_rejects_secret_flags_whatever_the_reason(args):
    option = args[0].split("=")[0]
    problems = validate_extra_args(args, reasons={option: "a long enough reason here"})
    assert any("is refused: it puts" in p.allowed for p in problems)


@pytest.mark.parametrize("args", [["--config", "/etc/vllm.yaml"], ["--config=/tmp/x.yaml"]])
def test_validate_extra_args_rejects_config_files_whatever_the_reason(args):
    # A YAML of arguments would set --trust-remote-code, --api-key, --middleware past every check.
    problems = validate_extra_args(args, reasons={"--config": "reviewed by the platform team, SEC-42"})
    assert any("is refused: it reads engine options from a file" in p.allowed for p in problems)


@pytest.mark.parametrize(
    "args",
    [["--max-num-batched-tokens", "8192\n"], ["--max-num-batched-tokens=8192\nExecStartPre=/bin/sh"]],
)
def test_validate_extra_args_rejects_a_trailing_newline_in_a_value(args):
    # `$` matches before a trailing newline; the allow-list matches the whole value.
    assert any("must not hold" in p.allowed for p in validate_extra_args(args))


def test_validate_extra_args_accepts_safe_load_formats_without_a_reason():
    assert validate_extra_args(["--load-format", "safetensors"]) == []


def test_validate_extra_args_rejects_reasons_for_options_not_set_or_not_restricted():
    problems = validate_extra_args(
        ["--enforce-eager"],
        reasons={"--trust-remote-code": "long enough reason", "--enforce-eager": "because"},
    )
    assert {p.input for p in problems} == {
        "engine_args_reasons['--trust-remote-code']",
        "engine_args_reasons['--enforce-eager']",
    }


def test_validate_extra_args_rejects_a_reason_too_short_to_say_anything():
    problems = validate_extra_args(["--trust-remote-code"], reasons={"--trust-remote-code": "ok"})
    assert any("without a reason" in p.allowed for p in problems)


def test_restricted_options_are_options_of_a_pinned_engine():
    # Each restricted option exists in at least one pinned vLLM's table (a typo would restrict nothing).
    known = set()
    for family in EngineFamily:
        known |= set(flags_module.vllm_options(family))
    assert set(flags_module.RESTRICTED_OPTIONS) <= known


@pytest.mark.parametrize(
    "token",
    [
        "--pipeline-parallel-size=1",
        "--nnodes=1",
        "--node-rank=0",
        "--master-addr=evil.example.com",
        "--master-port=1",
        "--headless",
        "--distributed-timeout-seconds=1",
    ],
)
def test_validate_extra_args_refuses_the_plans_stage_and_group_flags(token):
    # vLLM's argparse keeps an option's last value and the model's engine args follow the plan's
    # (flags.engine_args): --pipeline-parallel-size 1 there would undo a multi-host plan's memory fit.
    [problem] = validate_extra_args([token], family=EngineFamily.NVIDIA_VLLM)
    assert problem.input == "engine_args[0]"
    assert "is set from the capacity plan" in problem.allowed
