"""Serving SLO rules over the inference engine's own metrics (vLLM 0.28.0, 0.29 and 0.9.1).

The serving fleets run vLLM's OpenAI-compatible server; its `/metrics` (port
8000 for a node's first engine, 8001, 8002, ... for further tensor-parallel
groups) are scraped as job `vllm`. The fleets pin three vLLM versions (see
`components/serving/engines.py`): 0.28.0 on NVIDIA GPUs, a 0.29 build on TPUs
and 0.9.1 in AWS's Neuron container. Each version's metric names are a table
here, read from that version's own source in its wheel (`VLLM_METRIC_TABLES`).
Every rule reads names from these tables, and a test fails when a rule reads a
name no table holds or an alert reads nothing a pinned engine exports. Where
the versions differ (0.9.1 calls KV-cache use `vllm:gpu_cache_usage_perc`), a
rule reads both names with `or`: each engine exports only its own.

Budgets depend on the fleet: a fleet declares `latency: interactive|batch`, and
the rules render one budget series per pool (`pool` label on the engine
targets). A pool with no declared latency is judged by the interactive budget,
the stricter one, so an unlabelled pool cannot slip by. Interactive latency is
judged where a streamed reply feels it: time to first token, and the time per
output token after it (each request's mean inter-token latency); never the
whole request, which a long reply stretches however fast it streams.
Under-use is judged against each pool's own `--max-num-seqs` (the engines the
fleet planned), passed in the settings and rendered as a series per pool.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from inference_infra.components.errors import Problem
from inference_infra.components.monitoring.alerts import Alert, Category, Severity, render
from inference_infra.components.monitoring.promql import num

VLLM_VERSION = "0.28.0"
VLLM_SOURCE = f"vllm=={VLLM_VERSION} wheel, vllm/v1/metrics/loggers.py (PrometheusStatLogger)"
VLLM_AS_OF = "2026-11-23"
ENGINE_JOB = "vllm"
ENGINE_PORT = 8000  # the first engine on a node; further tensor-parallel groups on 8001, 8002, ...
SERVING_GROUP = "inference-infra-serving-alerts"
SERVING_ALERT_NAMES = (
    "ServingTtftHigh",
    "ServingInterTokenLatencyHigh",
    "ServingQueueGrowing",
    "ServingThroughputDrop",
    "ServingKvCacheFull",
    "ServingErrorRate",
    "ServingBatchUnderused",
    "ModelLoadSlow",
)

TTFT_BUDGET_SERIES = "inference_infra:serving_ttft_budget_seconds"
ITL_BUDGET_SERIES = "inference_infra:serving_itl_budget_seconds"
MAX_NUM_SEQS_SERIES = "inference_infra:serving_max_num_seqs"


@dataclass(frozen=True)
class EngineMetric:
    """One series family as the engine exposes it (Prometheus exposition names: counters end in _total)."""

    name: str
    type: str  # counter, gauge or histogram
    labels: tuple[str, ...]
    version: str = VLLM_VERSION
    source: str = VLLM_SOURCE
    as_of: str = VLLM_AS_OF


_ENGINE = ("model_name", "engine")


def _v1_table(version: str, as_of: str) -> tuple[EngineMetric, ...]:
    """The V1 engine's names (vllm/v1/metrics/loggers.py), the same in 0.28.0 and 0.29.0."""
    source = f"vllm=={version} wheel, vllm/v1/metrics/loggers.py (PrometheusStatLogger)"

    def m(name: str, kind: str, labels: tuple[str, ...] = _ENGINE) -> EngineMetric:
        return EngineMetric(name, kind, labels, version, source, as_of)

    return (
        m("vllm:num_requests_running", "gauge"),
        m("vllm:num_requests_waiting", "gauge"),
        m("vllm:kv_cache_usage_perc", "gauge"),  # 0-1: "1 means 100 percent usage"
        m("vllm:prompt_tokens_total", "counter"),
        m("vllm:generation_tokens_total", "counter"),
        # finished_reason: stop, length, abort (client), error (internal, a 500), repetition
        m("vllm:request_success_total", "counter", (*_ENGINE, "finished_reason")),
        m("vllm:time_to_first_token_seconds", "histogram"),
        m("vllm:e2e_request_latency_seconds", "histogram"),
        m("vllm:inter_token_latency_seconds", "histogram"),  # every gap between two tokens
        # Each finished request's mean gap (its decode time over its tokens after the first): MLPerf's
        # TPOT. vllm-0.28.0 and vllm-0.29.0 sdists (PyPI sha256 ac96dd0e... and c03feb07...),
        # vllm/v1/metrics/loggers.py line 860, read 2026-11-26.
        m("vllm:request_time_per_output_token_seconds", "histogram"),
        m("vllm:request_queue_time_seconds", "histogram"),
    )


def _v0_9_1_table() -> tuple[EngineMetric, ...]:
    """vLLM 0.9.1, as AWS's Neuron container runs it: the V0 engine's names (vllm/engine/metrics.py,
    label model_name); the V1 logger in the same wheel exports the same names with an `engine` label."""
    version, as_of = "0.9.1", "2026-11-24"
    source = "vllm==0.9.1 wheel, vllm/engine/metrics.py (Metrics) and vllm/v1/metrics/loggers.py"
    model = ("model_name",)

    def m(name: str, kind: str, labels: tuple[str, ...] = model) -> EngineMetric:
        return EngineMetric(name, kind, labels, version, source, as_of)

    return (
        m("vllm:num_requests_running", "gauge"),
        m("vllm:num_requests_waiting", "gauge"),
        m("vllm:gpu_cache_usage_perc", "gauge"),  # 0-1; the Neuron platform reports its KV blocks here too
        m("vllm:prompt_tokens_total", "counter"),
        m("vllm:generation_tokens_total", "counter"),
        # finished_reason in 0.9.1: stop, length, abort; no "error" reason yet
        m("vllm:request_success_total", "counter", (*model, "finished_reason")),
        m("vllm:time_to_first_token_seconds", "histogram"),
        m("vllm:e2e_request_latency_seconds", "histogram"),
        # Every gap between two tokens of a request (vllm/engine/metrics.py line 121 of the 0.9.1 sdist,
        # PyPI sha256 c5ad1160...); 0.9.1 has no per-request mean.
        m("vllm:time_per_output_token_seconds", "histogram"),
        m("vllm:request_queue_time_seconds", "histogram"),
    )


VLLM_METRICS: tuple[EngineMetric, ...] = _v1_table(VLLM_VERSION, VLLM_AS_OF)  # the GPU engine's
VLLM_METRIC_TABLES: dict[str, tuple[EngineMetric, ...]] = {
    "0.9.1": _v0_9_1_table(),
    VLLM_VERSION: VLLM_METRICS,
    "0.29.0": _v1_table("0.29.0", "2026-11-24"),
}
KV_CACHE_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # >= 0.11 / 0.9.1
# Time per output token: each request's mean (0.28.0, 0.29.0) / every token's gap (0.9.1, which has no
# per-request figure; its p99 over tokens is at least the p99 over requests, so Neuron pools are held
# to the budget a little more strictly).
TIME_PER_OUTPUT_TOKEN = ("vllm:request_time_per_output_token_seconds", "vllm:time_per_output_token_seconds")


def _release(version: str) -> tuple[tuple[int, ...], bool]:
    """'0.29.1rc1.dev468' -> ((0, 29, 1), True): the release numbers, and whether it comes before them."""
    found = re.fullmatch(r"^(\d+(?:\.\d+)*)(.*)$", version)
    if found is None:
        raise ValueError(f"engine version {version!r} is not a version number like 0.28.0")
    return tuple(int(x) for x in found.group(1).split(".")), bool(found.group(2))


def engine_metric_table(engine_version: str) -> tuple[EngineMetric, ...]:
    """The metric table of a pinned engine: a release's own table, or for a pre-release or nightly of
    the same minor version (0.29.1rc1.dev468) the newest release table below it (0.29.0). A version with
    neither is an error: its names must be read from its own source first."""
    numbers, pre = _release(engine_version)
    if engine_version in VLLM_METRIC_TABLES:
        return VLLM_METRIC_TABLES[engine_version]
    below = [
        v
        for v in VLLM_METRIC_TABLES
        if pre and _release(v)[0][:2] == numbers[:2] and _release(v)[0] < numbers
    ]
    if not below:
        raise ValueError(
            f"engine version {engine_version!r} has no metric table; read its metric names from its own "
            f"source into VLLM_METRIC_TABLES (tables: {', '.join(sorted(VLLM_METRIC_TABLES))})"
        )
    return VLLM_METRIC_TABLES[max(below, key=lambda v: _release(v)[0])]


class Latency(StrEnum):
    INTERACTIVE = "interactive"
    BATCH = "batch"


# MLPerf Inference's latency constraints for LLM serving, loadgen/mlperf.conf (mlcommons/inference,
# commit 001712e9daf80386e0dda43f97b8f36981d792c4, read 2026-11-26): the Server scenario holds
# llama3_1-8b to ttft_latency 2000 ms and tpot_latency 100 ms (llama2-70b: 2000 / 200 ms), both at
# the 99th percentile; its stricter Interactive scenarios (llama3_1-8b-interactive 500 / 30 ms,
# llama2-70b-interactive 450 / 40 ms) are for pools sized for latency.
MLPERF_CONF = (
    "https://github.com/mlcommons/inference/blob/001712e9daf80386e0dda43f97b8f36981d792c4/loadgen/mlperf.conf"
)
_INTERACTIVE_SOURCE = (
    f"MLPerf Inference Server scenario, llama3_1-8b: TTFT p99 <= 2000 ms, TPOT p99 <= 100 ms ({MLPERF_CONF}, "
    "read 2026-11-26): online serving of a chat-size model"
)
_BATCH_SOURCE = (
    "inference-infra default: a batch pool is judged on throughput, not reply time; TTFT p99 over 10 s "
    "means requests sit in the queue"
)


@dataclass(frozen=True, kw_only=True)
class ServingBudget:
    """A latency class's SLO (p99 seconds). None: no budget for that figure."""

    ttft_p99_seconds: float
    tpot_p99_seconds: float | None  # time per output token: a request's mean inter-token latency
    source: str


BUDGETS: dict[Latency, ServingBudget] = {
    Latency.INTERACTIVE: ServingBudget(
        ttft_p99_seconds=2.0, tpot_p99_seconds=0.1, source=_INTERACTIVE_SOURCE
    ),
    Latency.BATCH: ServingBudget(ttft_p99_seconds=10.0, tpot_p99_seconds=None, source=_BATCH_SOURCE),
}
# Under-used: an engine running fewer than this share of its --max-num-seqs (the sequences its pool was
# sized for) on average. inference-infra default: three quarters of the capacity paid for sit idle.
UNDERUSED_RATIO = 0.25


@dataclass(frozen=True, kw_only=True)
class ServingSettings:
    """What the serving rules depend on: each pool's latency class, and the thresholds."""

    pools: Mapping[str, Latency] = field(default_factory=dict)  # pool name -> latency class
    # pool name -> its engines' --max-num-seqs (from the engines the fleet planned, EngineConfig)
    max_num_seqs: Mapping[str, int] = field(default_factory=dict)
    engine_job: str = ENGINE_JOB
    node_job: str = "node-exporter"
    kv_cache_full_ratio: float = 0.95  # issue 15: KV-cache usage above 95%
    error_ratio: float = 0.001  # issue 15: error rate above 0.1%
    throughput_drop_ratio: float = 0.2  # issue 15: > 20% fewer tokens/s than the previous hour
    underused_ratio: float = UNDERUSED_RATIO  # of the pool's --max-num-seqs
    min_batch: float = 4.0  # issue 15's absolute floor, for a pool whose --max-num-seqs is not given
    batch_minutes: int = 30
    model_load_seconds: int = 120  # issue 15: model load time over 120 s


def validate_serving_settings(s: ServingSettings, where: str = "serving") -> list[Problem]:
    problems: list[Problem] = []
    for pool, latency in s.pools.items():
        if not pool or '"' in pool or "\\" in pool:
            problems.append(Problem(f"{where}.pools", pool, "must be a pool name without quotes"))
        if not isinstance(latency, Latency):
            problems.append(Problem(f"{where}.pools[{pool}]", latency, "must be one of interactive, batch"))
    for pool, seqs in s.max_num_seqs.items():
        if not pool or '"' in pool or "\\" in pool:
            problems.append(Problem(f"{where}.max_num_seqs", pool, "must be a pool name without quotes"))
        if isinstance(seqs, bool) or not isinstance(seqs, int) or seqs < 1:
            problems.append(
                Problem(f"{where}.max_num_seqs[{pool}]", seqs, "must be a whole number, 1 or more")
            )
    for name in ("kv_cache_full_ratio", "error_ratio", "throughput_drop_ratio", "underused_ratio"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            problems.append(Problem(f"{where}.{name}", value, "must be a ratio above 0 and below 1"))
    if isinstance(s.min_batch, bool) or not isinstance(s.min_batch, (int, float)) or s.min_batch <= 0:
        problems.append(Problem(f"{where}.min_batch", s.min_batch, "must be a positive number"))
    for name in ("batch_minutes", "model_load_seconds"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(Problem(f"{where}.{name}", value, "must be a positive whole number"))
    for name in ("engine_job", "node_job"):
        value = getattr(s, name)
        if not value or '"' in value or "\\" in value:
            problems.append(Problem(f"{where}.{name}", value, "must be a job name without quotes"))
    return problems


def budget_rules(s: ServingSettings) -> list[dict[str, Any]]:
    """Per declared pool: the budgets the latency alerts compare against, and the engines'
    --max-num-seqs the under-use alert does."""
    rules: list[dict[str, Any]] = []
    for pool, latency in sorted(s.pools.items()):
        budget = BUDGETS[latency]
        labels = {"pool": pool, "latency": latency.value}
        rules.append(
            {
                "record": TTFT_BUDGET_SERIES,
                "expr": f"vector({num(budget.ttft_p99_seconds)})",
                "labels": labels,
            }
        )
        if budget.tpot_p99_seconds is not None:
            rules.append(
                {
                    "record": ITL_BUDGET_SERIES,
                    "expr": f"vector({num(budget.tpot_p99_seconds)})",
                    "labels": labels,
                }
            )
    for pool, seqs in sorted(s.max_num_seqs.items()):
        rules.append({"record": MAX_NUM_SEQS_SERIES, "expr": f"vector({seqs})", "labels": {"pool": pool}})
    return rules


def _p99(metric: str | tuple[str, ...], job: str) -> str:
    """p99 over 5 minutes by pool; of several names (one per engine version), each engine's own."""
    names = (metric,) if isinstance(metric, str) else metric
    rates = " or ".join(f'rate({m}_bucket{{job="{job}"}}[5m])' for m in names)
    return f"histogram_quantile(0.99, sum by (pool, le) ({rates}))"


def _over_budget(p99: str, budget_series: str, default: float) -> str:
    """p99 over the pool's own budget, or over the interactive default where the pool declared no class.

    Every declared pool has a TTFT budget series, so that series marks "declared": a batch pool,
    which has no latency budget, is not judged by the interactive one.
    """
    return (
        f"(\n  {p99}\n  > on (pool) group_left () {budget_series}\n)\nor\n"
        f"(\n  ({p99} unless on (pool) {TTFT_BUDGET_SERIES})\n  > {num(default)}\n)"
    )


def serving_alerts(s: ServingSettings) -> list[Alert]:
    """The serving SLO alerts over the engines' own metrics (group `inference-infra-serving-alerts`)."""
    job = s.engine_job
    interactive = BUDGETS[Latency.INTERACTIVE]
    batch = BUDGETS[Latency.BATCH]
    tokens = f'vllm:generation_tokens_total{{job="{job}"}}'
    requests = f'vllm:request_success_total{{job="{job}"}}'
    where = "{{ $labels.instance }} ({{ $labels.model_name }})"
    load_minutes = max(1, s.model_load_seconds // 60)
    serving = functools.partial(Alert, group=SERVING_GROUP)
    return [
        serving(
            name="ServingTtftHigh",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr=_over_budget(
                _p99("vllm:time_to_first_token_seconds", job),
                TTFT_BUDGET_SERIES,
                interactive.ttft_p99_seconds,
            ),
            for_minutes=5,
            summary="Time to first token p99 over budget in pool {{ $labels.pool }}",
            description="Pool {{ $labels.pool }} has a p99 time to first token of "
            '{{ $value | printf "%.3f" }} s for 5 minutes,'
            f" over its budget (interactive {num(interactive.ttft_p99_seconds)} s, batch "
            f"{num(batch.ttft_p99_seconds)} s). Requests queue for prefill: add capacity, "
            "lower max concurrency or move long prompts to a batch pool.",
            labels={"slo": "ttft"},
            when=f'time to first token p99 over the pool\'s budget (`slo="ttft"`: '
            f"{num(interactive.ttft_p99_seconds)} s interactive, {num(batch.ttft_p99_seconds)} s batch) "
            "for 5 minutes",
        ),
        serving(
            name="ServingInterTokenLatencyHigh",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr=_over_budget(
                _p99(TIME_PER_OUTPUT_TOKEN, job),
                ITL_BUDGET_SERIES,
                interactive.tpot_p99_seconds or 0,
            ),
            for_minutes=5,
            summary="Inter-token latency p99 over budget in pool {{ $labels.pool }}",
            description="Pool {{ $labels.pool }} streams its replies at a p99 of "
            '{{ $value | printf "%.3f" }} s per token (each request\'s mean time per output token) for '
            f"5 minutes, over the interactive budget of {num(interactive.tpot_p99_seconds or 0)} s. Decode "
            "steps are slow: too many sequences per engine, preemption (KV cache full) or long prefills "
            "interleaved with decoding. Lower --max-num-seqs, add capacity, or move long prompts away.",
            labels={"slo": "itl"},
            when="time per output token (each request's mean inter-token latency) p99 over "
            f'{num(interactive.tpot_p99_seconds or 0)} s in an interactive pool (`slo="itl"`) '
            "for 5 minutes",
        ),
        serving(
            name="ServingQueueGrowing",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr=f'vllm:num_requests_waiting{{job="{job}"}} > 0\n'
            f'and deriv(vllm:num_requests_waiting{{job="{job}"}}[10m]) > 0',
            for_minutes=10,
            summary="Request queue growing on " + where,
            description="The engine on " + where + " has {{ $value }} requests waiting and the queue has "
            "grown for 10 minutes: it takes requests faster than it finishes them. Add capacity or shed "
            "load.",
            when="requests waiting keep growing for 10 minutes",
        ),
        serving(
            name="ServingThroughputDrop",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr=f"sum by (pool) (rate({tokens}[1h]))\n"
            f"< {num(1 - s.throughput_drop_ratio)} * sum by (pool) (rate({tokens}[1h] offset 1h))",
            for_minutes=15,
            summary="Token throughput down in pool {{ $labels.pool }}",
            description="Pool {{ $labels.pool }} generated "
            '{{ $value | printf "%.1f" }} tokens/s over the last '
            f"hour, more than {num(100 * s.throughput_drop_ratio)}% below the hour before. Check for a lost "
            "engine, a preempting KV cache or traffic sent elsewhere.",
            when=f"generated tokens/s over the last hour more than {num(100 * s.throughput_drop_ratio)}% "
            "below the hour before, for 15 minutes",
        ),
        serving(
            name="ServingKvCacheFull",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr="(" + " or ".join(f'{name}{{job="{job}"}}' for name in KV_CACHE_USAGE) + ")"
            f" > {num(s.kv_cache_full_ratio)}",
            for_minutes=5,
            summary="KV cache almost full on " + where,
            description="The engine on " + where + " has {{ $value | humanizePercentage }} of its KV cache "
            f"in use for 5 minutes (threshold {num(100 * s.kv_cache_full_ratio)}%). Requests are being "
            "preempted and recomputed: lower concurrency or context, or add capacity.",
            when=f"KV cache more than {num(100 * s.kv_cache_full_ratio)}% used for 5 minutes",
        ),
        serving(
            name="ServingErrorRate",
            severity=Severity.CRITICAL,
            category=Category.HEALTH,
            expr=f'sum by (pool) (rate({requests[:-1]},finished_reason="error"}}[5m]))\n'
            f"/ sum by (pool) (rate({requests}[5m])) > {num(s.error_ratio)}",
            for_minutes=5,
            summary="Serving errors in pool {{ $labels.pool }}",
            description="Pool {{ $labels.pool }} ends {{ $value | humanizePercentage }} of its requests with "
            f'an internal error (finished_reason="error", a 500), above {num(100 * s.error_ratio)}%, for 5 '
            "minutes.",
            when=f"more than {num(100 * s.error_ratio)}% of requests end with an error, for 5 minutes",
        ),
        serving(
            name="ServingBatchUnderused",
            severity=Severity.WARNING,
            category=Category.COST,
            expr=_underused(s),
            for_minutes=s.batch_minutes,
            summary="Accelerator under-used on " + where,
            description="The engine on " + where + ' has run {{ $value | printf "%.1f" }} requests at a time '
            f"on average for {s.batch_minutes} minutes, under {num(100 * s.underused_ratio)}% of the "
            f"sequences its pool was sized for (--max-num-seqs; {num(s.min_batch)} where that is not known). "
            "The accelerator is paid for by the hour: consolidate pools, scale in or move to a smaller "
            "instance.",
            when=f"an engine running fewer than {num(100 * s.underused_ratio)}% of its pool's "
            f"`--max-num-seqs` on average for {s.batch_minutes} minutes (fewer than {num(s.min_batch)} "
            "where that is not known)",
        ),
        serving(
            name="ModelLoadSlow",
            severity=Severity.WARNING,
            category=Category.HEALTH,
            expr=f'up{{job="{job}"}} == 0\nand on (node) up{{job="{s.node_job}"}} == 1',
            for_minutes=load_minutes,
            summary="Model not serving after load budget on {{ $labels.instance }}",
            description="The engine target {{ $labels.instance }} has not answered /metrics for "
            f"{s.model_load_seconds} s while its node is up. vLLM {VLLM_VERSION} publishes no load-time "
            "metric and its server answers only once the weights are loaded, so a node that is up with no "
            "engine is still loading (slow weight cache) or failed to load.",
            when=f"an engine target down for {load_minutes} minutes while its node exporter is up",
        ),
    ]


def _underused(s: ServingSettings) -> str:
    """Running sequences below the pool's share of --max-num-seqs; the absolute floor for a pool
    whose --max-num-seqs the settings do not give."""
    running = f'avg_over_time(vllm:num_requests_running{{job="{s.engine_job}"}}[5m])'
    return (
        f"(\n  {running}\n  < on (pool) group_left () ({num(s.underused_ratio)} * {MAX_NUM_SEQS_SERIES})\n)\n"
        f"or\n(\n  ({running} unless on (pool) {MAX_NUM_SEQS_SERIES})\n  < {num(s.min_batch)}\n)"
    )


def serving_alert_rules(s: ServingSettings, runbook_url: str) -> list[dict[str, Any]]:
    return render(serving_alerts(s), runbook_url)


def serving_rule_group(s: ServingSettings, runbook_url: str) -> dict[str, Any]:
    return {"name": SERVING_GROUP, "rules": budget_rules(s) + serving_alert_rules(s, runbook_url)}
