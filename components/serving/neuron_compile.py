"""The compile key of a Neuron engine: everything its compiled artifacts depend on, and nothing else.

vLLM's NxD loader builds NxDI's neuron config from the engine's flags (aws-neuron/upstreaming-to-vllm
dd417b3, vllm/model_executor/model_loader/neuronx_distributed.py `_get_default_neuron_config`, :594-617):
tp_degree from --tensor-parallel-size, batch_size from --max-num-seqs, seq_len and max_context_length from
--max-model-len, torch_dtype from --dtype, then --override-neuron-config on top; the compiled graphs also
depend on neuronx-cc, which the image carries (its tag names the Neuron SDK, e.g. sdk2.25.0). The key
holds the image by digest and its SDK, these flags by name, and every other flag the engine is given
(any of them may reach the neuron config); the per-engine words (--model's container path, the served
name, --host, --port) are left out, so every engine of a node, and every node of a pool, has one key.
The weights are not in the key: the weights manifest that indexes the artifacts names them
(components/models/compiled.py, `weights`).
"""

from __future__ import annotations

import re
from typing import Any

from inference_infra.components.serving.engines import EngineFamily, engine_image
from inference_infra.components.serving.flags import EngineConfig, engine_args

KEY_VERSION = 1
# Words of `engine_args` that name the engine rather than what it compiles (each takes one value).
_PER_ENGINE = frozenset({"--model", "--served-model-name", "--host", "--port"})
_SDK = re.compile(r"-sdk(\d+\.\d+(?:\.\d+)?)-")


def neuron_sdk(tag: str) -> str | None:
    """The Neuron SDK release an image tag names ('0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04' -> '2.25.0')."""
    found = _SDK.search(tag)
    return found.group(1) if found else None


def compile_args(config: EngineConfig) -> list[str]:
    """The engine's flags without the per-engine ones: what reaches NxDI's neuron config."""
    words = engine_args(config, 0, "/models")
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in _PER_ENGINE:
            skip = True
            continue
        kept.append(word)
    return kept


def neuron_compile_key(config: EngineConfig) -> dict[str, Any]:
    """The compile key of a Neuron engine configuration (JSON; its id: verify_weights.compile_key_id)."""
    if config.family is not EngineFamily.NEURON_VLLM:
        raise ValueError(f"engine family {config.family.value!r} does not compile Neuron artifacts")
    image = engine_image(config.family)
    return {
        "version": KEY_VERSION,
        "image": image.image.by_digest,
        "engine": f"vllm {image.engine_version}",
        "neuron_sdk": neuron_sdk(image.image.tag) or "unknown",
        "tensor_parallel_size": config.tensor_parallel,
        "max_model_len": config.max_model_len,
        "max_num_seqs": config.max_num_seqs,
        "args": compile_args(config),
    }
