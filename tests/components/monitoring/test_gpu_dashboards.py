from __future__ import annotations

import json
import re

import yaml

from inference_infra.components.monitoring.dashboards import (
    COST_UID,
    FLEET_UID,
    dashboards,
    gpu_fleet_dashboard,
    idle_cost_dashboard,
    to_json,
)
from inference_infra.components.monitoring.rules import RuleSettings, rule_file
from inference_infra.components.monitoring.thresholds import Thresholds


def _exprs(dashboard: dict) -> list[str]:
    return [t["expr"] for p in dashboard["panels"] for t in p["targets"]]


def test_dashboards_are_the_fleet_and_idle_cost_boards():
    boards = dashboards()
    assert set(boards) == {f"{FLEET_UID}.json", f"{COST_UID}.json", "inference-infra-serving-cost.json"}
    assert boards[f"{FLEET_UID}.json"]["title"] == "GPU fleet utilization"
    assert boards[f"{COST_UID}.json"]["title"] == "Idle accelerator cost"


def test_dashboards_panels_have_unique_ids_and_fit_the_grid():
    for board in dashboards(neuron=True).values():
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids))
        assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in board["panels"])


def test_dashboards_show_utilization_and_memory_per_node_and_per_gpu():
    titles = [p["title"] for p in gpu_fleet_dashboard()["panels"]]
    for wanted in (
        "GPU utilization per node",
        "GPU utilization per GPU",
        "Framebuffer used per node",
        "Framebuffer used per GPU",
    ):
        assert wanted in titles
    exprs = _exprs(gpu_fleet_dashboard())
    assert 'avg by (node) (DCGM_FI_DEV_GPU_UTIL{node=~"$node"})' in exprs


def test_dashboards_draw_the_alert_thresholds():
    board = gpu_fleet_dashboard(
        RuleSettings(thresholds=Thresholds(idle_utilization_percent=25, temperature_celsius=80))
    )
    panels = {p["title"]: p for p in board["panels"]}
    steps = panels["GPU utilization per GPU"]["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert [s["value"] for s in steps if s["value"] is not None] == [25, 95]
    temp = panels["Temperature per GPU"]["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert temp[-1]["value"] == 80


def test_dashboards_idle_cost_reads_the_recording_rules():
    recorded = {r["record"] for g in rule_file()["groups"] for r in g["rules"] if "record" in r}
    used = {name for e in _exprs(idle_cost_dashboard()) for name in re.findall(r"inference_infra:[\w:]+", e)}
    assert used
    assert used <= recorded
    titles = [p["title"] for p in idle_cost_dashboard()["panels"]]
    assert "Idle GPU cost per hour" in titles
    assert "GPUs without a catalog price" in titles


def test_dashboards_neuron_panel_only_when_asked():
    assert not any("neuroncore" in e for e in _exprs(gpu_fleet_dashboard()))
    assert any("neuroncore_utilization_ratio" in e for e in _exprs(gpu_fleet_dashboard(neuron=True)))


def test_dashboards_queries_are_valid_promql(tmp_path, promtool, run):
    exprs = sorted({e for board in dashboards(neuron=True).values() for e in _exprs(board)})
    rules = [
        {"record": f"dashboard:query_{i}", "expr": e.replace("$node", ".*")} for i, e in enumerate(exprs)
    ]
    path = tmp_path / "queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard-queries", "rules": rules}]}))
    result = run(promtool, "check", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in result.stdout


def test_dashboards_json_is_stable_and_loads():
    board = idle_cost_dashboard()
    assert json.loads(to_json(board)) == board
    assert to_json(board) == to_json(idle_cost_dashboard())
