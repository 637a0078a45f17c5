"""GCP fleets without internet egress refuse themselves unless their boot needs nothing from the internet."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.gpu_fleet import GpuFleet, GpuFleetArgs, validate_gpu_fleet
from inference_infra.components.gcp.startup import StartupConfig, offline_problems
from inference_infra.components.gcp.tpu_vm import TpuVm, TpuVmArgs, validate_tpu_vm
from inference_infra.components.resources import GCP_INSTANCE, GCP_TPU_VM
from tests.components.gcp.helpers import expanded, pinned_weights

SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
NETWORK = "projects/test-project/global/networks/gpu"
HUB = "us-central1-docker.pkg.dev/test-project/docker-hub"
MIRRORS = {
    "docker.io": HUB,
    "nvcr.io": "us-central1-docker.pkg.dev/test-project/nvcr",
    "quay.io": "us-central1-docker.pkg.dev/test-project/quay",
}
LLAMA_70B = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64)
QWEN_7B = ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8)


def closed_fleet(**overrides) -> GpuFleetArgs:
    """An a3 fleet (16 local SSDs) serving from the Filestore cache, on a network without internet."""
    base = {
        "machine_type": "a3-highgpu-8g",
        "zone": "us-central1-a",
        "subnetwork": SUBNET,
        "spot": 1,
        "model": LLAMA_70B,
        "weights": pinned_weights("models", ["gs://models/llama-3.1-70b-instruct"]),
        "model_cache_nfs": "10.1.2.3:/models",
        "internet_egress": False,
    }
    return GpuFleetArgs(**{**base, **overrides})


def closed_tpu(**overrides) -> TpuVmArgs:
    base = {
        "zone": "us-central1-a",
        "network": NETWORK,
        "subnetwork": SUBNET,
        "accelerator_type": "v5litepod-4",
        "model": QWEN_7B,
        "weights": pinned_weights("models", ["gs://models/qwen"]),
        "internet_egress": False,
    }
    return TpuVmArgs(**{**base, **overrides})


def problems_of(args: GpuFleetArgs) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in validate_gpu_fleet("h100", args, project="test-project"):
        found.setdefault(p.input, []).append(p.allowed)
    return found


def test_gpu_fleet_without_internet_names_everything_its_boot_would_download():
    found = problems_of(closed_fleet())
    assert sorted(found) == ["image_mirrors", "ops_agent", "preinstalled_packages"]
    (ops,) = found["ops_agent"]
    assert "packages.cloud.google.com" in ops
    assert "list google-cloud-ops-agent among the preinstalled packages" in ops
    registries = " ".join(found["image_mirrors"])
    for host in ("docker.io", "nvcr.io", "quay.io"):
        assert f"has no mirror of {host}" in registries
    assert "its engine image vllm/vllm-openai@sha256:" in registries
    assert "its GPU exporter nvcr.io/nvidia/k8s/dcgm-exporter" in registries
    packages = " ".join(found["preinstalled_packages"])
    assert "must list nfs-common, which mounts the Filestore cache" in packages
    assert "must list mdadm, which stripes its 16 local SSDs" in packages


def test_gpu_fleet_without_internet_boots_when_everything_is_covered(plan_of):
    args = closed_fleet(
        image_mirrors=MIRRORS, preinstalled_packages=["google-cloud-ops-agent", "nfs-common", "mdadm"]
    )
    GpuFleet("h100", args)
    script = expanded(plan_of().one(GCP_INSTANCE).props["metadata"]["startup-script"])
    assert "PACKAGE_DOWNLOADS=false" in script
    for public in ("docker.io/", " vllm/vllm-openai", "packages.cloud.google.com"):
        assert public not in script
    assert f"{HUB}/vllm/vllm-openai@sha256:" in script


def test_gpu_fleet_without_internet_may_drop_the_ops_agent_instead():
    found = problems_of(
        closed_fleet(image_mirrors=MIRRORS, preinstalled_packages=["nfs-common", "mdadm"], ops_agent=False)
    )
    assert found == {}


def test_gpu_fleet_rejects_itself_before_any_resource_without_internet(plan_of):
    with pytest.raises(InputError, match=r"ops_agent True needs the Ops Agent"):
        GpuFleet("h100", closed_fleet())
    assert plan_of().of_type(GCP_INSTANCE) == []


def test_gpu_fleet_with_internet_needs_no_mirrors_or_packages():
    assert problems_of(closed_fleet(internet_egress=True)) == {}


def test_gpu_fleet_rejects_package_downloads_without_internet():
    found = problems_of(closed_fleet(image_mirrors=MIRRORS, ops_agent=False, package_downloads=True))
    assert found["package_downloads"] == [
        "cannot download packages without internet egress (internet_egress False); leave it unset"
    ]


def test_gpu_fleet_rejects_an_unknown_preinstalled_package():
    found = problems_of(closed_fleet(internet_egress=True, preinstalled_packages=["nfs-client"]))
    assert found == {
        "preinstalled_packages[0]": [
            "is not a package the boot installs; one of google-cloud-ops-agent, nfs-common, mdadm"
        ]
    }


def test_tpu_vm_without_internet_needs_its_engine_mirrored_and_nfs_common_preinstalled():
    args = closed_tpu(model_cache_nfs="10.1.2.3:/models")
    found = {p.input: p.allowed for p in validate_tpu_vm("qwen", args, project="test-project")}
    assert sorted(found) == ["image_mirrors", "preinstalled_packages"]  # no Ops Agent, no local SSD on TPU
    assert found["image_mirrors"].startswith(
        "has no mirror of docker.io, the registry of its engine image vllm/vllm-tpu"
    )


def test_tpu_vm_without_internet_that_only_copies_weights_boots(plan_of):
    TpuVm("plain", closed_tpu(model=None))
    assert plan_of().one(GCP_TPU_VM).props["networkConfig"]["enableExternalIps"] is False


def test_tpu_vm_queued_without_internet_needs_nothing():
    accept = "burst pool that reads no bucket"
    args = closed_tpu(
        model=None, weights=None, queued=True, secure_boot=False, accept_default_service_account=accept
    )
    assert validate_tpu_vm("burst", args, project="test-project") == []


def test_offline_problems_of_a_boot_that_downloads_nothing_are_none():
    assert offline_problems(StartupConfig(ops_agent=False, model_uris=("gs://m/a",)), ()) == []
