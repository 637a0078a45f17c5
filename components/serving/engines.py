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
from inference_infra.components.errors import Problem
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
# Ports every node of every fleet already listens on: sshd, node-exporter and dcgm-exporter
# (components/monitoring/host_exporters.py); no engine or metrics-only proxy may take one.
RESERVED_PORTS = (22, 9100, 9400)
LOWEST_ENGINE_PORT = 1024  # below: privileged ports, which the engine's unprivileged user cannot bind


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


def port_problems(first_port: int, engines: int, key: str = "serving_port") -> list[Problem]:
    """The port rules of every fleet on every cloud, in one place.

    A node's engines listen on first_port .. first_port + engines - 1 and their metrics-only proxies on
    the same ports + METRICS_PORT_OFFSET: both ranges lie in 1024..65535 and take none of RESERVED_PORTS.
    """
    count = max(engines, 1)
    last = first_port + count - 1
    low, high = first_port + METRICS_PORT_OFFSET, last + METRICS_PORT_OFFSET
    in_range = first_port >= LOWEST_ENGINE_PORT and high <= 65535
    if in_range and not any(first_port <= p <= last or low <= p <= high for p in RESERVED_PORTS):
        return []
    reserved = ", ".join(map(str, RESERVED_PORTS[:-1])) + f" and {RESERVED_PORTS[-1]}"
    rule = (
        f"both must lie in {LOWEST_ENGINE_PORT}..65535 and leave {reserved} free (sshd, node-exporter and "
        "dcgm-exporter listen on every node)"
    )
    if count == 1:
        allowed = f"is an engine port, and port + {METRICS_PORT_OFFSET} ({low}) its metrics-only port: {rule}"
    else:
        allowed = (
            f"puts the node's {count} engines on ports {first_port}..{last} and their metrics-only ports "
            f"on {low}..{high} (port + {METRICS_PORT_OFFSET}): {rule}"
        )
    return [Problem(key, first_port, allowed)]


def further_port_problems(first_port: int, engines: int, key: str = "serving_port") -> list[Problem]:
    """port_problems of a node's further engines only: a fleet checks its serving_port itself (one engine)."""
    return [] if port_problems(first_port, 1, key) else port_problems(first_port, engines, key)
