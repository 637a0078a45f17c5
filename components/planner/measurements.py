"""Published throughput measurements: the dataclass, and the reference set of other engines.

Each point is one published figure: a model on a number of accelerators at a
fixed input/output length (ISL/OSL), served by a named engine at a named
version with a stated batch ceiling, reported as generated tokens per second
over all the devices, with its source and the date it was read. The engine's
way of scheduling (`scheduling`, `decode_read`, `token_budget`, `offline`,
`compiled_batch`) is recorded with the point, so the planner replays the run
as that engine ran it.

The planner's factors are fitted on the vLLM set (`planner.vllm_measurements`),
the engine the stacks deploy. The points below are the earlier table, measured
with other engines (TensorRT-LLM, Transformers NeuronX, JetStream + MaxText).
They are kept as a labelled reference set (`Split.REFERENCE`): never fitted on,
reported beside the vLLM errors (`benchmarks/planner_vs_rules.py`), because they
are the only published points for some shapes (Llama 2, Mistral, TP 24/32 on
Neuron, v5e) and show how far another engine's speed is from vLLM's.

NVIDIA GPUs
  * TensorRT-LLM performance overview, v1.0 (PyTorch backend, ModelOpt FP8
    checkpoints, `trtllm-bench throughput`, FP8 KV cache; "Total Output
    Throughput"): H100 and H200, Llama 3.1 8B to 405B, 1 to 8 GPUs.
  * TensorRT-LLM performance page as of v0.6.1 ("Peak Throughput", static
    batching with `gptSessionBenchmark` at the batch size in the table): the
    L40S rows (FP8, measured with v0.5) and the A100 rows (FP16) for Llama 2
    7B ("LLaMA 7B") on one GPU. The A100 is an 80 GB part: batch 384 at
    128/128 needs ~62 GB. Rows at TP>1 are left out because the table does not
    say whether their figure is per GPU or per system.

AWS Neuron (Inferentia2, Trainium)
  * The Neuron documentation's decoder throughput tables ("Output Token
    Throughput"), Transformers NeuronX 2.18, inf2.48xlarge at TP=24 and
    trn1.32xlarge at TP=32 (all NeuronCores), batch 1 to 8 as published. These
    are AWS's own figures; they are small-batch runs, so the planner is given
    the published tensor-parallel degree and batch instead of filling memory.
    Transformers NeuronX decodes in position buckets (powers of two from 128 up
    to the sequence length) and each step reads its bucket's whole KV cache, so
    these points read the bucket's tokens (`decode_kv_tokens`), not the paged
    average.
    Llama 3 8B/70B rows use the Llama 3.1 presets (same shapes; the tables'
    sequences are within 8K) and Mistral-7B-Instruct-v0.2 uses the v0.3 preset
    (same shape but a 32,000- vs 32,768-token vocabulary). Every row of both
    tables for a preset model is here except the Llama 2 7B/13B rows at 8,192
    and 16,384 positions, past Llama 2's 4,096-token window (the planner
    refuses them); CodeLlama has no preset.

Google TPUs
  * Google's tpu-recipes JetStream + MaxText Llama2-7B recipe for v5e
    (v5litepod-8, bf16, per-device batch 11 = 88 sequences, tensor parallel
    over the 8 chips, OpenOrca prompts, up to 1,024 generated tokens). The
    recipe publishes totals (995 requests, 217,011 input and 934,964 generated
    tokens, 3,061.78 output tokens/s); ISL/OSL here are the means of those
    totals (218 / 940), so this point is a mix of lengths, not a fixed length.
    MaxText's dense KV cache is read whole every decode step (2,048 tokens per
    slot, `decode_kv_tokens`). The v6e (Trillium) copy of that recipe prints
    the same figures verbatim, so it is not counted as a separate measurement.
  The vLLM TPU recipes (v6e) are in the vLLM set (`planner.vllm_measurements`),
  which also says why the other TPU sources are not used.

MLPerf Inference is not in the table, although its Offline results for preset
models were read (mlcommons/inference_results_v4.1 at 198fc46 and v5.1 at
965182b, 2026-11-24): NVIDIA's v4.1 Llama 2 70B on 8 x H100 (24,524.9 tokens/s,
TP2 x 4 engines, batch 896 each) and 8 x H200 (31,302.7 tokens/s, TP1 x 8,
batch 806), v5.1 H200 runs from Google and HPE, and HPE's v5.1 Llama 3.1 8B on
8 x H200 (66,036.8 tokens/s). Their mean output is exact (tokens/s over
samples/s: about 291 for OpenOrca, the 128 cap for CNN/DailyMail), but no
source we could read gives the datasets' mean input length (only the caps:
1,024 for OpenOrca, 2,540 in NVIDIA's CNN/DailyMail engine). The input length
decides both the prefill and the KV read, and over plausible OpenOrca means
(150 to 400 tokens) the planner's error on the H100 point swings from +62% to
+8%, so a point without it would test the guess, not the planner. GPT-J is not
a preset; the FP4 B200 rows have a weight format the planner lacks; the 405B
runs use pipeline parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from inference_infra.components.planner.engine import DecodeRead, Scheduling

_TRTLLM_PERF = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/"
    "docs/source/performance/perf-overview.md"
)
_READ = date(2026, 11, 22)


class Metric(StrEnum):
    """What a point's `tokens_per_s` measures."""

    OUTPUT = "output"  # generated tokens per second over the whole run, all devices
    DECODE = "decode"  # one sequence's decode speed, 1 / inter-token latency, at the run's batch
    PREFILL = "prefill"  # one request's prompt tokens / its time to first token, under the run's load


class Split(StrEnum):
    """Which part of the calibration a point belongs to, fixed before any fitting."""

    FIT = "fit"  # the factors are searched on these
    HOLDOUT = "holdout"  # never searched on; their error is the estimate's error on unseen runs
    REFERENCE = "reference"  # another engine's run: reported, never fitted


@dataclass(frozen=True, kw_only=True)
class Measurement:
    model: str  # planner preset
    instance_type: str  # a catalog machine with the measured device (p5.48xlarge: H100 SXM)
    devices: int  # accelerators used (tensor parallel x pipeline parallel)
    weights: str  # weight format, a planner Quantization value
    kv_cache: str  # KV-cache format
    prompt_tokens: int  # ISL
    output_tokens: int  # OSL
    tokens_per_s: float  # what `metric` names; by default total generated tokens per second
    max_batch: int  # the engine's batch ceiling in the run (sequences in flight at most)
    engine: str
    engine_version: str
    source: str
    as_of: date
    # The published tensor-parallel degree in planner units (GPUs, NeuronCores, TPU chips) when the
    # run fixed it; None lets the planner pick its smallest fitting degree, as for the GPU tables.
    tensor_parallel: int | None = None
    # True when the run used exactly `max_batch` sequences (static batching, fixed-batch engines):
    # the planner is held to that batch, checked against the whole device memory rather than its
    # 90% planning ceiling. False: `max_batch` is only the engine's ceiling and memory decides.
    exact_batch: bool = False
    # The cached tokens a decode step reads per sequence when the engine's attention runs over a
    # fixed-size slot, masked to the sequence's length, instead of the tokens the sequence holds
    # (MaxText's dense KV cache: max_target_length per slot). None: a paged cache, which reads
    # the sequence's own length (prompt + half the output on average).
    decode_kv_tokens: float | None = None
    split: Split = Split.REFERENCE
    # How the engine filled its steps: prefill chunks sharing steps with decodes under a token
    # budget (vLLM's chunked prefill, TensorRT-LLM's in-flight batching) or prompts in steps of
    # their own (fixed-batch engines, vLLM on Neuron).
    scheduling: Scheduling = Scheduling.CHUNKED
    decode_read: DecodeRead = DecodeRead.PAGED
    token_budget: int | None = None  # the run's max_num_batched_tokens; None: the default for the device
    offline: bool = False  # every request submitted at once (an offline batch), not a client's concurrency
    compiled_batch: int | None = None  # lines a fixed-batch engine's decode step runs whatever the load
    max_model_len: int | None = None  # the engine's context (sizes memory); None: ISL + OSL
    # The run's --gpu-memory-utilization when the engine's KV cache, not the client, set the batch
    # (a burst of requests); None: the planner's own ceiling.
    memory_utilization: float | None = None
    metric: Metric = Metric.OUTPUT
    notes: str = ""


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
        # in-flight batching puts new prompts into generation steps under max_num_tokens (8,192 by
        # default in trtllm-bench), which the chunked schedule describes
        token_budget=8192,
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


# --- NVIDIA L40S and A100: TensorRT-LLM's performance page as of v0.6.1 -------------------------

_TRTLLM_061 = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/"
    "docs/source/performance.md"
)
_READ_NEW = date(2026, 11, 24)


def _trt_static(
    instance: str, weights: str, version: str, batch: int, isl: int, osl: int, tps: float
) -> Measurement:
    return Measurement(
        model="llama-2-7b",
        instance_type=instance,
        devices=1,
        weights=weights,
        kv_cache=weights,  # the FP8 builds use --fp8_kv_cache; the A100 ones run FP16 throughout
        prompt_tokens=isl,
        output_tokens=osl,
        tokens_per_s=tps,
        max_batch=batch,
        engine="TensorRT-LLM",
        engine_version=version,
        source=_TRTLLM_061,
        as_of=_READ_NEW,
        exact_batch=True,
        # static batching: the batch's prompts are encoded together, then the batch decodes
        scheduling=Scheduling.SEPARATE,
        offline=True,
        notes="static batching (gptSessionBenchmark) at the published batch size",
    )


_L40S = "g6e.xlarge"  # 1 x L40S 48GB
_A100 = "p4de.24xlarge"  # 8 x A100 80GB (one used)

MEASUREMENTS += (
    _trt_static(_L40S, "fp8", "0.5", 64, 128, 128, 3240),
    _trt_static(_L40S, "fp8", "0.5", 64, 128, 2048, 1622),
    _trt_static(_L40S, "fp8", "0.5", 32, 2048, 128, 581),
    _trt_static(_L40S, "fp8", "0.5", 16, 2048, 2048, 531),
    _trt_static(_A100, "fp16", "0.6.1", 384, 128, 128, 5586),
    _trt_static(_A100, "fp16", "0.6.1", 60, 128, 2048, 1928),
    _trt_static(_A100, "fp16", "0.6.1", 52, 2048, 128, 591),
)


# --- AWS Neuron: the Neuron documentation's decoder throughput tables (Transformers NeuronX 2.18) --

# aws-neuron-sdk commit (2025-10-17) holding both tables; the rows were published with Neuron 2.18
# (2024-04-11, Llama 3 rows 2024-04-30)
_NEURON_COMMIT = "1db4d74ec718b8c3287ad118ad021c95c64ff455"
_NEURON_INF2 = (
    f"https://github.com/aws-neuron/aws-neuron-sdk/blob/{_NEURON_COMMIT}/"
    "about-neuron/benchmarks/inf2/throughput_data_decoder.csv"
)
_NEURON_TRN1 = (
    f"https://github.com/aws-neuron/aws-neuron-sdk/blob/{_NEURON_COMMIT}/"
    "about-neuron/benchmarks/trn1/throughput_data_decoder.csv"
)


# Transformers NeuronX 0.10 (the Neuron 2.18 release) compiles one token-generation graph per
# bucket of positions, doubling from 128 up to the run's sequence length (`bucket.token_sizes`),
# and each decode step runs the smallest bucket that holds the current position (`bucket.find`);
# that graph's attention reads the KV cache of the whole bucket, masked. So a step reads the
# bucket's tokens, not the sequence's own length.
_NEURONX_BUCKETS = (
    "https://github.com/aws-neuron/transformers-neuronx/blob/7a30b4222f6224a5071a5f5c60aa1b053ebdf6c4/"
    "src/transformers_neuronx/bucket.py"
)


def neuronx_decode_kv_tokens(isl: int, osl: int, first_bucket: int = 128) -> float:
    """Cached tokens a Transformers NeuronX decode step reads per sequence, averaged over the output.

    The buckets double from `first_bucket` and end at the sequence length (ISL + OSL, the
    tables' "Sequence Length", which is also the last bucket when it is not a power of two).
    """
    length = isl + osl
    buckets, size = [], first_bucket
    while size < length:
        buckets.append(size)
        size *= 2
    buckets.append(length)
    # the positions the generated tokens are written at, isl .. length - 1, each read as the
    # smallest bucket >= the position: count the positions falling to each bucket
    read, previous = 0, -1
    for bucket in buckets:
        low, high = max(isl, previous + 1), min(length - 1, bucket)
        read += max(0, high - low + 1) * bucket
        previous = bucket
    return read / osl


def _neuron(
    model: str,
    instance: str,
    version: str,
    weights: str,
    batch: int,
    isl: int,
    osl: int,
    tps: float,
    note: str = "",
) -> Measurement:
    inf2 = instance.startswith("inf2")
    return Measurement(
        model=model,
        instance_type=instance,
        devices=12 if inf2 else 16,  # every chip of the machine
        weights=weights,
        kv_cache="bf16",  # FP16 model with BF16 matmuls; the KV cache is not quantized
        prompt_tokens=isl,
        output_tokens=osl,
        tokens_per_s=tps,
        max_batch=batch,
        engine="Transformers NeuronX",
        engine_version=version,
        source=_NEURON_INF2 if inf2 else _NEURON_TRN1,
        as_of=_READ_NEW,
        tensor_parallel=24 if inf2 else 32,  # NeuronCores
        exact_batch=True,
        decode_kv_tokens=neuronx_decode_kv_tokens(isl, osl),  # whole buckets (_NEURONX_BUCKETS)
        scheduling=Scheduling.SEPARATE,
        offline=True,  # a static batch: its prompts are encoded together, then it decodes in step
        notes=note,
    )


_INF2, _TRN1 = "inf2.48xlarge", "trn1.32xlarge"
_L3 = "Llama-3-8B row (same shape as the 3.1 preset), int8 weight storage"
_L3_70 = "Llama-3-70B row (same shape as the 3.1 preset)"
_MISTRAL = "Mistral-7B-Instruct-v0.2 row (v0.3 preset: same shape, 768 more vocabulary rows)"

MEASUREMENTS += (
    # Inferentia2, TP=24
    _neuron("llama-2-7b", _INF2, "2.18.0", "bf16", 8, 128, 3968, 725.83),
    _neuron("llama-2-13b", _INF2, "2.18.0", "bf16", 8, 128, 3968, 589.89),
    _neuron("llama-2-70b", _INF2, "2.18.0", "bf16", 1, 128, 128, 30.06),
    _neuron("llama-2-70b", _INF2, "2.18.0", "bf16", 1, 256, 256, 29.92),
    _neuron("llama-2-70b", _INF2, "2.18.0", "bf16", 1, 128, 1024, 30.07),
    _neuron("llama-2-70b", _INF2, "2.18.0", "bf16", 1, 1024, 1024, 29.43),
    _neuron("llama-2-70b", _INF2, "2.18.0", "bf16", 1, 1024, 2048, 28.91),
    _neuron("llama-2-70b", _INF2, "2.18.0", "bf16", 1, 2048, 2048, 28.33),
    _neuron("llama-3.1-8b", _INF2, "2.18.1", "int8", 8, 128, 3968, 859.09, _L3),
    _neuron("llama-3.1-8b", _INF2, "2.18.1", "int8", 8, 2048, 2048, 759.15, _L3),
    _neuron("llama-3.1-8b", _INF2, "2.18.1", "int8", 8, 4096, 4096, 521.96, _L3),
    _neuron("llama-3.1-8b", _INF2, "2.18.1", "int8", 8, 128, 8064, 649.17, _L3),
    _neuron("llama-3.1-70b", _INF2, "2.18.1", "bf16", 1, 128, 128, 31.28, _L3_70),
    _neuron("llama-3.1-70b", _INF2, "2.18.1", "bf16", 1, 1024, 1024, 30.16, _L3_70),
    _neuron("llama-3.1-70b", _INF2, "2.18.1", "bf16", 1, 2048, 2048, 28.84, _L3_70),
    _neuron("llama-3.1-70b", _INF2, "2.18.1", "bf16", 1, 256, 256, 30.9, _L3_70),
    _neuron("llama-3.1-70b", _INF2, "2.18.1", "bf16", 1, 128, 1024, 30.82, _L3_70),
    _neuron("llama-3.1-70b", _INF2, "2.18.1", "bf16", 1, 1024, 2048, 29.81, _L3_70),
    _neuron("mistral-7b", _INF2, "2.18.0", "bf16", 8, 128, 3968, 761.89, _MISTRAL),
    _neuron("mistral-7b", _INF2, "2.18.0", "bf16", 8, 4096, 4096, 450.38, _MISTRAL),
    _neuron("mistral-7b", _INF2, "2.18.0", "bf16", 8, 8192, 8192, 411.05, _MISTRAL),
    # Trainium, TP=32
    _neuron("llama-2-70b", _TRN1, "2.18.0", "bf16", 4, 128, 128, 141.45),
    _neuron("llama-2-70b", _TRN1, "2.18.0", "bf16", 4, 256, 256, 143.43),
    _neuron("llama-2-70b", _TRN1, "2.18.0", "bf16", 4, 128, 1024, 145.13),
    _neuron("llama-2-70b", _TRN1, "2.18.0", "bf16", 4, 1024, 1024, 133.25),
    _neuron("llama-2-70b", _TRN1, "2.18.0", "bf16", 4, 1024, 2048, 129.28),
    _neuron("llama-2-70b", _TRN1, "2.18.0", "bf16", 4, 2048, 2048, 120.63),
    _neuron("llama-3.1-8b", _TRN1, "2.18.1", "int8", 8, 128, 3968, 1142.70, _L3),
    _neuron("llama-3.1-8b", _TRN1, "2.18.1", "int8", 8, 4096, 4096, 770.16, _L3),
    _neuron("llama-3.1-8b", _TRN1, "2.18.1", "int8", 8, 128, 8064, 933.50, _L3),
    _neuron("llama-3.1-70b", _TRN1, "2.18.1", "bf16", 4, 128, 128, 138.01, _L3_70),
    _neuron("mistral-7b", _TRN1, "2.18.0", "bf16", 8, 8192, 8192, 484.58, _MISTRAL),
    _neuron("llama-3.1-70b", _TRN1, "2.18.1", "bf16", 4, 128, 1024, 140.51, _L3_70),
    _neuron("llama-3.1-70b", _TRN1, "2.18.1", "bf16", 4, 2048, 2048, 120.36, _L3_70),
)


# --- Google TPU v5e: tpu-recipes JetStream + MaxText Llama2-7B ------------------------------------

MEASUREMENTS += (
    Measurement(
        model="llama-2-7b",
        instance_type="v5litepod-8",
        devices=8,
        weights="bf16",
        kv_cache="bf16",
        prompt_tokens=218,  # 217,011 input tokens / 995 requests
        output_tokens=940,  # 934,964 generated tokens / 995 requests
        tokens_per_s=3061.78,
        max_batch=88,  # per_device_batch_size 11 x 8 chips
        engine="JetStream + MaxText",
        engine_version="main (recipe of 2024-08)",
        source=(
            "https://github.com/AI-Hypercomputer/tpu-recipes/blob/5c843f3012ed417871870bcf633c35b1b46fc68a/"
            "inference/v5e/JetStream-Maxtext/Llama2-7B/README.md"
        ),
        as_of=_READ_NEW,
        tensor_parallel=8,  # ici_tensor_parallelism=-1: over all 8 chips
        exact_batch=True,
        # max_target_length=2048: MaxText's decode attention is an einsum over each slot's whole
        # prefill cache (max_prefill_predict_length=1024) and generate cache (the other 1,024),
        # masked to the sequence's length, so every step reads 2,048 cached tokens per slot
        decode_kv_tokens=2048,
        # JetStream prefills one request at a time between generate steps over all 88 slots
        scheduling=Scheduling.SEPARATE,
        decode_read=DecodeRead.SLOT,
        notes="OpenOrca prompts of mixed lengths; ISL/OSL are the published totals' means",
    ),
)
