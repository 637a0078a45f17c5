"""A roofline estimate of generated tokens per second.

Decode: each step a replica produces one token for each of its sequences. The
step cannot be shorter than the time to read the weights once plus every
sequence's KV cache at the peak memory bandwidth, nor shorter than the FLOPs
(2 x active parameters per token, plus attention over the cached context) at
the dense peak of the precision the matrix multiplies run in. The estimate
takes the longer of the two, each divided by its efficiency factor, plus the
host's time: a fixed time per step (kernel launches and collectives' latency;
zero where a family's measurements show none) and a time per sequence in the
batch (the engine's scheduling, sampling and response handling for each
sequence, which the accelerator waits for; it is what caps a small model's
large batches on a fast GPU). The factors are the accelerator family's
(`Assumptions.efficiency(family)`: NVIDIA GPUs, AWS Neuron and Google TPUs each
derived from their own published measurements).

Prefill is bounded the same way (the prompt's FLOPs at the compute peak; the
weights read once per chunk of `max_batched_tokens`). Prefill and decode are
taken to run one after the other, so the estimate is

    tokens/s = concurrency x output tokens / (prefill of the replica's prompts
               + output tokens x decode step)

and can never beat the bandwidth or the compute bound. MoE: memory holds all
experts; compute counts the active parameters, and a decode step reads the
shared weights plus the experts its batch is expected to touch
(1 - (1 - k/E)^batch of them). The KV cache read per step is the average over
a request: prompt + half the output, as with a paged cache (vLLM, TensorRT-LLM,
Neuron), whose attention reads only the tokens a sequence holds. An engine whose
decode attention runs over a fixed-size slot instead (MaxText's dense KV cache,
masked to the sequence's length) reads the whole slot every step; the
calibration passes that length for such runs (`decode_kv_tokens`).
Tensor-parallel communication costs a factor `Efficiency.tensor_parallel` per
doubling of the degree (TP=2: once, TP=8: three times), or only per doubling
past the degree a family's shares were measured at, when they already include
its communication (TPU: TP=8). The factors are derived per family from
published measurements (`planner.calibration`, `planner.measurements`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from inference_infra.components.planner.assumptions import Assumptions
from inference_infra.components.planner.fit import Fit
from inference_infra.components.planner.memory import Traffic, kv_shards
from inference_infra.components.planner.models import ModelSpec
from inference_infra.components.planner.precision import Precision


@dataclass(frozen=True, kw_only=True)
class Throughput:
    tokens_per_s: float  # generated tokens per second, whole machine, at the traffic's concurrency
    per_sequence_tokens_per_s: float  # decode speed one stream sees
    prefill_tokens_per_s: float  # prompt tokens per second one replica prefills
    decode_bound: str  # "memory bandwidth" or "compute"
    compute_basis: str  # the peak the matrix multiplies run at, e.g. "fp8"
    # Decode-only ceilings at 100% efficiency; tokens_per_s never exceeds either.
    bandwidth_bound_tokens_per_s: float
    compute_bound_tokens_per_s: float
    # Set when the family's efficiency factors are partly borrowed from another family's
    # measurements: where they come from, so the estimate says it.
    efficiency_caveat: str = ""

    def describe(self) -> str:
        caveat = f" ({self.efficiency_caveat})" if self.efficiency_caveat else ""
        return (
            f"~{self.tokens_per_s:,.0f} tokens/s generated"
            f" ({self.per_sequence_tokens_per_s:,.0f} per sequence),"
            f" decode bound by {self.decode_bound} ({self.compute_basis} peak);"
            f" prefill ~{self.prefill_tokens_per_s:,.0f} prompt tokens/s per replica{caveat}"
        )


def experts_touched(spec: ModelSpec, tokens: int) -> float:
    """Expected share of routed experts a batch of tokens uses (uniform routing)."""
    if not spec.is_moe:
        return 1.0
    return 1.0 - (1.0 - spec.experts_per_token / spec.experts) ** tokens


def weight_bytes_read(spec: ModelSpec, precision: Precision, tokens: int) -> float:
    """Weights one forward pass over `tokens` tokens reads (all of them, for a dense model)."""
    params = spec.shared_params + spec.expert_params * experts_touched(spec, tokens)
    return params * precision.weights.bytes_per_element


def flops_per_token(spec: ModelSpec, context_tokens: float) -> float:
    """2 x active parameters, plus QK^T and AV over `context_tokens` cached tokens."""
    attention = 4 * spec.layers * spec.attention_heads * spec.head_dim * context_tokens
    return 2 * spec.active_params + attention


def estimate(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    layout: Fit,
    decode_kv_tokens: float | None = None,
) -> Throughput:
    """Tokens per second for `traffic` on `layout`.

    `decode_kv_tokens`: the cached tokens each decode step reads per sequence, when the engine's
    attention runs over a fixed-size slot rather than the sequence's own length (None: prompt +
    half the output, the average a paged cache reads over a request).
    """
    hw, t = layout.hardware, layout.tensor_parallel
    b = layout.sequences_per_replica
    bandwidth = hw.unit_bandwidth_gb_s * 1e9  # bytes/s per unit
    peak_tflops, basis = hw.unit_peak_tflops(precision)
    peak = peak_tflops * 1e12  # FLOP/s per unit
    kv_token = spec.kv_bytes_per_token(precision.kv.bytes_per_element)
    shards = kv_shards(spec, t)

    # Decode: one step makes one token for each of the replica's b sequences.
    kv_len = traffic.prompt + traffic.output / 2 if decode_kv_tokens is None else decode_kv_tokens
    step_bytes = weight_bytes_read(spec, precision, b) / t + b * kv_len * kv_token / shards
    step_flops = b * flops_per_token(spec, kv_len) / t
    step_bw, step_compute = step_bytes / bandwidth, step_flops / peak
    eff = assumptions.efficiency(hw.device.family)
    tp_eff = eff.tensor_parallel_share(t)
    achieved_bw = step_bw / eff.bandwidth / tp_eff
    achieved_compute = step_compute / eff.compute / tp_eff
    host = eff.step_overhead_ms / 1000 + b * eff.sequence_overhead_us / 1e6
    step = max(achieved_bw, achieved_compute) + host
    bound = "memory bandwidth" if achieved_bw >= achieved_compute else "compute"

    # Prefill: the replica's b prompts, in chunks of max_batched_tokens.
    prompt_tokens = b * traffic.prompt
    prefill = 0.0
    if prompt_tokens:
        chunk = min(assumptions.max_batched_tokens, prompt_tokens)
        chunks = math.ceil(prompt_tokens / chunk)
        fill_bytes = (
            chunks * weight_bytes_read(spec, precision, chunk) / t + prompt_tokens * kv_token / shards
        )
        fill_flops = prompt_tokens * flops_per_token(spec, traffic.prompt / 2) / t
        prefill = (
            max(
                fill_bytes / bandwidth / eff.bandwidth,
                fill_flops / peak / eff.compute,
            )
            / tp_eff
        )

    round_s = prefill + traffic.output * step
    concurrency = traffic.concurrency
    return Throughput(
        tokens_per_s=concurrency * traffic.output / round_s,
        per_sequence_tokens_per_s=1 / step,
        prefill_tokens_per_s=prompt_tokens / prefill if prefill else 0.0,
        decode_bound=bound,
        compute_basis=basis,
        bandwidth_bound_tokens_per_s=concurrency / step_bw,
        compute_bound_tokens_per_s=concurrency / step_compute,
        efficiency_caveat=f"{hw.device.family.value} factors: {eff.basis}" if eff.borrows else "",
    )
