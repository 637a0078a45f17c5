"""Missing-target alerts: per fleet, firing when a target is gone, silent while it exists (even down)."""

from __future__ import annotations

from pathlib import Path

import yaml

from inference_infra.components.monitoring.absent import (
    ABSENT_ALERT_NAMES,
    FleetTargets,
    absent_rules,
    validate_fleet_targets,
)
from inference_infra.components.monitoring.rules import RuleSettings, render_rules_yaml

RUNBOOK = "https://example.com/RUNBOOK.md"
FLEETS = (
    FleetTargets(pool="chat", kind="nvidia", engine=True),
    FleetTargets(pool="inf", kind="neuron", engine=True, neuron_monitor=True),
)


def _labels(alert: str, job: str, pool: str) -> dict:
    return {
        "exp_labels": {
            "alertname": alert,
            "severity": "warning",
            "category": "health",
            "pool": pool,
            "job": job,
        }
    }


def test_absent_rules_cover_each_fleets_exporters():
    rules = {(r["alert"], r["labels"]["pool"]) for r in absent_rules(FLEETS, RUNBOOK)}
    assert rules == {
        ("GpuExporterAbsent", "chat"),
        ("NodeExporterAbsent", "chat"),
        ("ServingEngineAbsent", "chat"),
        ("NeuronMetricsAbsent", "inf"),
        ("NodeExporterAbsent", "inf"),
        ("ServingEngineAbsent", "inf"),
    }
    assert {r["alert"] for r in absent_rules(FLEETS, RUNBOOK)} == set(ABSENT_ALERT_NAMES)
    runbook = (Path(__file__).parents[3] / "components" / "monitoring" / "RUNBOOK.md").read_text().lower()
    for name in ABSENT_ALERT_NAMES:
        assert f"## {name.lower()}" in runbook, name


def test_absent_rules_rejects_unknown_kind_and_duplicate_fleet():
    problems = validate_fleet_targets(
        [FleetTargets(pool="a", kind="gpu"), FleetTargets(pool="a", kind="tpu")]
    )
    assert [(p.input, p.value) for p in problems] == [("fleets[a].kind", "gpu"), ("fleets.pool", "a")]


def test_absent_rules_fire_for_a_vanished_target_and_stay_silent_for_a_down_one(tmp_path, promtool, run):
    (tmp_path / "rules.yml").write_text(render_rules_yaml(RuleSettings(fleets=FLEETS)))
    present = [
        {"series": f'up{{job="{job}",pool="{pool}",instance="i-1"}}', "values": "0x20"}  # down, not gone
        for job, pool in [
            ("dcgm-exporter", "chat"),
            ("node-exporter", "chat"),
            ("vllm", "chat"),
            ("neuron-monitor", "inf"),
            ("node-exporter", "inf"),
            ("vllm", "inf"),
        ]
    ]
    gone_engine = [s for s in present if s["series"] != 'up{job="vllm",pool="inf",instance="i-1"}']
    alerts = ("GpuExporterAbsent", "NodeExporterAbsent", "NeuronMetricsAbsent")
    tests = [
        {
            "interval": "1m",
            "input_series": present,
            "alert_rule_test": [
                {"eval_time": "15m", "alertname": a, "exp_alerts": []}
                for a in (*alerts, "ServingEngineAbsent")
            ],
        },
        {
            "interval": "1m",
            "input_series": gone_engine,
            "alert_rule_test": [
                {"eval_time": "5m", "alertname": "ServingEngineAbsent", "exp_alerts": []},
                {
                    "eval_time": "15m",
                    "alertname": "ServingEngineAbsent",
                    "exp_alerts": [_labels("ServingEngineAbsent", "vllm", "inf")],
                },
            ],
        },
        {
            "interval": "1m",
            "input_series": [],
            "alert_rule_test": [
                {
                    "eval_time": "15m",
                    "alertname": "GpuExporterAbsent",
                    "exp_alerts": [_labels("GpuExporterAbsent", "dcgm-exporter", "chat")],
                },
                {
                    "eval_time": "15m",
                    "alertname": "NeuronMetricsAbsent",
                    "exp_alerts": [_labels("NeuronMetricsAbsent", "neuron-monitor", "inf")],
                },
            ],
        },
    ]
    # absent() alerts carry rendered annotations; compare labels only by stripping them from the rule file.
    data = yaml.safe_load((tmp_path / "rules.yml").read_text())
    for group in data["groups"]:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    check = run(promtool, "check", "rules", "rules.yml", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr


def test_absent_rules_leave_out_neuron_monitor_where_neuron_metrics_go_to_cloudwatch():
    rules = absent_rules([FleetTargets(pool="inf", kind="neuron")], RUNBOOK)
    assert [r["alert"] for r in rules] == ["NodeExporterAbsent"]


def test_absent_rules_kubernetes_neuron_nodes_without_neuron_monitor(tmp_path, promtool, run):
    settings = RuleSettings(kubernetes_neuron=True)
    data = yaml.safe_load(render_rules_yaml(settings))
    for group in data["groups"]:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    node = 'kube_node_labels{{node="{0}",label_node_kubernetes_io_instance_type="{1}"}}'
    series = [
        {"series": node.format("inf-a", "inf2.xlarge"), "values": "1x20"},
        {"series": node.format("inf-b", "inf2.48xlarge"), "values": "1x20"},
        {"series": node.format("gpu-a", "g5.xlarge"), "values": "1x20"},
        {"series": 'up{job="neuron-monitor",node="inf-b",instance="10.0.0.9:8000"}', "values": "1x20"},
    ]
    expected = {
        "exp_labels": {"node": "inf-a", "severity": "warning", "category": "health", "job": "neuron-monitor"}
    }
    tests = [
        {
            "interval": "1m",
            "input_series": series,
            "alert_rule_test": [
                {"eval_time": "5m", "alertname": "NeuronMetricsAbsent", "exp_alerts": []},
                {"eval_time": "15m", "alertname": "NeuronMetricsAbsent", "exp_alerts": [expected]},
            ],
        }
    ]
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
