"""The reference stacks priced whole: accelerators and everything else, in JSON and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference_infra.components.offline_plan import render_table

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_prod_stack_prices_the_filestore_cache_and_root_volumes_and_stays_in_budget(plan_stack):
    result = plan_stack("prod")
    cost = result.as_json()["cost"]
    assert cost["hourly_usd"] == pytest.approx(
        cost["accelerators_hourly_usd"] + cost["other_hourly_usd"], abs=1e-3
    )
    bases = [i["basis"] for i in cost["items"] if i["category"] == "storage"]
    assert any(b.startswith("Filestore ZONAL 2560 GiB") for b in bases)
    assert any("gp3 300 GiB" in b for b in bases)  # a p5's root volume
    assert {u["usage_key"] for u in cost["usage_based"]} >= {"storage_gb", "monthly_requests"}
    budget = json.loads((REPO_ROOT / "policy/config/prod.json").read_text())
    assert cost["hourly_usd"] <= budget["accelerator-spend-budget"]["maxHourlyUsd"]
    assert not result.policy.violations


def test_plan_table_shows_accelerators_and_everything_else_apart(plan_stack):
    text = render_table(plan_stack("dev"))
    lines = [
        line for line in text.splitlines() if line.startswith(("Accelerators:", "Everything else:", "Total:"))
    ]
    assert [line.split(":")[0] for line in lines] == ["Accelerators", "Everything else", "Total"]
    assert "network $" in lines[1]
    assert "storage $" in lines[1]
    assert "Usage-based, not in the total:" in text
