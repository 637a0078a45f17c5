"""Boot images against what the pinned engines need of the host: the NVIDIA driver, the Neuron SDK.

A serving container brings its own user-space runtime (vLLM's wheels carry the CUDA runtime,
`libcudart.so.<major>`; AWS's Neuron container carries the Neuron runtime), but not the kernel
driver: that comes with the node's boot image. So the image a fleet boots must carry a driver at
least as new as the engine's runtime needs. Three dated tables, each row with its source:

- `CUDA_DRIVER_FLOOR`: the lowest NVIDIA driver branch for a CUDA major version (NVIDIA's minor
  version compatibility table: one driver branch serves every minor release of its CUDA major);
- `ENGINE_NEEDS`: per engine family and pinned engine version, the CUDA runtime (or Neuron SDK) its
  build links;
- `HOST_IMAGES`: the default boot image of each cloud's fleets and the driver (or SDK) it carries.

`host_problems` compares them; a test runs it over every family's pinned version and default image,
and fails when an engine pin has no `ENGINE_NEEDS` row or needs more than its default image carries.
`nvidia_driver_branch` reads the branch a Deep Learning VM family names (`...-nvidia-580`), so a
fleet can check an image it is given.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.serving.engines import IMAGES, EngineFamily

_READ = date(2026, 11, 26)

# NVIDIA, "CUDA Minor Version Compatibility", Table 1 (CUDA Toolkit 11.x, 12.x and 13.x minimum
# required driver versions): CUDA 13.x >= 580, CUDA 12.x >= 525, CUDA 11.x >= 450; read 2026-11-26 at
# https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (which defers to
# the CUDA Toolkit release notes for the full table). NVIDIA's data center driver matrix agrees: R580
# supports CUDA 13.x, R570 and R535 CUDA 12.x
# (https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html).
# A 570 driver runs a CUDA 13 build only through the forward-compatibility package, which data center
# GPUs support and the images here do not install: not relied on.
CUDA_DRIVER_FLOOR: dict[int, int] = {13: 580, 12: 525, 11: 450}
CUDA_DRIVER_SOURCE = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"


@dataclass(frozen=True, kw_only=True)
class EngineNeeds:
    """What one pinned engine build needs of the host, and where that was read."""

    family: EngineFamily
    engine_version: str
    cuda: str | None = None  # the CUDA runtime its build links, "13.0"
    neuron_sdk: str | None = None  # the Neuron SDK release its runtime comes from, "2.25.0"
    source: str
    as_of: date

    @property
    def min_nvidia_driver(self) -> int | None:
        """The lowest NVIDIA driver branch that runs this build (CUDA_DRIVER_FLOOR of its CUDA major)."""
        return None if self.cuda is None else CUDA_DRIVER_FLOOR[int(self.cuda.split(".")[0])]


ENGINE_NEEDS: dict[tuple[EngineFamily, str], EngineNeeds] = {
    (EngineFamily.NVIDIA_VLLM, "0.28.0"): EngineNeeds(
        family=EngineFamily.NVIDIA_VLLM,
        engine_version="0.28.0",
        cuda="13.0",
        # The vLLM image is built on the release's wheel and its pinned torch: libcudart.so.13.
        source="PyPI metadata of vllm-0.28.0-cp38-abi3-manylinux_2_28_x86_64.whl (Requires-Dist: "
        "torch==2.13.0, nvidia-cutlass-dsl[cu13], humming-kernels[cu13]; metadata sha256 a157e548...) and "
        "of torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl (Requires-Dist: cuda-toolkit[cudart,...]"
        "==13.0.3, nvidia-cudnn-cu13, nvidia-nccl-cu13; metadata sha256 63e791c9...), "
        "https://pypi.org/project/vllm/0.28.0/",
        as_of=_READ,
    ),
    (EngineFamily.NEURON_VLLM, "0.9.1"): EngineNeeds(
        family=EngineFamily.NEURON_VLLM,
        engine_version="0.9.1",
        neuron_sdk="2.25.0",
        source="the pinned image's tag, 0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04 (components/images.py)",
        as_of=_READ,
    ),
    # TPU VMs boot a TPU runtime image (catalog/tpu_runtimes.py), not a driver this table tracks; the
    # container brings libtpu.
    (EngineFamily.TPU_VLLM, "0.29.1rc1.dev468"): EngineNeeds(
        family=EngineFamily.TPU_VLLM,
        engine_version="0.29.1rc1.dev468",
        source="no host driver: the TPU runtime image is chosen from catalog/tpu_runtimes.py",
        as_of=_READ,
    ),
}


@dataclass(frozen=True, kw_only=True)
class HostImage:
    """A boot image (GCE image family, or the SSM parameter EC2 resolves at launch) and what it carries."""

    cloud: str  # aws, gcp
    accelerator: AcceleratorFamily
    name: str
    nvidia_driver: str | None = None  # "580" (a branch) or "595.91.07" (a release)
    host_cuda: str | None = None  # the image's own CUDA toolkit (containers bring their own)
    neuron_sdk: str | None = None
    floats: bool = False  # resolves to the newest release at each launch ("latest")
    source: str
    as_of: date

    @property
    def nvidia_branch(self) -> int | None:
        return None if self.nvidia_driver is None else int(self.nvidia_driver.split(".")[0])


_DLVM = "projects/deeplearning-platform-release/global/images/family/"
GCP_GPU_IMAGE = HostImage(
    cloud="gcp",
    accelerator=AcceleratorFamily.NVIDIA_GPU,
    name=f"{_DLVM}common-cu129-ubuntu-2204-nvidia-580",
    nvidia_driver="580",
    host_cuda="12.9",
    # The family name states its driver branch (nvidia-580) and host toolkit (cu129; the container brings
    # its own CUDA 13 runtime). No CUDA 13 family (cu130) was found in use; Google's image list page was
    # not read.
    source="the Deep Learning VM family name (driver branch 580, CUDA 12.9 toolkit) in project "
    "deeplearning-platform-release, as public deployments boot it (GitHub code search for "
    "'common-cu129-ubuntu-2204-nvidia-580': launch scripts, Terraform, runbooks)",
    as_of=_READ,
)
AWS_GPU_AMI = HostImage(
    cloud="aws",
    accelerator=AcceleratorFamily.NVIDIA_GPU,
    name="/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-amazon-linux-2023/latest/ami-id",
    nvidia_driver="595.91.07",
    host_cuda="13.2",
    floats=True,
    source="AWS DLAMI release notes, Deep Learning Base OSS Nvidia Driver GPU AMI (Amazon Linux 2023) "
    "20260901 (x86_64; nvidia_driver 595.91.07, default_cuda 13.2; also CUDA 12.8, 12.9, 13.0), "
    "https://docs.amazonaws.cn/dlami/latest/devguide/aws-deep-learning-ami-gpubaseoss-al2023-2026-09-04.md "
    "(the DLAMI guide's China mirror); the 20260519 release had 595.64. The parameter follows AWS's "
    "newest release",
    as_of=_READ,
)
AWS_NEURON_AMI = HostImage(
    cloud="aws",
    accelerator=AcceleratorFamily.AWS_NEURON,
    name="/aws/service/neuron/dlami/multi-framework/amazon-linux-2023/latest/image_id",
    neuron_sdk="2.33.0",
    floats=True,
    source="AWS Neuron docs, Neuron Runtime and Driver compatibility reference (applies to Neuron SDK "
    "2.33.0, driver 2.31; modified 2026-10-08), "
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/neuron-runtime/compatibility.html; the "
    "multi-framework DLAMI carries the current SDK's driver",
    as_of=_READ,
)
HOST_IMAGES: tuple[HostImage, ...] = (GCP_GPU_IMAGE, AWS_GPU_AMI, AWS_NEURON_AMI)

_BRANCH = re.compile(r"-nvidia-(\d{3})(?:$|[^0-9])")


def nvidia_driver_branch(image: str) -> int | None:
    """The driver branch a Deep Learning VM image (family) names: '...-nvidia-570' -> 570, else None."""
    found = _BRANCH.search(image)
    return int(found.group(1)) if found else None


def engine_needs(family: EngineFamily, engine_version: str | None = None) -> EngineNeeds | None:
    """The needs row of a family's engine (its pinned version by default), or None when not recorded."""
    version = engine_version or IMAGES[family].engine_version
    return ENGINE_NEEDS.get((family, version))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def host_problems(image: HostImage, needs: EngineNeeds) -> list[str]:
    """Why an engine build cannot run on a boot image (empty: it can)."""
    problems: list[str] = []
    engine = f"{needs.family.value} {needs.engine_version}"
    floor = needs.min_nvidia_driver
    if floor is not None and (image.nvidia_branch is None or image.nvidia_branch < floor):
        problems.append(
            f"{engine} links the CUDA {needs.cuda} runtime, which needs NVIDIA driver {floor} or newer; "
            f"{image.name} carries {image.nvidia_driver or 'no NVIDIA driver'}"
        )
    if needs.neuron_sdk is not None and (
        image.neuron_sdk is None or _release(image.neuron_sdk) < _release(needs.neuron_sdk)
    ):
        problems.append(
            f"{engine} runs the Neuron SDK {needs.neuron_sdk} runtime, whose driver must be at least as "
            f"new; {image.name} carries SDK {image.neuron_sdk or 'none'}"
        )
    return problems


def image_driver_problem(image: str, family: EngineFamily) -> str | None:
    """For an image given by name: why the family's pinned engine cannot run on the driver it names.

    Only Deep Learning VM families name their driver (`-nvidia-<branch>`); an image that names none
    is not judged (None)."""
    needs = engine_needs(family)
    branch = nvidia_driver_branch(image)
    if needs is None or needs.min_nvidia_driver is None or branch is None:
        return None
    if branch >= needs.min_nvidia_driver:
        return None
    return (
        f"names NVIDIA driver {branch}, but {family.value} {needs.engine_version} links the CUDA "
        f"{needs.cuda} runtime, which needs driver {needs.min_nvidia_driver} or newer "
        f"({CUDA_DRIVER_SOURCE}); "
        f"use {GCP_GPU_IMAGE.name.rsplit('/', 1)[-1]} or another image with driver "
        f"{needs.min_nvidia_driver}+"
    )
