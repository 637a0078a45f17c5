"""Boot images carry what the pinned engines need; a test fails when an engine pin moves past its image."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.aws.gpu_fleet import GPU_AMI_SSM_PARAMETER
from inference_infra.components.aws.inferentia_fleet import NEURON_AMI_SSM_PARAMETER
from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.gcp.gpu_fleet import DEFAULT_IMAGE
from inference_infra.components.serving import IMAGES, EngineFamily, engine_family
from inference_infra.components.serving.host_images import (
    CUDA_DRIVER_FLOOR,
    ENGINE_NEEDS,
    HOST_IMAGES,
    engine_needs,
    host_problems,
    image_driver_problem,
    nvidia_driver_branch,
)


def test_engine_needs_cover_every_families_pinned_engine_version():
    for family, pinned in IMAGES.items():
        assert engine_needs(family) is not None, (
            f"{family.value} is pinned to {pinned.engine_version}, which has no ENGINE_NEEDS row: read the "
            "CUDA runtime (or Neuron SDK) its build links into components/serving/host_images.py"
        )


@pytest.mark.parametrize("image", HOST_IMAGES, ids=lambda i: f"{i.cloud}-{i.accelerator.value}")
def test_host_image_carries_what_its_familys_pinned_engine_needs(image):
    needs = engine_needs(engine_family(image.accelerator))
    assert needs is not None
    assert host_problems(image, needs) == []


def test_fleets_boot_the_images_of_the_table():
    names = {(i.cloud, i.accelerator): i.name for i in HOST_IMAGES}
    assert names["gcp", AcceleratorFamily.NVIDIA_GPU] == DEFAULT_IMAGE
    assert names["aws", AcceleratorFamily.NVIDIA_GPU] == GPU_AMI_SSM_PARAMETER
    assert names["aws", AcceleratorFamily.AWS_NEURON] == NEURON_AMI_SSM_PARAMETER


def test_host_problems_rejects_a_cuda_13_engine_on_a_570_driver_image():
    gcp = next(i for i in HOST_IMAGES if i.cloud == "gcp")
    old = replace(gcp, name="common-cu128-ubuntu-2204-nvidia-570", nvidia_driver="570")
    (problem,) = host_problems(old, engine_needs(EngineFamily.NVIDIA_VLLM))
    assert "links the CUDA 13.0 runtime, which needs NVIDIA driver 580 or newer" in problem
    assert "common-cu128-ubuntu-2204-nvidia-570 carries 570" in problem


def test_host_problems_rejects_an_engine_pin_moved_to_a_newer_cuda_major():
    needs = replace(engine_needs(EngineFamily.NVIDIA_VLLM), engine_version="9.0.0", cuda="14.0")
    gcp = next(i for i in HOST_IMAGES if i.cloud == "gcp")
    with pytest.raises(KeyError):  # a CUDA major without a driver floor must be read first
        host_problems(gcp, needs)


def test_host_problems_rejects_a_neuron_container_newer_than_the_amis_sdk():
    neuron = next(i for i in HOST_IMAGES if i.accelerator is AcceleratorFamily.AWS_NEURON)
    needs = replace(engine_needs(EngineFamily.NEURON_VLLM), neuron_sdk="2.40.0")
    assert "runs the Neuron SDK 2.40.0 runtime" in host_problems(neuron, needs)[0]


def test_cuda_driver_floor_rises_with_the_cuda_major():
    majors = sorted(CUDA_DRIVER_FLOOR)
    assert [CUDA_DRIVER_FLOOR[m] for m in majors] == sorted(CUDA_DRIVER_FLOOR.values())
    assert CUDA_DRIVER_FLOOR[13] == 580


def test_engine_needs_rows_carry_a_source_and_date():
    for needs in ENGINE_NEEDS.values():
        assert needs.source
        assert needs.as_of


def test_nvidia_driver_branch_reads_a_deep_learning_vm_family():
    assert nvidia_driver_branch(DEFAULT_IMAGE) == 580
    assert nvidia_driver_branch("projects/p/global/images/family/common-cu128-ubuntu-2204-nvidia-570") == 570
    assert nvidia_driver_branch("projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts") is None


def test_image_driver_problem_names_the_image_driver_and_engine():
    why = image_driver_problem("common-cu128-ubuntu-2204-nvidia-570", EngineFamily.NVIDIA_VLLM)
    assert why is not None
    assert why.startswith("names NVIDIA driver 570, but nvidia-vllm 0.28.0 links the CUDA 13.0 runtime")
    assert image_driver_problem("my-own-image", EngineFamily.NVIDIA_VLLM) is None
