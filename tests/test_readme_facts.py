"""Facts the README states that the code can check: the policy count and the layout."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _layout() -> list[str]:
    block = README[README.index("## Layout\n") :]
    start = block.index("```\n") + 4
    return block[start : block.index("\n```", start)].splitlines()


def test_readme_counts_and_names_the_packs_policies() -> None:
    from inference_infra.policy.rules import POLICIES

    gate = README[README.index("## The policy gate\n") :]
    gate = gate[: gate.index("\n## ", 1)]
    assert re.search(r"pack of (\d+) policies", gate).group(1) == str(len(POLICIES))
    assert [p.name for p in POLICIES if f"`{p.name}`" not in gate] == []


def test_readme_policy_table_gives_every_policy_its_enforcement_level() -> None:
    from inference_infra.policy.rules import POLICIES

    gate = README[README.index("## The policy gate\n") :]
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \| (mandatory|advisory) \|", gate, re.M))
    assert rows == {p.name: p.enforcement_level.value for p in POLICIES}


def test_readme_layout_lists_the_folders_that_exist() -> None:
    lines = _layout()
    listed_top = {line.split()[0].split("/")[0] for line in lines if line and not line.startswith(" ")}
    skip = {".git", ".venv", ".venv-checkov", ".pytest_cache", ".ruff_cache", "build"}
    existing_top = {
        p.name
        for p in ROOT.iterdir()
        if p.is_dir() and p.name not in skip and not p.name.endswith(".egg-info")
        if p.name in (".ci", ".github") or not p.name.startswith(".")
    }
    assert existing_top <= listed_top
    assert {name for name in listed_top if not (ROOT / name).exists()} == set()

    listed = {line.split()[0] for line in lines if re.match(r"^  \S", line)}
    packages = {f"{p.name}/" for p in (ROOT / "components").iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in (ROOT / "components").glob("*.py") if not p.name.startswith("_")}
    assert listed == packages | modules
