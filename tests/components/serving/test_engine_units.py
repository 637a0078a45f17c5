"""The engines' systemd units: verified by systemd-analyze, ordered after the verified prefetch."""

from __future__ import annotations

import pytest

from inference_infra.components.planner import Traffic
from inference_infra.components.serving import (
    IMAGES,
    PREFETCH_UNIT,
    VERIFIED_MARKER,
    EngineFamily,
    EngineHost,
    engine_units,
    plan_engines,
)
from inference_infra.components.serving.units import DOCKER, TEMPLATE_UNIT, EngineUnits, instance_command

CASES = {
    EngineFamily.NVIDIA_VLLM: ("llama-3.1-70b", "p5.48xlarge", "aws", 64),
    EngineFamily.NEURON_VLLM: ("llama-3.1-8b", "inf2.8xlarge", "aws", 4),
    EngineFamily.TPU_VLLM: ("qwen2.5-7b", "v5litepod-4", "gcp", 32),
}
HOST = EngineHost(model_dir="/opt/models/weights")


def _units(family: EngineFamily, host: EngineHost = HOST) -> EngineUnits:
    model, machine, cloud, concurrency = CASES[family]
    config = plan_engines(
        model=model,
        traffic=Traffic(context_tokens=4096, concurrency=concurrency),
        precision=None,
        instance_type_name=machine,
        cloud=cloud,
    )
    return engine_units(config, host)


def _verify(systemd_verify, units: EngineUnits, binaries: list[str], stub_units: list[str]):
    return systemd_verify(
        {TEMPLATE_UNIT: units.template},
        binaries=binaries,
        stub_units=stub_units,
        instances=dict.fromkeys(units.instances, TEMPLATE_UNIT),
        extra_files=units.environments,
    )


@pytest.mark.parametrize("family", list(EngineFamily))
def test_engine_units_pass_systemd_analyze_verify(family, systemd_verify):
    result = _verify(
        systemd_verify, _units(family), [DOCKER, "/usr/bin/test"], ["docker.service", PREFETCH_UNIT]
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_engine_units_fail_verify_without_their_binary(systemd_verify):
    units = _units(EngineFamily.NVIDIA_VLLM)
    result = _verify(systemd_verify, units, ["/usr/bin/test"], ["docker.service", PREFETCH_UNIT])
    assert result.returncode != 0
    assert "/usr/bin/docker" in result.stderr


def test_engine_units_gcp_host_pass_verify_with_environment_file(systemd_verify):
    host = EngineHost(
        model_dir="${MODELS_DIR}/qwen", prefetch_unit=None, environment_file="/etc/inference-infra/models.env"
    )
    units = _units(EngineFamily.TPU_VLLM, host)
    result = _verify(systemd_verify, units, [DOCKER, "/usr/bin/test"], ["docker.service"])
    assert result.returncode == 0, result.stderr
    assert "EnvironmentFile=/etc/inference-infra/models.env" in units.template.splitlines()


def test_engine_units_require_the_verified_prefetch():
    lines = _units(EngineFamily.NVIDIA_VLLM).template.splitlines()
    assert f"Requires=docker.service {PREFETCH_UNIT}" in lines
    assert f"After=network-online.target docker.service {PREFETCH_UNIT}" in lines
    assert f"ExecStartPre=/usr/bin/test -f /opt/models/weights/{VERIFIED_MARKER}" in lines
    assert "Environment=HF_HUB_OFFLINE=1" in lines
    assert "EnvironmentFile=/etc/inference-infra/engine-%i.env" in lines


def test_engine_units_run_the_pinned_image_with_weights_read_only():
    units = _units(EngineFamily.NVIDIA_VLLM)
    assert units.engine_instances == ["inference-engine@0.service", "inference-engine@1.service"]
    words = instance_command(units, 1)
    assert words[:2] == [DOCKER, "run"]
    assert IMAGES[EngineFamily.NVIDIA_VLLM].reference in words
    assert "/opt/models/weights:/models:ro" in words
    assert "CUDA_VISIBLE_DEVICES=4,5,6,7" in words
    assert words[words.index("--name") + 1] == "inference-engine-1"
    assert words[words.index("--port") + 1] == "8001"
    assert "HF_HUB_OFFLINE=1" in words


def test_engine_units_neuron_owns_its_cores():
    words = instance_command(_units(EngineFamily.NEURON_VLLM), 0)
    assert "NEURON_RT_VISIBLE_CORES=0-1" in words
    assert IMAGES[EngineFamily.NEURON_VLLM].reference in words
    assert "--device=/dev/neuron0" in words


def test_neuron_unit_keeps_the_dlc_entrypoint_and_gives_it_the_server_as_command():
    """The DLC's ENTRYPOINT is ["python", "/usr/local/bin/vllm_entrypoint.py"], which runs its arguments
    (aws-neuron/deep-learning-containers 2.25.0, docker/vllm/inference/0.9.1/Dockerfile.neuronx)."""
    words = instance_command(_units(EngineFamily.NEURON_VLLM), 0)
    assert "--entrypoint" not in words  # the image's wrapper stays PID 1
    image = words.index(IMAGES[EngineFamily.NEURON_VLLM].reference)
    assert words[image + 1 : image + 4] == ["python", "-m", "vllm.entrypoints.openai.api_server"]
    assert words[image + 4] == "--model"  # server arguments follow directly (nothing runs bash)
    # Its HEALTHCHECK probes :8080/ping, which the engine does not serve; the load balancer checks /health.
    assert "--no-healthcheck" in words[:image]
    flags = words[image + 4 :]
    assert flags[flags.index("--device") + 1] == "neuron"
    assert "--enable-prefix-caching" not in flags


@pytest.mark.parametrize("family", [EngineFamily.NVIDIA_VLLM, EngineFamily.TPU_VLLM])
def test_nvidia_and_tpu_units_start_vllm_serve(family):
    words = instance_command(_units(family), 0)
    image = words.index(IMAGES[family].reference)
    assert words[words.index("--entrypoint") + 1] == "vllm"
    assert words[image + 1 : image + 3] == ["serve", "--model"]


def test_engine_units_tpu_owns_its_chips():
    units = _units(EngineFamily.TPU_VLLM)
    words = instance_command(units, 1)
    assert "TPU_VISIBLE_CHIPS=2,3" in words
    assert "TPU_CHIPS_PER_PROCESS_BOUNDS=1,2,1" in words  # two chips per engine, two engines per VM
    assert "TPU_PROCESS_ADDRESSES=localhost:8477" in words
    assert IMAGES[EngineFamily.TPU_VLLM].reference in instance_command(units, 1)
