"""A GCP GPU fleet boots an image whose NVIDIA driver runs its pinned engine's CUDA runtime."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.gpu_fleet import DEFAULT_IMAGE, GcsWeights, GpuFleet, GpuFleetArgs
from inference_infra.components.resources import GCP_INSTANCE

SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
NETWORK = "projects/test-project/global/networks/gpu"
LLAMA = "gs://models/llama-3.1-8b-instruct"
OLD_DLVM = "projects/deeplearning-platform-release/global/images/family/common-cu128-ubuntu-2204-nvidia-570"


def fleet(**overrides) -> GpuFleetArgs:
    base = {
        "machine_type": "g2-standard-8",
        "zone": "us-central1-a",
        "subnetwork": SUBNET,
        "network": NETWORK,
        "spot": 1,
        "model": ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8),
        "weights": GcsWeights("models", [LLAMA], {LLAMA: "a" * 64}),
    }
    return GpuFleetArgs(**{**base, **overrides})


def test_gpu_fleet_boots_a_driver_580_deep_learning_vm_by_default(plan_of):
    capture = plan_of(GpuFleet("l4", fleet()))
    image = capture.one(GCP_INSTANCE).props["bootDisk"]["initializeParams"]["image"]
    assert image == DEFAULT_IMAGE
    assert image.endswith("/common-cu129-ubuntu-2204-nvidia-580")


def test_gpu_fleet_rejects_an_image_whose_driver_is_older_than_its_engines_cuda(plan_of):
    with pytest.raises(
        InputError, match=r"image '.*nvidia-570' names NVIDIA driver 570, but nvidia-vllm 0\.28\.0"
    ):
        GpuFleet("l4", fleet(image=OLD_DLVM))
    assert [r for r in plan_of().resources if r.type != "pulumi:pulumi:Stack"] == []


def test_gpu_fleet_without_a_model_may_boot_any_image(plan_of):
    capture = plan_of(GpuFleet("l4", fleet(image=OLD_DLVM, model=None, weights=None)))
    assert capture.one(GCP_INSTANCE).props["bootDisk"]["initializeParams"]["image"] == OLD_DLVM
