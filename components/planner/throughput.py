"""Generated tokens per second, from the steps the serving engine runs.

A step is one forward pass. Its time is the larger of its memory traffic (the
weights once, plus the KV cache its attention reads, at the peak memory
bandwidth) and its arithmetic (2 x active parameters per token plus attention
over the cached context, at the dense peak of the precision the matrix
multiplies run in), each divided by its accelerator family's efficiency, plus
the host's time: a fixed time per step and a time per sequence in the step
(scheduling, sampling, output handling, which the accelerator waits for).

How steps are filled is the engine's (`planner.engine`):

* Chunked prefill (vLLM on GPUs and TPUs). A replica holding `b` requests of P
  prompt and O output tokens must process b x (P + O - 1) tokens per round of
  b completions (the first output token comes out of the last prefill chunk).
  A step takes at most the token budget B (`max_num_batched_tokens`), and a
  request needs at least ceil(P / B) steps of prefill and O - 1 of decode, so a
  round is S = max(O - 1 + ceil(P / B), b (P + O - 1) / B) steps, each carrying
  the round's average mix of decode tokens and prefill chunks. A decode-heavy
  load is memory-bound steps with prefill riding along for almost free; a
  prefill-heavy one fills the budget and is compute-bound. An offline batch (all
  requests at once) prefills the whole batch first, in full-budget steps with
  the finished prompts already decoding, then decodes.
* Separate prefill (vLLM 0.9.1 on Neuron, fixed-batch engines). Each prompt is
  encoded in a step of its own; decode steps run every line of the compiled
  batch. A round is b prefill steps plus O - 1 decode steps.

The KV cache a decode step reads is the engine's: the tokens a sequence holds
(paged: prompt + half the output on average), the compiled bucket above the
batch's longest position (NxD Inference), or a fixed slot (MaxText, Transformers
NeuronX runs pass their own figure). MoE: memory holds all experts; a step
computes with the active ones and reads the experts its tokens are expected to
touch (1 - (1 - k/E)^tokens of them). Tensor-parallel communication costs a
factor per doubling of the degree past the degree the family's shares include.
The estimate never beats the bandwidth or the compute bound (a test checks it on
every catalog machine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from inference_infra.components.planner.assumptions import Assumptions, Efficiency
from inference_infra.components.planner.engine import (
    DecodeRead,
    Engine,
    Scheduling,
    bucket_kv_tokens,
    served_engine,
)
from inference_infra.components.planner.fit import Fit
from inference_infra.components.planner.memory import Traffic, kv_shards
from inference_infra.components.planner.models import ModelSpec
from inference_infra.components.planner.precision import Precision


@dataclass(frozen=True, kw_only=True)
class Throughput:
    tokens_per_s: float  # generated tokens per second, whole machine, at the traffic's concurrency
    per_sequence_tokens_per_s: float  # decode speed one stream sees
    prefill_tokens_per_s: float  # prompt tokens per second one replica prefills in a full step
    decode_bound: str  # "memory bandwidth" or "compute"
    compute_basis: str  # the peak the matrix multiplies run at, e.g. "fp8"
    # Decode-only ceilings at 100% efficiency; tokens_per_s never exceeds either.
    bandwidth_bound_tokens_per_s: float
    compute_bound_tokens_per_s: float
    # Set when the family's efficiency factors are partly borrowed from another family's
    # measurements: where they come from, so the estimate says it.
    efficiency_caveat: str = ""
    engine: str = ""  # the engine whose scheduling the estimate follows

    def describe(self) -> str:
        caveat = f" ({self.efficiency_caveat})" if self.efficiency_caveat else ""
        return (
            f"~{self.tokens_per_s:,.0f} tokens/s generated"
            f" ({self.per_sequence_tokens_per_s:,.0f} per sequence),"
            f" decode bound by {self.decode_bound} ({self.compute_basis} peak);"
            f" prefill ~{self.prefill_tokens_per_s:,.0f} prompt tokens/s per replica{caveat}"
        )


# A replica over several hosts (pipeline parallel, fit.multi_host_fit) is estimated as its stages run
# one after another: a decode step of the whole batch still reads every weight once, over one host's
# bandwidth at a time, so the estimate is that of one stage group of TP=<GPUs per host> holding the whole
# model (what `estimate` computes for the layout), times this factor for what pipelining adds: the
# activations sent between hosts at every stage boundary and the bubbles while stages wait for each
# other. An assumption (2026-12-02), not a measurement: no published vLLM 0.28.0 multi-node figure was
# found to calibrate it. vLLM keeps as many batches in flight as there are stages, which can hide part of
# the bubble; prefill (compute-bound) gains from that and is left unscaled here, a conservative reading.
PIPELINE_EFFICIENCY = 0.85
PIPELINE_EFFICIENCY_BASIS = (
    f"pipeline parallel over hosts at {PIPELINE_EFFICIENCY:.0%} of one host's stage group (an assumption"
    " dated 2026-12-02, not a measurement: inter-host activations and pipeline bubbles)"
)


def pipelined(throughput: Throughput, hosts: int) -> Throughput:
    """A replica over `hosts` machines: the stage group's estimate times PIPELINE_EFFICIENCY (said in the
    caveat). One host: unchanged."""
    if hosts <= 1:
        return throughput
    caveat = "; ".join(c for c in (throughput.efficiency_caveat, PIPELINE_EFFICIENCY_BASIS) if c)
    return replace(
        throughput,
        tokens_per_s=throughput.tokens_per_s * PIPELINE_EFFICIENCY,
        per_sequence_tokens_per_s=throughput.per_sequence_tokens_per_s * PIPELINE_EFFICIENCY,
        efficiency_caveat=caveat,
    )


def experts_touched(spec: ModelSpec, tokens: float) -> float:
    """Expected share of routed experts a batch of tokens uses (uniform routing)."""
    if not spec.is_moe:
        return 1.0
    return 1.0 - (1.0 - spec.experts_per_token / spec.experts) ** tokens


def weight_bytes_read(spec: ModelSpec, precision: Precision, tokens: float) -> float:
    """Weights one forward pass over `tokens` tokens reads (all of them, for a dense model)."""
    params = spec.shared_params + spec.expert_params * experts_touched(spec, tokens)
    return params * precision.weights.bytes_per_element


def flops_per_token(spec: ModelSpec, context_tokens: float) -> float:
    """2 x active parameters, plus QK^T and AV over `context_tokens` cached tokens."""
    return 2 * spec.active_params + _attention_flops(spec) * context_tokens


def _attention_flops(spec: ModelSpec) -> float:
    return 4 * spec.layers * spec.attention_heads * spec.head_dim


@dataclass(frozen=True)
class _Step:
    """One step's work on one replica: tokens, and where its attention reads."""

    decode_lines: float = 0.0  # sequences decoding (one token each)
    decode_kv: float = 0.0  # cached tokens each decoding line reads
    prefill_tokens: float = 0.0  # prompt tokens in the step
    prefill_context: float = 0.0  # average tokens a prompt token attends to
    prefill_reads: float = 0.0  # cached prefix tokens the step's prompt chunks read
    sequences: float = 0.0  # sequences the host handles this step

    @property
    def tokens(self) -> float:
        return self.decode_lines + self.prefill_tokens


@dataclass(frozen=True)
class _Replica:
    """A replica's peaks and factors: turns a step's work into seconds."""

    spec: ModelSpec
    precision: Precision
    layout: Fit
    eff: Efficiency
    engine: Engine

    @property
    def degree(self) -> int:
        return self.layout.tensor_parallel

    def bytes(self, step: _Step) -> float:
        kv_token = self.spec.kv_bytes_per_token(self.precision.kv.bytes_per_element)
        kv = step.decode_lines * step.decode_kv + step.prefill_reads + step.tokens  # read + written
        weights = weight_bytes_read(self.spec, self.precision, step.tokens) / self.degree
        return weights + kv * kv_token / kv_shards(self.spec, self.degree)

    def flops(self, step: _Step) -> float:
        attention = _attention_flops(self.spec)
        work = step.tokens * 2 * self.spec.active_params + attention * (
            step.decode_lines * step.decode_kv + step.prefill_tokens * step.prefill_context
        )
        return work / self.degree

    def raw(self, step: _Step) -> tuple[float, float]:
        """(seconds at peak bandwidth, seconds at peak FLOPs), before the efficiency factors."""
        hw = self.layout.hardware
        peak, _ = hw.unit_peak_tflops(self.precision)
        return self.bytes(step) / (hw.unit_bandwidth_gb_s * 1e9), self.flops(step) / (peak * 1e12)

    def seconds(self, step: _Step) -> float:
        memory, compute = self.raw(step)
        share = self.eff.tensor_parallel_share(self.degree)
        device = max(memory / self.eff.bandwidth, compute / self.eff.compute) / share
        host = self.eff.step_overhead_ms / 1e3 + step.sequences * self.eff.sequence_overhead_us / 1e6
        return device + host


def decode_kv_read(engine: Engine, traffic: Traffic, lines: int, offline: bool = False) -> float:
    """Cached tokens a decode step reads per line under `engine`, averaged over a request."""
    prompt, output = traffic.prompt, traffic.output
    if engine.decode_read is DecodeRead.SLOT:
        return float(traffic.context_tokens)
    if engine.decode_read is DecodeRead.BUCKET:
        # an offline batch advances in step: its longest position is every line's own
        return bucket_kv_tokens(prompt, output, 1 if offline else lines, traffic.context_tokens)
    return prompt + output / 2


def estimate(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    layout: Fit,
    decode_kv_tokens: float | None = None,
    *,
    engine: Engine | None = None,
    offline: bool = False,
    compiled_batch: int | None = None,
) -> Throughput:
    """Tokens per second for `traffic` on `layout`, served by `engine` (default: the family's served one).

    `decode_kv_tokens` overrides the cached tokens a decode step reads per line (an engine whose
    attention spans a slot of a stated size); `offline`: every request arrives at once (an offline
    batch) instead of a client keeping `traffic.concurrency` in flight; `compiled_batch`: the lines
    a fixed-batch engine's decode step runs whatever the load (default: the replica's sequences).
    """
    hw = layout.hardware
    family = hw.device.family
    engine = engine or served_engine(family)
    eff = assumptions.efficiency(family)
    replica = _Replica(spec, precision, layout, eff, engine)
    b = layout.sequences_per_replica
    prompt, output = traffic.prompt, traffic.output
    lines = max(b, compiled_batch or 0) if engine.scheduling is Scheduling.SEPARATE else b
    kv_read = decode_kv_tokens
    if kv_read is None:
        kv_read = decode_kv_read(engine, traffic, lines, offline)
    budget = engine.budget(hw.device, traffic.context_tokens)
    if assumptions.max_batched_tokens and engine.scheduling is Scheduling.CHUNKED:
        budget = assumptions.max_batched_tokens

    if engine.scheduling is Scheduling.CHUNKED:
        round_s, decode_step = _chunked_round(replica, b, prompt, output, budget, kv_read, offline)
        full = min(budget, b * prompt)
        prefill_rate = full / replica.seconds(_prefill_step(full, prompt, budget)) if prompt else 0.0
    else:
        round_s, decode_step = _separate_round(replica, b, lines, prompt, output, budget, kv_read, offline)
        prefill_rate = prompt / replica.seconds(_prefill_step(prompt, prompt, prompt)) if prompt else 0.0

    decode_only = _Step(decode_lines=b, decode_kv=kv_read, sequences=b)
    memory, compute = replica.raw(decode_only)
    _, basis = hw.unit_peak_tflops(precision)
    return Throughput(
        tokens_per_s=traffic.concurrency * output / round_s,
        per_sequence_tokens_per_s=1 / decode_step,
        prefill_tokens_per_s=prefill_rate,
        decode_bound="memory bandwidth" if memory / eff.bandwidth >= compute / eff.compute else "compute",
        compute_basis=basis,
        bandwidth_bound_tokens_per_s=traffic.concurrency / memory,
        compute_bound_tokens_per_s=traffic.concurrency / compute,
        efficiency_caveat=f"{family.value} factors: {eff.basis}" if eff.borrows else "",
        engine=engine.name,
    )


def _replica_for(
    spec: ModelSpec, precision: Precision, assumptions: Assumptions, layout: Fit, engine: Engine | None
) -> _Replica:
    family = layout.hardware.device.family
    return _Replica(spec, precision, layout, assumptions.efficiency(family), engine or served_engine(family))


def decode_step_seconds(
    spec: ModelSpec,
    precision: Precision,
    assumptions: Assumptions,
    layout: Fit,
    lines: float,
    kv_tokens: float,
    *,
    engine: Engine | None = None,
) -> float:
    """Seconds of one decode-only step: `lines` sequences, each reading `kv_tokens` cached tokens.

    Its inverse is the decode speed one stream sees (1 / inter-token latency) at that batch.
    """
    replica = _replica_for(spec, precision, assumptions, layout, engine)
    return replica.seconds(_Step(decode_lines=lines, decode_kv=kv_tokens, sequences=lines))


def first_token_seconds(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    layout: Fit,
    *,
    engine: Engine | None = None,
) -> float:
    """Seconds from a request's admission to its first token while the replica's other sequences decode.

    Chunked prefill: the running sequences take their token from each step's budget first, the
    prompt fills the rest, so it needs ceil(P / (B - running)) steps that also carry the decodes.
    Separate prefill: one step over the whole prompt.
    """
    replica = _replica_for(spec, precision, assumptions, layout, engine)
    prompt = traffic.prompt
    if not prompt:
        return 0.0
    if replica.engine.scheduling is Scheduling.SEPARATE:
        return replica.seconds(_prefill_step(prompt, prompt, prompt))
    budget = replica.engine.budget(layout.hardware.device, traffic.context_tokens)
    if assumptions.max_batched_tokens:
        budget = assumptions.max_batched_tokens
    running = max(0, layout.sequences_per_replica - 1)
    room = max(1, budget - running)
    steps = math.ceil(prompt / room)
    chunk = _prefill_step(prompt / steps, prompt, min(room, prompt))
    step = _Step(
        decode_lines=running,
        decode_kv=traffic.prompt + traffic.output / 2,
        prefill_tokens=chunk.prefill_tokens,
        prefill_context=chunk.prefill_context,
        prefill_reads=chunk.prefill_reads,
        sequences=running + 1,
    )
    return steps * replica.seconds(step)


def _prefill_step(tokens: float, prompt: int, budget: int) -> _Step:
    """A step of `tokens` prompt tokens cut from prompts of `prompt` tokens in chunks of `budget`."""
    chunk = max(1.0, min(prompt, budget))
    chunks = tokens / chunk
    # a chunk at offset o attends to o cached tokens plus half its own; on average the prefix is
    # (prompt - chunk) / 2 tokens, read once per chunk
    return _Step(
        prefill_tokens=tokens,
        prefill_context=prompt / 2,
        prefill_reads=chunks * max(0.0, prompt - chunk) / 2,
        sequences=math.ceil(chunks),
    )


def _chunked_round(
    replica: _Replica, b: int, prompt: int, output: int, budget: int, kv_read: float, offline: bool
) -> tuple[float, float]:
    """(seconds for a round of b completions, seconds per decode step) under chunked prefill."""
    decodes = max(0, output - 1)
    if offline:
        # the whole batch's prompts first, in full steps; prompts finished early already decode
        # (half the batch on average) and take their token from the budget
        decode_s = replica.seconds(_Step(decode_lines=b, decode_kv=kv_read, sequences=b))
        if not prompt:
            return decodes * decode_s, decode_s
        riders = min(b / 2, budget / 2) if decodes else 0.0
        fill_steps = max(1, math.ceil(b * prompt / (budget - riders)))
        chunk = _prefill_step(b * prompt / fill_steps, prompt, budget)
        fill = _Step(
            decode_lines=riders,
            decode_kv=prompt,
            prefill_tokens=chunk.prefill_tokens,
            prefill_context=chunk.prefill_context,
            prefill_reads=chunk.prefill_reads,
            sequences=chunk.sequences + riders,
        )
        return fill_steps * replica.seconds(fill) + decodes * decode_s, decode_s
    # a client keeps b requests in flight. A round of b completions takes S steps; each of the b
    # prompts goes into the next step (whole, or in chunks of the budget), so k = b x ceil(P / B)
    # steps carry prefill (all S of them once the budget binds) and the rest only decode.
    steps = max(decodes + math.ceil(prompt / budget), b * (prompt + decodes) / budget, 1.0)
    lines = b * decodes / steps
    decode = _Step(decode_lines=lines, decode_kv=kv_read, sequences=lines)
    if not prompt:
        decode_s = replica.seconds(decode)
        return steps * decode_s, decode_s
    mixed_steps = min(steps, b * math.ceil(prompt / budget))
    chunk = _prefill_step(b * prompt / mixed_steps, prompt, budget)
    mixed = _Step(
        decode_lines=lines,
        decode_kv=kv_read,
        prefill_tokens=chunk.prefill_tokens,
        prefill_context=chunk.prefill_context,
        prefill_reads=chunk.prefill_reads,
        sequences=min(b, lines + chunk.sequences),
    )
    round_s = mixed_steps * replica.seconds(mixed) + (steps - mixed_steps) * replica.seconds(decode)
    return round_s, round_s / steps


def _separate_round(
    replica: _Replica,
    b: int,
    lines: int,
    prompt: int,
    output: int,
    budget: int,
    kv_read: float,
    offline: bool,
) -> tuple[float, float]:
    """(seconds for a round of b completions, seconds per decode step) with prompts in steps of their own."""
    decodes = max(0, output - 1)
    prefill_s = 0.0
    if prompt:
        # one prompt per prefill step (NxD Inference's context encoding runs batch 1 under continuous
        # batching; so does JetStream's prefill); an offline static batch encodes its prompts together
        if offline:
            prefill_s = replica.seconds(_prefill_step(b * prompt, prompt, max(prompt, budget)))
        else:
            prefill_s = b * replica.seconds(_prefill_step(prompt, prompt, prompt))
    decode = _Step(decode_lines=lines, decode_kv=kv_read, sequences=b)
    decode_s = replica.seconds(decode)
    return prefill_s + decodes * decode_s, decode_s
