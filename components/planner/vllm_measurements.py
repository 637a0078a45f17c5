"""Published vLLM measurements the planner's factors are fitted on, with the split fixed beforehand.

Every point states the model, weight and KV formats, hardware, tensor-parallel
degree, input/output lengths, the concurrency (or the offline batch), the
engine version, a source pinned to a commit and the date it was read. The split
(`Split.FIT` / `Split.HOLDOUT`) was written into this table before any factor
was searched, a third of each family held out; `planner.calibration` fits on
the first and reports the error on both.

NVIDIA GPUs (14 points: 9 fit, 5 holdout)
  * dstack's 8 x H100 SXM5 vs 8 x MI300X comparison (dstackai/benchmarks at
    85a2fe1, comparison/h100sxm5_vs_mi300x): Llama 3.1 405B in Meta's FP8
    checkpoint (FP8 weights, BF16 KV cache), TP=8 on 8 x H100 SXM5 80GB, vLLM
    0.6.3.post2.dev308+gb489fc3c (the README's environment dump), offline
    `benchmark_throughput.py` with --max-model-len 91680 and
    --num-scheduler-step 1, so vLLM's defaults for a context over 32K applied:
    chunked prefill with a 512-token budget and at most 256 sequences
    (vllm/engine/arg_utils.py lines 996-1012 and vllm/config.py line 1114 of the
    0.6.4 wheel, the release the dev build preceded). `batch_size` is the number
    of prompts, all submitted at once. The CSV's `tokens_per_second` counts
    input and output tokens (`total_num_tokens` = prompts x (ISL + OSL)); the
    figures here are its output share, x OSL / (ISL + OSL). Rows whose batch the
    KV cache cannot hold whole (128 and 256 prompts, and 16 or more at 32784/2048)
    are left out: vLLM admits a request on its prompt and preempts (and later
    recomputes) requests as their outputs outgrow the cache, which the planner
    does not model; it plans a concurrency whose whole contexts fit.
  * vLLM's blog "The State of FP8 KV-Cache and Attention Quantization in vLLM"
    (2026-04-22; vllm-project/vllm-project.github.io at 5ffe2dd,
    _posts/2026-04-22-fp8-kvcache.md, Table 4): Llama 3.1 8B (BF16 weights) on
    one H100, vLLM 0.19.1 (the post's "after" version), 150 requests at
    concurrency 8 of ~20,000 input and ~2,000 output tokens (+-15%), with the KV
    cache in BF16 and in FP8. The token budget is vLLM's default for an H100
    server (8,192); the post does not state it.

AWS Neuron (8 points: 5 fit, 3 holdout)
  * Hugging Face optimum-neuron's vLLM benchmarks (huggingface/optimum-neuron):
    Llama 3.1 8B Instruct (BF16), TP=8 (4 chips, 8 NeuronCores) per server,
    compiled batch 32, sequence length 4,096, guidellm with emulated prompts of
    1,500 +- 150 tokens and outputs of 250 +- 20. "synchronous" is one request
    at a time; "throughput" keeps up to 128 users in flight (32 per server with
    four servers, 96 with three, 32 with one). Data parallel on inf2.48xlarge
    (3 servers, 2025-09-16) and trn1.32xlarge (4 servers, 2025-09-22; the first
    of three runs, the other two within 2%) with optimum-neuron 0.3.1.dev6
    (vLLM 0.10.0, Neuron SDK 2.24), benchmark/vllm/data-parallel/llama3.1-8b at
    246cffe; one server on inf2.48xlarge (2026-03-03) with optimum-neuron
    0.4.6.dev3 (Neuron SDK 2.26.1), standard and chunked context encoding with
    on-device sampling, benchmark/vllm/chunked-prefill at 2eb8c80 (the two
    configurations with host-side sampling are left out: not the default).
    optimum-neuron compiles one decode graph for the whole sequence length, so
    every decode step reads 32 lines x 4,096 positions (`DecodeRead.SLOT`), and
    encodes prompts one at a time between decode steps.
  This is vLLM on Neuron, but with optimum-neuron's model code, not the NxD
  Inference the stacks' DLC runs (vLLM 0.9.1 + NxD Inference 0.5.9230): no
  published vLLM + NxD Inference figure on inf2 or trn1 was found (the Neuron
  docs' NxD Inference tutorials print commands, not results; their published
  figures are for trn2, which the catalog does not hold). Served Neuron
  estimates therefore take NxD Inference's buckets from its source
  (`planner.engine`) and the per-step costs from these points.

Google TPUs (2 points: 1 fit, 1 holdout)
  * Google's tpu-recipes vLLM recipe for Llama-3.3-70B-Instruct on v6e-8
    (AI-Hypercomputer/tpu-recipes at b005d56, inference/trillium/vLLM/Llama3.3):
    vllm-tpu nightly-20251129, BF16, TP=8, --max-num-batched-tokens 512,
    --max-num-seqs 256, `vllm bench serve` on the random dataset at 1000/1000
    with --ignore-eos, 3,000 requests at client concurrency 64 and 128.
  No other published vLLM TPU figure with stated lengths and concurrency was
  found for a catalog TPU: the other tpu-recipes vLLM READMEs (Qwen2.5-32B,
  Qwen3, Llama 3.x for 8B) print placeholders; the v6e Llama-3.1-8B walkthrough
  of 2025-02 (ShareGPT, 1,000 requests at once) has no fixed lengths or
  concurrency; the Qwen3.6-27B figure sits on an unmerged branch of a model
  with no preset; vLLM's TPU blog post (2025-10-16) gives only relative gains in
  charts; the tpu-inference repository keeps its benchmark results in a
  database, not the repository; the ironwood (TPU7x) recipes are for a chip
  the catalog does not hold. Eight TPU points could not be found.

Read and not used, for every family:
  * vLLM's performance blog posts of 2024-09-05 (v0.6.0) and 2025-01-27 (V1):
    ShareGPT and sonnet datasets, results only in charts.
  * vLLM's perf dashboards: results live in a database behind a web page the
    sources here cannot read at a pinned state.
  * MLPerf Inference (v4.1, v5.1): the datasets' mean input lengths are not
    published (see `planner.measurements`).
  * NVIDIA NIM benchmark tables: NIM runs TensorRT-LLM for these models.
  * Vendor and third-party blogs: Microsoft's ND-H100-v5 posts (variable-length
    ShareGPT profiles), an A100 40GB concurrency sweep on vLLM 0.23.0 (only
    the opening of the page, with a rounded c=1 figure, is readable here), an
    AWS community post on inf2 TP/DP (requests per second at a latency target,
    figures inconsistent with its stated 16K-token prompts), pages of
    "projected" figures.
"""

from __future__ import annotations

from datetime import date

from inference_infra.components.planner.engine import DecodeRead, Scheduling
from inference_infra.components.planner.measurements import Measurement, Split

_READ = date(2026, 11, 25)

# --- NVIDIA: dstack, Llama 3.1 405B FP8 on 8 x H100, vLLM 0.6.3.post2.dev308, offline ----------

_DSTACK = (
    "https://github.com/dstackai/benchmarks/blob/85a2fe177aabe8a5556ce75e791dcd74b1cd8187/"
    "comparison/h100sxm5_vs_mi300x/csv_data/throughput_comparsion.csv"
)


def _dstack(isl: int, osl: int, prompts: int, total_tokens_per_s: float, split: Split) -> Measurement:
    return Measurement(
        model="llama-3.1-405b",
        instance_type="p5.48xlarge",
        devices=8,
        weights="fp8",
        kv_cache="bf16",
        prompt_tokens=isl,
        output_tokens=osl,
        tokens_per_s=total_tokens_per_s * osl / (isl + osl),  # the CSV counts input + output tokens
        max_batch=prompts,  # all submitted at once; vLLM 0.6 runs up to 256 (max_num_seqs) as KV allows
        engine="vLLM",
        engine_version="0.6.3.post2.dev308",
        source=_DSTACK,
        as_of=_READ,
        tensor_parallel=8,
        split=split,
        token_budget=512,  # chunked prefill's default budget for a context over 32K
        offline=True,
        v0_engine=True,
        max_model_len=91680,
        notes=f"benchmark_throughput.py, {prompts} prompts at once; all tokens/s {total_tokens_per_s:.2f}",
    )


_BLOG_FP8_KV = (
    "https://github.com/vllm-project/vllm-project.github.io/blob/5ffe2dd543a30f34309d71d8374803612223e9fb/"
    "_posts/2026-04-22-fp8-kvcache.md"
)


def _blog(kv_cache: str, tps: float, split: Split) -> Measurement:
    return Measurement(
        model="llama-3.1-8b",
        instance_type="p5.4xlarge",  # one H100 SXM
        devices=1,
        weights="bf16",
        kv_cache=kv_cache,
        prompt_tokens=20000,
        output_tokens=2000,
        tokens_per_s=tps,
        max_batch=8,  # client concurrency
        engine="vLLM",
        engine_version="0.19.1",
        source=_BLOG_FP8_KV,
        as_of=_READ,
        tensor_parallel=1,
        exact_batch=True,
        split=split,
        notes="150 requests at concurrency 8, lengths +-15% around 20,000 / 2,000 (Table 4)",
    )


NVIDIA = (
    _dstack(128, 2048, 4, 122.1203704, Split.FIT),
    _dstack(128, 2048, 8, 231.9335981, Split.HOLDOUT),
    _dstack(128, 2048, 16, 459.1652319, Split.FIT),
    _dstack(128, 2048, 32, 888.5026806, Split.FIT),
    _dstack(128, 2048, 64, 1130.839668, Split.HOLDOUT),
    _dstack(2048, 2048, 4, 224.3991082, Split.FIT),
    _dstack(2048, 2048, 8, 416.0803779, Split.FIT),
    _dstack(2048, 2048, 16, 781.5082372, Split.HOLDOUT),
    _dstack(2048, 2048, 32, 911.1295814, Split.FIT),
    _dstack(2048, 2048, 64, 998.7796751, Split.FIT),
    _dstack(32784, 2048, 4, 590.0635218, Split.FIT),
    _dstack(32784, 2048, 8, 608.8225492, Split.HOLDOUT),
    _blog("bf16", 450.3, Split.FIT),
    _blog("fp8", 517.5, Split.HOLDOUT),
)


# --- AWS Neuron: optimum-neuron's vLLM benchmarks, Llama 3.1 8B, TP=8, batch 32 ------------------

_OPTIMUM_DP = (
    "https://github.com/huggingface/optimum-neuron/blob/246cffe8646b770619b36a3c158cad05671e9c7d/"
    "benchmark/vllm/data-parallel/llama3.1-8b/"
)
_OPTIMUM_CP = (
    "https://github.com/huggingface/optimum-neuron/blob/2eb8c80f7c0a0fe3cffefa676356293dbb807560/"
    "benchmark/vllm/chunked-prefill/"
)


def _optimum(
    instance: str, chips: int, users: int, tps: float, version: str, source: str, split: Split, note: str
) -> Measurement:
    return Measurement(
        model="llama-3.1-8b",
        instance_type=instance,
        devices=chips,
        weights="bf16",
        kv_cache="bf16",
        prompt_tokens=1500,
        output_tokens=250,
        tokens_per_s=tps,
        max_batch=users,  # requests in flight: 1 (synchronous) or 32 per server
        engine="vLLM (optimum-neuron)",
        engine_version=version,
        source=source,
        as_of=_READ,
        tensor_parallel=8,  # NeuronCores per server
        exact_batch=True,
        split=split,
        scheduling=Scheduling.SEPARATE,
        decode_read=DecodeRead.SLOT,
        compiled_batch=32,
        max_model_len=4096,
        notes=note,
    )


_DP_2025 = "0.3.1.dev6 (vLLM 0.10.0, Neuron SDK 2.24)"
_ONE_2026 = "0.4.6.dev3 (Neuron SDK 2.26.1)"
_DP3, _DP4 = f"{_OPTIMUM_DP}vllm-results-dp3.csv", f"{_OPTIMUM_DP}vllm-results-dp4.csv"
_STD, _HYBRID = f"{_OPTIMUM_CP}std-ods.csv", f"{_OPTIMUM_CP}hybrid-ods.csv"
_FIT, _HOLD = Split.FIT, Split.HOLDOUT

NEURON = (
    # instance, chips, requests in flight, output tokens/s, optimum-neuron version, source, split, run
    _optimum("inf2.48xlarge", 12, 1, 34.981439, _DP_2025, _DP3, _FIT, "3 servers, synchronous"),
    _optimum("inf2.48xlarge", 12, 96, 1226.115891, _DP_2025, _DP3, _FIT, "3 servers, 96 slots busy"),
    _optimum("trn1.32xlarge", 16, 1, 35.574821, _DP_2025, _DP4, _FIT, "4 servers, synchronous"),
    _optimum("trn1.32xlarge", 16, 128, 1576.858835, _DP_2025, _DP4, _HOLD, "4 servers, 128 users"),
    _optimum("inf2.48xlarge", 4, 1, 38.523636, _ONE_2026, _STD, _HOLD, "standard encoding, synchronous"),
    _optimum("inf2.48xlarge", 4, 32, 426.207353, _ONE_2026, _STD, _FIT, "standard encoding, 32 users"),
    _optimum("inf2.48xlarge", 4, 1, 38.443594, _ONE_2026, _HYBRID, _FIT, "chunked encoding, synchronous"),
    _optimum("inf2.48xlarge", 4, 32, 440.446877, _ONE_2026, _HYBRID, _HOLD, "chunked encoding, 32 users"),
)


# --- Google TPU v6e: tpu-recipes vLLM Llama-3.3-70B-Instruct at 1000/1000 ------------------------

_VLLM_TPU_70B = (
    "https://github.com/AI-Hypercomputer/tpu-recipes/blob/b005d564fc4f6fb148c96e2e240869b92ceee306/"
    "inference/trillium/vLLM/Llama3.3/README.md"
)


def _vllm_v6e(concurrency: int, tps: float, split: Split) -> Measurement:
    return Measurement(
        model="llama-3.3-70b",
        instance_type="v6e-8",
        devices=8,
        weights="bf16",  # the checkpoint's dtype; no quantization flag
        kv_cache="bf16",
        prompt_tokens=999,  # 2,997,000 input tokens / 3,000 requests (random dataset, 1000 asked)
        output_tokens=1000,  # --ignore-eos: 3,000,000 generated tokens / 3,000 requests
        tokens_per_s=tps,
        max_batch=concurrency,  # vllm bench serve --max-concurrency (server: --max-num-seqs 256)
        engine="vLLM (TPU)",
        engine_version="nightly-20251129",  # vllm/vllm-tpu:nightly-20251129-28607fc-39e63de
        source=_VLLM_TPU_70B,
        as_of=date(2026, 11, 24),
        tensor_parallel=8,  # --tensor-parallel-size 8
        exact_batch=True,
        split=split,
        token_budget=512,  # --max-num-batched-tokens 512
        max_model_len=2048,
        notes="3,000 requests at a fixed client concurrency; bf16, --gpu-memory-utilization 0.98",
    )


TPU = (
    _vllm_v6e(64, 2494.80, Split.FIT),
    _vllm_v6e(128, 3544.46, Split.HOLDOUT),
)

VLLM_MEASUREMENTS: tuple[Measurement, ...] = NVIDIA + NEURON + TPU
