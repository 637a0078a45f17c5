"""Reading a Pulumi project: Pulumi.yaml, Pulumi.<stack>.yaml, and their config.

Config reaches the program the way the engine hands it over: every key fully
qualified (`project:key`), every value a string, objects and lists as JSON.
Secure values cannot be decrypted offline; they become a placeholder and are
marked secret, so the program still runs and the value is never printed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from inference_infra.components.errors import InputError, did_you_mean

SECRET_PLACEHOLDER = "offline-plan-secret-placeholder"


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    program_dir: Path
    runtime: str
    defaults: Mapping[str, Any] = field(default_factory=dict)  # project-level config defaults

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.root.glob("Pulumi.*.yaml"))


@dataclass(frozen=True)
class StackConfig:
    name: str
    path: Path
    values: Mapping[str, str]  # fully qualified key -> engine string
    secret_keys: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # e.g. a provider key the installed provider does not define


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML with the YAML 1.2 core schema, as Pulumi (Go yaml.v3) reads its files.

    Only true/false (any case form) are booleans, so `default: off` stays the string
    "off"; no sexagesimal numbers, no timestamps; 0o17 and 0x1F are integers.
    """


Yaml12Loader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
):
    Yaml12Loader.add_implicit_resolver(_tag, __import__("re").compile(_pattern), list(_first))


def _yaml12_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    return int(text, 0) if text[:2] in ("0o", "0x") else int(text, 10)


def _yaml12_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return loader.construct_scalar(node).lower() == "true"


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _yaml12_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:bool", _yaml12_bool)


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}.") from None
    try:
        return yaml.load(text, Loader=Yaml12Loader)
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
    defaults = {}
    for key, spec in (data.get("config") or {}).items():
        qualified = key if ":" in key else f"{data['name']}:{key}"
        if isinstance(spec, Mapping) and ("default" in spec or "value" in spec):
            defaults[qualified] = spec.get("value", spec.get("default"))
        elif not isinstance(spec, Mapping):
            defaults[qualified] = spec
    return Project(root=root, name=data["name"], program_dir=program_dir, runtime="python", defaults=defaults)


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
    merged = {**project.defaults, **{(k if ":" in k else f"{project.name}:{k}"): v for k, v in raw.items()}}
    for key, value in merged.items():
        encoded, secret = _engine_string(value)
        values[key] = encoded
        if secret:
            secret_keys.append(key)
    warnings = tuple(w for key in values if (w := _provider_key_warning(key, path.name)))
    return StackConfig(
        name=stack, path=path, values=values, secret_keys=tuple(secret_keys), warnings=warnings
    )


_PROVIDER_MODULES = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}


def provider_config_keys(namespace: str) -> frozenset[str] | None:
    """The config keys the installed provider SDK reads (from its config/vars.py), or None."""
    import importlib.util
    import re

    module = _PROVIDER_MODULES.get(namespace)
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or not spec.submodule_search_locations:
        return None
    vars_py = Path(next(iter(spec.submodule_search_locations))) / "config" / "vars.py"
    try:
        text = vars_py.read_text(encoding="utf-8")
    except OSError:
        return None
    return frozenset(re.findall(r"__config__\.get[a-z_]*\('([A-Za-z0-9]+)'", text))


def _provider_key_warning(key: str, file_name: str) -> str | None:
    namespace, _, name = key.partition(":")
    known = _cached_keys(namespace)
    if not known or name in known:
        return None
    hint = did_you_mean(key, [f"{namespace}:{k}" for k in known])
    return f"{file_name}: {key!r} is not a setting of the {namespace} provider{hint}; the provider ignores it"


_KEYS: dict[str, frozenset[str] | None] = {}


def _cached_keys(namespace: str) -> frozenset[str] | None:
    if namespace not in _KEYS:
        _KEYS[namespace] = provider_config_keys(namespace)
    return _KEYS[namespace]


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
