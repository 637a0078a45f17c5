"""How numbers are written into PromQL: one function for every rule file."""

from __future__ import annotations

import pytest

from inference_infra.components.monitoring.promql import num


@pytest.mark.parametrize(
    ("value", "text"),
    [(30.0, "30"), (30, "30"), (0.001, "0.001"), (83.5, "83.5"), (0.526, "0.526"), (1e-06, "1e-06")],
)
def test_num_writes_whole_numbers_without_a_point(value: float, text: str) -> None:
    assert num(value) == text


def test_num_is_the_only_number_writer_in_the_rule_renderers() -> None:
    from pathlib import Path

    folder = Path(__file__).parents[3] / "components" / "monitoring"
    defining = [p.name for p in folder.glob("*.py") if "is_integer() else repr(" in p.read_text()]
    assert defining == ["promql.py"]
