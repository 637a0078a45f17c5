"""Loading a CrossGuard policy pack and its config as the Pulumi CLI does, without serving it.

A Python pack's entry point (`__main__.py`, or PulumiPolicy.yaml's `main`)
constructs `pulumi_policy.PolicyPack(...)`, which starts the analyzer's gRPC
server and never returns. `load_pack` runs the entry point with `PolicyPack`
replaced by a stand-in that captures its arguments and stops the program right
there, so the plan gets the very policy objects `pulumi preview --policy-pack`
serves, from this project's pack or anyone else's.

The config is reconciled like the engine does (pulumi's ReconcilePolicyPackConfig):
schema defaults, then the pack's `initial_config`, then the config file
(`--policy-pack-config` shape: a policy name, or "all", mapped to an
enforcement level or to an object of settings with an optional
`enforcementLevel`), then validated against each policy's JSON schema. Unlike
the engine, a policy name or setting the pack does not know is an error here:
a typo must not switch a guardrail off silently.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from inference_infra.components import bounded_yaml, input_size
from inference_infra.components.errors import InputError, Problem, did_you_mean, raise_if_invalid

_PACK_NAME = re.compile(r"^[a-zA-Z0-9-_.]{1,100}$")
ALL = "all"
LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class _Captured(BaseException):  # BaseException: a pack's own `except Exception` must not swallow it
    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__("PolicyPack captured")
        self.arguments = arguments


@dataclass(frozen=True)
class LoadedPack:
    """A policy pack's name, version, policies and defaults, as its entry point builds them."""

    name: str
    version: str
    directory: Path
    policies: tuple[Any, ...]  # pulumi_policy.Policy
    enforcement_level: Any  # pulumi_policy.EnforcementLevel: the pack's default
    initial_config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name}@v{self.version}"


@dataclass(frozen=True)
class PolicySettings:
    """A policy's effective enforcement level and config after reconciliation."""

    enforcement: Any  # pulumi_policy.EnforcementLevel
    properties: Mapping[str, Any]


def load_pack(directory: Path) -> LoadedPack:
    """Run the pack's entry point with a capturing PolicyPack and return what it built."""
    from pulumi_policy import Policy

    directory = directory.resolve()
    manifest = _manifest(directory)
    entry = (directory / str(manifest.get("main") or ".")).resolve()
    if not (entry.is_file() or (entry / "__main__.py").is_file()):
        raise InputError(f"policy pack {directory}: its entry point {entry} has no __main__.py.")
    with _capturing_policy_pack(), _pack_environment(directory):
        try:
            runpy.run_path(str(entry), run_name="__main__")
        except _Captured as captured:
            arguments = captured.arguments
        except (Exception, SystemExit) as e:
            raise InputError(
                f"policy pack {directory} failed while loading: {type(e).__name__}: {e}. "
                "Set INFERENCE_INFRA_DEBUG=1 to see the traceback."
            ) from e
        else:
            program = entry if entry.is_file() else entry / "__main__.py"
            raise InputError(
                f"policy pack {directory}: {program.name} never constructs a pulumi_policy.PolicyPack."
            )
    name, policies = arguments["name"], arguments["policies"]
    problems = []
    if not isinstance(name, str) or not _PACK_NAME.fullmatch(name):
        problems.append(Problem("name", name, "must be 1-100 letters, digits, '-', '_' or '.'"))
    if not isinstance(policies, list) or not policies or not all(isinstance(p, Policy) for p in policies):
        problems.append(Problem("policies", policies, "must be a non-empty list of pulumi_policy policies"))
    else:
        names = [p.name for p in policies]
        if duplicates := sorted({n for n in names if names.count(n) > 1}):
            problems.append(Problem("policy names", duplicates, "must be unique within the pack"))
    raise_if_invalid(f"policy pack {directory}", problems)
    return LoadedPack(
        name=name,
        version=str(manifest.get("version") or "0.0.1"),
        directory=directory,
        policies=tuple(policies),
        enforcement_level=arguments.get("enforcement_level") or _level("advisory"),
        initial_config=dict(arguments.get("initial_config") or {}),
    )


def _manifest(directory: Path) -> Mapping[str, Any]:
    path = directory / "PulumiPolicy.yaml"
    if not path.is_file():
        raise InputError(f"{directory} is not a policy pack: it has no PulumiPolicy.yaml.")
    try:
        data = (
            bounded_yaml.load(
                input_size.read_text(path, input_size.MAX_PROJECT_FILE_BYTES, "policy pack file")
            )
            or {}
        )
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise InputError(f"{path} is not valid YAML: {str(e).splitlines()[0]}.") from None
    runtime = data.get("runtime") if isinstance(data, Mapping) else None
    runtime_name = runtime.get("name") if isinstance(runtime, Mapping) else runtime
    if runtime_name != "python":
        raise InputError(
            f"{path}: runtime is {runtime_name!r}; plan evaluates Python policy packs only (runtime: python)."
        )
    return data


@contextmanager
def _capturing_policy_pack() -> Iterator[None]:
    import pulumi_policy
    import pulumi_policy.policy

    class CapturingPolicyPack:
        """Takes PolicyPack's arguments and stops the entry point instead of serving."""

        def __init__(
            self,
            name: str,
            policies: list,
            enforcement_level: Any = None,
            initial_config: dict | None = None,
            description: str | None = None,
            display_name: str | None = None,
            readme: str | None = None,
            provider: str | None = None,
            tags: list | None = None,
            repository: str | None = None,
        ) -> None:
            raise _Captured(
                {
                    "name": name,
                    "policies": policies,
                    "enforcement_level": enforcement_level,
                    "initial_config": initial_config,
                }
            )

    # Every module holding the real class, not only the SDK's: a pack module imported
    # earlier in this process still has it bound under its own name.
    real = pulumi_policy.policy.PolicyPack
    holders = [
        m
        for m in list(sys.modules.values())
        if (getattr(m, "__dict__", None) or {}).get("PolicyPack") is real
    ]
    for module in holders:
        module.PolicyPack = CapturingPolicyPack
    try:
        yield
    finally:
        for module in holders:
            module.PolicyPack = real


@contextmanager
def _pack_environment(directory: Path) -> Iterator[None]:
    """sys.path/argv as the analyzer host sets them; modules the pack brought are dropped after."""
    saved_path, saved_argv, before = list(sys.path), list(sys.argv), set(sys.modules)
    sys.argv = [str(directory)]
    try:
        yield
    finally:
        sys.path[:] = saved_path
        sys.argv = saved_argv
        prefix = str(directory) + os.sep
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(prefix):
                del sys.modules[name]


def _level(value: Any) -> Any:
    from pulumi_policy import EnforcementLevel

    return value if isinstance(value, EnforcementLevel) else EnforcementLevel(value)


def read_config_file(path: Path) -> dict[str, tuple[str | None, dict[str, Any]]]:
    """A `--policy-pack-config` file: policy name -> (enforcement level or None, settings)."""
    try:
        text = input_size.read_text(path, input_size.MAX_CONFIG_FILE_BYTES, "policy config")
    except OSError as e:
        raise InputError(f"cannot read policy config {path}: {e.strerror}.") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"policy config {path} is not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}."
        ) from None
    except RecursionError:
        raise InputError(f"policy config {path} is nested too deeply to read.") from None
    if not isinstance(data, dict):
        raise InputError(
            f"policy config {path} must be a JSON object of policy names; got {type(data).__name__}."
        )
    result, problems = {}, []
    for key, value in data.items():
        if isinstance(value, str):
            level, settings = value, {}
        elif isinstance(value, dict):
            settings = dict(value)
            level = settings.pop("enforcementLevel", None)
        else:
            problems.append(Problem(key, value, "must be an enforcement level or an object of settings"))
            continue
        if level is not None and level not in LEVELS:
            problems.append(
                Problem(
                    f"{key}.enforcementLevel",
                    level,
                    f"is not an enforcement level; allowed: {', '.join(LEVELS)}",
                )
            )
            continue
        result[key] = (level, settings)
    raise_if_invalid(f"policy config {path}", problems)
    return result


def reconcile(
    pack: LoadedPack, given: Mapping[str, tuple[str | None, Mapping[str, Any]]], source: str
) -> dict[str, PolicySettings]:
    """Each policy's effective level and settings: defaults < initial_config < given; validated."""
    levels: dict[str, Any] = {}
    settings: dict[str, dict[str, Any]] = {}
    for policy in pack.policies:
        levels[policy.name] = policy.enforcement_level or pack.enforcement_level
        schema = policy.config_schema.properties if policy.config_schema else {}
        settings[policy.name] = {k: v["default"] for k, v in schema.items() if "default" in v}
    initial = {k: _normalized(v) for k, v in pack.initial_config.items()}
    problems: list[Problem] = []
    for layer in (initial, given):
        if ALL in layer:
            level, extra = layer[ALL]
            if extra:
                problems.append(Problem(ALL, sorted(extra), "takes only an enforcement level"))
            for name in levels:
                levels[name] = _level(level) if level else levels[name]
        for name, (level, extra) in layer.items():
            if name == ALL:
                continue
            if name not in levels:
                allowed = "is not a policy of pack " + pack.name + did_you_mean(name, levels)
                problems.append(Problem("policy", name, allowed))
                continue
            if level:
                levels[name] = _level(level)
            settings[name].update(extra)
    for policy in pack.policies:
        problems += _validate(policy, settings[policy.name])
    raise_if_invalid(f"policy config {source}", problems)
    return {name: PolicySettings(levels[name], settings[name]) for name in levels}


def _normalized(value: Any) -> tuple[str | None, dict[str, Any]]:
    from pulumi_policy import EnforcementLevel

    if isinstance(value, EnforcementLevel):
        return value.value, {}
    settings = dict(value)
    level = settings.pop("enforcementLevel", None)
    return (level.value if isinstance(level, EnforcementLevel) else level), settings


def _validate(policy: Any, settings: Mapping[str, Any]) -> list[Problem]:
    from jsonschema import Draft7Validator

    schema = policy.config_schema
    properties = schema.properties if schema else {}
    problems = [
        Problem(f"{policy.name} setting", key, "is not one it takes" + _known(key, properties))
        for key in settings
        if key not in properties
    ]
    document = {
        "type": "object",
        "properties": properties,
        **({"required": list(schema.required)} if schema and schema.required else {}),
    }
    for error in sorted(Draft7Validator(document).iter_errors(dict(settings)), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path)
        problems.append(
            Problem(f"{policy.name}.{where}" if where else policy.name, error.instance, _hint(error))
        )
    return problems


def _known(key: str, properties: Mapping[str, Any]) -> str:
    if not properties:
        return " (it takes no settings)"
    return did_you_mean(key, properties) or f" (it takes {', '.join(sorted(properties))})"


def _hint(error: Any) -> str:
    expected, validator = error.validator_value, error.validator
    if validator == "type":
        return f"must be of type {expected}"
    if validator in ("enum", "required"):
        listed = ", ".join(map(str, expected))
        return f"must be one of {listed}" if validator == "enum" else f"must set {listed}"
    bounds = {
        "minimum": "must be at least",
        "maximum": "must be at most",
        "exclusiveMinimum": "must be greater than",
        "exclusiveMaximum": "must be less than",
        "minItems": "must have at least this many items:",
        "minLength": "must be at least this many characters long:",
    }
    if validator in bounds:
        return f"{bounds[validator]} {expected}"
    return f"is invalid: {error.message}"
