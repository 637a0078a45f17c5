"""Engines in the GPU/TPU boot script: shellcheck, a real run in a scratch root, systemd-analyze verify."""

from __future__ import annotations

import pytest

from inference_infra.components.gcp.startup import MODELS_ENV, StartupConfig, render_startup_script
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import VERIFIED_MARKER, plan_engines
from tests.components.gcp.test_startup import Sandbox

TPU_ENGINES = plan_engines(
    model="qwen2.5-7b",
    traffic=Traffic(context_tokens=8192, concurrency=32),
    precision=None,
    instance_type_name="v5litepod-4",
    cloud="gcp",
)
TPU = StartupConfig(model_uris=("gs://m/qwen2.5-7b-instruct",), ops_agent=False, engines=TPU_ENGINES)


def test_startup_script_with_engines_passes_shellcheck(shellcheck):
    shellcheck(render_startup_script(TPU))


def test_startup_script_installs_and_starts_engines_after_the_prefetch(tmp_path, systemd_verify):
    (tmp_path / "boot").mkdir()
    sandbox = Sandbox(tmp_path / "boot")  # systemd_verify uses tmp_path/root
    result = sandbox.run(TPU)
    assert result.returncode == 0, result.stderr
    calls = [line for line in sandbox.calls() if line.split(" ", 1)[0] in ("gcloud", "systemctl")]
    rsync = next(i for i, c in enumerate(calls) if c.startswith("gcloud storage rsync"))
    start = calls.index(
        "systemctl enable --now --no-block inference-engine@0.service inference-engine@1.service"
        " inference-engine-metrics@0.service inference-engine-metrics@1.service"
    )
    assert rsync < start
    units = sandbox.root / "etc/systemd/system"
    template = (units / "inference-engine@.service").read_text()
    assert f"ExecStartPre=/usr/bin/test -f ${{MODELS_DIR}}/qwen2.5-7b-instruct/{VERIFIED_MARKER}" in template
    assert f"EnvironmentFile={MODELS_ENV}" in template
    assert (sandbox.root / "etc/inference-infra/engine-1.env").read_text().startswith("ENGINE_PORT=8001\n")
    verified = systemd_verify(
        {"inference-engine@.service": template},
        binaries=["/usr/bin/docker", "/usr/bin/test"],
        stub_units=["docker.service"],
        instances={f"inference-engine@{i}.service": "inference-engine@.service" for i in range(2)},
        extra_files={
            MODELS_ENV: "MODELS_DIR=/mnt/local-ssd/models\n",
            **{
                f"/etc/inference-infra/engine-{i}.env": (
                    sandbox.root / f"etc/inference-infra/engine-{i}.env"
                ).read_text()
                for i in range(2)
            },
        },
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr == ""


@pytest.mark.parametrize(
    "config", [StartupConfig(model_uris=("gs://m/a",)), StartupConfig(engines=TPU_ENGINES)]
)
def test_startup_script_without_model_or_engines_starts_none(config):
    assert "inference-engine@" not in render_startup_script(config)
