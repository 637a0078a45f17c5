"""Artifact Registry mirrors (GCP): remote repositories, reader grants, and the nodes that pull from them."""

from __future__ import annotations

import re

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.gpu_fleet import GpuFleet, GpuFleetArgs
from inference_infra.components.gcp.mirrors import (
    READER_ROLE,
    ArtifactMirrors,
    ArtifactMirrorsArgs,
    registry_hosts,
    unmirrored_hosts,
)
from tests.components.gcp.helpers import expanded, pinned_weights

REPOSITORY = "gcp:artifactregistry/repository:Repository"
IAM_MEMBER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
DOCKER_HUB = "us-central1-docker.pkg.dev/test-project/docker-hub"
NVCR = "us-central1-docker.pkg.dev/test-project/nvcr"
QUAY = "us-central1-docker.pkg.dev/test-project/quay"
MIRRORS = {"docker.io": DOCKER_HUB, "nvcr.io": NVCR}
SA = "serving@test-project.iam.gserviceaccount.com"


def test_artifact_mirrors_make_remote_repositories_per_upstream(plan_of):
    plan = plan_of(ArtifactMirrors("mirrors", ArtifactMirrorsArgs(image_mirrors=MIRRORS)))
    hub = plan.one(REPOSITORY, "mirrors-docker-hub").props
    assert hub["repositoryId"] == "docker-hub"
    assert hub["location"] == "us-central1"
    assert hub["project"] == "test-project"
    assert hub["format"] == "DOCKER"
    assert hub["mode"] == "REMOTE_REPOSITORY"
    assert hub["remoteRepositoryConfig"]["dockerRepository"] == {"publicRepository": "DOCKER_HUB"}
    nvcr = plan.one(REPOSITORY, "mirrors-nvcr").props
    assert nvcr["remoteRepositoryConfig"]["dockerRepository"] == {
        "customRepository": {"uri": "https://nvcr.io"}
    }


def test_artifact_mirrors_grant_readers_on_each_repository_only(plan_of):
    plan = plan_of(ArtifactMirrors("mirrors", ArtifactMirrorsArgs(image_mirrors=MIRRORS, readers=[SA])))
    grants = plan.of_type(IAM_MEMBER)
    assert len(grants) == 2
    for grant in grants:
        assert grant.props["role"] == READER_ROLE
        assert grant.props["member"] == f"serviceAccount:{SA}"
        assert grant.props["repository"] in ("docker-hub", "nvcr")
    assert not plan.of_type("gcp:projects/iAMMember:IAMMember")


@pytest.mark.parametrize(
    ("mirrors", "message"),
    [
        ({}, "image_mirrors"),
        ({"docker.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/hub"}, "LOCATION-docker.pkg.dev"),
        ({"docker.io": "us-central1-docker.pkg.dev/test-project/Docker_Hub"}, "LOCATION-docker.pkg.dev"),
    ],
)
def test_artifact_mirrors_rejects_what_is_not_an_artifact_registry_repository(plan_of, mirrors, message):
    with pytest.raises(InputError, match=re.escape(message)):
        ArtifactMirrors("mirrors", ArtifactMirrorsArgs(image_mirrors=mirrors))


def test_mirror_hosts_and_uncovered_registries():
    assert registry_hosts(MIRRORS) == ["us-central1-docker.pkg.dev"]
    images = ["vllm/vllm-openai@sha256:" + "0" * 64, "nvcr.io/nvidia/x@sha256:" + "1" * 64, "quay.io/a/b:1"]
    assert unmirrored_hosts(images, MIRRORS) == ["quay.io"]


LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8)


def fleet_args(**overrides) -> GpuFleetArgs:
    return GpuFleetArgs(
        machine_type="g2-standard-8",
        zone="us-central1-a",
        subnetwork="projects/test-project/regions/us-central1/subnetworks/gpu",
        spot=1,
        model=LLAMA_8B,
        weights=pinned_weights("models", ["gs://models/llama-3.1-8b-instruct"]),
        **overrides,
    )


def test_gpu_fleet_with_mirrors_pulls_only_from_artifact_registry(plan_of):
    plan = plan_of(
        GpuFleet(
            "l4",
            fleet_args(
                image_mirrors={"docker.io": DOCKER_HUB, "nvcr.io": NVCR, "quay.io": QUAY},
                ops_agent=False,
                internet_egress=False,
            ),
        )
    )
    script = expanded(plan.one("gcp:compute/instance:Instance").props["metadata"]["startup-script"])
    assert f"{DOCKER_HUB}/vllm/vllm-openai@sha256:" in script
    # The host exporters the stack's Prometheus scrapes (9400, 9100), by the same digests, from mirrors.
    assert f"{NVCR}/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04@sha256:" in script
    assert f"{QUAY}/prometheus/node-exporter:v1.8.2@sha256:" in script
    for public in ("docker.io", "nvcr.io", "quay.io", "packages.cloud.google.com"):
        assert public not in script
    assert "setup_ops_agent ||" not in script


def test_gpu_fleet_without_mirrors_pulls_from_docker_hub(plan_of):
    plan = plan_of(GpuFleet("l4", fleet_args()))
    script = expanded(plan.one("gcp:compute/instance:Instance").props["metadata"]["startup-script"])
    assert " vllm/vllm-openai@sha256:" in script
    assert "packages.cloud.google.com" in script


def test_gpu_fleet_rejects_a_mirror_outside_artifact_registry(plan_of):
    with pytest.raises(InputError, match=r"image_mirrors\['docker.io'\]"):
        GpuFleet("l4", fleet_args(image_mirrors={"docker.io": "mirror.example.com/hub"}))


def _tpu(**overrides):
    from inference_infra.components.gcp.tpu_vm import TpuVmArgs

    return TpuVmArgs(
        zone="us-central1-a",
        network="projects/test-project/global/networks/tpu",
        subnetwork="projects/test-project/regions/us-central1/subnetworks/tpu",
        accelerator_type="v5litepod-4",
        **overrides,
    )


def test_tpu_vm_with_mirrors_pulls_the_tpu_engine_from_artifact_registry(plan_of):
    from inference_infra.components.gcp.tpu_vm import TpuVm

    tpu = _tpu(
        model=ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8),
        weights=pinned_weights("models", ["gs://models/qwen"]),
        image_mirrors={"docker.io": DOCKER_HUB},
        internet_egress=False,
    )
    script = expanded(
        plan_of(TpuVm("qwen", tpu)).one("gcp:tpu/v2Vm:V2Vm").props["metadata"]["startup-script"]
    )
    assert f"{DOCKER_HUB}/vllm/vllm-tpu@sha256:" in script
    assert "docker.io" not in script


def test_tpu_vm_rejects_mirrors_on_a_queued_slice(plan_of):
    from inference_infra.components.gcp.tpu_vm import TpuVm

    queued = _tpu(
        queued=True,
        secure_boot=False,
        accept_default_service_account="burst pool that reads no bucket",
        image_mirrors={"docker.io": DOCKER_HUB},
    )
    with pytest.raises(InputError, match=r"image_mirrors .* cannot be used on a queued resource"):
        TpuVm("burst", queued)
