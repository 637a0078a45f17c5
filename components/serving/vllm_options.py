"""Extract `vllm serve`'s option strings from a vLLM wheel, without importing or running vLLM.

    python -m inference_infra.components.serving.vllm_options vllm-0.28.0-*.whl > \
        components/serving/data/vllm-options.json

vLLM registers its server options in three places, read here with `ast`:

- `vllm/entrypoints/openai/cli_args.py`: `make_arg_parser`'s literal
  `add_argument("--x", ...)` calls, and the frontend dataclasses
  (`BaseFrontendArgs`, `FrontendArgs`) whose fields become `--field-name`;
- `vllm/engine/arg_utils.py`: `EngineArgs.add_cli_args` /
  `AsyncEngineArgs.add_cli_args`, literal `add_argument("--x", ...)` calls
  whose kwargs come from `get_kwargs(SomeConfig)["field"]`;
- `vllm/config/*.py`: the annotations of those config fields. A field typed
  `bool` (or `bool | None`) becomes an `argparse.BooleanOptionalAction`, which
  also accepts `--no-<name>` (vLLM's `get_kwargs`).

The output is the data file `serving.flags` checks fleet engine arguments
against; regenerate it when the pinned vLLM version changes.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from datetime import date

_ARG_UTILS = "vllm/engine/arg_utils.py"
_CLI_ARGS = "vllm/entrypoints/openai/cli_args.py"
_CONFIG = re.compile(r"^vllm/config/[a-z_]+\.py$")
_FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")


def _is_bool(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    text = ast.unparse(annotation)
    # `bool | str | None` is an optional-valued flag (nargs="?"), not a --no- pair.
    return "bool" in names and "str" not in names and "Literal" not in text


def _class_fields(tree: ast.Module) -> dict[str, dict[str, bool]]:
    """class name -> field name -> is boolean, for every class in a module."""
    classes: dict[str, dict[str, bool]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            fields = classes.setdefault(node.name, {})
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    fields[item.target.id] = _is_bool(item.annotation)
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


def _call_is_bool(call: ast.Call, sources: dict[str, str], classes: dict[str, dict[str, bool]]) -> bool:
    for kw in call.keywords:
        if kw.arg == "action" and "BooleanOptionalAction" in ast.unparse(kw.value):
            return True
        if kw.arg is not None:
            continue
        # `**cache_kwargs["field"]`, also inside `**{**cache_kwargs["field"], "default": None}`.
        for node in ast.walk(kw.value):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and isinstance(node.slice, ast.Constant)
                and node.value.id in sources
            ):
                return classes.get(sources[node.value.id], {}).get(str(node.slice.value), False)
    return False


def extract(wheel_path: str) -> dict[str, bool]:
    """option string -> True when it is a boolean pair that also accepts --no-<name>."""
    with zipfile.ZipFile(wheel_path) as wheel:
        sources = {n: wheel.read(n).decode() for n in wheel.namelist() if n in (_ARG_UTILS, _CLI_ARGS)}
        configs = [wheel.read(n).decode() for n in wheel.namelist() if _CONFIG.match(n)]
    classes: dict[str, dict[str, bool]] = {}
    for text in configs:
        classes.update(_class_fields(ast.parse(text)))
    options: dict[str, bool] = {}
    engine = ast.parse(sources[_ARG_UTILS])
    kwargs = _kwargs_sources(engine)
    for call in _calls(engine):
        for option in _options_of_call(call):
            options[option] = _call_is_bool(call, kwargs, classes)
    frontend = ast.parse(sources[_CLI_ARGS])
    for call in _calls(frontend):
        for option in _options_of_call(call):
            options[option] = _call_is_bool(call, {}, {})
    frontend_classes = _class_fields(frontend)
    for cls in _FRONTEND_CLASSES:
        for field_name, is_bool in frontend_classes.get(cls, {}).items():
            options[f"--{field_name.replace('_', '-')}"] = is_bool
    return dict(sorted(options.items()))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m inference_infra.components.serving.vllm_options VLLM_WHEEL", file=sys.stderr)
        return 2
    wheel = argv[0]
    version = re.search(r"vllm-([0-9][^-]*)-", wheel)
    document = {
        "engine": "vllm",
        "version": version.group(1) if version else "unknown",
        "source": f"https://pypi.org/project/vllm/{version.group(1) if version else ''}/ wheel "
        f"({wheel.rsplit('/', 1)[-1]}): {_ARG_UTILS}, {_CLI_ARGS}, vllm/config/*.py read with ast",
        "as_of": date.today().isoformat(),
        "options": [{"option": o, "boolean": b} for o, b in extract(wheel).items()],
    }
    print(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
