"""The boot script with Artifact Registry mirrors and without package downloads (egress endpoints-only)."""

from __future__ import annotations

import json
import re

import pytest

from inference_infra.components.gcp.startup import (
    DOCKER_CONFIG_DIR,
    StartupConfig,
    pulled_images,
    render_startup_script,
    validate_startup,
)
from inference_infra.components.serving import EngineFamily, engine_image
from tests.components.gcp.helpers import expanded
from tests.components.gcp.test_startup import Sandbox, weights
from tests.components.gcp.test_startup_engines import TPU, TPU_ENGINES

MIRROR = "us-central1-docker.pkg.dev/acme-inference/docker-hub"
MIRRORED = StartupConfig(
    **{**TPU.__dict__, "image_mirrors": {"docker.io": MIRROR}, "package_downloads": False}
)
PUBLIC_REGISTRIES = ("docker.io", "nvcr.io", "quay.io", "packages.cloud.google.com", "registry-1.docker.io")


def test_startup_mirrors_pull_the_pinned_digest_from_artifact_registry():
    script = expanded(render_startup_script(MIRRORED))
    upstream = engine_image(EngineFamily.TPU_VLLM)
    digest = upstream.reference.split("@", 1)[1]
    pulls = re.findall(r"--entrypoint vllm (\S+) serve", script)
    assert pulls == [f"{MIRROR}/{upstream.repository}@{digest}"]


def test_startup_mirrors_leave_no_public_registry_in_the_script():
    script = expanded(render_startup_script(MIRRORED))
    assert not [host for host in PUBLIC_REGISTRIES if host in script]
    # Without mirrors the same node pulls from Docker Hub (the check above can fail).
    assert "vllm/vllm-tpu@sha256:" in expanded(render_startup_script(TPU))
    assert f"{MIRROR}/" not in expanded(render_startup_script(TPU))


def test_startup_mirrors_script_passes_shellcheck(shellcheck):
    shellcheck(render_startup_script(MIRRORED))


def test_startup_mirrors_configure_docker_to_authenticate_to_the_registry(tmp_path):
    sandbox = Sandbox(tmp_path)
    result = sandbox.run(MIRRORED)
    assert result.returncode == 0, result.stderr
    config = json.loads((sandbox.root / DOCKER_CONFIG_DIR.lstrip("/") / "config.json").read_text())
    assert config == {"credHelpers": {"us-central1-docker.pkg.dev": "gcloud"}}
    assert (
        oct((sandbox.root / DOCKER_CONFIG_DIR.lstrip("/") / "config.json").stat().st_mode & 0o777) == "0o600"
    )
    assert sandbox.models_env().splitlines()[1] == f"DOCKER_CONFIG={DOCKER_CONFIG_DIR}"
    template = (sandbox.root / "etc/systemd/system/inference-engine@.service").read_text()
    assert "EnvironmentFile=/etc/inference-infra/models.env" in template


def test_startup_without_package_downloads_never_calls_apt(tmp_path):
    sandbox = Sandbox(tmp_path)
    config = StartupConfig(**weights("a"), model_cache=True, ops_agent=True, package_downloads=False)
    result = sandbox.run(config, STUB_CACHE_TARGET="10.8.0.2:/weights")
    assert sandbox.calls("apt-get") == []
    assert all("metadata.google.internal" in c for c in sandbox.calls("curl"))
    assert "google-cloud-ops-agent is not on this image" in result.stdout
    # nfs-common missing (no mount.nfs on PATH): the boot stops, naming the package.
    assert result.returncode != 0
    assert "nfs-common is not on this image" in result.stdout


def test_startup_with_package_downloads_installs_what_is_missing(tmp_path):
    sandbox = Sandbox(tmp_path)
    config = StartupConfig(**weights("a"), model_cache=True, ops_agent=False)
    sandbox.run(config, STUB_CACHE_TARGET="10.8.0.2:/weights")
    assert any("nfs-common" in c for c in sandbox.calls("apt-get"))


def test_startup_pulled_images_are_the_engines_upstream_references():
    assert pulled_images(TPU) == [engine_image(TPU_ENGINES.family).reference]
    assert pulled_images(StartupConfig(**weights("a"))) == []


@pytest.mark.parametrize(
    "mirrors",
    [
        {"docker.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub"},
        {"docker.io": "us-central1-docker.pkg.dev/acme-inference"},
        {"docker.io": "gcr.io/acme-inference/docker-hub"},
        {"not a host": MIRROR},
    ],
)
def test_startup_rejects_mirrors_outside_artifact_registry(mirrors):
    problems = validate_startup(StartupConfig(image_mirrors=mirrors))
    assert problems
    assert all(p.input.startswith("image_mirrors[") for p in problems)
