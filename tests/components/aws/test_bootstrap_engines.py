"""Engines in the node bootstrap: units written and started after the prefetch; cloud-init still valid."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.bootstrap import AcceleratorKind, ModelPrefetch, NodeBootstrap
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import PREFETCH_UNIT, VERIFIED_MARKER, plan_engines

PIN = "ab" * 32  # a pinned manifest digest


def _engines(model: str, machine: str, concurrency: int):
    return plan_engines(
        model=model,
        traffic=Traffic(context_tokens=8192, concurrency=concurrency),
        precision=None,
        instance_type_name=machine,
        cloud="aws",
    )


GPU = NodeBootstrap(
    accelerator=AcceleratorKind.NVIDIA,
    region="us-east-1",
    local_nvme_disks=8,
    prefetch=ModelPrefetch(
        bucket="acme-models", prefix="meta-llama/Llama-3.1-70B", directory="llama-70b", manifest_sha256=PIN
    ),
    engines=_engines("llama-3.1-70b", "p5.48xlarge", 64),
)
NEURON = NodeBootstrap(
    accelerator=AcceleratorKind.NEURON,
    region="us-east-1",
    local_nvme_disks=0,
    prefetch=ModelPrefetch(
        bucket="acme-models", prefix="neuron/llama-8b", directory="llama-8b", manifest_sha256=PIN
    ),
    engines=_engines("llama-3.1-8b", "inf2.48xlarge", 24),
)


@pytest.mark.parametrize("spec", [GPU, NEURON], ids=["gpu", "neuron"])
def test_render_user_data_with_engines_passes_cloud_init_schema(spec, tmp_path):
    tool = shutil.which("cloud-init")
    if tool is None:
        pytest.fail("cloud-init is not installed; run .ci/system-deps")
    path = tmp_path / "user-data.yaml"
    path.write_text(boot.render_user_data(spec))
    result = subprocess.run(
        [tool, "schema", "--config-file", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_render_user_data_writes_one_engine_unit_per_group_and_starts_them_after_prefetch():
    document = yaml.safe_load(boot.render_user_data(GPU))
    paths = [f["path"] for f in document["write_files"]]
    assert "/etc/systemd/system/inference-engine@.service" in paths
    assert "/etc/inference-infra/engine-1.env" in paths
    commands = [" ".join(c) for c in document["runcmd"]]
    prefetch = commands.index(f"systemctl enable --now --no-block {PREFETCH_UNIT}")
    engines = commands.index(
        "systemctl enable --now --no-block inference-engine@0.service inference-engine@1.service"
        " inference-engine-metrics@0.service inference-engine-metrics@1.service"
    )
    assert prefetch < engines
    unit = next(
        f["content"] for f in document["write_files"] if f["path"].endswith("inference-engine@.service")
    )
    check = (
        f"/usr/bin/grep --quiet --line-regexp --fixed-strings {PIN} /opt/models/llama-70b/{VERIFIED_MARKER}"
    )
    assert f"ExecStartPre={check}" in unit.splitlines()


def test_render_user_data_engine_units_pass_systemd_analyze_verify(systemd_verify):
    document = yaml.safe_load(boot.render_user_data(NEURON))
    files = {f["path"]: f["content"] for f in document["write_files"]}
    template = files["/etc/systemd/system/inference-engine@.service"]
    environments = {p: t for p, t in files.items() if p.startswith("/etc/inference-infra/engine-")}
    assert len(environments) == 12  # 24 NeuronCores of inf2.48xlarge at TP=2
    result = systemd_verify(
        {
            "inference-engine@.service": template,
            "inference-engine-metrics@.service": files[
                "/etc/systemd/system/inference-engine-metrics@.service"
            ],
            PREFETCH_UNIT: files[f"/etc/systemd/system/{PREFETCH_UNIT}"],
        },
        binaries=["/usr/bin/docker", "/usr/bin/grep", "/usr/bin/mkdir", "/usr/bin/find", "/usr/bin/python3"],
        stub_units=["docker.service", "inference-nvme-cache.service"],
        instances={
            **{f"inference-engine@{i}.service": "inference-engine@.service" for i in range(12)},
            **{
                f"inference-engine-metrics@{i}.service": "inference-engine-metrics@.service"
                for i in range(12)
            },
        },
        extra_files=environments,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_render_user_data_rejects_engines_without_prefetch():
    spec = NodeBootstrap(
        accelerator=AcceleratorKind.NVIDIA, region="us-east-1", local_nvme_disks=0, engines=GPU.engines
    )
    with pytest.raises(ValueError, match="engines need prefetch"):
        boot.render_user_data(spec)


@pytest.mark.parametrize("spec", [GPU, NEURON], ids=["gpu", "neuron"])
def test_engines_wait_for_the_marker_the_prefetch_writes(spec):
    """The prefetch unit verifies into its destination and writes the marker there; the engines check it."""
    files = {f["path"]: f["content"] for f in yaml.safe_load(boot.render_user_data(spec))["write_files"]}
    prefetch = files[f"/etc/systemd/system/{PREFETCH_UNIT}"]
    exec_start = next(line for line in prefetch.splitlines() if line.startswith("ExecStart=")).split()
    destination = exec_start[exec_start.index("--dest") + 1]
    assert exec_start[exec_start.index("--manifest-sha256") + 1] == PIN
    engine = files["/etc/systemd/system/inference-engine@.service"]
    check = f"/usr/bin/grep --quiet --line-regexp --fixed-strings {PIN} {destination}/{VERIFIED_MARKER}"
    assert f"ExecStartPre={check}" in engine.splitlines()
    requires = next(line for line in engine.splitlines() if line.startswith("Requires="))
    assert PREFETCH_UNIT in requires.removeprefix("Requires=").split()
