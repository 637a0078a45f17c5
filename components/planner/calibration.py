"""The roofline's efficiency factors, derived from published measurements.

For each measurement the planner lays the model out on the measured number of
devices, fills them with as many sequences as fit in memory (no more than the
engine's batch ceiling), as a maximum-throughput run does, and estimates the
generated tokens per second. `derive` picks the bandwidth and compute
efficiencies that minimise the worst relative error over the table; the
defaults in `Assumptions` are the result (a test checks they still are).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from inference_infra.components.catalog import find_instance_type
from inference_infra.components.planner.assumptions import Assumptions
from inference_infra.components.planner.fit import Fit, fit
from inference_infra.components.planner.measurements import MEASUREMENTS, Measurement
from inference_infra.components.planner.memory import Traffic
from inference_infra.components.planner.models import model_spec
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.planner.throughput import estimate

TOLERANCE = 0.25  # the planner's estimate stays within 25% of every measurement


@dataclass(frozen=True)
class Point:
    measurement: Measurement
    layout: Fit
    traffic: Traffic
    precision: Precision


def _setup(m: Measurement, assumptions: Assumptions) -> Point:
    spec = model_spec(m.model)
    machine = find_instance_type(m.instance_type)
    assert machine is not None, m.instance_type  # the table names catalog machines only
    machine = replace(machine, accelerator_count=m.devices)
    precision = Precision(weights=Quantization(m.weights), kv_cache=Quantization(m.kv_cache))
    context = m.prompt_tokens + m.output_tokens

    def layout(concurrency: int) -> tuple[Fit, Traffic]:
        traffic = Traffic(context_tokens=context, concurrency=concurrency, output_tokens=m.output_tokens)
        return fit(spec, traffic, precision, assumptions, machine), traffic

    low, high = 1, m.max_batch  # the largest concurrency that fits
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


def points(assumptions: Assumptions | None = None) -> list[Point]:
    a = assumptions or Assumptions()
    return [_setup(m, a) for m in MEASUREMENTS]


def predicted(point: Point, assumptions: Assumptions) -> float:
    spec = model_spec(point.measurement.model)
    return estimate(spec, point.traffic, point.precision, assumptions, point.layout).tokens_per_s


def errors(
    assumptions: Assumptions | None = None, table: list[Point] | None = None
) -> list[tuple[Point, float]]:
    """(point, relative error of the estimate: predicted / measured - 1) for every measurement."""
    a = assumptions or Assumptions()
    return [(p, predicted(p, a) / p.measurement.tokens_per_s - 1) for p in (table or points(a))]


def derive(step: float = 0.02) -> tuple[Assumptions, float]:
    """The efficiencies (bandwidth, compute, tensor-parallel) that minimise the worst |error|, and it."""
    table = points()
    grid = [round(step * i, 4) for i in range(round(0.1 / step), round(1 / step) + 1)]
    tp_grid = [round(0.5 + 0.05 * i, 2) for i in range(11)]
    best, worst_best = Assumptions(), float("inf")
    for bw in grid:
        for compute in grid:
            for tp in tp_grid:
                a = Assumptions(
                    bandwidth_efficiency=bw, compute_efficiency=compute, tensor_parallel_efficiency=tp
                )
                worst = max(abs(e) for _, e in errors(a, table))
                if worst < worst_best:
                    best, worst_best = a, worst
    return best, worst_best
