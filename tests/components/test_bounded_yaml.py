"""YAML read with bounds: alias bombs, self-referring aliases and deep nesting are refused, in
little time and memory, and every ordinary document reads as PyYAML reads it."""

from __future__ import annotations

import time

import pytest
import yaml

from inference_infra.components import bounded_yaml
from inference_infra.components.offline_plan import yaml12


def alias_bomb(levels: int, width: int = 10) -> str:
    """The 'billion laughs' document: width**levels values from a few lines."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_bounded_yaml_refuses_an_alias_bomb_quickly():
    started = time.perf_counter()
    with pytest.raises(bounded_yaml.ExcessiveYaml, match="more than 1,000,000 values"):
        bounded_yaml.load(alias_bomb(9))  # 10^9 values
    assert time.perf_counter() - started < 5  # counted on the node graph, never expanded


def test_bounded_yaml_reads_aliases_within_the_bound_as_pyyaml_does():
    text = alias_bomb(3)  # 1,000 values at the deepest anchor
    assert bounded_yaml.load(text) == yaml.safe_load(text)
    with pytest.raises(bounded_yaml.ExcessiveYaml):
        bounded_yaml.load(text, max_values=1_000)


def test_bounded_yaml_refuses_an_alias_to_a_value_that_contains_it():
    with pytest.raises(bounded_yaml.ExcessiveYaml, match="contains it"):
        bounded_yaml.load("a: &a [1, *a]\n")


def test_bounded_yaml_refuses_nesting_deeper_than_python_reads():
    with pytest.raises(bounded_yaml.ExcessiveYaml, match="nested too deeply"):
        bounded_yaml.load("[" * 20_000 + "]" * 20_000)


def test_bounded_yaml_refusals_are_yaml_errors_for_existing_handlers():
    assert issubclass(bounded_yaml.ExcessiveYaml, yaml.YAMLError)


@pytest.mark.parametrize(
    "text",
    ["", "a: 1\n", "- x\n- y\n", "a: &x {b: [1, 2]}\nc: *x\nd: *x\n", "k: !!str 010\n", "[[[1]]]"],
)
def test_bounded_yaml_reads_ordinary_documents_as_pyyaml(text):
    assert bounded_yaml.load(text) == yaml.safe_load(text)


def test_bounded_yaml_load_all_bounds_each_document():
    text = "a: 1\n---\n" + alias_bomb(9)
    documents = bounded_yaml.load_all(text)
    assert next(documents) == {"a": 1}
    with pytest.raises(bounded_yaml.ExcessiveYaml):
        next(documents)
    assert list(bounded_yaml.load_all("a: 1\n---\nb: 2\n")) == [{"a": 1}, {"b": 2}]


def test_yaml12_keeps_its_core_schema_under_the_bound():
    assert yaml12.load("a: off\nb: 010\nc: True\n") == {"a": "off", "b": 10, "c": True}
