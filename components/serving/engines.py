"""Which engine serves a model on which accelerator family, from which pinned image.

One row per family: vLLM's OpenAI-compatible server on NVIDIA GPUs, vLLM with
the Neuron backend (AWS's Deep Learning Container) on Inferentia2/Trainium,
vLLM's TPU build on TPU VMs. Images are pinned by manifest digest; each pin
(components/images.py) names the public source the digest was read from and when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.images import VLLM_NEURON, VLLM_OPENAI, VLLM_TPU, PinnedImage

# The prefetch writes VERIFIED_MARKER into the weights' folder once every file matches its SHA-256
# manifest (components/models/manifest.py); an engine starts only when it is there.
from inference_infra.components.models.manifest import VERIFIED_MARKER as VERIFIED_MARKER

PREFETCH_UNIT = "inference-model-prefetch.service"

# vLLM's default port is the first engine's; further tensor-parallel groups on the node take the next ones.
FIRST_ENGINE_PORT = 8000
HEALTH_PATH = "/health"  # vLLM's OpenAI server: 200 once the engine is up
METRICS_PATH = "/metrics"  # Prometheus metrics on the engine's own port
# vLLM serves /metrics on its API port, unauthenticated: its API-key middleware checks /v1 paths only
# (aws-neuron/upstreaming-to-vllm dd417b3, vllm/entrypoints/openai/api_server.py:1063-1072; mount_metrics
# at :330). So the API port is the load balancer's alone, and Prometheus scrapes a metrics-only proxy on
# the node (units.py: GET /metrics and nothing else) at the engine's port + METRICS_PORT_OFFSET.
METRICS_PORT_OFFSET = 1000


class EngineFamily(StrEnum):
    NVIDIA_VLLM = "nvidia-vllm"
    NEURON_VLLM = "neuron-vllm"
    TPU_VLLM = "tpu-vllm"


@dataclass(frozen=True, kw_only=True)
class EngineImage:
    """The image an engine family runs: its pin (components/images.py) and the engine version in it."""

    family: EngineFamily
    image: PinnedImage
    engine_version: str

    @property
    def repository(self) -> str:
        return self.image.name

    @property
    def digest(self) -> str:
        return self.image.digest

    @property
    def tag(self) -> str:
        """The tag the digest was published under (for people; the digest is what runs)."""
        return self.image.tag

    @property
    def source(self) -> str:
        return self.image.source

    @property
    def as_of(self) -> date:
        return self.image.as_of

    @property
    def reference(self) -> str:
        return self.image.by_digest


IMAGES: dict[EngineFamily, EngineImage] = {
    EngineFamily.NVIDIA_VLLM: EngineImage(
        family=EngineFamily.NVIDIA_VLLM, image=VLLM_OPENAI, engine_version="0.28.0"
    ),
    EngineFamily.NEURON_VLLM: EngineImage(
        family=EngineFamily.NEURON_VLLM, image=VLLM_NEURON, engine_version="0.9.1"
    ),
    EngineFamily.TPU_VLLM: EngineImage(
        family=EngineFamily.TPU_VLLM, image=VLLM_TPU, engine_version="0.29.1rc1.dev468"
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
