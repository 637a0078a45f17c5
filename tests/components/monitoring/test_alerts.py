"""One alert type and one renderer (components/monitoring/alerts.py) for every alert of the rule files."""

from __future__ import annotations

import pytest

from inference_infra.components.monitoring.absent import ABSENT_ALERT_NAMES
from inference_infra.components.monitoring.alerts import Alert, Category, Severity, alert_table
from inference_infra.components.monitoring.rules import ALERT_NAMES, REFERENCE_SETTINGS, all_alerts, rule_file
from inference_infra.components.monitoring.serving import SERVING_ALERT_NAMES
from inference_infra.components.monitoring.weights import WEIGHTS_ALERT_NAMES

# The monitoring contract, as each rule module names its alerts (test_gpu_rules, test_serving_rules and
# test_absent_rules hold each list against the names users route and silence by).
CONTRACT = set(ALERT_NAMES) | set(SERVING_ALERT_NAMES) | set(ABSENT_ALERT_NAMES) | set(WEIGHTS_ALERT_NAMES)


def _alert(**overrides) -> Alert:
    base = {
        "name": "GpuIdle",
        "group": "g",
        "severity": Severity.WARNING,
        "category": Category.COST,
        "expr": "up == 0",
        "for_minutes": 5,
        "summary": "s",
        "description": "d",
        "when": "w",
    }
    return Alert(**{**base, **overrides})


def test_alerts_every_contract_name_is_rendered_and_no_other():
    assert len(CONTRACT) == 19
    assert {a.name for a in all_alerts(REFERENCE_SETTINGS)} == CONTRACT


def test_alerts_the_rule_file_is_the_alerts_rendered_in_order():
    rendered = [r for g in rule_file(REFERENCE_SETTINGS)["groups"] for r in g["rules"] if "alert" in r]
    url = REFERENCE_SETTINGS.runbook_url
    assert rendered == [a.rule(url) for a in all_alerts(REFERENCE_SETTINGS)]


def test_alerts_rule_writes_labels_annotations_and_the_runbook_anchor():
    rule = _alert(labels={"pool": "chat"}).rule("https://runbook")
    assert list(rule) == ["alert", "expr", "for", "labels", "annotations"]
    assert rule["for"] == "5m"
    assert rule["labels"] == {"severity": "warning", "category": "cost", "pool": "chat"}
    assert type(rule["labels"]["severity"]) is str  # plain strings: the YAML dumper takes no enums
    assert rule["annotations"]["runbook_url"] == "https://runbook#gpuidle"


def test_alerts_rule_fires_at_once_without_a_for():
    assert "for" not in _alert(for_minutes=0).rule("https://runbook")


def test_alerts_table_rows_one_per_name_and_joins_distinct_whens():
    table = alert_table([_alert(), _alert(when="w2"), _alert(name="GpuSaturated")])
    assert table.splitlines()[2:] == [
        "| `GpuIdle` | `g` | warning | cost | w; or w2 |",
        "| `GpuSaturated` | `g` | warning | cost | w |",
    ]


def test_alerts_table_rejects_one_name_with_two_severities():
    with pytest.raises(ValueError, match="GpuIdle is rendered with two groups, severities or categories"):
        alert_table([_alert(), _alert(severity=Severity.CRITICAL)])
