"""Reading a Pulumi project: Pulumi.yaml, Pulumi.<stack>.yaml, and their config.

Both files are read as YAML 1.2 (core schema), as Pulumi reads them: `off` and
`yes` stay strings. The project's `config:` declarations apply as Pulumi applies
them: a default fills a key the stack leaves unset, a declared type is checked,
and a declared key with no default must be set. Config reaches the program the
way the engine hands it over: every key fully qualified (`project:key`), every
value a string, objects and lists as JSON. Secure values cannot be decrypted
offline; they become a placeholder and are marked secret, so the program still
runs and the value is never printed. A key in a provider's namespace (`aws:`,
`gcp:`, `kubernetes:`) that the installed provider does not define is a warning
naming the nearest key it does.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from inference_infra.components.errors import InputError, close_matches, did_you_mean
from inference_infra.components.offline_plan import yaml12

SECRET_PLACEHOLDER = "offline-plan-secret-placeholder"


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    program_dir: Path
    runtime: str
    defaults: Mapping[str, Any] = field(default_factory=dict)  # project-level config defaults
    declared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # key -> {type, default, ...}

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.root.glob("Pulumi.*.yaml"))


@dataclass(frozen=True)
class StackConfig:
    name: str
    path: Path
    values: Mapping[str, str]  # fully qualified key -> engine string
    secret_keys: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}.") from None
    try:
        return yaml12.load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(
            f"{path.name} is not valid YAML{where}: {problem}. Fix the file and run again."
        ) from None


def load_project(cwd: Path) -> Project:
    root = cwd.resolve()
    path = root / "Pulumi.yaml"
    if not path.is_file():
        alt = root / "Pulumi.yml"
        if alt.is_file():
            path = alt
        else:
            raise InputError(
                f"no Pulumi.yaml in {root}: plan runs a Pulumi project; pass its folder with --cwd DIR."
            )
    data = _read_yaml(path)
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        raise InputError(
            f"{path.name} must be a mapping with a 'name' (the project name); got {type(data).__name__}."
        )
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, Mapping) else runtime
    if runtime_name != "python":
        raise InputError(
            f"{path.name} runtime is {runtime_name!r}; plan runs Python programs only (runtime: python)."
        )
    main = data.get("main") or "."
    program_dir = (root / str(main)).resolve()
    if program_dir.is_file() and program_dir.name == "__main__.py":
        program_dir = program_dir.parent
    if not (program_dir / "__main__.py").is_file():
        raise InputError(
            f"{path.name} main {main!r} has no __main__.py (looked in {program_dir}); "
            "main must name the folder of the Python program."
        )
    defaults: dict[str, Any] = {}
    declared: dict[str, Mapping[str, Any]] = {}
    for key, spec in (data.get("config") or {}).items():
        qualified = key if ":" in key else f"{data['name']}:{key}"
        if isinstance(spec, Mapping) and ("default" in spec or "value" in spec):
            defaults[qualified] = spec.get("value", spec.get("default"))
        elif not isinstance(spec, Mapping):
            defaults[qualified] = spec
        if isinstance(spec, Mapping):
            if spec.get("type") is not None and spec["type"] not in _TYPES:
                raise InputError(
                    f"{path.name}: config {key!r} type {spec['type']!r} is not one Pulumi knows; "
                    f"allowed: {', '.join(_TYPES)}."
                )
            declared[qualified] = spec
    return Project(
        root=root,
        name=data["name"],
        program_dir=program_dir,
        runtime="python",
        defaults=defaults,
        declared=declared,
    )


def load_stack(project: Project, stack: str) -> StackConfig:
    path = project.root / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = project.stacks()
        hint = did_you_mean(stack, known)
        listed = ", ".join(known) if known else "none (no Pulumi.<stack>.yaml files)"
        raise InputError(
            f"unknown stack {stack!r}{hint}: there is no {path.name} in {project.root}; "
            f"stacks here: {listed}."
        )
    data = _read_yaml(path) or {}
    if not isinstance(data, Mapping):
        raise InputError(
            f"{path.name} must be a mapping with a 'config:' section; got {type(data).__name__}."
        )
    raw = data.get("config") or {}
    if not isinstance(raw, Mapping):
        raise InputError(
            f"{path.name}: 'config' must be a mapping of keys to values; got {type(raw).__name__}."
        )
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    given = {(k if ":" in k else f"{project.name}:{k}"): v for k, v in raw.items()}
    _check_declared(project, given, path)
    merged = {**project.defaults, **given}
    for key, value in merged.items():
        encoded, secret = _engine_string(value)
        values[key] = encoded
        if secret or (project.declared.get(key) or {}).get("secret") is True:
            secret_keys.append(key)
    warnings = tuple(w for key in given if (w := _provider_key_warning(key, path)))
    return StackConfig(
        name=stack, path=path, values=values, secret_keys=tuple(secret_keys), warnings=warnings
    )


_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list}


def _check_declared(project: Project, given: Mapping[str, Any], path: Path) -> None:
    """Pulumi's checks of the project's config declarations against a stack's values."""
    problems = []
    for key, spec in project.declared.items():
        if key not in given:
            if "default" not in spec and "value" not in spec and spec.get("type") is not None:
                problems.append(f"{key} is declared in Pulumi.yaml with no default and is not set")
            continue
        value, kind = given[key], spec.get("type")
        if kind is None or _is_secure(value):
            continue
        if not _of_type(value, kind):
            problems.append(f"{key} {value!r} must be of type {kind} (declared in Pulumi.yaml)")
        elif kind == "array" and isinstance(spec.get("items"), Mapping):
            item_kind = str(spec["items"].get("type"))
            if item_kind in _TYPES and not all(_of_type(v, item_kind) for v in value):
                problems.append(f"{key} {value!r} must be an array of {item_kind}")
    if problems:
        raise InputError(f"{path.name}: {'; '.join(problems)}.")


def _of_type(value: Any, kind: str) -> bool:
    """Pulumi's own test (sdk/go/common/workspace/project.go, ValidateConfigValue): `pulumi config
    set n 2` writes the string "2", so an integer may be a string that parses as one (or a whole
    float), and a boolean may be the string "true" or "false"."""
    if kind == "integer":
        if isinstance(value, str):
            return re.fullmatch(r"[+-]?[0-9]+", value) is not None
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    return isinstance(value, _TYPES[kind])


_PROVIDERS = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}


@functools.cache
def provider_config_keys(namespace: str) -> frozenset[str] | None:
    """The config keys the installed provider SDK defines (its ProviderArgs, camelCase); None if absent."""
    try:
        module = importlib.import_module(_PROVIDERS[namespace])
    except (KeyError, ImportError):
        return None
    params = inspect.signature(module.ProviderArgs.__init__).parameters
    return frozenset(_camel(p) for p in params if p not in {"self", "__self__"})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _provider_key_warning(key: str, path: Path) -> str:
    namespace, _, name = key.partition(":")
    known = provider_config_keys(namespace) if re.fullmatch(r"[a-z]+", namespace) else None
    if known is None or name in known:
        return ""
    near = close_matches(name, known, limit=1)
    hint = f"; did you mean {namespace}:{near[0]}?" if near else ""
    return (
        f"{path.name}: {key} is not a setting of the installed {_PROVIDERS[namespace]} provider, "
        f"which ignores it{hint}"
    )


def _engine_string(value: Any) -> tuple[str, bool]:
    """A config value as the engine passes it to the program, and whether it is secret."""
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, str):
        return value, False
    if isinstance(value, bool):
        return ("true" if value else "false"), False
    if isinstance(value, (int, float)):
        return str(value), False
    if value is None:
        return "", False
    resolved, secret = _resolve_secure(value)
    return json.dumps(resolved), secret


def _is_secure(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def _resolve_secure(value: Any) -> tuple[Any, bool]:
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, Mapping):
        items = {k: _resolve_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        items = [_resolve_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False
