"""Does a model fit a machine, and with what tensor-parallel degree?

A machine is split into parallel units: GPUs, NeuronCores (Inferentia2 and
Trainium shard over cores, each with its share of the chip's memory) or TPU
chips (a slice shards over its chips). For every degree t that divides the
attention heads (and either divides the KV heads or is a multiple of them, so
KV heads shard or replicate evenly) and is at most the machine's units, the
planner places one replica on t units and fills the machine with
units // t replicas (data parallel), spreading the concurrent sequences over
them. The chosen degree is the smallest whose busiest unit stays under the
memory ceiling. One machine per deployment: a model that fits no single
machine is reported, not spread over several, unless the caller asks for a
replica of several hosts (`hosts`, Kubernetes GPU pools only: a
LeaderWorkerSet group). Then a replica is `hosts` identical machines, tensor
parallel over one host's GPUs (the largest degree the heads allow) and
pipeline parallel over the hosts, as vLLM serves one model across nodes
(`--tensor-parallel-size <GPUs per host> --pipeline-parallel-size <hosts>`):
each stage holds its share of the layers, so of the weights and of the KV
cache, while activations and the runtime reserve stay per device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from inference_infra.components.catalog import Accelerator, AcceleratorFamily, InstanceType, accelerator
from inference_infra.components.planner.assumptions import Assumptions
from inference_infra.components.planner.engine import served_engine
from inference_infra.components.planner.memory import (
    DeviceMemory,
    Traffic,
    device_memory,
    sequences_per_replica,
)
from inference_infra.components.planner.models import ModelSpec
from inference_infra.components.planner.precision import Precision, compute_peak_tflops, unsupported_weights

_UNIT = {
    AcceleratorFamily.NVIDIA_GPU: "GPU",
    AcceleratorFamily.AWS_NEURON: "NeuronCore",
    AcceleratorFamily.GOOGLE_TPU: "TPU chip",
}


@dataclass(frozen=True)
class Hardware:
    """An instance type seen as parallel units."""

    instance: InstanceType
    device: Accelerator

    @property
    def _split(self) -> int:
        # Neuron shards over NeuronCores; GPUs and TPU chips (megacore) are one unit each.
        return self.device.cores_per_device if self.device.family is AcceleratorFamily.AWS_NEURON else 1

    @property
    def units(self) -> int:
        return self.instance.accelerator_count * self._split

    @property
    def unit_name(self) -> str:
        return _UNIT[self.device.family]

    @property
    def unit_memory_gib(self) -> float:
        return self.device.memory_gib / self._split

    @property
    def unit_bandwidth_gb_s(self) -> float:
        return self.device.memory_bandwidth_gb_s / self._split

    def unit_peak_tflops(self, precision: Precision) -> tuple[float, str]:
        peak, basis = compute_peak_tflops(self.device, precision.weights)
        return peak / self._split, basis

    def describe(self) -> str:
        units = f"{self.instance.accelerator_count} x {self.device.name}"
        if self._split > 1:
            units += f" ({self.units} NeuronCores of {self.unit_memory_gib:g} GiB)"
        return units


def hardware(instance: InstanceType) -> Hardware:
    return Hardware(instance, accelerator(instance.accelerator))


def tensor_parallel_degrees(spec: ModelSpec, units: int) -> list[int]:
    """Degrees a replica may use on a machine of `units`, smallest first."""
    return [
        t
        for t in range(1, units + 1)
        if spec.attention_heads % t == 0 and (spec.kv_heads % t == 0 or t % spec.kv_heads == 0)
    ]


@dataclass(frozen=True, kw_only=True)
class Fit:
    """A parallel layout of the model on one machine, and whether it fits."""

    hardware: Hardware
    tensor_parallel: int
    replicas: int  # replicas the machine holds: units // tensor_parallel
    active_replicas: int  # replicas that carry traffic (no more than there are sequences)
    sequences_per_replica: int  # the busiest replica's concurrent sequences
    per_device: DeviceMemory  # the busiest unit's memory
    ceiling_gib: float  # max_memory_utilization x unit memory
    problem: str | None = None  # why it does not fit (None: it fits)
    format_supported: bool = True  # False: the device cannot run the weight format at all
    hosts: int = 1  # machines one replica spans (pipeline-parallel stages); 1: a replica on one machine

    @property
    def fits(self) -> bool:
        return self.problem is None

    @property
    def pipeline_parallel(self) -> int:
        return self.hosts

    @property
    def memory_utilization(self) -> float:
        return self.per_device.total_gib / self.hardware.unit_memory_gib

    def describe(self) -> str:
        hw, d = self.hardware, self.per_device
        layout = f"TP={self.tensor_parallel} over {self.tensor_parallel} of {_count(hw.units, hw.unit_name)}"
        if self.hosts > 1:
            layout += f" per host, PP={self.hosts} over {self.hosts} hosts"
        if self.replicas > 1:
            layout += f", {self.replicas} replicas"
            if self.active_replicas < self.replicas:
                layout += f" ({self.replicas - self.active_replicas} idle: fewer sequences than replicas)"
        layout += f", {self.sequences_per_replica} sequences per replica"
        return (
            f"{layout}; per {hw.unit_name}: {d.weights_gib:.1f} GiB weights + {d.kv_cache_gib:.1f} GiB KV"
            f" + {d.activation_gib:.1f} GiB activations + {d.runtime_gib:.1f} GiB runtime"
            f" = {d.total_gib:.1f} of {hw.unit_memory_gib:g} GiB ({self.memory_utilization:.0%};"
            f" ceiling {self.ceiling_gib:.1f} GiB)"
        )


def fit(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    instance: InstanceType,
    hosts: int = 1,
) -> Fit:
    """The smallest-degree layout that fits, or the closest miss with the reason. `hosts` > 1: one
    replica over that many machines (multi_host_fit)."""
    if hosts > 1:
        return multi_host_fit(spec, traffic, precision, assumptions, instance, hosts)
    hw = hardware(instance)
    ceiling = assumptions.max_memory_utilization * hw.unit_memory_gib
    degrees = tensor_parallel_degrees(spec, hw.units)
    layouts = [_layout(spec, traffic, precision, assumptions, hw, t, ceiling) for t in degrees]
    unsupported = unsupported_weights(hw.device, precision.weights)
    if unsupported is None:
        for layout in layouts:
            if layout.per_device.total_gib <= ceiling:
                return layout
    closest = min(layouts, key=lambda f: f.per_device.total_gib)
    if unsupported is not None:
        reason = f"{instance.name}: {unsupported}"
    else:
        reason = _too_small(spec, precision, closest)
    return Fit(
        hardware=closest.hardware,
        tensor_parallel=closest.tensor_parallel,
        replicas=closest.replicas,
        active_replicas=closest.active_replicas,
        sequences_per_replica=closest.sequences_per_replica,
        per_device=closest.per_device,
        ceiling_gib=ceiling,
        problem=reason,
        format_supported=unsupported is None,
    )


def fit_at(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    instance: InstanceType,
    tensor_parallel: int,
) -> Fit:
    """The layout at a given degree, as a published run fixed it (engines may pad heads, so the
    degree need not divide them); `problem` says when it does not fit."""
    hw = hardware(instance)
    if not 1 <= tensor_parallel <= hw.units:
        raise ValueError(f"TP={tensor_parallel} on {instance.name} ({_count(hw.units, hw.unit_name)})")
    ceiling = assumptions.max_memory_utilization * hw.unit_memory_gib
    layout = _layout(spec, traffic, precision, assumptions, hw, tensor_parallel, ceiling)
    unsupported = unsupported_weights(hw.device, precision.weights)
    if unsupported is not None:
        return replace(layout, problem=f"{instance.name}: {unsupported}", format_supported=False)
    if layout.per_device.total_gib > ceiling:
        return replace(layout, problem=_too_small(spec, precision, layout))
    return layout


def stage_share(spec: ModelSpec, hosts: int) -> float:
    """The busiest pipeline stage's share of the layers (so of the KV cache): vLLM splits the decoder
    layers as evenly as it can over the stages (vllm/distributed/utils.py get_pp_indices in vLLM 0.28.0,
    read 2026-12-02), so the busiest holds ceil(layers / hosts) of them."""
    return math.ceil(spec.layers / hosts) / spec.layers


def stage_weight_share(spec: ModelSpec, hosts: int) -> float:
    """The busiest stage's share of the weights: its layers' share of the decoder, plus one vocabulary
    table (the first stage holds the input embeddings, the last the output head; with tied embeddings
    each still holds its own copy, as they sit on different hosts)."""
    table = spec.vocab_size * spec.hidden_size
    tables = table * (1 if spec.tied_embeddings else 2)
    decoder = max(spec.params - tables, 0)
    return min(1.0, (decoder * stage_share(spec, hosts) + table) / spec.params)


def multi_host_fit(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    instance: InstanceType,
    hosts: int,
) -> Fit:
    """One replica over `hosts` machines: TP over one host's units (the largest degree the heads allow),
    PP over the hosts. Each device holds its stage's share of the weights and of every sequence's KV
    cache; the activation workspace and the runtime reserve are per device as on one host. The replica
    holds every concurrent sequence (no data parallel inside a group)."""
    hw = hardware(instance)
    ceiling = assumptions.max_memory_utilization * hw.unit_memory_gib
    t = max(tensor_parallel_degrees(spec, hw.units))
    whole = _layout(spec, traffic, precision, assumptions, hw, t, ceiling, replicas=1)
    share = stage_share(spec, hosts)
    per_device = replace(
        whole.per_device,
        weights_gib=whole.per_device.weights_gib * stage_weight_share(spec, hosts),
        kv_cache_gib=whole.per_device.kv_cache_gib * share,
    )
    layout = replace(whole, per_device=per_device, hosts=hosts)
    unsupported = unsupported_weights(hw.device, precision.weights)
    if unsupported is not None:
        return replace(layout, problem=f"{instance.name}: {unsupported}", format_supported=False)
    if per_device.total_gib > ceiling:
        return replace(layout, problem=_too_small(spec, precision, layout))
    return layout


def _layout(
    spec: ModelSpec,
    traffic: Traffic,
    precision: Precision,
    assumptions: Assumptions,
    hw: Hardware,
    t: int,
    ceiling: float,
    replicas: int | None = None,
) -> Fit:
    replicas = hw.units // t if replicas is None else replicas
    sequences = sequences_per_replica(traffic.concurrency, replicas)
    engine = served_engine(hw.device.family)
    per_device = device_memory(
        spec,
        traffic,
        precision,
        assumptions,
        tensor_parallel=t,
        sequences=sequences,
        step_tokens=engine.budget(hw.device, traffic.context_tokens),
        block_tokens=engine.block_tokens(hw.device, traffic.context_tokens),
    )
    return Fit(
        hardware=hw,
        tensor_parallel=t,
        replicas=replicas,
        active_replicas=min(replicas, traffic.concurrency),
        sequences_per_replica=sequences,
        per_device=per_device,
        ceiling_gib=ceiling,
    )


def _too_small(spec: ModelSpec, precision: Precision, closest: Fit) -> str:
    hw, d, unit = closest.hardware, closest.per_device, closest.hardware.unit_name
    hosts = f" x {closest.hosts} hosts (PP={closest.hosts})" if closest.hosts > 1 else ""
    return (
        f"{hw.instance.name}{hosts} ({hw.describe()}) is too small for {spec.name} with"
        f" {precision.describe()}:"
        f" even at its best layout (TP={closest.tensor_parallel}; degrees must divide the"
        f" {spec.attention_heads} attention heads and be at most {_count(hw.units, unit)}) each {unit} needs"
        f" {d.weights_gib:.1f} GiB weights + {d.kv_cache_gib:.1f} GiB KV cache"
        f" ({closest.sequences_per_replica} sequences) + {d.activation_gib:.1f} GiB activations"
        f" + {d.runtime_gib:.1f} GiB runtime = {d.total_gib:.1f} GiB, over the {closest.ceiling_gib:.1f} GiB"
        f" ceiling ({closest.ceiling_gib / hw.unit_memory_gib:.0%} of {hw.unit_memory_gib:g} GiB)"
    )


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" + ("" if n == 1 else "s")
