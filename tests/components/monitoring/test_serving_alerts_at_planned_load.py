"""Every serving alert stays silent while a pool serves the load it was planned for, and fires on the
failure it names. The healthy series are the capacity planner's figures for the pool
(`monitoring.serving_load.planned_load`), written in each pinned engine version's own metric names and
histogram buckets (vLLM 0.28.0 on NVIDIA, 0.29 on TPU, 0.9.1 on Neuron); promtool evaluates the rule
group the pool's settings render.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from inference_infra.components.monitoring.serving import (
    SERVING_ALERT_NAMES,
    Latency,
    ServingSettings,
    serving_rule_group,
)
from inference_infra.components.monitoring.serving_load import PlannedLoad, budget_misses, planned_load
from inference_infra.components.planner import Traffic

REPO = Path(__file__).resolve().parents[3]
MINUTES = 180
OUTPUT_TOKENS = 512  # the planner's generated tokens per request (Traffic's default)
# vLLM's bucket bounds (vllm/v1/metrics/loggers.py of 0.28.0; the same in 0.9.1's engine/metrics.py).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0)  # fmt: skip


@dataclass(frozen=True)
class Pool:
    name: str
    model: str
    machine: str
    cloud: str
    context_tokens: int
    concurrency: int
    latency: Latency
    neuron: bool = False  # vLLM 0.9.1's names: no engine label, gpu_cache_usage_perc, per-token TPOT

    def load(self) -> PlannedLoad:
        traffic = Traffic(context_tokens=self.context_tokens, concurrency=self.concurrency)
        return planned_load(self.model, self.machine, self.cloud, traffic)


POOLS = (
    Pool("llama-70b", "llama-3.1-70b", "p5.48xlarge", "aws", 8192, 64, Latency.INTERACTIVE),
    Pool("mistral-7b", "mistral-7b", "g5.2xlarge", "aws", 4096, 8, Latency.INTERACTIVE),
    # Neuron prefill is planned at ~840 tokens/s on one Inferentia2 chip (components/planner): an 8k prompt
    # would miss the interactive TTFT budget at its planned load, so this interactive pool holds 1k.
    Pool("inf2-llama-8b", "llama-3.1-8b", "inf2.8xlarge", "aws", 1024, 4, Latency.INTERACTIVE, neuron=True),
    Pool("qwen7b-tpu", "qwen2.5-7b", "v5litepod-4", "gcp", 8192, 32, Latency.INTERACTIVE),
    # One L4 serving 8 sequences is planned at 0.1 s per token: a batch pool, judged on throughput.
    Pool("small-l4", "llama-3.1-8b", "g2-standard-8", "gcp", 4096, 8, Latency.BATCH),
)


@dataclass(frozen=True)
class Series:
    """One engine's series at a load: every figure per minute or as a gauge."""

    running: float
    waiting: str  # promtool value notation
    kv_cache_usage: float
    tokens_per_minute: float
    tokens_after_an_hour: float  # tokens per minute from minute 60 on (a throughput change)
    error_share: float
    ttft_seconds: float
    tpot_seconds: float
    engine_up: int = 1


def healthy(load: PlannedLoad) -> Series:
    tokens = load.generation_tokens_per_second * 60
    return Series(
        running=load.running,
        waiting=f"0x{MINUTES}",
        kv_cache_usage=load.kv_cache_usage,
        tokens_per_minute=tokens,
        tokens_after_an_hour=tokens,
        error_share=0.0,
        ttft_seconds=load.ttft_seconds,
        tpot_seconds=load.tpot_seconds,
    )


def _labels(pool: Pool) -> dict[str, str]:
    labels = {
        "job": "vllm",
        "instance": "node-1:8000",
        "node": "node-1",
        "pool": pool.name,
        "model_name": "m",
    }
    return labels if pool.neuron else {**labels, "engine": "0"}


def _n(value: float) -> str:
    """A number for promtool's series notation, exact enough that a counter never steps back."""
    return f"{value:.12g}"


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


def _histogram(metric: str, labels: dict, buckets: tuple, seconds: float, per_minute: float) -> list:
    """Every request takes `seconds`: the buckets at or above it count them."""
    out = []
    for le in (*(f"{b:g}" for b in buckets), "+Inf"):
        step = per_minute if le == "+Inf" or float(le) >= seconds else 0
        out.append(_series(f"{metric}_bucket", {**labels, "le": le}, f"0+{_n(step)}x{MINUTES}"))
    return out


def input_series(pool: Pool, s: Series) -> list[dict[str, str]]:
    labels = _labels(pool)
    requests = s.tokens_per_minute / OUTPUT_TOKENS
    later = s.tokens_after_an_hour
    first = s.tokens_per_minute
    tokens = f"0+{_n(first)}x60 {_n(60 * first + later)}+{_n(later)}x{MINUTES - 61}"
    kv = "vllm:gpu_cache_usage_perc" if pool.neuron else "vllm:kv_cache_usage_perc"
    tpot = (
        "vllm:time_per_output_token_seconds" if pool.neuron else "vllm:request_time_per_output_token_seconds"
    )
    node = {"job": "node-exporter", "instance": "node-1:9100", "node": "node-1", "pool": pool.name}
    return [
        _series("vllm:num_requests_running", labels, f"{_n(s.running)}x{MINUTES}"),
        _series("vllm:num_requests_waiting", labels, s.waiting),
        _series(kv, labels, f"{_n(s.kv_cache_usage)}x{MINUTES}"),
        _series("vllm:generation_tokens_total", labels, tokens),
        _series(
            "vllm:request_success_total",
            {**labels, "finished_reason": "stop"},
            f"0+{_n(requests * (1 - s.error_share))}x{MINUTES}",
        ),
        _series(
            "vllm:request_success_total",
            {**labels, "finished_reason": "error"},
            f"0+{_n(requests * s.error_share)}x{MINUTES}",
        ),
        *_histogram("vllm:time_to_first_token_seconds", labels, TTFT_BUCKETS, s.ttft_seconds, requests),
        *_histogram(tpot, labels, TPOT_BUCKETS, s.tpot_seconds, requests),
        _series("up", labels, f"{s.engine_up}x{MINUTES}"),
        _series("up", node, f"1x{MINUTES}"),
    ]


def _settings(pool: Pool, load: PlannedLoad) -> ServingSettings:
    return ServingSettings(pools={pool.name: pool.latency}, max_num_seqs={pool.name: load.max_num_seqs})


def _promtool(tmp_path: Path, promtool: str, run, settings: ServingSettings, tests: list[dict]) -> None:
    group = serving_rule_group(settings, "https://example.com/RUNBOOK.md")
    for rule in group["rules"]:
        rule.pop("annotations", None)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": [group]}, sort_keys=False))
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def _case(series: list, checks: list[tuple[str, str, list]]) -> dict[str, Any]:
    return {
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [{"eval_time": t, "alertname": a, "exp_alerts": e} for t, a, e in checks],
    }


@pytest.mark.parametrize("pool", POOLS, ids=lambda p: p.name)
def test_serving_alerts_stay_silent_at_the_pools_planned_load(pool, tmp_path, promtool, run):
    load = pool.load()
    checks = [(at, name, []) for at in ("40m", "150m") for name in SERVING_ALERT_NAMES]
    _promtool(
        tmp_path, promtool, run, _settings(pool, load), [_case(input_series(pool, healthy(load)), checks)]
    )


def _failures(pool: Pool, load: PlannedLoad) -> dict[str, tuple[Series, str, dict[str, str]]]:
    """Alert -> (the series of the failure it names, when to look, its labels besides severity/category)."""
    ok = healthy(load)
    engine = _labels(pool)
    by_pool = {"pool": pool.name}
    failures = {
        "ServingTtftHigh": (replace(ok, ttft_seconds=15.0), "40m", {**by_pool, "slo": "ttft"}),
        "ServingQueueGrowing": (replace(ok, waiting=f"0+1x{MINUTES}"), "40m", engine),
        "ServingThroughputDrop": (
            replace(ok, tokens_after_an_hour=ok.tokens_per_minute / 2),
            "150m",
            by_pool,
        ),
        "ServingKvCacheFull": (replace(ok, kv_cache_usage=0.97), "40m", engine),
        "ServingErrorRate": (replace(ok, error_share=0.01), "40m", by_pool),
        "ServingBatchUnderused": (replace(ok, running=load.max_num_seqs * 0.1), "40m", engine),
        "ModelLoadSlow": (replace(ok, engine_up=0), "40m", engine),
    }
    if pool.latency is Latency.INTERACTIVE:
        failures["ServingInterTokenLatencyHigh"] = (
            replace(ok, tpot_seconds=0.3),
            "40m",
            {**by_pool, "slo": "itl"},
        )
    return failures


@pytest.mark.parametrize("pool", POOLS, ids=lambda p: p.name)
def test_serving_alerts_fire_on_the_failure_each_names(pool, tmp_path, promtool, run):
    load = pool.load()
    group = serving_rule_group(_settings(pool, load), "")
    kinds = {r["alert"]: r["labels"] for r in group["rules"] if "alert" in r}
    cases = []
    for name, (series, at, labels) in _failures(pool, load).items():
        expected = {**labels, "severity": kinds[name]["severity"], "category": kinds[name]["category"]}
        cases.append(_case(input_series(pool, series), [(at, name, [{"exp_labels": expected}])]))
    _promtool(tmp_path, promtool, run, _settings(pool, load), cases)


def test_every_serving_alert_has_a_failure_at_planned_load():
    interactive = next(p for p in POOLS if p.latency is Latency.INTERACTIVE)
    assert set(_failures(interactive, interactive.load())) == set(SERVING_ALERT_NAMES)


def test_planned_load_runs_the_engine_at_its_max_num_seqs():
    load = POOLS[0].load()
    assert load.running == load.max_num_seqs == 32  # 64 sequences over the p5's two 4-GPU engines
    assert 0 < load.kv_cache_usage < 0.95
    assert load.tpot_seconds < 0.1 < 2.0 > load.ttft_seconds


def test_budget_misses_names_each_figure_over_its_latency_budget():
    load = PlannedLoad(
        model="m", machine="x", max_num_seqs=8, running=8, ttft_seconds=9.14, tpot_seconds=0.102,
        kv_cache_usage=0.5, generation_tokens_per_second=80.0,
    )  # fmt: skip
    assert budget_misses(load, Latency.INTERACTIVE) == [
        "time to first token 9.14 s > 2 s",
        "time per output token 0.102 s > 0.1 s",
    ]
    assert budget_misses(load, "batch") == []  # batch: TTFT under 10 s, no per-token budget
    assert budget_misses(replace(load, ttft_seconds=12.0), "batch") == ["time to first token 12.00 s > 10 s"]


def _reference_pools() -> list[Pool]:
    """Every serving pool of the reference stacks, as their fleets plan themselves, with the latency
    class the serving rules judge them by (a TPU slice declares none: judged as interactive)."""
    from inference_infra.infra.plans import planned_pools
    from inference_infra.infra.stack_file import parse_stack_settings

    pools = []
    for stack in ("prod", "dev"):
        config = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())["config"]
        raw = {
            key.split(":", 1)[1]: value if isinstance(value, str) else json.dumps(value)  # strings arrive raw
            for key, value in config.items()
            if key.startswith("inference-infra:") and not key.endswith("Secrets")  # secure: values
        }
        for p in planned_pools(parse_stack_settings(raw, stack=stack)):
            if p.model is None or p.serving is None:
                continue
            latency = Latency(p.latency or "interactive")
            pools.append(
                Pool(
                    f"{stack}-{p.name}", p.model.name, p.machine, p.cloud, p.model.context_tokens,
                    p.model.concurrency, latency, neuron=p.accelerator == "neuron",
                )
            )  # fmt: skip
    return pools


REFERENCE_POOLS = _reference_pools()


def test_reference_pools_cover_every_accelerator_kind():
    names = {p.name for p in REFERENCE_POOLS}
    assert {"prod-llama-70b", "prod-inf2-llama-8b", "prod-small-l4", "prod-qwen7b-tpu"} <= names
    assert any(p.name.startswith("dev-") for p in REFERENCE_POOLS)


@pytest.mark.parametrize("pool", REFERENCE_POOLS, ids=lambda p: p.name)
def test_serving_alerts_stay_silent_at_the_reference_stacks_planned_load(pool, tmp_path, promtool, run):
    load = pool.load()
    assert budget_misses(load, pool.latency) == []  # the plan warns otherwise (infra/observability_stack)
    checks = [(at, name, []) for at in ("40m", "150m") for name in SERVING_ALERT_NAMES]
    _promtool(
        tmp_path, promtool, run, _settings(pool, load), [_case(input_series(pool, healthy(load)), checks)]
    )
