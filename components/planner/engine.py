"""What the serving engine does that throughput and memory depend on: how it schedules steps.

The stacks serve every family with vLLM (components/serving/engines.py pins the
images): vLLM 0.28.0 on NVIDIA GPUs, vLLM's TPU build on TPUs, and vLLM 0.9.1
with the Neuron backend (NxD Inference) on Inferentia2/Trainium. Two ways of
scheduling follow from those versions, and a third way of reading the KV cache:

* Chunked prefill (vLLM's V1 scheduler, `Scheduling.CHUNKED`). Every step has a
  token budget, `max_num_batched_tokens`. The scheduler first gives each running
  request what it needs (one token for a decoding request, the rest of a prompt
  for one still prefilling, capped by the budget), then admits waiting requests
  while budget and KV blocks remain, cutting a prompt into chunks of what is
  left (vllm/v1/core/sched/scheduler.py in the vLLM 0.28.0 wheel, `schedule`:
  running requests from line 525, waiting ones from line 751, the chunk cut at
  line 966). Prefill chunks and decodes therefore share steps, and a step costs
  the larger of its compute and its memory traffic, not their sum.
* Separate prefill (`Scheduling.SEPARATE`): vLLM 0.9.1 on Neuron runs the V0
  worker (`vllm.worker.neuron_worker.NeuronWorker`, vllm/platforms/neuron.py in
  aws-neuron/upstreaming-to-vllm at dd417b3) without chunked prefill: a prompt
  is encoded in a step of its own (NxD Inference's context encoding runs one
  sequence at a time under continuous batching), and decode steps run the whole
  compiled batch. Fixed-batch engines of the reference measurements (MaxText,
  Transformers NeuronX, TensorRT-LLM's static batching) work the same way.
* How much KV cache a decode step reads (`DecodeRead`): a paged cache reads the
  tokens each sequence holds; NxD Inference reads, for every line of the
  compiled batch, the smallest compiled bucket longer than the batch's longest
  position (`neuronx_distributed_inference` v0.5.9230, the version of Neuron SDK
  2.25 that the pinned Neuron DLC installs: modules/autobucketing.py lines 8-19
  and 243-245 make the buckets, models/model_base.py line 3200 takes the
  attention width from the batch's largest position, models/model_wrapper.py
  lines 966-979 pick the first bucket above it, lines 779-815 pad the attention
  mask to that bucket and lines 576-591 pad the batch to its compiled size); an
  engine whose attention spans a fixed slot reads the whole slot.

Memory follows the engine's admission: vLLM 0.28.0 hands the KV cache what is
left of `gpu_memory_utilization` x device memory after the weights, the peak
activations of a profile forward pass over `max_num_batched_tokens` tokens and
non-torch memory (vllm/v1/worker/gpu_worker.py, `determine_available_memory`,
lines 513-563), in blocks of 16 tokens (vllm/config/cache.py line 48), and admits
a waiting request only when its whole prompt fits in free blocks
(`scheduler_reserve_full_isl`, vllm/config/scheduler.py line 130); a running
request that outgrows the free blocks is preempted and recomputed. The planner
holds each sequence's whole context in blocks, so the concurrency it plans is
one the engine keeps without preempting. vLLM 0.9.1 on Neuron makes one block
of `max_model_len` tokens per sequence and exactly `max_num_seqs + 1` blocks
(vllm/worker/neuron_worker.py lines 101-106 at dd417b3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from inference_infra.components.catalog import Accelerator, AcceleratorFamily

VLLM_WHEEL = "https://pypi.org/project/vllm/0.28.0/ (vllm-0.28.0-cp38-abi3-manylinux_2_28_x86_64.whl)"
NXDI_COMMIT = "f9e99f9ab862e03b3eab19ca05a62ab77a0c40af"  # tag v0.5.9230 (Neuron SDK 2.25.0)
NXDI_SOURCE = f"https://github.com/aws-neuron/neuronx-distributed-inference/tree/{NXDI_COMMIT}"
NEURON_VLLM_SOURCE = (
    "https://github.com/aws-neuron/upstreaming-to-vllm/tree/dd417b311607e53f2c7be614e69a5979facdb344"
)
TPU_INFERENCE_SOURCE = (
    "https://github.com/vllm-project/tpu-inference/blob/b8692ff01fa191343836996c27a39dc95f008b88/"
    "tpu_inference/layers/vllm/backends/flash_attn.py"
)

VLLM_BLOCK_TOKENS = 16  # CacheConfig.DEFAULT_BLOCK_SIZE in vLLM 0.28.0
FIRST_NEURON_BUCKET = 128  # NxD Inference's smallest token-generation bucket (autobucketing.py line 244)


class Scheduling(StrEnum):
    CHUNKED = "chunked prefill"  # prefill chunks and decodes share steps under a token budget
    SEPARATE = "separate prefill"  # a prompt is encoded in its own step; decode steps run the batch


class DecodeRead(StrEnum):
    PAGED = "paged"  # the tokens each sequence holds
    BUCKET = "bucket"  # NxD Inference: the compiled bucket above the batch's longest position
    SLOT = "slot"  # the whole allocated slot (max_model_len), masked


@dataclass(frozen=True, kw_only=True)
class Engine:
    """How one engine build schedules work; the served engines are in `served_engine`."""

    name: str
    scheduling: Scheduling
    decode_read: DecodeRead = DecodeRead.PAGED
    # max_num_batched_tokens: tokens one step processes at most (chunked prefill's budget).
    # None: the engine's default for the device (`vllm_token_budget`).
    token_budget: int | None = None
    source: str = ""

    def budget(self, device: Accelerator, max_model_len: int) -> int:
        """Tokens one step may process on `device` (SEPARATE: a whole prompt per step)."""
        if self.scheduling is Scheduling.SEPARATE:
            return max(max_model_len, 2048)  # vLLM V0 without chunked prefill: max(max_model_len, 2048)
        return self.token_budget if self.token_budget is not None else vllm_token_budget(device)

    def block_tokens(self, device: Accelerator, max_model_len: int) -> int:
        """Tokens per KV block: a sequence's cache is a whole number of blocks."""
        if self.decode_read is not DecodeRead.PAGED:
            return max_model_len  # one slot per sequence (vLLM 0.9.1 on Neuron: block_size = max_model_len)
        if device.family is AcceleratorFamily.GOOGLE_TPU:
            return tpu_page_tokens(max_model_len)
        return VLLM_BLOCK_TOKENS


def vllm_token_budget(device: Accelerator) -> int:
    """vLLM 0.28.0's default `max_num_batched_tokens` for `vllm serve` on `device`.

    `EngineArgs.get_batch_defaults` (vllm/engine/arg_utils.py lines 2582-2630 of the wheel):
    16,384 from 160 GiB of device memory, 8,192 from 70 GiB unless the device is an A100,
    2,048 otherwise; TPU v6e 1,024, v5e 512, v5p 256 (OPENAI_API_SERVER column).
    """
    tpu = {"tpu-v6e": 1024, "tpu-v5e": 512, "tpu-v5p": 256}
    if device.key in tpu:
        return tpu[device.key]
    if device.memory_gib >= 160:
        return 16384
    if device.memory_gib >= 70 and not device.key.startswith("a100"):
        return 8192
    return 2048


def tpu_page_tokens(max_model_len: int) -> int:
    """tpu-inference's KV page size (`PallasAttentionBackend.get_page_size`, TPU_INFERENCE_SOURCE)."""
    if max_model_len > 8192:
        return 16
    page = 2 ** math.ceil(math.log2(max(1, max_model_len))) // 16
    return min(256, max(16, page))


def neuron_buckets(max_length: int, first: int = FIRST_NEURON_BUCKET) -> list[int]:
    """NxD Inference's token-generation buckets up to `max_length` (`generate_buckets(128, max_length)`).

    Powers of two from `first`, stopping below 2**round(log2(max_length)), then `max_length`.
    """
    if max_length <= first:
        return [max_length]
    top = round(math.log2(max_length))
    return [2**i for i in range(int(math.log2(first)), top)] + [max_length]


def bucket_for(position: float, buckets: list[int]) -> int:
    """The first bucket longer than `position` (NxD Inference's "first_fit"); the last one otherwise."""
    for bucket in buckets:
        if position < bucket:
            return bucket
    return buckets[-1]


def bucket_kv_tokens(prompt: int, output: int, lines: int, max_length: int) -> float:
    """Cached tokens an NxD Inference decode step reads per batch line, averaged over a request.

    The step's bucket follows the longest position among the batch's `lines` sequences. With one
    line (or a batch that advances in step) that is the sequence's own position, prompt .. prompt +
    output - 1. With `lines` requests staggered through their outputs, the longest is the maximum
    of `lines` positions spread evenly over the output: P(max < prompt + x) = (x / output)^lines.
    """
    buckets = neuron_buckets(max_length)
    if output <= 1:
        return float(bucket_for(prompt, buckets))
    expected, below = 0.0, 0.0
    for bucket in buckets:
        # share of steps whose longest position is below `bucket`
        reach = min(max(bucket - prompt, 0.0), float(output)) / output
        share = reach**lines if lines > 1 else reach
        expected += (share - below) * bucket
        below = share
    expected += (1.0 - below) * buckets[-1]
    return expected


def served_engine(family: AcceleratorFamily | str) -> Engine:
    """The engine the stacks deploy on `family` (components/serving/engines.py pins the images)."""
    return _SERVED[AcceleratorFamily(family)]


_SERVED = {
    AcceleratorFamily.NVIDIA_GPU: Engine(
        name="vLLM 0.28.0",
        scheduling=Scheduling.CHUNKED,
        source=VLLM_WHEEL,
    ),
    AcceleratorFamily.GOOGLE_TPU: Engine(
        name="vLLM TPU (tpu-inference)",
        scheduling=Scheduling.CHUNKED,
        source=f"{VLLM_WHEEL}; {TPU_INFERENCE_SOURCE}",
    ),
    AcceleratorFamily.AWS_NEURON: Engine(
        name="vLLM 0.9.1 + NxD Inference 0.5.9230",
        scheduling=Scheduling.SEPARATE,
        decode_read=DecodeRead.BUCKET,
        source=f"{NEURON_VLLM_SOURCE}; {NXDI_SOURCE}",
    ),
}
