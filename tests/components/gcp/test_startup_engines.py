"""Engines in the GPU/TPU boot script: shellcheck, a real run in a scratch root, systemd-analyze verify."""

from __future__ import annotations

import pytest

from inference_infra.components.gcp.startup import (
    ENGINE_DROP_IN,
    METADATA_BLOCK_UNIT,
    MODELS_ENV,
    NODE_BIN,
    SECRET_FILE,
    WEIGHTS_UNIT,
    StartupConfig,
    render_startup_script,
)
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import VERIFIED_MARKER, plan_engines
from inference_infra.components.serving.tpu_env import TpuHost
from inference_infra.components.serving.units import METRICS_PROXY, instance_command
from tests.components.gcp.helpers import files_of, pins
from tests.components.gcp.test_startup import Sandbox

TPU_ENGINES = plan_engines(
    model="qwen2.5-7b",
    traffic=Traffic(context_tokens=8192, concurrency=32),
    precision=None,
    instance_type_name="v5litepod-4",
    cloud="gcp",
)
GPU_ENGINES = plan_engines(
    model="llama-3.1-8b",
    traffic=Traffic(context_tokens=4096, concurrency=8),
    precision=None,
    instance_type_name="g2-standard-8",
    cloud="gcp",
)
QWEN = "gs://models/qwen2.5-7b-instruct"
LLAMA = "gs://models/llama-3.1-8b-instruct"
TPU = StartupConfig(
    model_uris=(QWEN,),
    manifest_sha256=pins(QWEN),
    ops_agent=False,
    engines=TPU_ENGINES,
    tpu=TpuHost(accelerator_type="v5litepod-4", node_name="serving"),
)
GPU = StartupConfig(
    model_uris=(LLAMA,),
    manifest_sha256=pins(LLAMA),
    ops_agent=False,
    engines=GPU_ENGINES,
    api_key_secret="llm-api-key/versions/latest",
)
UNITS = "/etc/systemd/system"


def test_startup_script_with_engines_passes_shellcheck(shellcheck):
    shellcheck(render_startup_script(TPU))
    shellcheck(render_startup_script(GPU))


def test_startup_script_starts_engines_after_the_weights_unit_and_binds_them_to_it(tmp_path, systemd_verify):
    (tmp_path / "boot").mkdir()
    sandbox = Sandbox(tmp_path / "boot")  # systemd_verify uses tmp_path/root
    result = sandbox.run(TPU)
    assert result.returncode == 0, result.stderr
    calls = sandbox.calls("systemctl")
    instances = (
        "inference-engine@0.service inference-engine@1.service"
        " inference-engine-metrics@0.service inference-engine-metrics@1.service"
    )
    assert calls == [
        "systemctl daemon-reload",
        f"systemctl start {WEIGHTS_UNIT}",  # waited for: its failure stops the boot, and the engines
        f"systemctl disable --quiet {instances}",  # started by the boot, after the mounts, never at boot
        f"systemctl start --no-block {instances}",
    ]
    files = files_of(render_startup_script(TPU))
    template = files[f"{UNITS}/inference-engine@.service"]
    sha = TPU.pinned(QWEN)
    model_dir = f"/var/lib/inference-infra/models/qwen2.5-7b-instruct/{sha}"
    # The engine starts only on the directory verified against the pinned manifest, with that digest.
    check = f"/usr/bin/grep --quiet --line-regexp --fixed-strings {sha} {model_dir}/{VERIFIED_MARKER}"
    assert f"ExecStartPre={check}" in template
    assert f"Requires=docker.service {WEIGHTS_UNIT}" in template
    needs = f"{WEIGHTS_UNIT} {METADATA_BLOCK_UNIT}"
    assert files[ENGINE_DROP_IN] == f"[Unit]\nBindsTo={needs}\nAfter={needs}\n"
    assert f"EnvironmentFile={MODELS_ENV}" in template
    assert (sandbox.root / "etc/inference-infra/engine-1.env").read_text().startswith("ENGINE_PORT=8001\n")
    verified = systemd_verify(
        {
            "inference-engine@.service": template,
            "inference-engine-metrics@.service": files[f"{UNITS}/inference-engine-metrics@.service"],
            WEIGHTS_UNIT: files[f"{UNITS}/{WEIGHTS_UNIT}"],
            METADATA_BLOCK_UNIT: files[f"{UNITS}/{METADATA_BLOCK_UNIT}"],
        },
        binaries=["/usr/bin/docker", "/usr/bin/grep", "/usr/bin/python3", "/usr/sbin/iptables"],
        stub_units=["docker.service"],
        instances={
            **{f"inference-engine@{i}.service": "inference-engine@.service" for i in range(2)},
            **{
                f"inference-engine-metrics@{i}.service": "inference-engine-metrics@.service" for i in range(2)
            },
        },
        extra_files={
            MODELS_ENV: files[MODELS_ENV],
            ENGINE_DROP_IN: files[ENGINE_DROP_IN],
            METRICS_PROXY: files[METRICS_PROXY],
            **{
                f"/etc/inference-infra/engine-{i}.env": files[f"/etc/inference-infra/engine-{i}.env"]
                for i in range(2)
            },
        },
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr == ""


@pytest.mark.parametrize("config", [GPU, TPU], ids=["gpu", "tpu"])
def test_engines_cannot_reach_the_metadata_server(config, systemd_verify):
    files = files_of(render_startup_script(config))
    template = files[f"{UNITS}/inference-engine@.service"]
    words = instance_command_of(template, files)
    # A bridge network with the API port published: the container is not on the node's network ...
    assert words[words.index("--network") + 1] == "bridge"
    assert "--publish" in words
    # ... and the node rejects what Docker forwards from containers to the metadata server.
    block = files[f"{UNITS}/{METADATA_BLOCK_UNIT}"]
    rule = "DOCKER-USER --destination 169.254.169.254/32 --jump REJECT"
    assert f"ExecStart=/usr/sbin/iptables --wait --insert {rule}" in block
    assert f"ExecStartPre=-/usr/sbin/iptables --wait --delete {rule}" in block
    needs = f"{WEIGHTS_UNIT} {METADATA_BLOCK_UNIT}"
    assert files[ENGINE_DROP_IN] == f"[Unit]\nBindsTo={needs}\nAfter={needs}\n"
    # ... and checks at every start, as root, that the rule is still there (#33 item 9): a flushed chain
    # fails the engine instead of letting it start with the metadata server in reach.
    assert f"ExecStartPre=+/usr/sbin/iptables --wait --check {rule}" in template.splitlines()
    verified = systemd_verify(
        {METADATA_BLOCK_UNIT: block}, binaries=["/usr/sbin/iptables"], stub_units=["docker.service"]
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr == ""


def test_tpu_engines_get_the_slice_as_environment_instead_of_the_metadata_server():
    files = files_of(render_startup_script(TPU))
    words = instance_command_of(files[f"{UNITS}/inference-engine@.service"], files)
    assert "host" not in words[: words.index("--ipc")]  # no --network host
    environment = [w for w, flag in zip(words[1:], words[:-1], strict=True) if flag == "--env"]
    for variable in (
        "TPU_SKIP_MDS_QUERY=true",
        "TPU_ACCELERATOR_TYPE=v5litepod-4",
        "TPU_TOPOLOGY=2x2",
        "TPU_CHIPS_PER_HOST_BOUNDS=2,2,1",
        "TPU_HOST_BOUNDS=1,1,1",
        "TPU_WORKER_ID=0",
        "TPU_WORKER_HOSTNAMES=localhost",
        "TPU_NAME=serving",
    ):
        assert variable in environment


def test_startup_rejects_tpu_engines_without_their_slice():
    from dataclasses import replace

    from inference_infra.components.gcp.startup import validate_startup

    problems = validate_startup(replace(TPU, tpu=None))
    assert [(p.input, p.value) for p in problems] == [("tpu", None)]
    assert "metadata server" in problems[0].allowed


def test_gpu_engines_fetch_their_api_key_from_secret_manager_at_start():
    script = render_startup_script(GPU)
    files = files_of(script)
    template = files[f"{UNITS}/inference-engine@.service"]
    fetch = (
        f"ExecStartPre=/usr/bin/python3 {NODE_BIN}/{SECRET_FILE} --secret llm-api-key/versions/latest "
        "/run/inference-engine-%i/api-key"
    )
    assert fetch in template
    assert "--volume /run/inference-engine-%i/api-key:/run/secrets/vllm-api-key:ro" in template
    assert "--env-file" not in template  # docker inspect would show the key
    assert f"{NODE_BIN}/{SECRET_FILE}" in files
    assert "VLLM_API_KEY=" not in script  # the key itself is nowhere in the boot


def instance_command_of(template: str, files: dict[str, str]) -> list[str]:
    from inference_infra.components.serving.units import EngineUnits

    environments = {p: t for p, t in files.items() if p.startswith("/etc/inference-infra/engine-")}
    return instance_command(EngineUnits(template=template, environments=environments, instances=[]), 0)


@pytest.mark.parametrize(
    "config",
    [StartupConfig(model_uris=(QWEN,), manifest_sha256=pins(QWEN)), StartupConfig(engines=TPU_ENGINES)],
)
def test_startup_script_without_model_or_engines_starts_none(config):
    assert "inference-engine@" not in render_startup_script(config)
