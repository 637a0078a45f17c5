"""TPU software: which runtime versions and data disks each TPU generation takes.

A TPU VM boots the runtime (software) version it is given; a runtime built
for another generation does not boot usably (a v5e slice needs
`v2-alpha-tpuv5-lite`, not the v4 image `tpu-ubuntu2204-base`). This table
lets a stack reject the mismatch at plan time instead of after a slice has
been allocated and billed.

Runtime versions come in two kinds:

- base images for PyTorch and JAX, named exactly (`RUNTIMES`);
- TensorFlow images, named `tpu-vm-tf-X.Y.Z[-pod][-pjrt|-se|-v4]`; which
  TensorFlow versions and suffixes a generation accepts is a rule
  (`TensorFlowRule`), not a list, because Google adds patch releases.
  `-pod` marks a multi-host slice and must be omitted on a single host.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from inference_infra.components.errors import did_you_mean

_RUNTIMES_PAGE = "https://cloud.google.com/tpu/docs/runtimes"
_SUPPORTED_VERSIONS = "https://cloud.google.com/tpu/docs/supported-tpu-versions"
_DISKS_PAGE = "https://cloud.google.com/tpu/docs/setup-persistent-disk"
_READ = date(2026, 11, 21)

Version = tuple[int, int, int]


@dataclass(frozen=True, kw_only=True)
class TensorFlowRule:
    """TensorFlow runtimes `tpu-vm-tf-X.Y.Z[-pod]<suffix>` for X.Y.Z in [first, last]."""

    first: Version
    last: Version | None = None  # None: every later release
    suffixes: tuple[str, ...] = ("",)  # accepted endings after the optional -pod, e.g. "-pjrt"

    def accepts(self, version: Version, suffix: str) -> bool:
        in_range = self.first <= version and (self.last is None or version <= self.last)
        return in_range and suffix in self.suffixes

    def describe(self) -> str:
        versions = (
            f"{_dotted(self.first)}..{_dotted(self.last)}" if self.last else f">= {_dotted(self.first)}"
        )
        endings = [s for s in self.suffixes if s]
        ending = "" if not endings else endings[0] if len(endings) == 1 else "{" + "|".join(endings) + "}"
        return f"tpu-vm-tf-X.Y.Z[-pod]{ending} (TensorFlow {versions})"


@dataclass(frozen=True, kw_only=True)
class TpuSoftware:
    """Runtime versions and data disks of one TPU generation."""

    generation: str  # "v5e"
    accelerator: str  # catalog Accelerator.key, e.g. "tpu-v5e"
    config_type: str  # AcceleratorConfig.type in the TPU API, e.g. "V5LITE_POD"
    runtimes: tuple[str, ...]  # PyTorch/JAX base images; the first is the default
    tensorflow: tuple[TensorFlowRule, ...]
    data_disk_types: tuple[str, ...]  # Compute Engine disk types a TPU VM of this generation attaches
    max_disks: int  # per VM, boot disk included
    source: str
    as_of: date

    @property
    def default_runtime(self) -> str:
        return self.runtimes[0]

    def describe_runtimes(self) -> str:
        named = ", ".join(repr(r) for r in self.runtimes)
        rules = "; ".join(rule.describe() for rule in self.tensorflow)
        return f"{named}, or TensorFlow {rules}"


_NEW_TF = (TensorFlowRule(first=(2, 15, 0), suffixes=("-pjrt",)),)

TPU_SOFTWARE: tuple[TpuSoftware, ...] = (
    TpuSoftware(
        generation="v6e",
        accelerator="tpu-v6e",
        config_type="V6E",
        runtimes=("v2-alpha-tpuv6e",),
        tensorflow=_NEW_TF,
        data_disk_types=("hyperdisk-balanced", "hyperdisk-ml"),
        max_disks=32,
        source=f"{_RUNTIMES_PAGE} ; {_SUPPORTED_VERSIONS} ; {_DISKS_PAGE}",
        as_of=_READ,
    ),
    TpuSoftware(
        generation="v5p",
        accelerator="tpu-v5p",
        config_type="V5P",
        runtimes=("v2-alpha-tpuv5",),
        tensorflow=_NEW_TF,
        data_disk_types=("pd-balanced",),
        max_disks=128,
        source=f"{_RUNTIMES_PAGE} ; {_SUPPORTED_VERSIONS} ; {_DISKS_PAGE}",
        as_of=_READ,
    ),
    TpuSoftware(
        generation="v5e",
        accelerator="tpu-v5e",
        config_type="V5LITE_POD",
        runtimes=("v2-alpha-tpuv5-lite",),
        tensorflow=_NEW_TF,
        data_disk_types=("pd-balanced",),
        max_disks=128,
        source=f"{_RUNTIMES_PAGE} ; {_SUPPORTED_VERSIONS} ; {_DISKS_PAGE}",
        as_of=_READ,
    ),
    TpuSoftware(
        generation="v4",
        accelerator="tpu-v4",
        config_type="V4",
        # tpu-vm-v4-base is the older v4 image, still listed for JAX on v4.
        runtimes=("tpu-ubuntu2204-base", "tpu-vm-v4-base"),
        tensorflow=(
            TensorFlowRule(first=(2, 9, 1), last=(2, 10, 0), suffixes=("-v4",)),
            TensorFlowRule(first=(2, 10, 1), last=(2, 14, 1)),
            TensorFlowRule(first=(2, 15, 0), suffixes=("-pjrt", "-se")),
        ),
        data_disk_types=("pd-balanced",),
        max_disks=128,
        source=f"{_RUNTIMES_PAGE} ; {_SUPPORTED_VERSIONS} ; {_DISKS_PAGE}",
        as_of=_READ,
    ),
)

_TF_RE = re.compile(r"^tpu-vm-tf-(\d+)\.(\d+)\.(\d+)(-pod)?(-pjrt|-se|-v4)?$")


def _dotted(version: Version) -> str:
    return ".".join(map(str, version))


def tpu_software(accelerator_key: str) -> TpuSoftware | None:
    """The software row of a TPU accelerator (catalog key such as 'tpu-v5e'), or None."""
    return next((s for s in TPU_SOFTWARE if s.accelerator == accelerator_key), None)


def tpu_software_by_generation(generation: str) -> TpuSoftware | None:
    return next((s for s in TPU_SOFTWARE if s.generation == generation), None)


def generations_of_runtime(runtime_version: str) -> list[str]:
    """The generations a runtime version is built for ('tpu-ubuntu2204-base' -> ['v4'])."""
    found = []
    for software in TPU_SOFTWARE:
        if runtime_version in software.runtimes or _tf_accepted(software, runtime_version):
            found.append(software.generation)
    return found


def runtime_problem(software: TpuSoftware, runtime_version: str, *, multi_host: bool) -> str | None:
    """Why runtime_version does not fit this generation (and slice), or None when it does."""
    if runtime_version in software.runtimes:
        return None
    match = _TF_RE.fullmatch(runtime_version)
    if match is not None and _tf_accepted(software, runtime_version):
        if match.group(4) and not multi_host:
            return "is a multi-host (-pod) runtime; this slice has one host, drop '-pod'"
        if not match.group(4) and multi_host:
            return "is a single-host runtime; this slice has several hosts, use the '-pod' variant"
        return None
    others = generations_of_runtime(runtime_version)
    built_for = f" (it is the runtime for TPU {' and '.join(others)})" if others else ""
    hint = "" if others else did_you_mean(runtime_version, software.runtimes)
    return (
        f"is not a TPU {software.generation} runtime{built_for}{hint}; "
        f"allowed: {software.describe_runtimes()}"
    )


def _tf_accepted(software: TpuSoftware, runtime_version: str) -> bool:
    match = _TF_RE.fullmatch(runtime_version)
    if match is None:
        return False
    version = (int(match.group(1)), int(match.group(2)), int(match.group(3)))
    suffix = match.group(5) or ""
    return any(rule.accepts(version, suffix) for rule in software.tensorflow)
