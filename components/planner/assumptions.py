"""The planner's modelling assumptions: every figure that is a judgement, not a spec.

Each default is stated here with why; pass your own `Assumptions` to change one
(the CLI exposes the memory ceiling and the efficiencies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.errors import Problem

_VLLM_ARGS = "https://docs.vllm.ai/en/latest/configuration/engine_args.html"
_DATABRICKS = "https://www.databricks.com/blog/llm-inference-performance-engineering-best-practices"


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """How much of an accelerator family's peaks decode and prefill achieve, and what fixes them."""

    # Share of the peak memory bandwidth that decode achieves.
    bandwidth: float
    # Share of the dense peak FLOPs that prefill and compute-bound decode achieve.
    compute: float
    # Share of a step's speed left after tensor-parallel communication, per doubling of the
    # degree (TP=8 pays it three times).
    tensor_parallel: float
    # The tensor-parallel degree whose communication the shares above already include (a family
    # measured only at one degree): the per-doubling factor is paid only for doublings past it.
    tensor_parallel_included: int = 1
    # Fixed time per decode step on top of the roofline (kernel launches, collectives' latency):
    # it dominates small-batch decode on a wide tensor-parallel group.
    step_overhead_ms: float = 0.0
    # Host time per sequence per decode step, in microseconds: the engine's scheduling, sampling
    # and response handling for each sequence, which the accelerator waits for. It grows with the
    # batch, so it is what caps large-batch decode of a small model on a fast GPU.
    sequence_overhead_us: float = 0.0
    # Where the figures come from, for notes: "derived from N published points ..." or "borrowed ...".
    basis: str = ""

    @property
    def borrows(self) -> bool:
        """True when some factor is not from the family's own measurements."""
        return "borrowed" in self.basis

    def describe(self) -> str:
        overhead = f", {self.step_overhead_ms:g} ms per decode step" if self.step_overhead_ms else ""
        if self.sequence_overhead_us:
            overhead += f", {self.sequence_overhead_us:g} us of host time per sequence per decode step"
        past = f" past TP={self.tensor_parallel_included}" if self.tensor_parallel_included > 1 else ""
        return (
            f"{self.bandwidth:.0%} of peak bandwidth, {self.compute:.0%} of peak FLOPs, "
            f"{self.tensor_parallel:.0%} per tensor-parallel doubling{past}{overhead}"
        )

    def tensor_parallel_share(self, degree: int) -> float:
        """Share of a step's speed left after the communication of `degree`-way tensor parallelism."""
        return self.tensor_parallel ** max(0.0, math.log2(degree) - math.log2(self.tensor_parallel_included))


# Each family's factors, fitted on that family's published vLLM points (planner/vllm_measurements.py,
# the `fit` split) by planner.calibration.derive(); a test checks they still are. A factor the
# family's points do not constrain is borrowed or kept from another source, and `basis` says which.
FAMILY_EFFICIENCY: dict[AcceleratorFamily, Efficiency] = {
    AcceleratorFamily.NVIDIA_GPU: Efficiency(
        bandwidth=0.75,
        compute=0.54,
        tensor_parallel=0.78,
        step_overhead_ms=0.9,
        basis=(
            "fitted on 9 published vLLM V1 points (Llama 3.1 8B at TP=1 on H100 and B200, vLLM 0.19.1),"
            " 5 more held out; the per-doubling tensor-parallel factor is not fitted (no V1 run past"
            " TP=1 found): kept from the first pass's fit on vLLM 0.6 runs at TP=8"
        ),
    ),
    AcceleratorFamily.AWS_NEURON: Efficiency(
        bandwidth=0.55,
        compute=0.08,
        tensor_parallel=1.0,
        step_overhead_ms=10.5,
        basis=(
            "fitted on 9 published vLLM points on Neuron (optimum-neuron, Llama 3.1 8B, TP=8 on"
            " inf2 and trn1), 5 more held out; host time per sequence borrowed from NVIDIA;"
            " tensor-parallel cost carried by the per-step time"
        ),
    ),
    AcceleratorFamily.GOOGLE_TPU: Efficiency(
        bandwidth=0.82,
        compute=0.62,
        tensor_parallel=0.86,
        step_overhead_ms=0.9,
        basis=(
            "fitted on 4 published vLLM TPU points (Llama 3.1 8B on v6e-1, Llama 3.3 70B on v6e-8),"
            " 2 more held out; host times borrowed from NVIDIA"
        ),
    ),
}


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
    # The efficiencies come per accelerator family from FAMILY_EFFICIENCY (fitted on published
    # vLLM measurements; NVIDIA's 75% of peak bandwidth is the kernels' share with 0.9 ms of host
    # time per step counted apart: end to end the planner's lone 8B decode step on an H100 comes to 66% of
    # the peak, near the 55-60% Databricks measured on A100s, _DATABRICKS).
    # Setting one here overrides it for every family.
    bandwidth_efficiency: float | None = None
    compute_efficiency: float | None = None
    tensor_parallel_efficiency: float | None = None
    step_overhead_ms: float | None = None
    sequence_overhead_us: float | None = None
    # Tokens one step processes at most (vLLM's max_num_batched_tokens, the chunked-prefill
    # budget): it sizes the activation workspace and caps a step in the throughput estimate.
    # None: the served engine's default for the device (planner.engine.vllm_token_budget).
    max_batched_tokens: int | None = None

    def efficiency(self, family: AcceleratorFamily | str) -> Efficiency:
        """The family's factors, with any set here in their place."""
        base = FAMILY_EFFICIENCY[AcceleratorFamily(family)]
        overrides = {
            "bandwidth": self.bandwidth_efficiency,
            "compute": self.compute_efficiency,
            "tensor_parallel": self.tensor_parallel_efficiency,
            "step_overhead_ms": self.step_overhead_ms,
            "sequence_overhead_us": self.sequence_overhead_us,
        }
        chosen = {k: v for k, v in overrides.items() if v is not None}
        if not chosen:
            return base
        values = {f.name: getattr(base, f.name) for f in fields(base)} | chosen
        values["basis"] = f"{base.basis}; {', '.join(sorted(chosen))} set by the caller"
        return Efficiency(**values)

    def describe(self, family: AcceleratorFamily | str | None = None) -> str:
        head = (
            f"memory ceiling {self.max_memory_utilization:.0%} per device, "
            f"{self.runtime_reserve_gib:g} GiB runtime reserve per device"
        )
        if family is not None:
            eff = self.efficiency(family)
            return f"{head}, {eff.describe()} ({AcceleratorFamily(family).value}: {eff.basis})"
        per_family = "; ".join(
            f"{f.value}: {self.efficiency(f).describe()} ({self.efficiency(f).basis})"
            for f in FAMILY_EFFICIENCY
        )
        return f"{head}; efficiencies per family: {per_family}"


def validate_assumptions(a: Assumptions) -> list[Problem]:
    problems = []
    for name in (
        "max_memory_utilization",
        "bandwidth_efficiency",
        "compute_efficiency",
        "tensor_parallel_efficiency",
    ):
        value = getattr(a, name)
        if value is None and name != "max_memory_utilization":
            continue  # the family's derived factor
        if not isinstance(value, int | float) or not 0 < value <= 1:
            problems.append(Problem(name, value, "must be a fraction in (0, 1]"))
    for name in ("step_overhead_ms", "sequence_overhead_us"):
        value = getattr(a, name)
        if value is not None and (not isinstance(value, int | float) or value < 0):
            problems.append(Problem(name, value, "must be >= 0"))
    if not isinstance(a.runtime_reserve_gib, int | float) or a.runtime_reserve_gib < 0:
        problems.append(Problem("runtime_reserve_gib", a.runtime_reserve_gib, "must be >= 0"))
    budget = a.max_batched_tokens
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 1):
        problems.append(
            Problem("max_batched_tokens", a.max_batched_tokens, "must be a positive whole number")
        )
    return problems
