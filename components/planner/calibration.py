"""The step model's factors, fitted per accelerator family on published vLLM measurements.

For each measurement the planner lays the model out on the measured devices (at
the published tensor-parallel degree where the run fixed one, else at its own
smallest fitting degree), holds it to the run's concurrency, or, where the
engine's KV cache set the batch (an offline batch, a burst of requests), to as
many sequences as the cache admits at the run's memory setting, replays the
run's scheduling (`planner.engine`) and estimates what the point measured
(`Metric`): generated tokens per second, one stream's decode speed, or one
request's prompt tokens over its time to first token.

`derive(family)` searches the factors the family's points constrain (`FREE`)
for the smallest worst relative error over the family's `Split.FIT` points
only; the `Split.HOLDOUT` points, chosen before any search and recorded in the
table, never enter it, and their error is what the estimate does on runs it has
not seen. The other engines' points and older vLLM builds (`Split.REFERENCE`)
are reported beside them. `assumptions.FAMILY_EFFICIENCY` holds the result (a
test checks it).

The search stays inside ranges a device can physically reach (`RANGES`): a share
of peak memory bandwidth from 30% to 95% (sustained reads on HBM top out a few
points under the datasheet figure), a share of dense peak FLOPs from 5% to 90%
(a large GEMM reaches 70-90%; the low end has room for optimum-neuron's context
encoding, which the Neuron runs' own time to first token puts near 8-9%: 1,500
prompt tokens in about 0.36 s on four Inferentia2 chips' 760 TFLOPS), 60-100%
of a step's speed left per tensor-parallel doubling, up to 20 ms of host time
per step and 100 us per sequence. A factor that ends at an
edge of its range means the model misses something; a test checks none does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from inference_infra.components.catalog import AcceleratorFamily, accelerator, find_instance_type
from inference_infra.components.planner.assumptions import FAMILY_EFFICIENCY, Assumptions, Efficiency
from inference_infra.components.planner.engine import DecodeRead, Engine
from inference_infra.components.planner.fit import Fit, fit, fit_at
from inference_infra.components.planner.measurements import MEASUREMENTS, Measurement, Metric, Split
from inference_infra.components.planner.memory import Traffic
from inference_infra.components.planner.models import model_spec
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.planner.throughput import (
    decode_step_seconds,
    estimate,
    first_token_seconds,
)
from inference_infra.components.planner.vllm_measurements import VLLM_MEASUREMENTS, VLLM_REFERENCE

TOLERANCE = 0.25  # the estimate stays within 25% of every vLLM measurement, fit and holdout alike
ALL_MEASUREMENTS: tuple[Measurement, ...] = VLLM_MEASUREMENTS + VLLM_REFERENCE + MEASUREMENTS

# The factors each family's vLLM points constrain.
# NVIDIA: one 8B model at TP=1 on H100 and B200: decode alone from 1,000 to 100,000 cached tokens
# (the share of peak bandwidth and the host time per step), decode and output at 8 sequences, and
# the time to first token of a 20,000-token prompt (the share of peak FLOPs). No V1 point is past
# TP=1, so the per-doubling factor is not fitted (FAMILY_EFFICIENCY says where it comes from), and
# the time per sequence is left at 0: freed, the search puts 200 us on each sequence, which is the
# 8-sequence runs' slower long-context attention, not host time.
# Neuron: one model at TP=8 with a compiled batch of 32, one request at a time and 32-128 at once:
# the bandwidth share and the time per step (seen alone at one request), and the compute share
# (the prompts' encoding, which the loaded runs add). With every point at TP=8 a per-doubling
# factor cannot be told from the others, so Neuron's is 1.0 and the collectives sit in the step time.
# TPU: an 8B model on one v6e chip prefilling 1,800-token prompts under a 512-token budget (the
# compute share, the bandwidth share of its mixed steps) and a 70B model decoding on v6e-8 (what
# eight chips' collectives cost: the per-doubling factor). Host times are NVIDIA's.
FREE: dict[AcceleratorFamily, tuple[str, ...]] = {
    AcceleratorFamily.NVIDIA_GPU: ("bandwidth", "compute", "step_overhead_ms"),
    AcceleratorFamily.AWS_NEURON: ("bandwidth", "compute", "step_overhead_ms"),
    AcceleratorFamily.GOOGLE_TPU: ("bandwidth", "compute", "tensor_parallel"),
}

# What the search may choose from, per factor (the module docstring says why these ranges).
RANGES: dict[str, tuple[float, float, float]] = {  # (low, high, step)
    "bandwidth": (0.30, 0.95, 0.01),
    "compute": (0.05, 0.90, 0.01),
    "tensor_parallel": (0.60, 1.00, 0.01),
    "step_overhead_ms": (0.0, 20.0, 0.1),
    "sequence_overhead_us": (0.0, 100.0, 0.5),
}
_GRIDS: dict[str, list[float]] = {
    name: [round(low + step * i, 4) for i in range(round((high - low) / step) + 1)]
    for name, (low, high, step) in RANGES.items()
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

    @property
    def split(self) -> Split:
        return self.measurement.split


def family_of(m: Measurement) -> AcceleratorFamily:
    machine = find_instance_type(m.instance_type)
    assert machine is not None, m.instance_type
    return accelerator(machine.accelerator).family


def engine_of(m: Measurement) -> Engine:
    """The engine build of a run, as the run configured it."""
    return Engine(
        name=f"{m.engine} {m.engine_version}",
        scheduling=m.scheduling,
        decode_read=m.decode_read,
        token_budget=m.token_budget,
        source=m.source,
    )


def _layout(m: Measurement, assumptions: Assumptions, concurrency: int) -> tuple[Fit, Traffic]:
    spec = model_spec(m.model)
    machine = find_instance_type(m.instance_type)
    assert machine is not None, m.instance_type  # the tables name catalog machines only
    machine = replace(machine, accelerator_count=m.devices)
    precision = Precision(weights=Quantization(m.weights), kv_cache=Quantization(m.kv_cache))
    # a paged cache holds what a sequence has written; a compiled slot or bucket set holds max_model_len
    paged = m.decode_read is DecodeRead.PAGED
    context = (
        m.prompt_tokens + m.output_tokens if paged else m.max_model_len or m.prompt_tokens + m.output_tokens
    )
    traffic = Traffic(
        context_tokens=context,
        concurrency=concurrency,
        output_tokens=m.output_tokens,
        prompt_tokens=m.prompt_tokens,
    )
    if m.tensor_parallel is not None:
        return fit_at(spec, traffic, precision, assumptions, machine, m.tensor_parallel), traffic
    return fit(spec, traffic, precision, assumptions, machine), traffic


def _setup(m: Measurement, assumptions: Assumptions) -> Point:
    if m.exact_batch:  # the run's own concurrency, held to the device's whole memory
        assumptions = replace(assumptions, max_memory_utilization=1.0)
    elif m.memory_utilization is not None:  # the KV cache the run's own memory setting left
        assumptions = replace(assumptions, max_memory_utilization=m.memory_utilization)
    precision = Precision(weights=Quantization(m.weights), kv_cache=Quantization(m.kv_cache))
    low, high = (m.max_batch if m.exact_batch else 1), m.max_batch
    if not _layout(m, assumptions, low)[0].fits:
        raise ValueError(f"{m.model} does not fit on {m.devices} x {m.instance_type} devices")
    while low < high:  # the most sequences the KV cache admits, up to the run's batch
        mid = (low + high + 1) // 2
        if _layout(m, assumptions, mid)[0].fits:
            low = mid
        else:
            high = mid - 1
    layout, traffic = _layout(m, assumptions, low)
    return Point(m, layout, traffic, precision)


def points(
    assumptions: Assumptions | None = None,
    family: AcceleratorFamily | None = None,
    splits: Iterable[Split] | None = None,
) -> list[Point]:
    a = assumptions or Assumptions()
    wanted = set(splits) if splits is not None else set(Split)
    return [
        _setup(m, a)
        for m in ALL_MEASUREMENTS
        if (family is None or family_of(m) is family) and m.split in wanted
    ]


def _tokens_per_s(point: Point, traffic: Traffic, layout: Fit, assumptions: Assumptions) -> float:
    m = point.measurement
    return estimate(
        model_spec(m.model),
        traffic,
        point.precision,
        assumptions,
        layout,
        m.decode_kv_tokens,
        engine=engine_of(m),
        offline=m.offline,
        compiled_batch=m.compiled_batch,
    ).tokens_per_s


def predicted(point: Point, assumptions: Assumptions) -> float:
    """The planner's figure for what the run measured (`Measurement.metric`)."""
    m, admitted = point.measurement, point.traffic.concurrency
    spec, engine = model_spec(m.model), engine_of(m)
    if m.metric is Metric.DECODE:  # one step with the replica's sequences, each reading its cache
        kv = m.decode_kv_tokens
        if kv is None:
            kv = point.traffic.prompt + m.output_tokens / 2
        lines = point.layout.sequences_per_replica
        step = decode_step_seconds(spec, point.precision, assumptions, point.layout, lines, kv, engine=engine)
        return 1 / step
    if m.metric is Metric.PREFILL:
        layout, traffic = point.layout, point.traffic
        seconds = first_token_seconds(spec, traffic, point.precision, assumptions, layout, engine=engine)
        return traffic.prompt / seconds
    full = _tokens_per_s(point, point.traffic, point.layout, assumptions)
    if not m.offline or m.max_batch <= admitted:
        return full
    # an offline batch larger than the KV cache admits runs in waves: full ones, then the rest
    waves, rest = divmod(m.max_batch, admitted)
    seconds = waves * admitted * m.output_tokens / full
    if rest:
        layout, traffic = _layout(m, assumptions, rest)
        seconds += rest * m.output_tokens / _tokens_per_s(point, traffic, layout, assumptions)
    return m.max_batch * m.output_tokens / seconds


def errors(
    assumptions: Assumptions | None = None, table: Iterable[Point] | None = None
) -> list[tuple[Point, float]]:
    """(point, relative error of the estimate: predicted / measured - 1) for every measurement."""
    a = assumptions or Assumptions()
    return [(p, predicted(p, a) / p.measurement.tokens_per_s - 1) for p in (table or points(a))]


def summary(
    found: Sequence[tuple[Point, float]],
) -> dict[tuple[AcceleratorFamily, Split], tuple[int, float, float]]:
    """Per family and split: (points, mean |error|, worst |error|)."""
    out = {}
    for family in AcceleratorFamily:
        for split in Split:
            mine = [abs(e) for p, e in found if p.family is family and p.split is split]
            if mine:
                out[family, split] = (len(mine), sum(mine) / len(mine), max(mine))
    return out


def _with(base: Efficiency, values: dict[str, float]) -> Assumptions:
    return Assumptions(
        bandwidth_efficiency=values.get("bandwidth", base.bandwidth),
        compute_efficiency=values.get("compute", base.compute),
        tensor_parallel_efficiency=values.get("tensor_parallel", base.tensor_parallel),
        step_overhead_ms=values.get("step_overhead_ms", base.step_overhead_ms),
        sequence_overhead_us=values.get("sequence_overhead_us", base.sequence_overhead_us),
    )


def derive(
    family: AcceleratorFamily = AcceleratorFamily.NVIDIA_GPU,
    free: Sequence[str] | None = None,
    fixed: dict[str, float] | None = None,
) -> tuple[Efficiency, float]:
    """The family's free factors that minimise the worst |error| over its `Split.FIT` points, and that error.

    Factors outside FREE[family] (or `free`, to ask what a smaller model could do) keep
    FAMILY_EFFICIENCY's values, or the values in `fixed`. The search is a pattern search on the
    factors' grids (`RANGES`: steps of 0.01 for the shares and the tensor-parallel factor, 0.1 ms
    for the step time, 0.5 us for the time per sequence): from the table's values and from the
    middle and first quarter of every grid, each factor moves by a stride while the worst error
    falls, the stride halving down to one grid step; the best of the starts wins.
    """
    table = points(family=family, splits=[Split.FIT])
    if not table:
        raise ValueError(f"no vLLM measurements to fit for {family.value}")
    base = FAMILY_EFFICIENCY[family]
    if fixed:
        base = replace(base, **fixed)
    free = tuple(FREE[family] if free is None else free)

    def worst(index: dict[str, int]) -> float:
        values = {name: _GRIDS[name][i] for name, i in index.items()}
        return max(abs(e) for _, e in errors(_with(base, values), table))

    starts = [
        {name: _grid_index(name, getattr(base, name)) for name in free},
        {name: len(_GRIDS[name]) // 2 for name in free},
        {name: len(_GRIDS[name]) // 4 for name in free},
    ]
    best, best_worst = starts[0], worst(starts[0])
    for start in starts:
        index, current = _pattern_search(start, worst)
        if current < best_worst - 1e-12:
            best, best_worst = index, current
    values = {name: getattr(base, name) for name in _GRIDS} | {n: _GRIDS[n][i] for n, i in best.items()}
    return (
        Efficiency(**values, tensor_parallel_included=base.tensor_parallel_included, basis=base.basis),
        best_worst,
    )


def _grid_index(name: str, value: float) -> int:
    grid = _GRIDS[name]
    return min(range(len(grid)), key=lambda k: abs(grid[k] - value))


def _pattern_search(
    start: dict[str, int], worst: Callable[[dict[str, int]], float]
) -> tuple[dict[str, int], float]:
    """Move one factor, or two together (a minimax error has ridges no single factor crosses)."""
    names = list(start)
    moves = [{n: d} for n in names for d in (1, -1)]
    moves += [
        {a: da, b: db}
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        for da in (1, -1)
        for db in (1, -1)
    ]
    index, current = dict(start), worst(start)
    stride = 16
    while stride >= 1:
        moved = False
        for move in moves:
            trial = index | {
                n: min(len(_GRIDS[n]) - 1, max(0, index[n] + d * stride)) for n, d in move.items()
            }
            if trial == index:
                continue
            w = worst(trial)
            if w < current - 1e-12:
                index, current, moved = trial, w, True
        if not moved:
            stride //= 2
    return index, current


def at_range_edge(efficiency: Efficiency, family: AcceleratorFamily) -> list[str]:
    """The family's searched factors that sit on an edge of their range (none should)."""
    edges = []
    for name in FREE[family]:
        low, high, step = RANGES[name]
        value = getattr(efficiency, name)
        if value <= low + step / 2 or value >= high - step / 2:
            edges.append(name)
    return edges


def fit_and_holdout(family: AcceleratorFamily) -> dict[Split, tuple[int, float, float]]:
    """(points, mean, worst) |error| on the family's fit and holdout points, at the table's factors."""
    found = errors(table=points(family=family, splits=[Split.FIT, Split.HOLDOUT]))
    return {split: stats for (fam, split), stats in summary(found).items() if fam is family}
