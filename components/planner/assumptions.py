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


# Each family's factors, derived from that family's own published points (planner/measurements.py)
# by planner.calibration.derive(); a test checks they still are. A factor the family's points do
# not constrain is borrowed from NVIDIA's, and `basis` says which.
FAMILY_EFFICIENCY: dict[AcceleratorFamily, Efficiency] = {
    AcceleratorFamily.NVIDIA_GPU: Efficiency(
        bandwidth=0.67,
        compute=0.77,
        tensor_parallel=0.77,
        sequence_overhead_us=11.0,
        basis="derived from 24 published TensorRT-LLM points (H100, H200, L40S, A100)",
    ),
    AcceleratorFamily.AWS_NEURON: Efficiency(
        bandwidth=0.42,
        compute=0.77,
        tensor_parallel=1.0,
        step_overhead_ms=5.0,
        sequence_overhead_us=11.0,
        basis=(
            "bandwidth share and per-step time derived from 34 published Neuron points"
            " (inf2 TP=24, trn1 TP=32, batch 1-8); compute share and host time per sequence"
            " borrowed from NVIDIA; tensor-parallel cost carried by the per-step time"
        ),
    ),
    AcceleratorFamily.GOOGLE_TPU: Efficiency(
        bandwidth=0.54,
        compute=0.77,
        tensor_parallel=0.77,
        tensor_parallel_included=8,
        sequence_overhead_us=11.0,
        basis=(
            "bandwidth share derived from 3 published TPU points (v5e-8 JetStream + MaxText,"
            " v6e-8 vLLM; all TP=8), the collectives of TP<=8 included; compute share, host time"
            " per sequence and the cost per doubling past TP=8 borrowed from NVIDIA"
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
    # The efficiencies come per accelerator family from FAMILY_EFFICIENCY (derived from
    # published measurements; NVIDIA's 67% of peak bandwidth is the kernels' share once the host
    # time per sequence is counted apart: end to end, the share falls with the batch, to 66% at 60
    # sequences and 47% at 883, around the 55-60% Databricks measured on A100s, _DATABRICKS).
    # Setting one here overrides it for every family.
    bandwidth_efficiency: float | None = None
    compute_efficiency: float | None = None
    tensor_parallel_efficiency: float | None = None
    step_overhead_ms: float | None = None
    sequence_overhead_us: float | None = None
    # Tokens one forward pass processes at most (chunked prefill); sizes the
    # activation workspace. vLLM's chunked-prefill budget is of this order.
    max_batched_tokens: int = 8192

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
    if a.step_overhead_ms is not None and (
        not isinstance(a.step_overhead_ms, int | float) or a.step_overhead_ms < 0
    ):
        problems.append(Problem("step_overhead_ms", a.step_overhead_ms, "must be >= 0"))
    if a.sequence_overhead_us is not None and (
        not isinstance(a.sequence_overhead_us, int | float) or a.sequence_overhead_us < 0
    ):
        problems.append(Problem("sequence_overhead_us", a.sequence_overhead_us, "must be >= 0"))
    if not isinstance(a.runtime_reserve_gib, int | float) or a.runtime_reserve_gib < 0:
        problems.append(Problem("runtime_reserve_gib", a.runtime_reserve_gib, "must be >= 0"))
    if not isinstance(a.max_batched_tokens, int) or a.max_batched_tokens < 1:
        problems.append(
            Problem("max_batched_tokens", a.max_batched_tokens, "must be a positive whole number")
        )
    return problems
