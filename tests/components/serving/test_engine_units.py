"""The engines' systemd units: verified by systemd-analyze, ordered after the verified prefetch."""

from __future__ import annotations

import itertools
from dataclasses import replace

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
from inference_infra.components.serving.tpu_env import TpuHost
from inference_infra.components.serving.units import (
    DOCKER,
    METRICS_UNIT,
    TEMPLATE_UNIT,
    EngineUnits,
    instance_command,
)

CASES = {
    EngineFamily.NVIDIA_VLLM: ("llama-3.1-70b", "p5.48xlarge", "aws", 64),
    EngineFamily.NEURON_VLLM: ("llama-3.1-8b", "inf2.8xlarge", "aws", 4),
    EngineFamily.TPU_VLLM: ("qwen2.5-7b", "v5litepod-4", "gcp", 32),
}
HOST = EngineHost(model_dir="/opt/models/weights")


def _units(family: EngineFamily, host: EngineHost = HOST) -> EngineUnits:
    model, machine, cloud, concurrency = CASES[family]
    if family is EngineFamily.TPU_VLLM and host.tpu is None and host.network is None:
        host = replace(host, tpu=TpuHost(accelerator_type=machine, node_name="serving"))
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


# -- #23: network, API key, pinned marker, Neuron compiled artifacts, metrics-only port ----------------

PIN = "cd" * 32
KEYED = EngineHost(
    model_dir="/opt/models/weights",
    manifest_sha256=PIN,
    api_key_command=(
        "/usr/local/lib/inference-infra/engine-api-key.sh",
        "ssm",
        "/inference-infra/x/api-key",
        "us-east-1",
    ),
)


def _setting(template: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in template.splitlines() if line.startswith(f"{key}=")]


@pytest.mark.parametrize("family", [EngineFamily.NVIDIA_VLLM, EngineFamily.NEURON_VLLM])
def test_engine_units_publish_the_port_on_a_bridge_network_so_imds_is_out_of_reach(family):
    # IMDSv2 with a hop limit of 1 (the launch template) answers the host only: a container on a bridge
    # network is one hop further. Host networking would put the container on the host's stack.
    words = instance_command(_units(family), 0)
    assert words[words.index("--network") + 1] == "bridge"
    assert words[words.index("--publish") + 1] == "8000:8000"
    assert words[words.index("--host") + 1] == "0.0.0.0"  # inside the container's own namespace


def test_engine_units_tpu_runs_on_a_bridge_network_with_the_slice_as_environment():
    # The metadata server is out of reach there, so libtpu, JAX and tpu-inference read the slice from the
    # environment (components/serving/tpu_env.py): TPU_SKIP_MDS_QUERY and GKE's set for a v5litepod-4.
    words = instance_command(_units(EngineFamily.TPU_VLLM), 1)
    assert words[words.index("--network") + 1] == "bridge"
    assert words[words.index("--publish") + 1] == "8001:8001"
    assert words[words.index("--host") + 1] == "0.0.0.0"
    environment = dict(
        w.split("=", 1) for w, flag in zip(words[1:], words[:-1], strict=True) if flag == "--env"
    )
    assert {k: v for k, v in environment.items() if k.startswith("TPU_")} == {
        "TPU_SKIP_MDS_QUERY": "true",
        "TPU_ACCELERATOR_TYPE": "v5litepod-4",
        "TPU_TOPOLOGY": "2x2",
        "TPU_TOPOLOGY_WRAP": "false,false,false",
        "TPU_TOPOLOGY_ALT": "false",
        "TPU_HOST_BOUNDS": "1,1,1",
        "TPU_CHIPS_PER_HOST_BOUNDS": "2,2,1",
        "TPU_WORKER_ID": "0",
        "TPU_WORKER_HOSTNAMES": "localhost",
        "TPU_RUNTIME_METRICS_PORTS": "8431,8432,8433,8434",
        "TPU_NAME": "serving",
        # Two engines of two chips each: engine 1 is its own one-process mesh on chips 2 and 3.
        "TPU_VISIBLE_CHIPS": "2,3",
        "TPU_CHIPS_PER_PROCESS_BOUNDS": "1,2,1",
        "TPU_PROCESS_BOUNDS": "1,1,1",
        "TPU_PROCESS_PORT": "8477",
        "TPU_PROCESS_ADDRESSES": "localhost:8477",
    }


def test_engine_units_rejects_a_tpu_engine_on_a_bridge_network_without_its_slice():
    with pytest.raises(ValueError, match="tpu must name the TPU VM's slice"):
        _units(EngineFamily.TPU_VLLM, replace(HOST, network="bridge"))


def test_engine_units_tpu_on_the_host_network_gets_no_slice_environment():
    # The library's explicit opt-out (EngineHost.network="host"); no component sets it. The slice is still
    # required: it says which device nodes the unprivileged container gets.
    with pytest.raises(ValueError, match="tpu must name the TPU VM's slice"):
        _units(EngineFamily.TPU_VLLM, replace(HOST, network="host"))
    slice_ = TpuHost(accelerator_type="v5litepod-4", node_name="serving")
    words = instance_command(_units(EngineFamily.TPU_VLLM, replace(HOST, network="host", tpu=slice_)), 0)
    assert "--device=/dev/vfio/0" in words
    assert words[words.index("--network") + 1] == "host"
    assert "--publish" not in words
    assert not any(w.startswith("TPU_SKIP_MDS_QUERY") for w in words)


def test_engine_units_fetch_the_api_key_into_a_runtime_file_the_container_mounts():
    units = _units(EngineFamily.NVIDIA_VLLM, KEYED)
    pre = _setting(units.template, "ExecStartPre")
    fetch = [p for p in pre if "engine-api-key.sh" in p]
    assert fetch == [
        "/usr/local/lib/inference-infra/engine-api-key.sh ssm /inference-infra/x/api-key us-east-1 "
        "/run/inference-engine-%i/api-key"
    ]
    assert _setting(units.template, "RuntimeDirectory") == ["inference-engine-%i"]
    assert _setting(units.template, "RuntimeDirectoryMode") == ["0700"]
    words = instance_command(units, 0)
    assert "/run/inference-engine-0/api-key:/run/secrets/vllm-api-key:ro" in words
    assert "--env-file" not in words
    assert "--api-key" not in words
    assert not any(
        v.startswith("VLLM_API_KEY") for f, v in itertools.pairwise(words) if f == "--env"
    )  # nor in the container's configuration


def test_engine_units_start_only_when_the_marker_holds_the_pinned_digest():
    pre = _setting(_units(EngineFamily.NVIDIA_VLLM, KEYED).template, "ExecStartPre")
    check = f"/usr/bin/grep --quiet --line-regexp --fixed-strings {PIN} /opt/models/weights/{VERIFIED_MARKER}"
    assert check in pre
    assert pre.index(check) < next(i for i, p in enumerate(pre) if "engine-api-key.sh" in p)


def test_engine_units_neuron_compiles_into_a_writable_folder_and_keeps_the_weights_read_only():
    units = _units(EngineFamily.NEURON_VLLM, KEYED)
    [writable] = _setting(units.template, "ReadWritePaths")
    assert writable.startswith("/var/cache/inference-infra/neuron-compiled/")
    assert _setting(units.template, "ProtectSystem") == ["strict"]
    words = instance_command(units, 0)
    mounts = [words[i + 1] for i, w in enumerate(words) if w == "--volume"]
    assert "/opt/models/weights:/models:ro" in mounts
    [compiled] = [m for m in mounts if m.endswith(":/var/cache/neuron-compiled:rw")]
    host_path = compiled.split(":")[0]
    assert host_path == f"{writable}/0"  # engine 0's own folder, inside the unit's ReadWritePaths
    assert "NEURON_COMPILED_ARTIFACTS=/var/cache/neuron-compiled" in words
    assert f"+/usr/bin/mkdir -p {writable}/%i" in _setting(units.template, "ExecStartPre")
    assert not any(m.startswith("/opt/models/weights") and not m.endswith(":ro") for m in mounts)


def test_engine_units_neuron_compiled_folder_changes_with_the_weights():
    other = EngineHost(model_dir="/opt/models/weights", manifest_sha256="ef" * 32)
    first = _setting(_units(EngineFamily.NEURON_VLLM, KEYED).template, "ReadWritePaths")
    second = _setting(_units(EngineFamily.NEURON_VLLM, other).template, "ReadWritePaths")
    assert first != second  # artifacts compiled for other weights are never loaded


def test_engine_units_pass_verify_with_key_pin_and_metrics_proxy(systemd_verify):
    units = _units(EngineFamily.NEURON_VLLM, KEYED)
    result = systemd_verify(
        {TEMPLATE_UNIT: units.template, METRICS_UNIT: units.metrics_template},
        binaries=[DOCKER, "/usr/bin/grep", "/usr/bin/mkdir", "/usr/bin/find", "/usr/bin/python3",
                  "/usr/local/lib/inference-infra/engine-api-key.sh"],
        stub_units=["docker.service", PREFETCH_UNIT],
        instances={**dict.fromkeys(units.engine_instances, TEMPLATE_UNIT),
                   **{i: METRICS_UNIT for i in units.instances if i not in units.engine_instances}},
        extra_files=units.environments,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_engine_units_metrics_proxy_listens_on_its_own_port():
    units = _units(EngineFamily.NVIDIA_VLLM)
    assert units.environments["/etc/inference-infra/engine-1.env"].splitlines()[:2] == [
        "ENGINE_PORT=8001",
        "ENGINE_METRICS_PORT=9001",
    ]
    assert "inference-engine-metrics@1.service" in units.instances
    [start] = _setting(units.metrics_template, "ExecStart")
    assert start == (
        "/usr/bin/python3 /etc/inference-infra/engine_metrics_proxy.py --listen ${ENGINE_METRICS_PORT} "
        "--upstream ${ENGINE_PORT}"
    )
    assert _setting(units.metrics_template, "DynamicUser") == ["yes"]
    assert {f.path: f.text for f in units.files()}["/etc/inference-infra/engine_metrics_proxy.py"].startswith(
        '"""The metrics-only'
    )


@pytest.mark.parametrize(
    ("host", "problem"),
    [
        (EngineHost(model_dir="/opt/models/a b"), "model_dir"),
        (EngineHost(model_dir="/opt/../etc"), "model_dir"),
        (EngineHost(model_dir="/opt/models/x", manifest_sha256="XYZ"), "manifest_sha256"),
        (EngineHost(model_dir="/opt/models/x", network="none"), "network"),
        (EngineHost(model_dir="/opt/models/x", neuron_compiled_dir="relative"), "path"),
        (
            EngineHost(
                model_dir="/opt/models/x", tpu=TpuHost(accelerator_type="v5litepod-16", node_name="a")
            ),
            "a slice of 4 hosts",
        ),
        (
            EngineHost(model_dir="/opt/models/x", tpu=TpuHost(accelerator_type="v5e-8", node_name="a")),
            "not a TPU slice in the catalog",
        ),
        (
            EngineHost(model_dir="/opt/models/x", tpu=TpuHost(accelerator_type="v6e-8", node_name="A b")),
            "tpu.node_name",
        ),
    ],
)
def test_engine_units_rejects_hosts_that_cannot_be_written_into_a_unit(host, problem):
    with pytest.raises(ValueError, match=problem):
        _units(EngineFamily.NEURON_VLLM, host)
