"""The README's layout block names every Lambda and every component a cloud package exports, so a new
one cannot land without a line saying what it is (test_readme_facts checks the folders and modules)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOUDS = ("aws", "gcp", "k8s")


def _layout() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("## Layout") :]
    return block[block.index("```") + 3 : block.index("```", block.index("```") + 3)]


def _components(cloud: str) -> set[str]:
    """Classes of the cloud's package that are ComponentResources (directly or through a base there)."""
    bases: dict[str, list[str]] = {}
    for path in (ROOT / "components" / cloud).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]

    def is_component(name: str, seen: frozenset[str] = frozenset()) -> bool:
        return name not in seen and any(
            b == "ComponentResource" or (b in bases and is_component(b, seen | {name}))
            for b in bases.get(name, ())
        )

    exported = set(importlib.import_module(f"inference_infra.components.{cloud}").__all__)
    return {name for name in bases if name in exported and is_component(name)}


def test_readme_layout_lists_every_lambda():
    layout = _layout()
    lambdas = sorted(p.name for p in (ROOT / "lambdas").iterdir() if (p / "handler.py").exists())
    assert lambdas, "no Lambda folder found"
    assert [name for name in lambdas if not re.search(rf"\b{name}/\s", layout)] == []


def test_readme_layout_names_every_exported_component():
    layout = _layout()
    missing = []
    for cloud in CLOUDS:
        line = layout[layout.index(f"  {cloud}/") :]
        entry = line[: re.search(r"\n  \S", line[1:]).start() + 1]  # the cloud's lines, up to the next entry
        names = _components(cloud)
        assert names, cloud
        missing += [f"{cloud}: {n}" for n in sorted(names) if not re.search(rf"\b{n}\b", entry)]
    assert missing == []
