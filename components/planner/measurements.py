"""Published maximum-throughput measurements the planner's roofline is calibrated against.

Each point is one published figure: a model on a number of accelerators at a
fixed input/output length (ISL/OSL), served by a named engine at a named
version, at maximum load (requests queued without delay), reported as total
generated tokens per second. Every point carries its source and date.

The first table is NVIDIA's TensorRT-LLM performance overview (v1.0, PyTorch
backend, ModelOpt FP8 checkpoints, `trtllm-bench throughput`, KV cache FP8 as
the checkpoints ship it; "Total Output Throughput"). Points were chosen to
span short and long prompts and outputs, one to eight GPUs, and 8B to 405B
parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

_TRTLLM_PERF = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/"
    "docs/source/performance/perf-overview.md"
)
_READ = date(2026, 11, 22)


@dataclass(frozen=True, kw_only=True)
class Measurement:
    model: str  # planner preset
    instance_type: str  # a catalog machine with the measured device (p5.48xlarge: H100 SXM)
    devices: int  # accelerators used (tensor parallel x pipeline parallel)
    weights: str  # weight format, a planner Quantization value
    kv_cache: str  # KV-cache format
    prompt_tokens: int  # ISL
    output_tokens: int  # OSL
    tokens_per_s: float  # total generated tokens per second over all the devices
    max_batch: int  # the engine's batch ceiling in the run (sequences in flight at most)
    engine: str
    engine_version: str
    source: str
    as_of: date


def _trt(model: str, instance: str, devices: int, isl: int, osl: int, tps: float) -> Measurement:
    return Measurement(
        model=model,
        instance_type=instance,
        devices=devices,
        weights="fp8",
        kv_cache="fp8",
        prompt_tokens=isl,
        output_tokens=osl,
        tokens_per_s=tps,
        max_batch=2048,  # trtllm-bench's default max batch size
        engine="TensorRT-LLM",
        engine_version="1.0",
        source=_TRTLLM_PERF,
        as_of=_READ,
    )


_H100 = "p5.48xlarge"  # 8 x H100 SXM 80GB
_H200 = "p5en.48xlarge"  # 8 x H200 141GB

MEASUREMENTS: tuple[Measurement, ...] = (
    # Llama 3.1 8B, FP8, TP1
    _trt("llama-3.1-8b", _H100, 1, 128, 2048, 22714),
    _trt("llama-3.1-8b", _H100, 1, 500, 2000, 17660),
    _trt("llama-3.1-8b", _H100, 1, 1000, 1000, 15220),
    _trt("llama-3.1-8b", _H100, 1, 2048, 2048, 9305),
    _trt("llama-3.1-8b", _H100, 1, 5000, 500, 3459),
    _trt("llama-3.1-8b", _H200, 1, 128, 2048, 26221),
    _trt("llama-3.1-8b", _H200, 1, 1000, 1000, 17744),
    _trt("llama-3.1-8b", _H200, 1, 2048, 2048, 12194),
    # Llama 3.3 70B, FP8: H100 TP2, H200 TP1
    _trt("llama-3.3-70b", _H100, 2, 128, 2048, 6651),
    _trt("llama-3.3-70b", _H100, 2, 1000, 1000, 4205),
    _trt("llama-3.3-70b", _H100, 2, 2048, 2048, 3082),
    _trt("llama-3.3-70b", _H200, 1, 128, 2048, 4336),
    _trt("llama-3.3-70b", _H200, 1, 1000, 1000, 2909),
    # Llama 3.1 405B, FP8, TP8
    _trt("llama-3.1-405b", _H100, 8, 128, 2048, 4340),
    _trt("llama-3.1-405b", _H100, 8, 1000, 1000, 2919),
    _trt("llama-3.1-405b", _H200, 8, 128, 2048, 5348),
    _trt("llama-3.1-405b", _H200, 8, 1000, 1000, 3330),
)
