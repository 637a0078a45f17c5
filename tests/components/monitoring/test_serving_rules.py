"""Serving SLO rules: names from each pinned vLLM version's own metric table, each alert tested firing
and silent.

The promtool cases check labels and timing; the annotation templates are
checked by `promtool check rules` on the full rendered file, so the test rule
file leaves annotations out (promtool would otherwise compare every rendered
description too).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from inference_infra.components.monitoring.rules import RuleSettings, render_rules_yaml, rule_file
from inference_infra.components.monitoring.serving import (
    SERVING_ALERT_NAMES,
    SERVING_GROUP,
    VLLM_METRIC_TABLES,
    VLLM_METRICS,
    VLLM_VERSION,
    Latency,
    ServingSettings,
    engine_metric_table,
    serving_rule_group,
    validate_serving_settings,
)
from inference_infra.components.serving.engines import IMAGES

RUNBOOK = "https://example.com/RUNBOOK.md"
ENGINE = {
    "job": "vllm",
    "instance": "i-0abc:8000",
    "node": "i-0abc",
    "pool": "chat",
    "model_name": "llama",
    "engine": "0",
}
POOLS = {"chat": Latency.INTERACTIVE, "offline": Latency.BATCH}
MAX_NUM_SEQS = {"chat": 16, "small": 4}
SPEC = Path(__file__).parents[3] / "components" / "monitoring" / "RUNBOOK.md"


def _group(settings: ServingSettings | None = None) -> dict[str, Any]:
    return serving_rule_group(settings or ServingSettings(pools=POOLS, max_num_seqs=MAX_NUM_SEQS), RUNBOOK)


def test_serving_rules_read_only_metrics_of_the_pinned_vllm_tables():
    every = [m for table in VLLM_METRIC_TABLES.values() for m in table]
    table = {m.name for m in every}
    histograms = {m.name for m in every if m.type == "histogram"}
    used = set()
    for rule in _group()["rules"]:
        used |= set(re.findall(r"vllm:[a-z0-9_]+", rule["expr"]))
    assert used
    for name in used:
        base = name.removesuffix("_bucket")
        assert base in table, name
        assert name == base or base in histograms, name
    assert all(m.version == VLLM_VERSION == "0.28.0" and m.source and m.as_of for m in VLLM_METRICS)
    for version, metrics in VLLM_METRIC_TABLES.items():
        assert all(m.version == version and version in m.source and m.as_of for m in metrics)
    assert all(m.name.endswith("_total") for m in every if m.type == "counter")


@pytest.mark.parametrize("family", sorted(IMAGES))
def test_serving_alerts_read_a_metric_every_pinned_engine_exports(family):
    """An alert that reads only names an engine version does not export could never fire on its pools."""
    exported = {m.name for m in engine_metric_table(IMAGES[family].engine_version)}
    for rule in _group()["rules"]:
        if "alert" in rule and rule["alert"] != "ModelLoadSlow":  # reads `up` only
            read = {n.removesuffix("_bucket") for n in re.findall(r"vllm:[a-z0-9_]+", rule["expr"])}
            assert read & exported, (family, rule["alert"], read)


def test_engine_metric_table_takes_a_nightly_to_its_release_and_rejects_unknown_versions():
    assert engine_metric_table("0.29.1rc1.dev468") is VLLM_METRIC_TABLES["0.29.0"]
    assert engine_metric_table("0.9.1") is VLLM_METRIC_TABLES["0.9.1"]
    with pytest.raises(ValueError, match=r"engine version '0.30.0' has no metric table"):
        engine_metric_table("0.30.0")


def test_serving_rules_alert_names_are_the_specs():
    alerts = {r["alert"] for r in _group()["rules"] if "alert" in r}
    assert alerts == set(SERVING_ALERT_NAMES)
    runbook = SPEC.read_text().lower()
    for name in SERVING_ALERT_NAMES:
        assert f"## {name.lower()}" in runbook, f"RUNBOOK.md has no section for {name}"


def test_serving_rules_are_part_of_the_rendered_rule_file(tmp_path, promtool, run):
    assert SERVING_GROUP in [g["name"] for g in rule_file()["groups"]]
    (tmp_path / "rules.yml").write_text(render_rules_yaml(RuleSettings(serving=ServingSettings(pools=POOLS))))
    result = run(promtool, "check", "rules", str(tmp_path / "rules.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_serving_rules_render_a_budget_per_declared_pool_and_each_pools_max_num_seqs():
    budgets = {(r["record"], r["labels"]["pool"]): r["expr"] for r in _group()["rules"] if "record" in r}
    assert budgets == {
        ("inference_infra:serving_ttft_budget_seconds", "chat"): "vector(2)",
        ("inference_infra:serving_itl_budget_seconds", "chat"): "vector(0.1)",
        ("inference_infra:serving_ttft_budget_seconds", "offline"): "vector(10)",
        ("inference_infra:serving_max_num_seqs", "chat"): "vector(16)",
        ("inference_infra:serving_max_num_seqs", "small"): "vector(4)",
    }


def test_serving_rules_judge_no_interactive_latency_on_end_to_end_request_latency():
    exprs = " ".join(r["expr"] for r in _group()["rules"] if "alert" in r)
    assert "e2e_request_latency" not in exprs
    assert "vllm:time_to_first_token_seconds_bucket" in exprs
    assert "vllm:request_time_per_output_token_seconds_bucket" in exprs
    assert "vllm:time_per_output_token_seconds_bucket" in exprs  # vLLM 0.9.1 on Neuron


def test_serving_settings_rejects_unknown_latency_and_bad_ratios():
    problems = validate_serving_settings(
        ServingSettings(
            pools={"chat": "realtime"},  # type: ignore[dict-item]
            kv_cache_full_ratio=95,
            min_batch=0,
            max_num_seqs={"chat": 0},
            underused_ratio=1.5,
        )
    )
    assert {p.input for p in problems} == {
        "serving.pools[chat]",
        "serving.kv_cache_full_ratio",
        "serving.min_batch",
        "serving.max_num_seqs[chat]",
        "serving.underused_ratio",
    }


def test_serving_settings_rejects_bad_pool_in_rule_settings():
    from inference_infra.components.monitoring.rules import validate_rule_settings

    problems = validate_rule_settings(RuleSettings(serving=ServingSettings(error_ratio=0)))
    assert [p.input for p in problems] == ["rules.serving.error_ratio"]


# -- promtool ----------------------------------------------------------------------------------


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


BUCKETS = (
    "0.025",
    "0.05",
    "0.075",
    "0.1",
    "0.15",
    "0.25",
    "0.5",
    "1.0",
    "2.5",
    "5.0",
    "10.0",
    "20.0",
    "+Inf",
)


def _histogram(metric: str, labels: dict[str, str], seconds: float, per_minute: int, minutes: int) -> list:
    """Every request takes `seconds`: buckets at or above it count them, those below stay at 0."""
    out = []
    for le in BUCKETS:
        step = per_minute if le == "+Inf" or float(le) >= seconds else 0
        out.append(_series(f"{metric}_bucket", {**labels, "le": le}, f"0+{step}x{minutes}"))
    return out


def _alert(name: str, labels: dict[str, str], **extra: str) -> dict[str, Any]:
    rule = next(r for r in _group()["rules"] if r.get("alert") == name)
    return {
        "exp_labels": {
            **labels,
            "severity": rule["labels"]["severity"],
            "category": rule["labels"]["category"],
            **extra,
        }
    }


def _case(series: list, checks: list[tuple[str, str, list]]) -> dict[str, Any]:
    return {
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [{"eval_time": t, "alertname": a, "exp_alerts": exp} for t, a, exp in checks],
    }


def _promtool(tmp_path: Path, promtool: str, run, tests: list[dict[str, Any]]) -> None:
    group = _group()
    for rule in group["rules"]:
        rule.pop("annotations", None)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": [group]}, sort_keys=False))
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_serving_ttft_high_fires_over_each_pools_budget(tmp_path, promtool, run):
    ttft = "vllm:time_to_first_token_seconds"
    slow_chat = _case(
        _histogram(ttft, ENGINE, 4.0, 10, 30),
        [
            ("3m", "ServingTtftHigh", []),
            ("15m", "ServingTtftHigh", [_alert("ServingTtftHigh", {"pool": "chat"}, slo="ttft")]),
        ],
    )
    # 4 s is inside the batch budget of 10 s; 15 s is not.
    slow_batch = _case(
        _histogram(ttft, {**ENGINE, "pool": "offline"}, 4.0, 10, 30),
        [("15m", "ServingTtftHigh", []), ("25m", "ServingTtftHigh", [])],
    )
    stuck_batch = _case(
        _histogram(ttft, {**ENGINE, "pool": "offline"}, 15.0, 10, 30),
        [("15m", "ServingTtftHigh", [_alert("ServingTtftHigh", {"pool": "offline"}, slo="ttft")])],
    )
    # A pool with no declared latency class is held to the interactive budget.
    undeclared = _case(
        _histogram(ttft, {**ENGINE, "pool": "other"}, 4.0, 10, 30),
        [("15m", "ServingTtftHigh", [_alert("ServingTtftHigh", {"pool": "other"}, slo="ttft")])],
    )
    fast_chat = _case(_histogram(ttft, ENGINE, 0.6, 10, 30), [("15m", "ServingTtftHigh", [])])
    # A long streamed reply takes a minute end to end and says nothing about interactivity.
    long_reply = _case(
        _histogram("vllm:e2e_request_latency_seconds", ENGINE, 20.0, 10, 30),
        [("15m", "ServingTtftHigh", []), ("15m", "ServingInterTokenLatencyHigh", [])],
    )
    _promtool(
        tmp_path, promtool, run, [slow_chat, slow_batch, stuck_batch, undeclared, fast_chat, long_reply]
    )


def test_serving_inter_token_latency_high_fires_over_the_interactive_budget(tmp_path, promtool, run):
    tpot = "vllm:request_time_per_output_token_seconds"
    itl = "ServingInterTokenLatencyHigh"
    slow_chat = _case(
        _histogram(tpot, ENGINE, 0.2, 10, 30),
        [("3m", itl, []), ("15m", itl, [_alert(itl, {"pool": "chat"}, slo="itl")])],
    )
    streaming_chat = _case(_histogram(tpot, ENGINE, 0.05, 10, 30), [("15m", itl, [])])
    # A batch pool has no inter-token budget: throughput is what it is judged on.
    slow_batch = _case(_histogram(tpot, {**ENGINE, "pool": "offline"}, 0.5, 10, 30), [("15m", itl, [])])
    undeclared = _case(
        _histogram(tpot, {**ENGINE, "pool": "other"}, 0.2, 10, 30),
        [("15m", itl, [_alert(itl, {"pool": "other"}, slo="itl")])],
    )
    # vLLM 0.9.1 (Neuron) reports every token's gap under its own name.
    neuron = {k: v for k, v in ENGINE.items() if k != "engine"}
    neuron_slow = _case(
        _histogram("vllm:time_per_output_token_seconds", neuron, 0.2, 10, 30),
        [("15m", itl, [_alert(itl, {"pool": "chat"}, slo="itl")])],
    )
    _promtool(tmp_path, promtool, run, [slow_chat, streaming_chat, slow_batch, undeclared, neuron_slow])


def test_serving_queue_growing_fires_on_a_growing_queue_only(tmp_path, promtool, run):
    growing = _case(
        [_series("vllm:num_requests_waiting", ENGINE, "0+1x30")],
        [
            ("5m", "ServingQueueGrowing", []),
            ("20m", "ServingQueueGrowing", [_alert("ServingQueueGrowing", ENGINE)]),
        ],
    )
    steady = _case(
        [_series("vllm:num_requests_waiting", ENGINE, "5x30")], [("20m", "ServingQueueGrowing", [])]
    )
    _promtool(tmp_path, promtool, run, [growing, steady])


def test_serving_throughput_drop_compares_with_the_previous_hour(tmp_path, promtool, run):
    tokens = "vllm:generation_tokens_total"
    halved = _case(
        [_series(tokens, ENGINE, "0+100x60 6000+50x90")],
        [
            ("70m", "ServingThroughputDrop", []),
            ("130m", "ServingThroughputDrop", [_alert("ServingThroughputDrop", {"pool": "chat"})]),
        ],
    )
    # 10% down is inside the 20% allowance.
    dipped = _case([_series(tokens, ENGINE, "0+100x60 6000+90x90")], [("130m", "ServingThroughputDrop", [])])
    _promtool(tmp_path, promtool, run, [halved, dipped])


def test_serving_kv_cache_full_fires_above_95_percent(tmp_path, promtool, run):
    full = _case(
        [_series("vllm:kv_cache_usage_perc", ENGINE, "0.97x20")],
        [
            ("3m", "ServingKvCacheFull", []),
            ("10m", "ServingKvCacheFull", [_alert("ServingKvCacheFull", ENGINE)]),
        ],
    )
    busy = _case([_series("vllm:kv_cache_usage_perc", ENGINE, "0.9x20")], [("10m", "ServingKvCacheFull", [])])
    neuron = {k: v for k, v in ENGINE.items() if k != "engine"}  # vLLM 0.9.1 (V0): model_name only
    old_name = _case(
        [_series("vllm:gpu_cache_usage_perc", neuron, "0.97x20")],
        [("10m", "ServingKvCacheFull", [_alert("ServingKvCacheFull", neuron)])],
    )
    _promtool(tmp_path, promtool, run, [full, busy, old_name])


def test_serving_error_rate_counts_internal_errors_not_client_aborts(tmp_path, promtool, run):
    ok = _series("vllm:request_success_total", {**ENGINE, "finished_reason": "stop"}, "0+1000x20")
    errors = _case(
        [ok, _series("vllm:request_success_total", {**ENGINE, "finished_reason": "error"}, "0+2x20")],
        [("12m", "ServingErrorRate", [_alert("ServingErrorRate", {"pool": "chat"})])],
    )
    aborts = _case(
        [ok, _series("vllm:request_success_total", {**ENGINE, "finished_reason": "abort"}, "0+50x20")],
        [("12m", "ServingErrorRate", [])],
    )
    rare = _case(
        [ok, _series("vllm:request_success_total", {**ENGINE, "finished_reason": "error"}, "0+0.5x20")],
        [("12m", "ServingErrorRate", [])],
    )
    _promtool(tmp_path, promtool, run, [errors, aborts, rare])


def test_serving_batch_underused_fires_under_a_quarter_of_the_pools_max_num_seqs(tmp_path, promtool, run):
    running = "vllm:num_requests_running"
    under = "ServingBatchUnderused"
    # chat engines take 16 sequences (--max-num-seqs 16): 3 at a time is under a quarter.
    small = _case(
        [_series(running, ENGINE, "3x60")],
        [("25m", under, []), ("35m", under, [_alert(under, ENGINE)])],
    )
    full = _case([_series(running, ENGINE, "12x60")], [("35m", under, [])])
    # An engine capped at --max-num-seqs 4 running 3 at a time is well used (the old floor was 4).
    capped = {**ENGINE, "pool": "small"}
    capped_busy = _case([_series(running, capped, "3x60")], [("35m", under, [])])
    capped_idle = _case([_series(running, capped, "0.5x60")], [("35m", under, [_alert(under, capped)])])
    # A pool whose --max-num-seqs is not known keeps the absolute floor of 4.
    unknown = {**ENGINE, "pool": "other"}
    unknown_small = _case([_series(running, unknown, "2x60")], [("35m", under, [_alert(under, unknown)])])
    _promtool(tmp_path, promtool, run, [small, full, capped_busy, capped_idle, unknown_small])


def test_model_load_slow_fires_when_the_node_is_up_and_the_engine_is_not(tmp_path, promtool, run):
    node = {"job": "node-exporter", "instance": "i-0abc", "node": "i-0abc"}
    loading = _case(
        [_series("up", ENGINE, "0x10"), _series("up", node, "1x10")],
        [("1m", "ModelLoadSlow", []), ("3m", "ModelLoadSlow", [_alert("ModelLoadSlow", ENGINE)])],
    )
    node_down = _case(
        [_series("up", ENGINE, "0x10"), _series("up", node, "0x10")], [("5m", "ModelLoadSlow", [])]
    )
    loaded = _case(
        [_series("up", ENGINE, "0 1x10"), _series("up", node, "1x10")], [("5m", "ModelLoadSlow", [])]
    )
    _promtool(tmp_path, promtool, run, [loading, node_down, loaded])


@pytest.mark.parametrize("latency", list(Latency))
def test_serving_budgets_cover_every_latency_class(latency):
    from inference_infra.components.monitoring.serving import BUDGETS

    assert BUDGETS[latency].ttft_p99_seconds > 0
    assert BUDGETS[latency].source
