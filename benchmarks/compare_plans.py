"""Compare two `inference-infra plan --json` outputs: resources (type, name, props), costs, outputs, notes.

Prints every difference, one line each, and "identical" when there is none; exits 1 on a difference so a
script can use it. `--rename OLD=NEW` (repeatable) maps a resource name or note text of the first plan to
the second's before comparing (a rename the change lists).

Run (issue #32's proof; baselines saved from main before the change):
    .venv/bin/inference-infra plan --stack prod --json > /tmp/prod.json
    .venv/bin/python benchmarks/compare_plans.py /work/baseline-prod.json /tmp/prod.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _renamed(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in renames.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_renamed(v, renames) for v in value]
    if isinstance(value, dict):
        return {_renamed(k, renames): _renamed(v, renames) for k, v in value.items()}
    return value


def _walk(path: str, old: Any, new: Any) -> Iterator[str]:
    """Every leaf that differs between two JSON values, as 'path: old -> new'."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            if key not in new:
                yield f"{path}.{key}: removed ({json.dumps(old[key])[:200]})"
            elif key not in old:
                yield f"{path}.{key}: added ({json.dumps(new[key])[:200]})"
            else:
                yield from _walk(f"{path}.{key}", old[key], new[key])
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from _walk(f"{path}[{i}]", a, b)
    elif old != new:
        yield f"{path}: {json.dumps(old)[:200]} -> {json.dumps(new)[:200]}"


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed from `before` to `after`: resources by URN, then every other section."""
    found = []
    old = {r["urn"]: r for r in before.get("resources", [])}
    new = {r["urn"]: r for r in after.get("resources", [])}
    found += [f"resource removed: {urn}" for urn in sorted(set(old) - set(new))]
    found += [f"resource added: {urn}" for urn in sorted(set(new) - set(old))]
    for urn in sorted(set(old) & set(new)):
        found += list(_walk(urn, old[urn], new[urn]))
    for section in sorted((set(before) | set(after)) - {"resources"}):
        found += list(_walk(section, before.get(section), after.get(section)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rename", action="append", default=[], metavar="OLD=NEW")
    args = parser.parse_args(argv)
    renames = dict(r.split("=", 1) for r in args.rename)
    before = _renamed(json.loads(args.before.read_text()), renames)
    after = json.loads(args.after.read_text())
    found = differences(before, after)
    for line in found:
        print(line)
    resources = len(after.get("resources", []))
    print("identical" if not found else f"{len(found)} differences", f"({resources} resources compared)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
