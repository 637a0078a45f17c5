"""docs/reference.md: its generated sections match the code, and its hand-written lists name what
the code really has (alerts, JSON keys, the watchdog's environment, exit codes)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference.md"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(title: str) -> str:
    """The text under a `## ` heading, up to the next one."""
    text = REFERENCE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_reference_generated_sections_match_the_code() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    assert _generator().render(text) == text, "docs/reference.md is stale: run `make generate`"


def test_reference_config_section_is_read_from_the_schema_alone() -> None:
    schema = {
        "properties": {
            "config": {
                "properties": {
                    "ns:name": {"type": "string", "minLength": 1, "description": "Who | what."},
                    "ns:pools": {"type": "array", "items": {"$ref": "#/$defs/Pool"}},
                    "ns:spare": {"anyOf": [{"$ref": "#/$defs/Pool"}, {"type": "null"}], "default": None},
                },
                "required": ["ns:name"],
            }
        },
        "$defs": {
            "Pool": {
                "description": "One pool.",
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 8, "default": 1},
                    "mode": {"$ref": "#/$defs/Mode"},
                },
                "required": ["mode"],
            },
            "Mode": {"enum": ["spot", "on-demand"], "type": "string"},
        },
    }
    text = _generator().config_section(schema)
    assert "| `ns:name` | non-empty string | **required** | Who \\| what. |" in text
    assert "| `ns:pools` | list of [object](#config-pools) | — | One pool. |" in text
    assert "| `ns:spare` | [object](#config-pools) | unset | One pool. |" in text
    assert "#### `pools[]`" in text
    assert "Also at `spare`." in text
    assert "| `size` | integer 1..8 | `1` |  |" in text
    assert "| `mode` | one of `spot`, `on-demand` | **required** |  |" in text


def test_reference_rejects_a_document_without_a_generated_section() -> None:
    with pytest.raises(SystemExit, match="lacks the sections"):
        _generator().render("# nothing here\n", {"cli": lambda: ""})


def _rendered_alerts() -> set[tuple[str, str, str, str]]:
    """Every alert the rule file renders, with one fleet of each kind and Kubernetes Neuron nodes."""
    from inference_infra.components.monitoring.rules import REFERENCE_SETTINGS, rule_file

    return {
        (rule["alert"], group["name"], rule["labels"]["severity"], rule["labels"]["category"])
        for group in rule_file(REFERENCE_SETTINGS)["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }


def test_reference_lists_every_alert_the_rules_render() -> None:
    row = re.compile(r"^\| `(\w+)` \| `([\w-]+)` \| (\w+) \| (\w+) \|", re.MULTILINE)
    documented = set(row.findall(_section("Monitoring: alerts, recorded series, jobs and ports")))
    assert documented == _rendered_alerts()


def _keys(value: Any, into: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in ("props", "outputs") or not isinstance(inner, dict):
                into.add(key)
                _keys(inner, into)
            else:
                into.add(key)
    elif isinstance(value, list):
        for inner in value:
            _keys(inner, into)
    return into


def test_reference_plan_json_names_every_key_of_a_real_plan(plan_stack) -> None:
    section = _section("`plan --json`")
    keys = _keys(plan_stack("prod").as_json(), set())
    assert {k for k in keys if f'"{k}"' not in section} == set()


def test_reference_size_json_names_every_key() -> None:
    from inference_infra.components.planner import Traffic, size

    section = _section("`size --json`")
    keys = _keys(size("llama-3.1-8b", Traffic(context_tokens=4096, concurrency=8)).as_json(), set())
    assert {k for k in keys if f'"{k}"' not in section} == set()


def test_reference_simulate_json_names_every_key() -> None:
    from inference_infra.components.fleet.elastic import ElasticArgs
    from inference_infra.components.serving.model import ServedModel
    from inference_infra.components.simulate import Trace, build_pool, replay

    trace = Trace.of([(0.0, 1000, 100), (30.0, 2000, 50)])
    model = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
    pool = build_pool(name="p", model=model, machine="g6e.xlarge", peak=2, trace=trace, elastic=ElasticArgs())
    section = _section("`simulate --json`")
    keys = _keys(replay(trace, pool).as_json(), set())
    assert {k for k in keys if f'"{k}"' not in section} == set()


def test_reference_lists_the_watchdog_environment() -> None:
    from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings

    section = _section("The idle watchdog Lambda")
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", section, re.MULTILINE))
    assert documented == set(Settings().as_env()) | {"SNS_TOPIC_ARN", "SCOPE_TAGS"}  # the two optional ones
    for name, value in Settings().as_env().items():
        if name != "METRIC_PERIOD_SECONDS":
            assert f"| `{name}` | `{value}` |" in section, name


def test_reference_lists_the_exit_codes() -> None:
    from inference_infra.components import cli
    from inference_infra.components.offline_plan import DataSourceError, ProgramError

    codes = {int(c) for c in re.findall(r"^\| `(\d+)` \|", _section("Exit codes"), re.MULTILINE)}
    assert {cli.EXIT_OK, cli.EXIT_POLICY, cli.EXIT_INPUT, cli.EXIT_INTERNAL} <= codes
    assert {ProgramError.exit_code, DataSourceError.exit_code, 130} <= codes


def test_reference_is_what_the_documents_point_to() -> None:
    readmes = [ROOT / "README.md", *ROOT.glob("components/*/README.md"), *ROOT.glob("lambdas/*/README.md")]
    pointing = [str(p.relative_to(ROOT)) for p in readmes if "SPEC.md" in p.read_text(encoding="utf-8")]
    assert pointing == []
    assert "SPEC.md" not in REFERENCE.read_text(encoding="utf-8")


def test_reference_no_file_of_the_repository_names_a_spec_that_is_not_in_it() -> None:
    skip = {".git", ".venv", ".venv-checkov", ".wheelhouse", "build", "dist", "__pycache__", "node_modules"}
    naming = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(p in skip or p.endswith(".egg-info") or p.endswith("_cache") for p in parts):
            continue
        if not path.is_file() or path == Path(__file__).resolve() or path.suffix in {".pyc", ".whl", ".zip"}:
            continue
        if b"SPEC" + b".md" in path.read_bytes():
            naming.append(str(path.relative_to(ROOT)))
    assert naming == []


def test_reference_lists_the_model_presets() -> None:
    from inference_infra.components.planner.models import preset_names

    section = _section("The `inference-infra` command")
    presets = section[section.index("presets:") : section.index("--model-config")]
    assert re.findall(r"`([\w.-]+)`", presets) == preset_names()
