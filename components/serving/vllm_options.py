"""Extract `vllm serve`'s option strings (and their fixed choices) from vLLM source, without running vLLM.

One table per pinned engine (`data/vllm-options-<family>.json`, see the
serving README for how each was made):

    python -m inference_infra.components.serving.vllm_options \\
        --family nvidia-vllm --engine-version 0.28.0 \\
        wheel:vllm-0.28.0-cp38-abi3-manylinux_2_28_x86_64.whl > data/vllm-options-nvidia-vllm.json

A source is `wheel:<path>` (a wheel from PyPI, opened as a zip) or
`git:<git-dir>@<ref>` (a fork's tree, read with `git show`). Given several
sources, the table holds only what all of them accept (their intersection),
and says it is not an exact match: that is how a pinned build whose own source
is not available is bracketed by the sources that are.

vLLM registers its server options in three places, read here with `ast`:

- `vllm/entrypoints/openai/cli_args.py` (`launchers/` from 0.29): literal `add_argument("--x", ...)`
  calls, and the frontend dataclasses (`BaseFrontendArgs`, `FrontendArgs`)
  whose fields become `--field-name`;
- `vllm/engine/arg_utils.py`: `EngineArgs.add_cli_args`, literal
  `add_argument("--x", ...)` calls whose kwargs come from
  `get_kwargs(SomeConfig)["field"]`;
- `vllm/config.py` (up to 0.9) or `vllm/config/*.py`: the annotations of those
  config fields. A field typed `bool` (or `bool | None`) becomes an
  `argparse.BooleanOptionalAction`, which also accepts `--no-<name>`; a field
  typed only by `Literal[...]` values (directly or through a module-level
  alias such as `CacheDType = Literal[...]`) becomes argparse `choices`.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from datetime import date

_ARG_UTILS = "vllm/engine/arg_utils.py"
# The frontend's options: entrypoints/openai/ up to 0.28, entrypoints/launchers/ from 0.29.
_CLI_ARGS_PATHS = ("vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/launchers/cli_args.py")
_CONFIG = re.compile(r"^vllm/config(/[a-z_]+)?\.py$")
_FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")

Field = tuple[bool, tuple[str, ...] | None]  # (boolean pair, choices)


def _literal_values(annotation: ast.expr, aliases: Mapping[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The values an annotation allows when it is made only of Literal[...] (and None), else None."""
    values: list[str] = []

    def walk(node: ast.expr) -> bool:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return walk(node.left) and walk(node.right)
        if isinstance(node, ast.Constant) and node.value is None:
            return True
        if isinstance(node, ast.Name):
            if node.id in aliases:
                values.extend(aliases[node.id])
                return True
            return False
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name | ast.Attribute):
            head = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
            inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Literal":
                consts = [e for e in inner if isinstance(e, ast.Constant)]
                if len(consts) != len(inner):
                    return False
                values.extend(str(c.value) for c in consts)
                return True
            if head in ("Optional", "Union", "SkipValidation", "Annotated"):
                parts = inner[:1] if head == "Annotated" else inner
                return all(walk(p) for p in parts)
        return False

    return tuple(dict.fromkeys(values)) if walk(annotation) and values else None


def _literal_aliases(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Module-level `Name = Literal[...]` (or `Name: TypeAlias = ...`) aliases, resolved in order."""
    aliases: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is not None and value is not None:
            found = _literal_values(value, aliases)
            if found:
                aliases[target] = found
    return aliases


def _is_bool(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    text = ast.unparse(annotation)
    # `bool | str | None` is an optional-valued flag (nargs="?"), not a --no- pair.
    return "bool" in names and "str" not in names and "Literal" not in text


def _class_fields(tree: ast.Module, aliases: Mapping[str, tuple[str, ...]]) -> dict[str, dict[str, Field]]:
    """class name -> field name -> (is boolean, choices), for every class in a module."""
    classes: dict[str, dict[str, Field]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            fields = classes.setdefault(node.name, {})
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    fields[item.target.id] = (
                        _is_bool(item.annotation),
                        _literal_values(item.annotation, aliases),
                    )
    return classes


def _options_of_call(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
    ]


def _kwargs_sources(tree: ast.AST) -> dict[str, str]:
    """`cache_kwargs = get_kwargs(CacheConfig)` -> {"cache_kwargs": "CacheConfig"}."""
    found = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "get_kwargs"
            and node.value.args
            and isinstance(node.value.args[0], ast.Name)
            and isinstance(node.targets[0], ast.Name)
        ):
            found[node.targets[0].id] = node.value.args[0].id
    return found


def _call_field(call: ast.Call, sources: dict[str, str], classes: dict[str, dict[str, Field]]) -> Field:
    boolean, choices = False, None
    for kw in call.keywords:
        if kw.arg == "action" and "BooleanOptionalAction" in ast.unparse(kw.value):
            boolean = True
        elif kw.arg == "choices" and isinstance(kw.value, ast.List | ast.Tuple):
            consts = [e for e in kw.value.elts if isinstance(e, ast.Constant)]
            if consts and len(consts) == len(kw.value.elts):
                choices = tuple(str(c.value) for c in consts)
        elif kw.arg is None:
            # `**cache_kwargs["field"]`, also inside `**{**cache_kwargs["field"], "default": None}`.
            for node in ast.walk(kw.value):
                if (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.value, ast.Name)
                    and isinstance(node.slice, ast.Constant)
                    and node.value.id in sources
                ):
                    field_bool, field_choices = classes.get(sources[node.value.id], {}).get(
                        str(node.slice.value), (False, None)
                    )
                    boolean = boolean or field_bool
                    choices = choices or field_choices
                    break
    return boolean, choices


def wheel_sources(path: str) -> dict[str, str]:
    """The files the extractor reads, from a wheel."""
    with zipfile.ZipFile(path) as wheel:
        return {
            n: wheel.read(n).decode()
            for n in wheel.namelist()
            if n == _ARG_UTILS or n in _CLI_ARGS_PATHS or _CONFIG.fullmatch(n)
        }


def git_sources(git_dir: str, ref: str) -> dict[str, str]:
    """The files the extractor reads, from a git tree (e.g. a vendor's fork at a tag)."""

    def git(*words: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", git_dir, *words], check=True, capture_output=True, text=True
        ).stdout

    names = git("ls-tree", "-r", "--name-only", ref, "vllm/").splitlines()
    return {
        n: git("show", f"{ref}:{n}")
        for n in names
        if n == _ARG_UTILS or n in _CLI_ARGS_PATHS or _CONFIG.fullmatch(n)
    }


def extract(sources: Mapping[str, str]) -> dict[str, Field]:
    """option string -> (True when it also accepts --no-<name>, its fixed choices or None)."""
    classes: dict[str, dict[str, Field]] = {}
    for name in sorted(n for n in sources if _CONFIG.fullmatch(n)):
        tree = ast.parse(sources[name])
        classes.update(_class_fields(tree, _literal_aliases(tree)))
    options: dict[str, Field] = {}
    engine = ast.parse(sources[_ARG_UTILS])
    kwargs = _kwargs_sources(engine)
    for call in _calls(engine):
        for option in _options_of_call(call):
            options[option] = _call_field(call, kwargs, classes)
    frontend_path = next(p for p in _CLI_ARGS_PATHS if p in sources)
    frontend = ast.parse(sources[frontend_path])
    for call in _calls(frontend):
        for option in _options_of_call(call):
            options[option] = _call_field(call, {}, {})
    frontend_classes = _class_fields(frontend, _literal_aliases(frontend))
    for cls in _FRONTEND_CLASSES:
        for field_name, field in frontend_classes.get(cls, {}).items():
            options[f"--{field_name.replace('_', '-')}"] = field
    return dict(sorted(options.items()))


def intersect(tables: Sequence[dict[str, Field]]) -> dict[str, Field]:
    """What every table accepts: options in all, boolean only if boolean in all, choices in all."""
    first, *rest = tables
    merged: dict[str, Field] = {}
    for option, (boolean, choices) in first.items():
        if not all(option in t for t in rest):
            continue
        fields = [first[option], *(t[option] for t in rest)]
        boolean = all(f[0] for f in fields)
        fixed = [f[1] for f in fields if f[1] is not None]
        if fixed:
            choices = tuple(c for c in fixed[0] if all(c in other for other in fixed[1:]))
        merged[option] = (boolean, choices)
    return merged


def _read(source: str) -> tuple[dict[str, str], str]:
    kind, _, where = source.partition(":")
    if kind == "wheel":
        return wheel_sources(where), f"wheel {where.rsplit('/', 1)[-1]}"
    if kind == "git":
        git_dir, _, ref = where.rpartition("@")
        return git_sources(git_dir, ref), f"git {git_dir} at {ref}"
    raise SystemExit(f"source {source!r}: use wheel:<path> or git:<git-dir>@<ref>")


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m inference_infra.components.serving.vllm_options")
    parser.add_argument("--family", required=True, help="engine family, e.g. nvidia-vllm")
    parser.add_argument("--engine-version", required=True, help="the pinned image's engine version")
    parser.add_argument("--source-note", action="append", default=[], help="where each source came from")
    parser.add_argument("--note", default="", help="how the sources relate to the pinned engine")
    parser.add_argument("sources", nargs="+", help="wheel:<path> or git:<git-dir>@<ref>")
    args = parser.parse_args(argv)
    tables, described = [], []
    for i, source in enumerate(args.sources):
        files, label = _read(source)
        tables.append(extract(files))
        described.append(args.source_note[i] if i < len(args.source_note) else label)
    options = intersect(tables)
    document = {
        "engine": "vllm",
        "family": args.family,
        "engine_version": args.engine_version,
        "exact": len(tables) == 1,
        "sources": described,
        "note": args.note,
        "read": f"{_ARG_UTILS}, vllm/entrypoints/{{openai,launchers}}/cli_args.py, vllm/config[/*].py (ast)",
        "as_of": date.today().isoformat(),
        "options": [
            {"option": o, "boolean": b, **({"choices": list(c)} if c else {})}
            for o, (b, c) in options.items()
        ],
    }
    print(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
