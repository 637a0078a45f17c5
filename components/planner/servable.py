"""What a fleet can serve: one check that `size`, the fleets' machine choice and the benchmark share.

A machine that holds a model in memory is not yet one a fleet serves it on. The fleet runs the
engine pinned for the accelerator family (components/serving/engines.py) with the flags it renders
(components/serving/flags.py), and that engine refuses some of them. `servable_problems` lists, for
one fitted layout, every reason a fleet would refuse it:

- hosts: every pinned engine serves one model on one host; a TPU slice of several hosts is refused
  (the TPU build has no supported multi-host mode: components/gcp/tpu_vm.py,
  `multi_host_engine_problem`). A replica over several identical GPU machines (`hosts_per_replica`,
  pipeline parallel across them) is served by vLLM on NVIDIA only, on Kubernetes only (a
  LeaderWorkerSet group), at most MAX_REPLICA_HOSTS machines, and only when fewer do not hold it;
- weight format: the quantization method the fleet presents (`--quantization fp8` for fp8; the
  checkpoint's own method for int8/int4; none for 16/32-bit) against the platform's own
  `supported_quantization` list, and the GPU's compute capability against the method's minimum
  (and bfloat16's);
- KV-cache format: the `--kv-cache-dtype` value the fleet renders against what the platform's
  cache accepts;
- parallelism: the tensor-parallel degree divides the attention heads (and divides, or is a
  multiple of, the KV heads) and fits on one host's devices;
- memory and the device itself: the layout fits under the memory ceiling and the device can run the
  format at all (fit.py; fit judges the hardware, for any engine, which is what the calibration's
  reference points of other engines need, and this module the fleet's pinned engine).

ENGINE_SUPPORT is the table, one row per accelerator family, read from the pinned packages at their
versions (`source`, `as_of`); a test checks each row's engine version against the serving pins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from inference_infra.components.catalog import Accelerator, AcceleratorFamily, InstanceType, instance_types
from inference_infra.components.planner.precision import Precision, Quantization

if TYPE_CHECKING:
    from inference_infra.components.planner.fit import Fit
    from inference_infra.components.planner.models import ModelSpec

_READ = date(2026, 12, 2)

# What the fleet presents to the engine for each weight format (components/serving/flags.py,
# engine_args): 16/32-bit weights are `--dtype` only (no quantization method); fp8 is
# `--quantization fp8` (online, from the 16-bit checkpoint); int8 and int4 render no flag, so the
# engine reads the method from the checkpoint's config (the common int8/int4 checkpoint methods).
PRESENTED_METHODS: Mapping[Quantization, tuple[str, ...]] = {
    Quantization.FP32: (),
    Quantization.FP16: (),
    Quantization.BF16: (),
    Quantization.FP8: ("fp8",),
    Quantization.INT8: ("compressed-tensors", "gptq", "bitsandbytes"),
    Quantization.INT4: ("awq", "auto_awq", "gptq", "compressed-tensors"),
}
# `--kv-cache-dtype` the fleet renders for an explicit KV format other than the weights' (flags.py,
# _KV_CACHE_DTYPE); "auto" when the KV format is unset or the weights' own. fp32 has no value.
RENDERED_KV: Mapping[Quantization, str] = {
    Quantization.BF16: "bfloat16",
    Quantization.FP16: "float16",
    Quantization.FP8: "fp8",
    Quantization.INT8: "int8_per_token_head",
    Quantization.INT4: "int4_per_token_head",
}

# NVIDIA compute capability (major * 10 + minor) per catalog GPU, from NVIDIA's "CUDA GPUs - Compute
# Capability" page (https://developer.nvidia.com/cuda-gpus), read 2026-12-02.
COMPUTE_CAPABILITY: Mapping[str, int] = {
    "t4": 75,
    "a10g": 86,
    "l4": 89,
    "l40s": 89,
    "a100-40gb": 80,
    "a100-80gb": 80,
    "h100-80gb": 90,
    "h100-mega-80gb": 90,
    "h200-141gb": 90,
    "b200": 100,
}


@dataclass(frozen=True, kw_only=True)
class EngineSupport:
    """What one family's pinned engine accepts, read from its source at the pinned version."""

    family: AcceleratorFamily
    engine: str  # the engine as the fleets run it (images: components/serving/engines.py)
    engine_version: str  # components/serving/engines.py IMAGES[...].engine_version
    max_hosts: int  # hosts one served model may span
    hosts_why: str  # why not more
    quantization: tuple[str, ...]  # the platform's supported_quantization; () = every method
    quantization_source: str
    quantization_where: str  # the same, short, for messages
    method_min_capability: Mapping[str, int]  # NVIDIA: a method's get_min_capability()
    bf16_min_capability: int | None  # NVIDIA: bfloat16 needs this capability (None: no limit)
    kv_cache_dtypes: tuple[str, ...]  # --kv-cache-dtype values the platform's cache takes
    kv_source: str
    kv_where: str  # the same, short, for messages
    source: str
    as_of: date


_VLLM_028_SHA = "addb0ffdaafd8155d75e9b3f5ddb3da28fdee9e8a7097ede91f7db2e9e1a3889"
_VLLM_091_SHA = "28b99e8df39c7aaeda04f7e5353b18564a1a9d1c579691945523fc4777a1a8c8"
_TPU_INFERENCE_SHA = "9e38152b12c802d7da60059283cfa28b1115bfdcf26da003cc90f77379c02c2b"
_VLLM_028 = (
    "vllm 0.28.0 wheel (pip download --no-deps vllm==0.28.0; "
    f"vllm-0.28.0-cp38-abi3-manylinux_2_28_x86_64.whl, sha256 {_VLLM_028_SHA})"
)
_NEURON_FORK = (
    "aws-neuron/upstreaming-to-vllm dd417b311607e53f2c7be614e69a5979facdb344 (2025-06-24, the fork's "
    "newest commit available here; the DLC installs its tag 2.25.0), vllm/platforms/neuron.py; the "
    f"upstream vllm 0.9.1 wheel (sha256 {_VLLM_091_SHA}) has the same list"
)
_TPU_INFERENCE = (
    "tpu-inference 0.29.0 wheel (pip download --no-deps tpu-inference==0.29.0; "
    f"tpu_inference-0.29.0-py3-none-any.whl, sha256 {_TPU_INFERENCE_SHA}), the release before the "
    "pinned nightly vLLM 0.29.1rc1.dev468"
)
_TPU_KV = (
    "runner/tpu_runner.py lines 1055-1058 turn the cache dtype into a JAX dtype with utils.py "
    "to_jax_dtype (aliases fp8, fp8_e4m3, fp8_e5m2 at lines 35-41, else jnp.dtype(name)): "
    "int8_per_token_head and int4_per_token_head are no JAX dtype"
)

ENGINE_SUPPORT: Mapping[AcceleratorFamily, EngineSupport] = {
    AcceleratorFamily.NVIDIA_GPU: EngineSupport(
        family=AcceleratorFamily.NVIDIA_GPU,
        engine="vLLM 0.28.0 (NVIDIA)",
        engine_version="0.28.0",
        max_hosts=1,
        hosts_why="the fleets run each engine on one host",
        quantization=(),
        quantization_source=f"{_VLLM_028}: vllm/platforms/cuda.py sets no supported_quantization "
        "(interface.py line 170: [] = every method), each method gated by its own get_min_capability",
        quantization_where="vllm/platforms/cuda.py in vLLM 0.28.0",
        method_min_capability={"fp8": 75},  # model_executor/layers/quantization/fp8.py line 145 (FP8 Marlin)
        bf16_min_capability=80,  # platforms/cuda.py check_if_supports_dtype, lines 616-634
        kv_cache_dtypes=(
            "auto",
            "float16",
            "bfloat16",
            "fp8",
            "int8_per_token_head",
            "int4_per_token_head",
        ),
        kv_source=f"{_VLLM_028}: vllm/config/cache.py CacheDType; int8/int4_per_token_head through the "
        "Triton backend (v1/attention/backends/triton_attn.py lines 296-306)",
        kv_where="vllm/config/cache.py CacheDType in vLLM 0.28.0",
        source=_VLLM_028,
        as_of=_READ,
    ),
    AcceleratorFamily.AWS_NEURON: EngineSupport(
        family=AcceleratorFamily.AWS_NEURON,
        engine="vLLM 0.9.1 (Neuron)",
        engine_version="0.9.1",
        max_hosts=1,
        hosts_why="the fleets run each engine on one host",
        quantization=("neuron_quant", "fbgemm_fp8"),
        quantization_source=f"{_NEURON_FORK}: NeuronPlatform.supported_quantization (line 32), enforced by "
        "Platform.verify_quantization (interface.py lines 343-350), which ModelConfig._verify_quantization "
        "calls for --quantization and for a checkpoint's own method alike (config.py lines 861-937)",
        quantization_where="NeuronPlatform.supported_quantization, vllm/platforms/neuron.py line 32 of "
        "aws-neuron/upstreaming-to-vllm dd417b3",
        method_min_capability={},
        bf16_min_capability=None,
        kv_cache_dtypes=("auto", "fp8", "fp8_e4m3", "fp8_e5m2"),
        kv_source="components/serving/data/vllm-options-neuron-vllm.json (--kv-cache-dtype choices of "
        "vLLM 0.9.1 and the fork, read 2026-11-24)",
        kv_where="--kv-cache-dtype choices of vLLM 0.9.1 on Neuron",
        source=_NEURON_FORK,
        as_of=_READ,
    ),
    AcceleratorFamily.GOOGLE_TPU: EngineSupport(
        family=AcceleratorFamily.GOOGLE_TPU,
        engine="vLLM TPU 0.29.1rc1.dev468",
        engine_version="0.29.1rc1.dev468",
        max_hosts=1,
        hosts_why="it has no supported multi-host mode (a Ray cluster scripted for TPU v7x only; "
        "components/gcp/tpu_vm.py, multi_host_engine_problem)",
        quantization=(
            "compressed-tensors",
            "auto_awq",
            "fp8",
            "gpt_oss_mxfp4",
            "modelopt_fp4",
            "deepseek_v4_fp8",
        ),
        quantization_source=f"{_TPU_INFERENCE}: tpu_inference/platforms/tpu_platform.py lines 165-168, "
        "TpuPlatform.supported_quantization",
        quantization_where="TpuPlatform.supported_quantization, tpu_inference/platforms/tpu_platform.py "
        "lines 165-168 of tpu-inference 0.29.0",
        method_min_capability={},
        bf16_min_capability=None,
        kv_cache_dtypes=("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2"),
        kv_source=f"{_TPU_INFERENCE}: {_TPU_KV}",
        kv_where="tpu-inference 0.29.0 reads the cache dtype as a JAX dtype (utils.py to_jax_dtype)",
        source=_TPU_INFERENCE,
        as_of=_READ,
    ),
}


def rendered_kv_cache_dtype(precision: Precision) -> str | None:
    """The `--kv-cache-dtype` a fleet renders for this precision (None: it has no value for it)."""
    if precision.kv_cache is None or precision.kv_cache is precision.weights:
        return "auto"
    return RENDERED_KV.get(precision.kv_cache)


def weight_format_problem(device: Accelerator, weights: Quantization) -> str | None:
    """Why the family's pinned engine would refuse weights in this format on device (None: it serves them)."""
    support = ENGINE_SUPPORT[device.family]
    capability = COMPUTE_CAPABILITY.get(device.key)
    floor = support.bf16_min_capability
    if weights is Quantization.BF16 and floor and capability is not None and capability < floor:
        return (
            f"{support.engine} refuses bfloat16 on the {device.name} (compute capability "
            f"{capability / 10:.1f}; bfloat16 needs {floor / 10:.1f}): serve fp16"
        )
    methods = PRESENTED_METHODS[weights]
    if not methods:
        return None
    accepted = [m for m in methods if not support.quantization or m in support.quantization]
    if not accepted:
        how = (
            "`--quantization fp8`"
            if weights is Quantization.FP8
            else f"the checkpoint's own method ({', '.join(methods)})"
        )
        return (
            f"{support.engine} refuses {weights.value} weights: the fleet presents {how}, and the platform"
            f" accepts only {', '.join(support.quantization)} ({support.quantization_where})"
        )
    floors = [support.method_min_capability.get(m) for m in accepted]
    if capability is not None and all(f is not None and capability < f for f in floors):
        need = min(f for f in floors if f is not None)
        return (
            f"{support.engine} refuses {weights.value} weights on the {device.name} (compute capability "
            f"{capability / 10:.1f}; the method needs {need / 10:.1f})"
        )
    return None


def kv_format_problem(device: Accelerator, precision: Precision) -> str | None:
    """Why the family's pinned engine would refuse the KV-cache format the fleet renders (None: it
    takes it)."""
    support = ENGINE_SUPPORT[device.family]
    value = rendered_kv_cache_dtype(precision)
    if value is None:
        return (
            f"a {precision.kv.value} KV cache beside {precision.weights.value} weights has no"
            f" --kv-cache-dtype value in {support.engine} (it keeps no fp32 cache)"
        )
    if value not in support.kv_cache_dtypes:
        return (
            f"{support.engine} refuses --kv-cache-dtype {value} (a {precision.kv.value} KV cache): it takes"
            f" {', '.join(support.kv_cache_dtypes)} ({support.kv_where})"
        )
    capability = COMPUTE_CAPABILITY.get(device.key)
    if (
        value == "bfloat16"
        and support.bf16_min_capability
        and capability is not None
        and capability < support.bf16_min_capability
    ):
        return (
            f"{support.engine} refuses a bfloat16 KV cache on the {device.name} (compute capability"
            f" {capability / 10:.1f})"
        )
    return None


def format_problem(device: Accelerator, precision: Precision) -> str | None:
    """The weight or KV-cache format the engine refuses on device, or None."""
    return weight_format_problem(device, precision.weights) or kv_format_problem(device, precision)


# Machines one replica may span (a LeaderWorkerSet group of one leader and hosts - 1 workers). Four:
# the catalog's largest dense model, Llama 3.1 405B in BF16 (~755 GiB of weights), fits two 8 x 80 GB
# hosts with room for its KV cache, so four covers it on 8 x 40-48 GB machines too; past that every
# extra stage adds an inter-host hop to each token and a pod whose loss restarts the whole group
# (restartPolicy RecreateGroupOnPodRestart), while the replica's price grows by a machine.
MAX_REPLICA_HOSTS = 4
MULTI_HOST_FAMILIES = frozenset({AcceleratorFamily.NVIDIA_GPU})
# The flags a replica over several hosts gets from its plan and its pods (the engine's multiprocessing
# executor across nodes in vLLM 0.28.0: vllm/config/parallel.py nnodes/node_rank/master_addr/master_port,
# vllm/entrypoints/cli/serve.py run_headless); a pool's own engine_args may not set them.
MULTI_HOST_FLAGS = (
    "--pipeline-parallel-size",
    "--nnodes",
    "--node-rank",
    "--master-addr",
    "--master-port",
    "--headless",
    "--distributed-executor-backend",
    "--data-parallel-size",
)


def replica_hosts_problem(layout: Fit, fewer: Fit | None) -> str | None:
    """Why a replica over `layout.hosts` machines is refused (None: it is served): a family whose
    engine serves one host, more than MAX_REPLICA_HOSTS, or a layout `fewer` hosts already hold."""
    hosts = layout.hosts
    if hosts <= 1:
        return None
    hw = layout.hardware
    support = ENGINE_SUPPORT[hw.device.family]
    if hw.device.family not in MULTI_HOST_FAMILIES:
        return f"{support.engine} serves a replica on one host: {support.hosts_why}"
    if hosts > MAX_REPLICA_HOSTS:
        return f"a replica spans at most {MAX_REPLICA_HOSTS} hosts, not {hosts}"
    if fewer is not None and fewer.fits:
        held = f"{fewer.hosts} host" + ("" if fewer.hosts == 1 else "s")
        return (
            f"{hw.instance.name} holds it on {held}: a replica over {hosts} would cost "
            f"{hosts - fewer.hosts} more machine(s) and a pipeline stage more per token"
        )
    return None


def hosts_problem(instance: InstanceType, family: AcceleratorFamily) -> str | None:
    """Why a machine of several hosts cannot serve one model (None: it is within the engine's hosts)."""
    support = ENGINE_SUPPORT[family]
    if instance.hosts <= support.max_hosts:
        return None
    single = [
        i.name
        for i in instance_types(instance.cloud)
        if i.accelerator == instance.accelerator and i.hosts == 1
    ]
    instead = f"; serve it on a single-host slice ({', '.join(single)})" if single else ""
    return (
        f"{instance.name} spans {instance.hosts} hosts; {support.engine} serves a model on"
        f" {support.max_hosts} host: {support.hosts_why}{instead}"
    )


def parallelism_problem(
    spec: ModelSpec, tensor_parallel: int, instance: InstanceType, units: int
) -> str | None:
    """Why the engine would refuse this tensor-parallel degree (None: it accepts it)."""
    per_host = units // max(instance.hosts, 1)
    if spec.attention_heads % tensor_parallel:
        return f"TP={tensor_parallel} does not divide {spec.name}'s {spec.attention_heads} attention heads"
    if spec.kv_heads % tensor_parallel and tensor_parallel % spec.kv_heads:
        heads = f"{spec.name}'s {spec.kv_heads} KV heads"
        return f"TP={tensor_parallel} neither divides nor is a multiple of {heads}"
    if tensor_parallel > per_host:
        return f"TP={tensor_parallel} spans more than the {per_host} devices of one host of {instance.name}"
    return None


def servable_problems(
    spec: ModelSpec, precision: Precision, layout: Fit, fewer: Fit | None = None
) -> list[str]:
    """Every reason a fleet would refuse to serve `spec` on this layout (empty: it serves it). `fewer`:
    for a replica over several hosts, the layout over one host fewer (refused when that fits)."""
    hw = layout.hardware
    family = hw.device.family
    found = [
        hosts_problem(hw.instance, family),
        replica_hosts_problem(layout, fewer),
        format_problem(hw.device, precision),
        parallelism_problem(spec, layout.tensor_parallel, hw.instance, hw.units),
    ]
    problems = [p for p in found if p is not None]
    if layout.problem is not None:
        problems.append(layout.problem)  # too small, or a format the device cannot run (fit.py)
    return problems
