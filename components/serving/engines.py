"""Which engine serves a model on which accelerator family, from which pinned image.

One row per family: vLLM's OpenAI-compatible server on NVIDIA GPUs, vLLM with
the Neuron backend (AWS's Deep Learning Container) on Inferentia2/Trainium,
vLLM's TPU build on TPU VMs. Images are pinned by manifest digest; each row
names the public source the digest was read from and when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from inference_infra.components.catalog import AcceleratorFamily

# The prefetch writes VERIFIED_MARKER into the weights' folder once every file matches its SHA-256
# manifest (components/models/manifest.py); an engine starts only when it is there.
from inference_infra.components.models.manifest import VERIFIED_MARKER as VERIFIED_MARKER

PREFETCH_UNIT = "inference-model-prefetch.service"

# vLLM's default port is the first engine's; further tensor-parallel groups on the node take the next ones.
FIRST_ENGINE_PORT = 8000
HEALTH_PATH = "/health"  # vLLM's OpenAI server: 200 once the engine is up
METRICS_PATH = "/metrics"  # Prometheus metrics on the engine's own port


class EngineFamily(StrEnum):
    NVIDIA_VLLM = "nvidia-vllm"
    NEURON_VLLM = "neuron-vllm"
    TPU_VLLM = "tpu-vllm"


@dataclass(frozen=True, kw_only=True)
class EngineImage:
    family: EngineFamily
    repository: str
    digest: str  # sha256:<64 hex>
    tag: str  # the tag the digest was published under (for people; the digest is what runs)
    engine_version: str
    source: str
    as_of: date

    @property
    def reference(self) -> str:
        return f"{self.repository}@{self.digest}"


IMAGES: dict[EngineFamily, EngineImage] = {
    EngineFamily.NVIDIA_VLLM: EngineImage(
        family=EngineFamily.NVIDIA_VLLM,
        repository="vllm/vllm-openai",
        digest="sha256:61fc8a896b0a4fbbbdc063bc4b0dbc25ce98e02b5050c24aeb7830ac02039b14",
        tag="v0.28.0",
        engine_version="0.28.0",
        source="public inventory of AI runtime dependencies listing 'vLLM v0.28.0' with this digest "
        "(GitHub code search: 'vllm-openai@sha256:61fc8a'); the same digest is recorded as vLLM 0.28.0 "
        "in several public serving repositories",
        as_of=date(2026, 8, 26),
    ),
    EngineFamily.NEURON_VLLM: EngineImage(
        family=EngineFamily.NEURON_VLLM,
        repository="public.ecr.aws/neuron/pytorch-inference-vllm-neuronx",
        digest="sha256:01f0f7b1e2cf256019a80c16712e79a5f254b04a3a77dbf8ac196de4ee380928",
        tag="0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04",
        engine_version="0.9.1",
        source="AWS Deep Learning Container for vLLM on Neuron; digest from a public `kubectl describe pod` "
        "record of that tag (GitHub code search: 'pytorch-inference-vllm-neuronx@sha256:01f0f7b1')",
        as_of=date(2026, 9, 14),
    ),
    EngineFamily.TPU_VLLM: EngineImage(
        family=EngineFamily.TPU_VLLM,
        repository="vllm/vllm-tpu",
        digest="sha256:19a1a0526476f902eb83e1057f3d8938f35b457dd7716a30e9ab4f7bee90d507",
        tag="nightly (vLLM 0.29.1rc1.dev468+g0b7f11a1e)",
        engine_version="0.29.1rc1.dev468",
        source="public TPU serving pre-registration pinning this digest as vLLM 0.29.1rc1.dev468+g0b7f11a1e "
        "(GitHub code search: 'vllm/vllm-tpu@sha256:19a1a052')",
        as_of=date(2026, 9, 25),
    ),
}

_BY_ACCELERATOR = {
    AcceleratorFamily.NVIDIA_GPU: EngineFamily.NVIDIA_VLLM,
    AcceleratorFamily.AWS_NEURON: EngineFamily.NEURON_VLLM,
    AcceleratorFamily.GOOGLE_TPU: EngineFamily.TPU_VLLM,
}


def engine_family(accelerator: AcceleratorFamily) -> EngineFamily:
    """The default engine of an accelerator family."""
    return _BY_ACCELERATOR[accelerator]


def engine_image(family: EngineFamily) -> EngineImage:
    return IMAGES[family]


def engine_ports(engines: int, first_port: int = FIRST_ENGINE_PORT) -> list[int]:
    """One port per engine on a node: first_port, first_port + 1, ..."""
    return [first_port + i for i in range(engines)]
