from __future__ import annotations

import re

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.monitoring.thresholds import (
    Thresholds,
    threshold_names,
    threshold_sources,
    validate_thresholds,
)


def test_thresholds_default_to_the_project_figures():
    t = Thresholds()
    assert (t.idle_utilization_percent, t.saturated_utilization_percent) == (30, 95)
    assert t.memory_used_percent == 90
    assert t.temperature_celsius == 83
    assert validate_thresholds(t) == []


def test_thresholds_every_default_says_why_and_cites_public_documents_with_a_date():
    sources = threshold_sources()
    assert set(sources) == set(threshold_names())
    assert all(text.startswith("inference-infra default") for text in sources.values())
    assert not [name for name, text in sources.items() if "seed" in text.lower()]
    cited = {name for name, text in sources.items() if "https://" in text}
    assert cited == {"idle_utilization_percent", "memory_used_percent", "temperature_celsius"}
    assert all(re.search(r"read \d{4}-\d{2}-\d{2}", sources[name]) for name in cited)


def test_thresholds_with_overrides_takes_snake_and_camel_case():
    t = Thresholds().with_overrides({"idle_utilization_percent": 20, "idleMinutes": 60})
    assert (t.idle_utilization_percent, t.idle_minutes) == (20, 60)
    assert t.saturated_utilization_percent == 95


def test_thresholds_rejects_unknown_names_with_a_suggestion():
    with pytest.raises(
        InputError,
        match=r"threshold 'idle_percent' is not a threshold name \(did you mean "
        r"'idle_utilization_percent'\?\)",
    ):
        Thresholds().with_overrides({"idle_percent": 20})


def test_thresholds_rejects_idle_at_or_above_saturation():
    problems = validate_thresholds(Thresholds(idle_utilization_percent=96))
    assert [str(p) for p in problems] == [
        "thresholds.idle_utilization_percent 96 must be below saturated_utilization_percent (95.0)"
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory_used_percent", 100, "must be a percentage above 0 and below 100"),
        ("idle_utilization_percent", 0, "must be a percentage above 0 and below 100"),
        ("temperature_celsius", 200, "must be between 30 and 120"),
        ("idle_minutes", 0, "must be a whole number of minutes, 1 to 1440"),
        ("smoothing_minutes", 2.5, "must be a whole number of minutes, 1 to 1440"),
        ("exporter_down_minutes", True, "must be a whole number of minutes, 1 to 1440"),
    ],
)
def test_thresholds_rejects_values_out_of_range(field, value, message):
    problems = validate_thresholds(Thresholds(**{field: value}), where="rules.thresholds")
    assert len(problems) == 1
    assert problems[0].input == f"rules.thresholds.{field}"
    assert message in problems[0].allowed


def test_thresholds_reports_every_problem_at_once():
    problems = validate_thresholds(Thresholds(memory_used_percent=0, idle_minutes=-1, temperature_celsius=5))
    assert {p.input for p in problems} == {
        "thresholds.memory_used_percent",
        "thresholds.idle_minutes",
        "thresholds.temperature_celsius",
    }
