"""The roofline's efficiency factors, derived per accelerator family from published measurements.

For each measurement the planner lays the model out on the measured devices (at
the published tensor-parallel degree where the run fixed one, else at its own
smallest fitting degree), fills them with as many sequences as fit in memory
but no more than the run's batch ceiling, and estimates the generated tokens
per second. `derive(family)` picks the factors that minimise the worst relative
error over that family's points, searching only the factors those points
constrain (`FREE`); the rest are NVIDIA's, and `FAMILY_EFFICIENCY` records
which. The defaults in `assumptions.FAMILY_EFFICIENCY` are the result (a test
checks they still are).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from inference_infra.components.catalog import AcceleratorFamily, accelerator, find_instance_type
from inference_infra.components.planner.assumptions import FAMILY_EFFICIENCY, Assumptions, Efficiency
from inference_infra.components.planner.fit import Fit, fit, fit_at
from inference_infra.components.planner.measurements import MEASUREMENTS, Measurement
from inference_infra.components.planner.memory import Traffic
from inference_infra.components.planner.models import model_spec
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.planner.throughput import estimate

TOLERANCE = 0.25  # the planner's estimate stays within 25% of every measurement

# The factors each family's points constrain. NVIDIA's runs span batch 16 to 1,300 and TP 1 to 8: the
# shares, the per-doubling factor and the host time per sequence (which separates a batch of 883
# from one of 60 on the same roofline).
# Neuron's are small-batch decode at TP 24 and 32 only: bandwidth-bound (compute is not seen), and
# with every point at five doublings a per-doubling factor cannot be told from the bandwidth share,
# so Neuron's tensor-parallel cost is carried by a fixed time per step instead (its factor is 1.0)
# next to one bandwidth share. The TPU points (v5e and v6e, two engines) are bandwidth-bound decode
# at TP=8 only, so they fix one bandwidth share measured with the ICI collectives of TP=8 included
# (`tensor_parallel_included`; a per-doubling factor cannot be told from the share at a single
# degree, and charging NVIDIA's 75% three times would put both v6e points 50% low). Smaller TPU
# degrees get that share (a little conservative); larger ones pay NVIDIA's factor per doubling past
# 8, as unmeasured; TPU compute is NVIDIA's too.
FREE: dict[AcceleratorFamily, tuple[str, ...]] = {
    AcceleratorFamily.NVIDIA_GPU: ("bandwidth", "compute", "tensor_parallel", "sequence_overhead_us"),
    AcceleratorFamily.AWS_NEURON: ("bandwidth", "step_overhead_ms"),
    AcceleratorFamily.GOOGLE_TPU: ("bandwidth",),
}

_GRIDS: dict[str, list[float]] = {
    "bandwidth": [round(0.01 * i, 2) for i in range(10, 101)],
    "compute": [round(0.01 * i, 2) for i in range(10, 101)],
    "tensor_parallel": [round(0.5 + 0.01 * i, 2) for i in range(51)],
    "step_overhead_ms": [round(0.5 * i, 1) for i in range(0, 41)],
    "sequence_overhead_us": [round(0.5 * i, 1) for i in range(0, 61)],
}


@dataclass(frozen=True)
class Point:
    measurement: Measurement
    layout: Fit
    traffic: Traffic
    precision: Precision

    @property
    def family(self) -> AcceleratorFamily:
        return self.layout.hardware.device.family


def family_of(m: Measurement) -> AcceleratorFamily:
    machine = find_instance_type(m.instance_type)
    assert machine is not None, m.instance_type
    return accelerator(machine.accelerator).family


def _setup(m: Measurement, assumptions: Assumptions) -> Point:
    spec = model_spec(m.model)
    machine = find_instance_type(m.instance_type)
    assert machine is not None, m.instance_type  # the table names catalog machines only
    machine = replace(machine, accelerator_count=m.devices)
    precision = Precision(weights=Quantization(m.weights), kv_cache=Quantization(m.kv_cache))
    context = m.prompt_tokens + m.output_tokens
    if m.exact_batch:  # the run's own batch, held to the device's whole memory
        assumptions = replace(assumptions, max_memory_utilization=1.0)

    def layout(concurrency: int) -> tuple[Fit, Traffic]:
        traffic = Traffic(context_tokens=context, concurrency=concurrency, output_tokens=m.output_tokens)
        if m.tensor_parallel is not None:
            return fit_at(spec, traffic, precision, assumptions, machine, m.tensor_parallel), traffic
        return fit(spec, traffic, precision, assumptions, machine), traffic

    low, high = (m.max_batch if m.exact_batch else 1), m.max_batch  # the largest concurrency that fits
    if not layout(low)[0].fits:
        raise ValueError(f"{m.model} does not fit on {m.devices} x {m.instance_type} devices")
    while low < high:
        mid = (low + high + 1) // 2
        if layout(mid)[0].fits:
            low = mid
        else:
            high = mid - 1
    best, traffic = layout(low)
    return Point(m, best, traffic, precision)


def points(assumptions: Assumptions | None = None, family: AcceleratorFamily | None = None) -> list[Point]:
    a = assumptions or Assumptions()
    return [_setup(m, a) for m in MEASUREMENTS if family is None or family_of(m) is family]


def predicted(point: Point, assumptions: Assumptions) -> float:
    spec = model_spec(point.measurement.model)
    m = point.measurement
    return estimate(
        spec, point.traffic, point.precision, assumptions, point.layout, m.decode_kv_tokens
    ).tokens_per_s


def errors(
    assumptions: Assumptions | None = None, table: Iterable[Point] | None = None
) -> list[tuple[Point, float]]:
    """(point, relative error of the estimate: predicted / measured - 1) for every measurement."""
    a = assumptions or Assumptions()
    return [(p, predicted(p, a) / p.measurement.tokens_per_s - 1) for p in (table or points(a))]


def summary(found: Sequence[tuple[Point, float]]) -> dict[AcceleratorFamily, tuple[int, float, float]]:
    """Per family: (points, mean |error|, worst |error|)."""
    out = {}
    for family in AcceleratorFamily:
        mine = [abs(e) for p, e in found if p.family is family]
        if mine:
            out[family] = (len(mine), sum(mine) / len(mine), max(mine))
    return out


def _with(base: Efficiency, values: dict[str, float]) -> Assumptions:
    merged = {
        "bandwidth_efficiency": values.get("bandwidth", base.bandwidth),
        "compute_efficiency": values.get("compute", base.compute),
        "tensor_parallel_efficiency": values.get("tensor_parallel", base.tensor_parallel),
        "step_overhead_ms": values.get("step_overhead_ms", base.step_overhead_ms),
        "sequence_overhead_us": values.get("sequence_overhead_us", base.sequence_overhead_us),
    }
    return Assumptions(**merged)


def derive(
    family: AcceleratorFamily = AcceleratorFamily.NVIDIA_GPU,
    free: Sequence[str] | None = None,
    fixed: dict[str, float] | None = None,
) -> tuple[Efficiency, float]:
    """The family's free factors that minimise the worst |error| over its points, and that error.

    Factors outside FREE[family] (or `free`, to ask what a smaller model could do) keep
    FAMILY_EFFICIENCY's values, or the values in `fixed`. The search is a grid (steps of
    0.01 for the shares and the tensor-parallel factor, 0.5 ms for the step time, 0.5 us for
    the host time per sequence): one factor at a time from the table's values until nothing
    improves, then every pair of free factors jointly.
    """
    table = points(family=family)
    if not table:
        raise ValueError(f"no published measurements for {family.value}")
    base = FAMILY_EFFICIENCY[family]  # the factors not searched keep the table's (borrowed or fixed) values
    if fixed:
        base = replace(base, **fixed)
    free = tuple(FREE[family] if free is None else free)

    def worst(values: dict[str, float]) -> float:
        return max(abs(e) for _, e in errors(_with(base, values), table))

    best = {name: getattr(base, name) for name in free}
    best_worst = worst(best)
    improved = True
    while improved:  # coordinate descent over the grids
        improved = False
        for name in free:
            for value in _GRIDS[name]:
                trial = best | {name: value}
                w = worst(trial)
                if w < best_worst - 1e-12:
                    best, best_worst, improved = trial, w, True
    if len(free) >= 2:  # a joint search over pairs, from the descent's optimum
        for i, a_name in enumerate(free):
            for b_name in free[i + 1 :]:
                for a_value in _GRIDS[a_name]:
                    for b_value in _GRIDS[b_name]:
                        trial = best | {a_name: a_value, b_name: b_value}
                        w = worst(trial)
                        if w < best_worst - 1e-12:
                            best, best_worst = trial, w
    values = {
        "bandwidth": best.get("bandwidth", base.bandwidth),
        "compute": best.get("compute", base.compute),
        "tensor_parallel": best.get("tensor_parallel", base.tensor_parallel),
        "step_overhead_ms": best.get("step_overhead_ms", base.step_overhead_ms),
        "sequence_overhead_us": best.get("sequence_overhead_us", base.sequence_overhead_us),
    }
    return (
        Efficiency(**values, tensor_parallel_included=base.tensor_parallel_included, basis=base.basis),
        best_worst,
    )
