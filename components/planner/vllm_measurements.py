"""Published vLLM measurements the planner's factors are fitted on, with the split fixed beforehand.

Every point states the model, weight and KV formats, hardware, tensor-parallel
degree, input/output lengths, the concurrency (or the burst the engine's KV
cache admitted), the engine version, a source pinned to a commit or a pull
request and the date it was read, and what it measures (`Metric`): generated
tokens per second over a run, one stream's decode speed (1 / inter-token
latency) or one request's prompt tokens over its time to first token.

The split (`Split.FIT` / `Split.HOLDOUT`) was written into this table before any
factor was searched. The first pass's points keep the split they had; for the
points added in the second pass the rule was fixed before the search too: in
the order of this file, every third new point of a family is held out.
`planner.calibration` fits on the first and reports the error on both.

Only V1-engine vLLM (0.8 and later, or vLLM TPU on tpu-inference's JAX
backend) is fitted: the engines the stacks serve. Older vLLM runs that were read
are kept in `VLLM_REFERENCE`, reported and never fitted (below, with why).

NVIDIA GPUs (14 points: 9 fit, 5 holdout); all from vLLM's blog "The State of
FP8 KV-Cache and Attention Quantization in vLLM" (2026-04-22;
vllm-project/vllm-project.github.io at 5ffe2dd, _posts/2026-04-22-fp8-kvcache.md),
Llama 3.1 8B with BF16 weights on one GPU, KV cache in BF16 and in FP8:
  * Table 4 (H100, vLLM 0.19.1, the post's "after" version): 150 requests at
    concurrency 8 of ~20,000 input and ~2,000 output tokens (+-15%): output
    tokens/s, the median time to first token and the median inter-token latency
    (a decode step with 8 sequences of ~21,000 cached tokens; with 2,000-token
    outputs fewer than 1% of steps carry a prompt chunk, so the median is a
    decode-only step). The token budget is vLLM's default for an H100 server
    (8,192); the post does not state it.
  * The concurrency-1 sweeps ("vllm bench serve with concurrency 1, 128 output
    tokens, and input lengths swept from 256 to 125k tokens") on H100 (vLLM
    0.19.1) and B200 (FlashInfer backend; the B200 section names no version,
    the post's is 0.19.1): the post prints each sweep's fitted line,
    ITL = slope x input + intercept (H100 BF16 4.37e-05 ms/token and 6.44 ms, FP8
    2.37e-05 and 6.58; B200 BF16 1.80e-05 and 3.93, FP8 9.72e-06 and 3.96). The
    points are that line at 1,000 and 100,000 input tokens, inside the swept
    range: derived from the printed fit, not read off a single run.
  These pin the share of peak bandwidth (the intercepts read the weights, the
  slopes the KV cache), the host time per step (what the intercepts leave) and,
  through the time to first token of a 20,000-token prompt, the share of peak
  FLOPs prefill reaches. No V1 NVIDIA run at a tensor-parallel degree above 1
  was found, so the per-doubling factor is not fitted (`planner.calibration`).
  Searched again on 2026-12-02 (issue #35 item 9) for a V1 run at TP 2, 4 or 8 with
  its settings stated, in the stored public docs and pages: vLLM's docs and blog
  (the v0.6.0 performance post's Llama 70B TP 4 runs are the V0 engine; the
  nightly-benchmark pages on Buildkite give no TP and V0-era versions), MLPerf
  Inference v5.0 and v5.1 (MLCommons' task-force posts; the vLLM submissions
  found, Red Hat's v5.1 Llama 3.1 8B FP8 with vLLM 0.10.0, are one GPU each),
  NVIDIA's MLPerf and TensorRT-LLM performance pages (TP 1-8 tables, but
  TensorRT-LLM, not vLLM) and AMD/third-party posts (a personal TP-versus-DP
  comparison on 8 x H100 of MoE models the catalog does not hold, with no engine
  version; aggregator pages citing "synthesized" figures). None qualified, so
  nothing was added and nothing re-fitted.

AWS Neuron (14 points: 9 fit, 5 holdout)
  * Hugging Face optimum-neuron's vLLM benchmarks (huggingface/optimum-neuron):
    Llama 3.1 8B Instruct (BF16), TP=8 (4 chips, 8 NeuronCores) per server,
    compiled batch 32, sequence length 4,096, guidellm with emulated prompts of
    1,500 +- 150 tokens and outputs of 250 +- 20. "synchronous" is one request
    at a time; "throughput" keeps up to 128 users in flight (32 per server).
    Data parallel on inf2.48xlarge (3 servers, 2025-09-16) and trn1.32xlarge (4
    servers, 2025-09-22; the first of three runs, the other two within 2%) with
    optimum-neuron 0.3.1.dev6 (vLLM 0.10.0, Neuron SDK 2.24),
    benchmark/vllm/data-parallel/llama3.1-8b at 246cffe; one server on
    inf2.48xlarge (2026-03-03) with optimum-neuron 0.4.6.dev3 (Neuron SDK
    2.26.1), standard and chunked context encoding with on-device sampling,
    benchmark/vllm/chunked-prefill at 2eb8c80 (the two configurations with
    host-side sampling are left out: not the default); one, two and three
    servers on inf2.48xlarge through `optimum-cli neuron serve` (2026-03-17,
    benchmark/vllm/llama-3.1-8b/vllm-results-cli-dp.csv at e0600e4, the setup
    in dp-benchmark-results.md beside it).
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

Google TPUs (6 points: 4 fit, 2 holdout)
  * Google's tpu-recipes vLLM recipe for Llama-3.3-70B-Instruct on v6e-8
    (AI-Hypercomputer/tpu-recipes at b005d56, inference/trillium/vLLM/Llama3.3):
    vllm-tpu nightly-20251129, BF16, TP=8, --max-num-batched-tokens 512,
    --max-num-seqs 256, `vllm bench serve` on the random dataset at 1000/1000
    with --ignore-eos, 3,000 requests at client concurrency 64 and 128.
  * tpu-inference's ragged-paged-attention pull requests (vllm-project/tpu-inference
    #1820, 2026-02-27, and #1972, 2026-03-19; the "before" and "after" build of
    each): Llama-3.1-8B-Instruct (BF16), TP=1, --max-num-batched-tokens 512,
    --max-model-len 2048, --max-num-seqs 512, --gpu-memory-utilization 0.95;
    `vllm bench serve` on the random dataset at 1800/128, 1,000 requests sent at
    once (no rate or concurrency limit), so the engine's KV cache sets the batch.
    The PRs print requests/s (12.89 -> 14.64 and 14.53 -> 15.07); output tokens/s
    here are those x 128, the generated count #1972's "before" output prints
    (128,000 tokens for 1,000 requests). The PRs do not name the chip: v6e-1,
    the chip the same author's #470 states for this command and the one
    tpu-inference's CI runs it on (.buildkite/models/meta-llama_Llama-3_1-8B-Instruct.yml,
    queue tpu_v6e_queue). Four builds of one shape: they pin the prefill share
    of peak FLOPs on a TPU and show how much the engine moved in three weeks.
  Two TPU points short of eight (what was searched and what is missing is in
  the planner README).

Read and not used, for every family:
  * vLLM's performance blog posts of 2024-09-05 (v0.6.0) and 2025-01-27 (V1),
    the 2025-10-16 "vLLM TPU" post (vllm-project.github.io at 13bb942: 3.6x and
    2.1x ratios, charts) and the 2026-05-11 TurboQuant post: ShareGPT/sonnet
    datasets or results only as charts and ratios.
  * Google Cloud's "Rightsizing LLM serving on vLLM for GPUs and TPUs" (2025-08)
    and dev.to's Gemma 4 26B runs on v6e-4: Gemma models without a planner preset
    (the latter MoE with n-gram speculation and prefix caching); GKE Inference
    Quickstart's profiles come from Google's API, not a published file.
  * vLLM's perf dashboards and tpu-inference's CI thresholds: results live in a
    database; the CI files hold pass thresholds, not measurements.
  * MLPerf Inference (v4.1, v5.1): the datasets' mean input lengths are not
    published (see `planner.measurements`).
  * Searched again for NVIDIA V1 runs past TP=1 (2026-12-02, issue #35 item 9):
    every post of vLLM's blog (vllm-project.github.io at c3a01c4, 2026-08-21)
    that names a preset model and a tensor-parallel degree above 1 is an AMD
    ROCm run (2024-10-23, 2025-02-24) or a V0 run (2024-07-23 Llama 3.1, 2024-10-17
    speculative decoding); the 2026 posts with TP 4-8 serve MoE models without a
    preset (DeepSeek V3.2, MiniMax, Qwen 3.5, GLM, Kimi). vLLM #20759 (2025-07,
    symmetric-memory all-reduce; Llama-3.1-70B-Instruct at TP 2-8, V1) measures
    the sonnet dataset at Poisson request rates of 1-10 QPS, not a concurrency,
    and names no vLLM version; #24111 and #24532 print all-reduce kernel times
    or DeepSeek-R1 (no preset); ArcticInference #184 (4 x H200, TP=4, 8000/1000
    at concurrency 79) ran vLLM 0.9.0.1 with the Arctic Inference plugin loaded,
    which replaces parts of the engine. So the per-doubling factor on NVIDIA
    stays unfitted.
  * NVIDIA NIM benchmark tables: NIM runs TensorRT-LLM for these models.
  * GitHub threads with vLLM numbers but a missing setting: tpu-inference #1006
    (v6e Llama 8B at 1,199/123 tokens; the server command is not in the PR),
    #470 (v6e-1 and v6e-8 requests/s; command cut off), #1135 (one 10-token
    request of Qwen2.5-1.5B, chip not named), #1961 (Qwen3-32B, FP8 weights,
    activations and KV, 1024/8192 +-20%, chip not named), #3050 (InferenceX
    tables for Qwen3.5-397B MoE with expert parallelism), sglang-jax #183 (vLLM
    on v6e-1, Qwen2.5-7B at 3000/30, but 108 of 500 requests failed and no
    version is given), vLLM #42484 (H100, vLLM 0.19.1, concurrency sweep at
    8K context; the readable part has no model or figures), vLLM #16515 (L4
    FP16/FP8 at request rates, not concurrencies), vLLM #25915 (Qwen3-8B, no
    preset, "h100" unspecified).
  * Repositories: simon-mo/vLLM-Benchmark (request-rate ramps; 19 of 50
    requests failed in the Llama 8B H200 run), LambdaLabsML/vllm-benchmark
    (ShareGPT, vLLM 0.5/0.6), dstackai/benchmarks' later comparisons (SGLang,
    gpt-oss), tenstorrent/tt-inference-server GPU references (no vLLM version)
    and targets (not measurements), yobitelcomm/bench (built-in chat prompts of
    unstated length), vllm-project/recipes and AI-Hypercomputer/gpu-recipes
    (placeholders), optimum-neuron's Qwen3-MoE and Llama 4 runs (no preset; the
    MoE runs at 8 tokens/s per server are far from any roofline) and its trn2
    runs (trn2 not in the catalog), awslabs/accelerated-compute-tutorials
    (rounded figures without lengths or concurrency).
  * Vendor and third-party pages: Microsoft's ND-H100-v5 posts (variable-length
    profiles), an A100 40GB concurrency sweep on vLLM 0.23.0 (only the
    opening, with rounded figures, is readable here), databasemart (A40, not in
    the catalog), an AWS community post on inf2 TP/DP (figures inconsistent
    with its stated prompts), pages of "projected" figures.
"""

from __future__ import annotations

from datetime import date

from inference_infra.components.planner.engine import DecodeRead, Scheduling
from inference_infra.components.planner.measurements import Measurement, Metric, Split

_READ = date(2026, 11, 25)
_READ_AGAIN = date(2026, 11, 26)  # the second pass's sources
_FIT, _HOLD = Split.FIT, Split.HOLDOUT

# --- NVIDIA: vLLM's FP8 KV-cache post, Llama 3.1 8B on one H100 / B200 ---------------------------

_BLOG_FP8_KV = (
    "https://github.com/vllm-project/vllm-project.github.io/blob/5ffe2dd543a30f34309d71d8374803612223e9fb/"
    "_posts/2026-04-22-fp8-kvcache.md"
)
_H100, _B200 = "p5.4xlarge", "p6-b200.48xlarge"  # one H100 SXM; one B200 of the eight


def _table4(kv_cache: str, value: float, metric: Metric, split: Split, note: str, read: date) -> Measurement:
    return Measurement(
        model="llama-3.1-8b",
        instance_type=_H100,
        devices=1,
        weights="bf16",
        kv_cache=kv_cache,
        prompt_tokens=20000,
        output_tokens=2000,
        tokens_per_s=value,
        max_batch=8,  # client concurrency
        engine="vLLM",
        engine_version="0.19.1",
        source=_BLOG_FP8_KV,
        as_of=read,
        tensor_parallel=1,
        exact_batch=True,
        split=split,
        metric=metric,
        notes=f"150 requests at concurrency 8, lengths +-15% around 20,000 / 2,000 (Table 4): {note}",
    )


def _sweep(
    instance: str, kv_cache: str, slope_ms: float, intercept_ms: float, tokens: int, split: Split
) -> Measurement:
    gpu = "H100" if instance == _H100 else "B200"
    return Measurement(
        model="llama-3.1-8b",
        instance_type=instance,
        devices=1,
        weights="bf16",
        kv_cache=kv_cache,
        prompt_tokens=tokens,
        output_tokens=128,
        tokens_per_s=1000 / (slope_ms * tokens + intercept_ms),
        max_batch=1,
        engine="vLLM",
        engine_version="0.19.1",
        source=_BLOG_FP8_KV,
        as_of=_READ_AGAIN,
        tensor_parallel=1,
        exact_batch=True,
        split=split,
        metric=Metric.DECODE,
        notes=(
            f"{gpu} concurrency-1 sweep, KV {kv_cache}: the post's fitted ITL line"
            f" ({slope_ms:.3g} ms/token x input + {intercept_ms:g} ms) at {tokens:,} input tokens"
        ),
    )


NVIDIA = (
    # first pass (split kept)
    _table4("bf16", 450.3, Metric.OUTPUT, _FIT, "output tokens/s", _READ),
    _table4("fp8", 517.5, Metric.OUTPUT, _HOLD, "output tokens/s", _READ),
    # second pass: every third held out, in this order
    _table4("bf16", 20000 / 0.7636, Metric.PREFILL, _FIT, "prompt / median TTFT 763.6 ms", _READ_AGAIN),
    _table4("fp8", 20000 / 0.7428, Metric.PREFILL, _FIT, "prompt / median TTFT 742.8 ms", _READ_AGAIN),
    _table4("bf16", 1000 / 15.18, Metric.DECODE, _HOLD, "1 / median ITL 15.18 ms", _READ_AGAIN),
    _table4("fp8", 1000 / 12.93, Metric.DECODE, _FIT, "1 / median ITL 12.93 ms", _READ_AGAIN),
    _sweep(_H100, "bf16", 4.37e-05, 6.44, 1000, _FIT),
    _sweep(_H100, "bf16", 4.37e-05, 6.44, 100000, _HOLD),
    _sweep(_H100, "fp8", 2.37e-05, 6.58, 1000, _FIT),
    _sweep(_H100, "fp8", 2.37e-05, 6.58, 100000, _FIT),
    _sweep(_B200, "bf16", 1.80e-05, 3.93, 1000, _HOLD),
    _sweep(_B200, "bf16", 1.80e-05, 3.93, 100000, _FIT),
    _sweep(_B200, "fp8", 9.72e-06, 3.96, 1000, _FIT),
    _sweep(_B200, "fp8", 9.72e-06, 3.96, 100000, _HOLD),
)


# --- AWS Neuron: optimum-neuron's vLLM benchmarks, Llama 3.1 8B, TP=8, batch 32 ------------------

_OPTIMUM = "https://github.com/huggingface/optimum-neuron/blob/"
_OPTIMUM_DP = f"{_OPTIMUM}246cffe8646b770619b36a3c158cad05671e9c7d/benchmark/vllm/data-parallel/llama3.1-8b/"
_OPTIMUM_CP = f"{_OPTIMUM}2eb8c80f7c0a0fe3cffefa676356293dbb807560/benchmark/vllm/chunked-prefill/"
_OPTIMUM_CLI = (
    f"{_OPTIMUM}e0600e408792cec45eac1669506d55408be2c4ea/benchmark/vllm/llama-3.1-8b/vllm-results-cli-dp.csv"
)


def _optimum(
    instance: str,
    chips: int,
    users: int,
    tps: float,
    version: str,
    source: str,
    split: Split,
    note: str,
    read: date = _READ,
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
        as_of=read,
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
_CLI_2026 = "main at e0600e4 (2026-03-18, optimum-cli neuron serve)"
_DP3, _DP4 = f"{_OPTIMUM_DP}vllm-results-dp3.csv", f"{_OPTIMUM_DP}vllm-results-dp4.csv"
_STD, _HYBRID = f"{_OPTIMUM_CP}std-ods.csv", f"{_OPTIMUM_CP}hybrid-ods.csv"
_INF2 = "inf2.48xlarge"


def _cli(servers: int, users: int, tps: float, split: Split, note: str) -> Measurement:
    return _optimum(_INF2, 4 * servers, users, tps, _CLI_2026, _OPTIMUM_CLI, split, note, _READ_AGAIN)


NEURON = (
    # instance, chips, requests in flight, output tokens/s, optimum-neuron version, source, split, run
    _optimum(_INF2, 12, 1, 34.981439, _DP_2025, _DP3, _FIT, "3 servers, synchronous"),
    _optimum(_INF2, 12, 96, 1226.115891, _DP_2025, _DP3, _FIT, "3 servers, 96 slots busy"),
    _optimum("trn1.32xlarge", 16, 1, 35.574821, _DP_2025, _DP4, _FIT, "4 servers, synchronous"),
    _optimum("trn1.32xlarge", 16, 128, 1576.858835, _DP_2025, _DP4, _HOLD, "4 servers, 128 users"),
    _optimum(_INF2, 4, 1, 38.523636, _ONE_2026, _STD, _HOLD, "standard encoding, synchronous"),
    _optimum(_INF2, 4, 32, 426.207353, _ONE_2026, _STD, _FIT, "standard encoding, 32 users"),
    _optimum(_INF2, 4, 1, 38.443594, _ONE_2026, _HYBRID, _FIT, "chunked encoding, synchronous"),
    _optimum(_INF2, 4, 32, 440.446877, _ONE_2026, _HYBRID, _HOLD, "chunked encoding, 32 users"),
    # second pass: every third held out, in this order
    _cli(1, 1, 33.885498, _FIT, "1 server, synchronous"),
    _cli(1, 32, 385.219362, _FIT, "1 server, 128 users (32 in flight)"),
    _cli(2, 1, 32.998520, _HOLD, "2 servers, synchronous"),
    _cli(2, 64, 678.498179, _FIT, "2 servers, 128 users (64 in flight)"),
    _cli(3, 1, 32.668468, _FIT, "3 servers, synchronous"),
    _cli(3, 96, 1144.526370, _HOLD, "3 servers, 128 users (96 in flight)"),
)


# --- Google TPU v6e: tpu-recipes (70B, v6e-8) and tpu-inference's kernel PRs (8B, v6e-1) ---------

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


def _tpu_inference(pr: int, build: str, requests_per_s: float, split: Split) -> Measurement:
    return Measurement(
        model="llama-3.1-8b",
        instance_type="v6e-1",
        devices=1,
        weights="bf16",
        kv_cache="bf16",
        prompt_tokens=1800,
        output_tokens=128,
        tokens_per_s=requests_per_s * 128,
        max_batch=1000,  # all sent at once; the KV cache (and --max-num-seqs 512) set the batch
        engine="vLLM (TPU)",
        engine_version=f"tpu-inference PR #{pr} ({build})",
        source=f"https://github.com/vllm-project/tpu-inference/pull/{pr}",
        as_of=_READ_AGAIN,
        tensor_parallel=1,
        split=split,
        token_budget=512,  # --max-num-batched-tokens 512
        max_model_len=2048,
        memory_utilization=0.95,
        notes=f"1,000 requests of 1800/128 at once, {requests_per_s:.2f} requests/s x 128 generated tokens",
    )


TPU = (
    # first pass (split kept)
    _vllm_v6e(64, 2494.80, _FIT),
    _vllm_v6e(128, 3544.46, _HOLD),
    # second pass: every third held out, in this order
    _tpu_inference(1820, "before", 1000 / 77.56, _FIT),  # "Benchmark duration (s): 77.56"
    _tpu_inference(1820, "after", 14.64, _FIT),
    _tpu_inference(1972, "before", 1000 / 68.81, _HOLD),  # 128,000 tokens in 68.81 s
    _tpu_inference(1972, "after", 15.07, _FIT),
)

VLLM_MEASUREMENTS: tuple[Measurement, ...] = NVIDIA + NEURON + TPU


# --- Older vLLM builds: read, reported beside the fit, never fitted -------------------------------

_DSTACK = (
    "https://github.com/dstackai/benchmarks/blob/85a2fe177aabe8a5556ce75e791dcd74b1cd8187/"
    "comparison/h100sxm5_vs_mi300x/csv_data/throughput_comparsion.csv"
)


def _dstack(isl: int, osl: int, prompts: int, total_tokens_per_s: float) -> Measurement:
    """dstack's 8 x H100 runs of Llama 3.1 405B FP8 on vLLM 0.6.3.post2.dev308 (the V0 engine).

    Offline `benchmark_throughput.py` with --max-model-len 91680, so vLLM's defaults for a context
    over 32K applied: chunked prefill with a 512-token budget (vllm/engine/arg_utils.py lines
    996-1012 of the 0.6.4 wheel). The CSV counts input and output tokens; the figure here is the
    output share. Runs whose batch the KV cache cannot hold whole are left out.
    """
    return Measurement(
        model="llama-3.1-405b",
        instance_type="p5.48xlarge",
        devices=8,
        weights="fp8",
        kv_cache="bf16",
        prompt_tokens=isl,
        output_tokens=osl,
        tokens_per_s=total_tokens_per_s * osl / (isl + osl),
        max_batch=prompts,
        engine="vLLM (V0)",
        engine_version="0.6.3.post2.dev308",
        source=_DSTACK,
        as_of=_READ,
        tensor_parallel=8,
        token_budget=512,
        offline=True,
        max_model_len=91680,
        notes=f"benchmark_throughput.py, {prompts} prompts at once; all tokens/s {total_tokens_per_s:.2f}",
    )


_TORCH_XLA_V6E = "https://github.com/vllm-project/tpu-inference/pull/47"

# vLLM 0.6's V0 engine rebuilt each step's inputs on the host and ran chunked prefill over long
# prefixes with a slow attention path: its 32,784-token batches ran no faster with 8 prompts than
# with 4, and its 2,048/2,048 throughput stops growing past 32 prompts. The first pass fitted these
# with a V0-only cost per cached token; the served engines are V1, so they are reported, not fitted.
# The torch_xla TPU backend (tpu-inference #47, 2025-06-17, the same 1800/128 command on v6e-1 with
# --max-num-seqs 512 and no --gpu-memory-utilization) ran the 8B burst at half the 2026 speed.
VLLM_REFERENCE: tuple[Measurement, ...] = (
    _dstack(128, 2048, 4, 122.1203704),
    _dstack(128, 2048, 8, 231.9335981),
    _dstack(128, 2048, 16, 459.1652319),
    _dstack(128, 2048, 32, 888.5026806),
    _dstack(128, 2048, 64, 1130.839668),
    _dstack(2048, 2048, 4, 224.3991082),
    _dstack(2048, 2048, 8, 416.0803779),
    _dstack(2048, 2048, 16, 781.5082372),
    _dstack(2048, 2048, 32, 911.1295814),
    _dstack(2048, 2048, 64, 998.7796751),
    _dstack(32784, 2048, 4, 590.0635218),
    _dstack(32784, 2048, 8, 608.8225492),
    Measurement(
        model="llama-3.1-8b",
        instance_type="v6e-1",
        devices=1,
        weights="bf16",
        kv_cache="bf16",
        prompt_tokens=1799,  # 1,799,000 input tokens / 1,000 requests
        output_tokens=121,  # 121,341 generated tokens / 1,000 requests (no --ignore-eos)
        tokens_per_s=957.33,
        max_batch=1000,
        engine="vLLM (TPU, torch_xla)",
        engine_version="vLLM V1 TPU backend on torch_xla (2025-06-17)",
        source=_TORCH_XLA_V6E,
        as_of=_READ_AGAIN,
        tensor_parallel=1,
        token_budget=512,
        max_model_len=2048,
        notes="1,000 requests of 1800/128 at once; output token throughput as printed",
    ),
)
