"""Cost in the loop: live tokens/s, USD per million tokens and tokens per dollar per pool (promtool)."""

from __future__ import annotations

import pytest
import yaml

from inference_infra.components.catalog import instance_type
from inference_infra.components.monitoring.rules import (
    RuleSettings,
    render_rules_yaml,
    validate_rule_settings,
)
from inference_infra.components.monitoring.serving_cost import (
    POOL_PLANNED_SERIES,
    POOL_TOKENS_PER_USD_SERIES,
    POOL_TOKENS_SERIES,
    POOL_USD_PER_MTOK_SERIES,
    PoolCost,
    pool_cost,
)

ENGINE = 'job="vllm",instance="i-1:8000",node="i-1",model_name="llama",engine="0"'


def test_pool_cost_prices_a_pool_from_the_catalog():
    item = instance_type("g5.12xlarge", "aws")
    cost = pool_cost("chat", "aws", "g5.12xlarge", 3, planned_usd_per_million_tokens=1.5)
    assert cost.usd_per_hour == pytest.approx(3 * item.hourly_usd[item.reference_region])
    assert "3 x g5.12xlarge" in cost.basis


def test_pool_cost_rejects_free_pools():
    problems = validate_rule_settings(RuleSettings(pool_costs=(PoolCost(pool="chat", usd_per_hour=0),)))
    assert [(p.input, p.value) for p in problems] == [("rules.pool_costs[chat].usd_per_hour", 0)]


def test_pool_cost_rules_record_live_usd_per_million_tokens(tmp_path, promtool, run):
    settings = RuleSettings(
        pool_costs=(
            PoolCost(pool="chat", usd_per_hour=36, planned_usd_per_million_tokens=8),
            PoolCost(pool="idle", usd_per_hour=10),
        )
    )
    (tmp_path / "rules.yml").write_text(render_rules_yaml(settings))
    series = [
        # chat generates 1000 tokens/s (60000 per minute) across two engines; idle generates nothing.
        {"series": f'vllm:generation_tokens_total{{{ENGINE},pool="chat"}}', "values": "0+36000x20"},
        {
            "series": f'vllm:generation_tokens_total{{{ENGINE.replace("i-1", "i-2")},pool="chat"}}',
            "values": "0+24000x20",
        },
        {
            "series": f'vllm:generation_tokens_total{{{ENGINE.replace("i-1", "i-3")},pool="idle"}}',
            "values": "0x20",
        },
    ]
    tests = [
        {
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": [
                {
                    "expr": POOL_TOKENS_SERIES,
                    "eval_time": "10m",
                    "exp_samples": [
                        {"labels": f'{POOL_TOKENS_SERIES}{{pool="chat"}}', "value": 1000},
                        {"labels": f'{POOL_TOKENS_SERIES}{{pool="idle"}}', "value": 0},
                    ],
                },
                # $36/h over 3.6M tokens/h: $10 per million; an idle pool has no figure rather than infinity.
                {
                    "expr": POOL_USD_PER_MTOK_SERIES,
                    "eval_time": "10m",
                    "exp_samples": [{"labels": f'{POOL_USD_PER_MTOK_SERIES}{{pool="chat"}}', "value": 10}],
                },
                {
                    "expr": POOL_TOKENS_PER_USD_SERIES,
                    "eval_time": "10m",
                    "exp_samples": [
                        {"labels": f'{POOL_TOKENS_PER_USD_SERIES}{{pool="chat"}}', "value": 100000},
                        {"labels": f'{POOL_TOKENS_PER_USD_SERIES}{{pool="idle"}}', "value": 0},
                    ],
                },
                {
                    "expr": POOL_PLANNED_SERIES,
                    "eval_time": "10m",
                    "exp_samples": [{"labels": f'{POOL_PLANNED_SERIES}{{pool="chat"}}', "value": 8}],
                },
            ],
        }
    ]
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_serving_cost_dashboard_puts_live_next_to_planned_and_utilization_against_80():
    from inference_infra.components.monitoring.dashboards import dashboards, serving_cost_dashboard

    board = serving_cost_dashboard()
    assert "inference-infra-serving-cost.json" in dashboards()
    live = next(p for p in board["panels"] if p["title"].startswith("USD per million tokens"))
    assert [t["expr"] for t in live["targets"]] == [POOL_USD_PER_MTOK_SERIES, POOL_PLANNED_SERIES]
    util = next(p for p in board["panels"] if p["title"].startswith("GPU utilization"))
    steps = util["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert {"color": "red", "value": 80} in steps
