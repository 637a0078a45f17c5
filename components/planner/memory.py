"""The memory budget: weights, KV cache and activations, in GiB.

- Weights: parameters x bytes per weight (MoE: every expert is resident).
- KV cache: 2 (keys and values) x layers x KV heads x head dim x bytes per KV
  element, per token; x context x concurrency. Grouped-query attention enters
  through the KV-head count: Llama-3.1-70B keeps 8 KV heads for 64 query heads,
  an eighth of what full multi-head attention would store.
- Activations: the transient workspace of one forward pass over a full step
  (the engine's token budget, `max_num_batched_tokens`, which is what vLLM's
  profile run measures before it sizes the KV cache; `Assumptions.max_batched_tokens`
  overrides it, and 8,192 stands in where no device is known): residual stream and normed input
  (replicated under tensor parallelism), q/k/v and the MLP's gate and up
  projections (sharded), plus FP32 logits for each sequence's last position.
- Per device, a fixed runtime reserve is added; the memory ceiling
  (`Assumptions.max_memory_utilization`, vLLM's `gpu_memory_utilization`) is the
  safety margin. On a device, each sequence's KV cache is a whole number of the
  engine's blocks (`planner.engine`), as the engine allocates it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from inference_infra.components.errors import Problem
from inference_infra.components.planner.assumptions import Assumptions
from inference_infra.components.planner.models import ModelSpec
from inference_infra.components.planner.precision import Precision, Quantization

GIB = 1024**3
DEFAULT_OUTPUT_TOKENS = 512
# Tokens of the activation workspace when no device (and so no engine budget) is known: the
# largest default budget among the NVIDIA devices the catalog holds (vLLM 0.28.0, H100/H200).
DEFAULT_STEP_TOKENS = 8192


@dataclass(frozen=True, kw_only=True)
class Traffic:
    """What the deployment must hold at once.

    context_tokens is the longest sequence (prompt + generated tokens) to hold
    in the KV cache; concurrency is how many sequences are in flight together.
    output_tokens (generated per request) only shapes the throughput estimate;
    by default min(512, context/2).
    """

    context_tokens: int
    concurrency: int
    output_tokens: int | None = None
    # Prompt tokens per request, for throughput; by default context - output.
    prompt_tokens: int | None = None

    @property
    def output(self) -> int:
        if self.output_tokens is not None:
            return self.output_tokens
        return max(1, min(DEFAULT_OUTPUT_TOKENS, self.context_tokens // 2))

    @property
    def prompt(self) -> int:
        if self.prompt_tokens is not None:
            return self.prompt_tokens
        return self.context_tokens - self.output


def validate_traffic(traffic: Traffic, spec: ModelSpec | None = None) -> list[Problem]:
    problems = [
        Problem(name, getattr(traffic, name), "must be a positive whole number")
        for name in ("context_tokens", "concurrency")
        if not _positive_int(getattr(traffic, name))
    ]
    context = traffic.context_tokens
    if not _positive_int(context):
        return problems
    if spec is not None and context > spec.max_context_tokens:
        problems.append(
            Problem(
                "context_tokens",
                context,
                f"exceeds {spec.name}'s context window of {spec.max_context_tokens:,} tokens",
            )
        )
    out = traffic.output_tokens
    if out is not None and (not _positive_int(out) or out > context):
        problems.append(
            Problem("output_tokens", out, f"must be a whole number from 1 to context_tokens ({context})")
        )
    prompt = traffic.prompt_tokens
    if prompt is not None:
        room = context - (out if _positive_int(out) else traffic.output)
        if not _positive_int(prompt) or prompt > room:
            problems.append(
                Problem(
                    "prompt_tokens",
                    prompt,
                    f"must be a whole number from 1 to context_tokens - output tokens ({room})",
                )
            )
    return problems


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True, kw_only=True)
class MemoryBudget:
    """Model-level memory for the whole traffic on one replica, before per-device overheads."""

    weights_gib: float
    kv_cache_gib: float
    kv_cache_per_sequence_gib: float
    activation_gib: float

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.kv_cache_gib + self.activation_gib


@dataclass(frozen=True, kw_only=True)
class DeviceMemory:
    """What one device (GPU, NeuronCore or TPU chip) holds for a given parallel layout."""

    weights_gib: float
    kv_cache_gib: float
    activation_gib: float
    runtime_gib: float

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.kv_cache_gib + self.activation_gib + self.runtime_gib


def weights_bytes(spec: ModelSpec, precision: Precision) -> float:
    return spec.params * precision.weights.bytes_per_element


def kv_bytes_per_sequence(spec: ModelSpec, precision: Precision, tokens: int) -> float:
    return spec.kv_bytes_per_token(precision.kv.bytes_per_element) * tokens


def activation_bytes(
    spec: ModelSpec,
    precision: Precision,
    *,
    sequences: int,
    context_tokens: int,
    assumptions: Assumptions,
    tensor_parallel: int = 1,
    step_tokens: int | None = None,
) -> float:
    """Peak forward-pass workspace on one device of a replica serving `sequences`.

    `step_tokens`: the tokens one step processes at most (the engine's budget); the caller's
    `Assumptions.max_batched_tokens` wins over it, DEFAULT_STEP_TOKENS stands in for neither.
    """
    t = tensor_parallel
    budget = assumptions.max_batched_tokens or step_tokens or DEFAULT_STEP_TOKENS
    tokens = min(budget, sequences * context_tokens)
    qkv = (spec.attention_heads + 2 * spec.kv_heads) * spec.head_dim
    mlp = 2 * spec.experts_per_token * spec.intermediate_size  # gate and up, per routed expert
    per_token = 2 * spec.hidden_size + (qkv + mlp) / t
    element = 4.0 if precision.weights is Quantization.FP32 else 2.0
    logits = sequences * spec.vocab_size * 4.0 / t
    return tokens * per_token * element + logits


def memory_budget(
    spec: ModelSpec, traffic: Traffic, precision: Precision, assumptions: Assumptions
) -> MemoryBudget:
    per_sequence = kv_bytes_per_sequence(spec, precision, traffic.context_tokens)
    activation = activation_bytes(
        spec,
        precision,
        sequences=traffic.concurrency,
        context_tokens=traffic.context_tokens,
        assumptions=assumptions,
    )
    return MemoryBudget(
        weights_gib=weights_bytes(spec, precision) / GIB,
        kv_cache_gib=per_sequence * traffic.concurrency / GIB,
        kv_cache_per_sequence_gib=per_sequence / GIB,
        activation_gib=activation / GIB,
    )


def kv_shards(spec: ModelSpec, tensor_parallel: int) -> int:
    """Devices the KV cache is split over: past the KV-head count, heads are replicated."""
    return min(tensor_parallel, spec.kv_heads)


def device_memory(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    *,
    tensor_parallel: int,
    sequences: int,
    step_tokens: int | None = None,
    block_tokens: int = 1,
) -> DeviceMemory:
    """One device's share when a replica of `tensor_parallel` devices holds `sequences`.

    `block_tokens`: the engine's KV block; a sequence holds its context rounded up to whole blocks.
    `step_tokens`: the engine's token budget, which sizes the activation workspace.
    """
    t = tensor_parallel
    held = math.ceil(traffic.context_tokens / block_tokens) * block_tokens
    kv = kv_bytes_per_sequence(spec, precision, held) * sequences / kv_shards(spec, t)
    act = activation_bytes(
        spec,
        precision,
        sequences=sequences,
        context_tokens=traffic.context_tokens,
        assumptions=assumptions,
        tensor_parallel=t,
        step_tokens=step_tokens,
    )
    return DeviceMemory(
        weights_gib=weights_bytes(spec, precision) / t / GIB,
        kv_cache_gib=kv / GIB,
        activation_gib=act / GIB,
        runtime_gib=assumptions.runtime_reserve_gib,
    )


def sequences_per_replica(concurrency: int, replicas: int) -> int:
    """The busiest replica's share when concurrency is spread evenly over replicas."""
    return math.ceil(concurrency / max(1, min(replicas, concurrency)))
