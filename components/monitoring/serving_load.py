"""What a healthy engine's metrics read at its pool's planned load, from the capacity planner.

The serving alerts must stay silent while a pool serves the traffic it was sized for, and fire on
the failure each one names. `planned_load` turns a pool's plan (model, machine, context and
concurrency) into the figures its engines report when it runs at that load: sequences running (the
planner sizes `--max-num-seqs` to them), time to first token (one prompt's prefill, nothing queued),
time per output token (one decode step with the planned batch), KV-cache use (the planned sequences
at their average length, over the KV pool vLLM allocates) and generated tokens per second. The
serving rules' promtool tests feed these figures as the healthy series.

Pure: the planner's estimates, no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass

from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.monitoring.serving import BUDGETS, Latency
from inference_infra.components.planner import Precision, Traffic
from inference_infra.components.planner.sizing import size


@dataclass(frozen=True, kw_only=True)
class PlannedLoad:
    """One engine of the pool at its planned load."""

    model: str
    machine: str
    max_num_seqs: int  # the engine's --max-num-seqs: the busiest replica's planned sequences
    running: int  # sequences running at the planned load
    ttft_seconds: float  # one prompt's prefill, with nothing queued
    tpot_seconds: float  # one decode step with the planned batch: each request's time per output token
    kv_cache_usage: float  # 0-1 share of the engine's KV pool the planned sequences hold on average
    generation_tokens_per_second: float  # per engine

    def describe(self) -> str:
        return (
            f"{self.model} on {self.machine}: {self.running} sequences (--max-num-seqs "
            f"{self.max_num_seqs}), TTFT {self.ttft_seconds:.3f} s, TPOT {self.tpot_seconds:.3f} s, KV "
            f"cache {self.kv_cache_usage:.0%}, {self.generation_tokens_per_second:,.0f} tokens/s"
        )


def planned_load(
    model: str,
    machine: str,
    cloud: Cloud | str,
    traffic: Traffic,
    precision: Precision | None = None,
    hosts: int = 1,
) -> PlannedLoad:
    """The planner's figures for one engine of `machine` serving `model` at `traffic` (`hosts` > 1: one
    engine over that many machines, a Kubernetes pool's LeaderWorkerSet group)."""
    item = find_instance_type(machine, cloud)
    if item is None:
        raise ValueError(f"instance type {machine!r} is not in the catalog")
    sizing = size(model, traffic, precision=precision, candidates=[item], hosts_per_replica=hosts)
    option = sizing.best
    layout, throughput = option.fit, option.throughput
    device, t = layout.per_device, sizing.traffic
    # vLLM gives the KV cache what its memory ceiling leaves after weights, activations and runtime.
    pool_gib = layout.ceiling_gib - device.weights_gib - device.activation_gib - device.runtime_gib
    average_tokens = t.prompt + t.output / 2
    held_gib = device.kv_cache_gib * average_tokens / t.context_tokens
    engines = max(1, layout.active_replicas)
    return PlannedLoad(
        model=sizing.model.name,
        machine=machine,
        max_num_seqs=layout.sequences_per_replica,
        running=layout.sequences_per_replica,
        ttft_seconds=t.prompt / throughput.prefill_tokens_per_s if throughput.prefill_tokens_per_s else 0.0,
        tpot_seconds=1 / throughput.per_sequence_tokens_per_s,
        kv_cache_usage=min(1.0, held_gib / pool_gib) if pool_gib > 0 else 1.0,
        generation_tokens_per_second=throughput.tokens_per_s / engines,
    )


def budget_misses(load: PlannedLoad, latency: Latency | str) -> list[str]:
    """The figures of a pool's planned load that miss its latency class's budget (empty: none).

    The serving alerts compare each pool's p99 with its budget; a pool planned above it makes them
    fire from its first hour, however healthy it is, so the plan says so instead.
    """
    latency = Latency(latency)
    budget = BUDGETS[latency]
    misses = []
    if load.ttft_seconds > budget.ttft_p99_seconds:
        misses.append(f"time to first token {load.ttft_seconds:.2f} s > {budget.ttft_p99_seconds:g} s")
    if budget.tpot_p99_seconds is not None and load.tpot_seconds > budget.tpot_p99_seconds:
        misses.append(f"time per output token {load.tpot_seconds:.3f} s > {budget.tpot_p99_seconds:g} s")
    return misses
