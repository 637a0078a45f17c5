"""Number formats for weights and the KV cache, and which devices can run them.

Weights and the KV cache are quantized separately: `Precision(weights=INT4,
kv_cache=FP8)` is a common serving setup (AWQ weights, FP8 cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from inference_infra.components.catalog import Accelerator, AcceleratorFamily


class Quantization(StrEnum):
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"

    @property
    def bytes_per_element(self) -> float:
        return _BYTES[self]

    @property
    def is_float16(self) -> bool:
        return self in (Quantization.FP16, Quantization.BF16)


_BYTES = {
    Quantization.FP32: 4.0,
    Quantization.FP16: 2.0,
    Quantization.BF16: 2.0,
    Quantization.FP8: 1.0,
    Quantization.INT8: 1.0,
    # Group-wise scales (AWQ/GPTQ, 128 weights per FP16 scale) add ~3%; the
    # memory ceiling's headroom covers them.
    Quantization.INT4: 0.5,
}


@dataclass(frozen=True, kw_only=True)
class Precision:
    """How the weights and the KV cache are stored.

    kv_cache=None follows the serving engines' "auto": the model's float type
    (FP32 stays FP32), and BF16 when the weights are quantized to 8 or 4 bits.
    """

    weights: Quantization = Quantization.BF16
    kv_cache: Quantization | None = None

    @property
    def kv(self) -> Quantization:
        if self.kv_cache is not None:
            return self.kv_cache
        if self.weights is Quantization.FP32 or self.weights.is_float16:
            return self.weights
        return Quantization.BF16

    def describe(self) -> str:
        return f"{self.weights.value} weights, {self.kv.value} KV cache"


def compute_peak_tflops(device: Accelerator, weights: Quantization) -> tuple[float, str]:
    """The dense peak the matrix multiplies run at, and the format it is quoted for.

    FP8 and INT8 weights use the device's FP8/INT8 peak only where the device
    has one; otherwise they are dequantized and multiplied at FP16/BF16 (as
    weight-only kernels do). Neuron quantization is weight-only (weights are
    dequantized to FP16 before the matmul, _NEURON_QUANT), and INT4 is
    weight-only everywhere. FP32 runs at half the FP16 peak (TF32 on NVIDIA
    tensor cores): the catalog lists no FP32 peak.
    """
    if device.family is AcceleratorFamily.AWS_NEURON and weights is not Quantization.FP32:
        return device.fp16_tflops, "fp16/bf16 (Neuron quantization is weight-only)"
    if weights is Quantization.FP8 and device.fp8_tflops:
        return device.fp8_tflops, "fp8"
    if weights is Quantization.INT8 and device.int8_tops:
        return device.int8_tops, "int8"
    if weights is Quantization.FP32:
        return device.fp16_tflops / 2, "fp32 (half the fp16 peak)"
    return device.fp16_tflops, "fp16/bf16"


# Formats a device family's serving software cannot store weights in.
_NEURON_QUANT = "https://docs.vllm.ai/en/v0.9.0/api/vllm/model_executor/layers/quantization/neuron_quant.html"
_VLLM_HW = "https://docs.vllm.ai/en/latest/features/quantization/supported_hardware.html"


def unsupported_weights(device: Accelerator, weights: Quantization) -> str | None:
    """Why device cannot serve weights in this format, or None when it can."""
    if device.family is AcceleratorFamily.AWS_NEURON and weights is Quantization.INT4:
        return f"Neuron quantizes weights to int8 or fp8 only, not int4 ({_NEURON_QUANT})"
    if device.key == "t4" and weights is Quantization.FP8:
        return f"the T4 (Turing) has no FP8 weight kernels in vLLM; Ampere or newer is needed ({_VLLM_HW})"
    return None
