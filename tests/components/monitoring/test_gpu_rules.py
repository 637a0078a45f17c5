from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from inference_infra.components.catalog import AcceleratorFamily, instance_types
from inference_infra.components.monitoring.rules import (
    ALERT_NAMES,
    COST_GROUP,
    PRICE_SERIES,
    RuleSettings,
    alert_rules,
    cost_rules,
    render_rules_yaml,
    rule_file,
    validate_rule_settings,
)
from inference_infra.components.monitoring.thresholds import Thresholds

RUNBOOK = Path(__file__).resolve().parents[3] / "components" / "monitoring" / "RUNBOOK.md"
SPEC_ALERTS = {
    "GpuIdle",
    "GpuSaturated",
    "GpuMemoryPressure",
    "GpuHighTemperature",
    "GpuXidErrors",
    "DcgmExporterDown",
}


def _alerts(settings: RuleSettings | None = None) -> dict[str, dict]:
    return {r["alert"]: r for r in alert_rules(settings or RuleSettings())}


def test_rules_alert_names_are_the_specs():
    assert set(ALERT_NAMES) == SPEC_ALERTS
    assert set(_alerts()) == SPEC_ALERTS


def test_rules_every_alert_has_severity_summary_description_and_runbook():
    for name, rule in _alerts().items():
        assert rule["labels"]["severity"] in {"critical", "warning"}, name
        assert rule["labels"]["category"] in {"cost", "capacity", "health"}, name
        assert rule["annotations"]["summary"].strip(), name
        assert len(rule["annotations"]["description"]) > 60, name
        assert rule["annotations"]["runbook_url"].endswith(f"RUNBOOK.md#{name.lower()}"), name


def test_rules_runbook_has_a_section_for_every_alert():
    headings = {m.group(1).lower() for m in re.finditer(r"^## (\w+)$", RUNBOOK.read_text(), re.MULTILINE)}
    assert {name.lower() for name in SPEC_ALERTS} <= headings


def test_rules_read_the_dcgm_exporter_metrics():
    exprs = {name: rule["expr"] for name, rule in _alerts().items()}
    assert "DCGM_FI_DEV_GPU_UTIL" in exprs["GpuIdle"]
    assert "DCGM_FI_DEV_GPU_UTIL" in exprs["GpuSaturated"]
    assert {"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"} <= set(
        re.findall(r"DCGM_\w+", exprs["GpuMemoryPressure"])
    )
    assert "DCGM_FI_DEV_GPU_TEMP" in exprs["GpuHighTemperature"]
    assert exprs["GpuXidErrors"] == "DCGM_FI_DEV_XID_ERRORS > 0"
    assert exprs["DcgmExporterDown"] == 'up{job="dcgm-exporter"} == 0'


def test_rules_thresholds_flow_into_expressions_and_windows():
    t = Thresholds(
        idle_utilization_percent=12.5, idle_minutes=45, smoothing_minutes=10, temperature_celsius=80
    )
    alerts = _alerts(RuleSettings(thresholds=t))
    assert alerts["GpuIdle"]["expr"] == "avg_over_time(DCGM_FI_DEV_GPU_UTIL[10m]) < 12.5"
    assert alerts["GpuIdle"]["for"] == "45m"
    assert alerts["GpuHighTemperature"]["expr"] == "DCGM_FI_DEV_GPU_TEMP > 80"
    assert "for" not in alerts["GpuXidErrors"]  # any XID alerts at once


def test_rules_price_every_nvidia_instance_type_once_per_gpu():
    prices = {
        r["labels"]["instance_type"]: (
            r["labels"],
            float(r["expr"].removeprefix("vector(").removesuffix(")")),
        )
        for r in cost_rules(RuleSettings())
        if r["record"] == PRICE_SERIES
    }
    nvidia = {i.name: i for i in instance_types(family=AcceleratorFamily.NVIDIA_GPU)}
    assert set(prices) == set(nvidia)
    assert not any(i.name in prices for i in instance_types(family=AcceleratorFamily.AWS_NEURON))
    labels, p5 = prices["p5.48xlarge"]
    assert labels == {"cloud": "aws", "instance_type": "p5.48xlarge", "accelerator": "h100-80gb"}
    item = nvidia["p5.48xlarge"]
    assert p5 == pytest.approx(item.hourly_usd[item.reference_region] / 8, abs=1e-4)
    assert all(price > 0 for _, price in prices.values())


def test_rules_price_region_changes_the_price_when_the_catalog_has_it():
    item = next(
        i
        for i in instance_types(family=AcceleratorFamily.NVIDIA_GPU)
        if i.cloud == "aws" and len(i.hourly_usd) > 1
    )
    other = list(item.hourly_usd)[1]
    rules = cost_rules(RuleSettings(aws_price_region=other))
    price = next(r for r in rules if r.get("labels", {}).get("instance_type") == item.name)
    assert float(price["expr"][7:-1]) == pytest.approx(
        item.hourly_usd[other] / item.accelerator_count, abs=1e-4
    )


def test_rules_yaml_round_trips_to_the_rule_file():
    assert yaml.safe_load(render_rules_yaml()) == rule_file()
    assert [g["name"] for g in rule_file()["groups"]][1] == COST_GROUP


@pytest.mark.parametrize(
    "settings",
    [
        RuleSettings(),
        RuleSettings(
            thresholds=Thresholds(idle_utilization_percent=10, memory_used_percent=97.5, idle_minutes=120)
        ),
        RuleSettings(
            runbook_url="https://wiki.example.com/gpu",
            dcgm_job="gpu-metrics",
            gcp_price_region="europe-west4",
        ),
    ],
)
def test_rules_pass_promtool_check_rules(settings, tmp_path, promtool, run):
    path = tmp_path / "rules.yml"
    path.write_text(render_rules_yaml(settings))
    result = run(promtool, "check", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_rules_rejects_a_runbook_that_is_not_a_url():
    problems = validate_rule_settings(RuleSettings(runbook_url="RUNBOOK.md", dcgm_job='a"b'))
    assert [p.input for p in problems] == ["rules.runbook_url", "rules.dcgm_job"]
    assert str(problems[0]).startswith("rules.runbook_url 'RUNBOOK.md' must be an http(s) URL")
    assert str(problems[1]) == "rules.dcgm_job 'a\"b' must be a job name without quotes"
