"""The planner's modelling assumptions: every figure that is a judgement, not a spec.

Each default is stated here with why; pass your own `Assumptions` to change one
(the CLI exposes the memory ceiling and the efficiencies).
"""

from __future__ import annotations

from dataclasses import dataclass

from inference_infra.components.errors import Problem

_VLLM_ARGS = "https://docs.vllm.ai/en/latest/configuration/engine_args.html"
_DATABRICKS = "https://www.databricks.com/blog/llm-inference-performance-engineering-best-practices"


@dataclass(frozen=True, kw_only=True)
class Assumptions:
    # Share of each device's memory the plan may fill. The rest is the safety
    # margin (allocator fragmentation, int4 group scales, engine bookkeeping);
    # 0.90 is vLLM's default --gpu-memory-utilization (_VLLM_ARGS).
    max_memory_utilization: float = 0.90
    # Fixed memory per device (GPU, NeuronCore or TPU chip) before any weights:
    # runtime context, kernel workspaces, collective-communication buffers,
    # captured graphs. A planning figure, not a measurement.
    runtime_reserve_gib: float = 1.0
    # The three efficiencies are derived from published maximum-throughput
    # measurements (planner/measurements.py) by planner.calibration.derive():
    # the values that minimise the worst relative error over the table (22.6%
    # on 17 TensorRT-LLM 1.0 points, H100/H200, Llama 3.1 8B to 405B, FP8).
    # Share of the peak memory bandwidth that decode achieves (Databricks
    # measured 55-60% on A100s, _DATABRICKS, which agrees).
    bandwidth_efficiency: float = 0.58
    # Share of the dense peak FLOPs that prefill and compute-bound decode achieve.
    compute_efficiency: float = 0.7
    # Share of a step's speed left after tensor-parallel communication, per
    # doubling of the degree (TP=8 pays it three times).
    tensor_parallel_efficiency: float = 0.8
    # Tokens one forward pass processes at most (chunked prefill); sizes the
    # activation workspace. vLLM's chunked-prefill budget is of this order.
    max_batched_tokens: int = 8192

    def describe(self) -> str:
        return (
            f"memory ceiling {self.max_memory_utilization:.0%} per device, "
            f"{self.runtime_reserve_gib:g} GiB runtime reserve per device, "
            f"{self.bandwidth_efficiency:.0%} of peak bandwidth, "
            f"{self.compute_efficiency:.0%} of peak FLOPs, "
            f"{self.tensor_parallel_efficiency:.0%} per tensor-parallel doubling"
        )


def validate_assumptions(a: Assumptions) -> list[Problem]:
    problems = []
    for name in (
        "max_memory_utilization",
        "bandwidth_efficiency",
        "compute_efficiency",
        "tensor_parallel_efficiency",
    ):
        value = getattr(a, name)
        if not isinstance(value, int | float) or not 0 < value <= 1:
            problems.append(Problem(name, value, "must be a fraction in (0, 1]"))
    if not isinstance(a.runtime_reserve_gib, int | float) or a.runtime_reserve_gib < 0:
        problems.append(Problem("runtime_reserve_gib", a.runtime_reserve_gib, "must be >= 0"))
    if not isinstance(a.max_batched_tokens, int) or a.max_batched_tokens < 1:
        problems.append(
            Problem("max_batched_tokens", a.max_batched_tokens, "must be a positive whole number")
        )
    return problems
