"""Reading a stack file: its `inference-infra:` keys validated into `StackSettings`, or one error.

The engine hands the program strings (objects and lists JSON-encoded); `parse_stack_settings` decodes
them, moves old keys to their new names (`schema.rename_keys`; the program logs one warning per old
key, naming the stack file and the new key), validates every key at once and raises a `ConfigError`
whose text names each bad key with its value and what is allowed (bounds as ranges, did-you-mean for
unknown keys). `stack_file_schema()` is the JSON Schema of a whole `Pulumi.<stack>.yaml`
(`python -m inference_infra.infra.config` prints it; `infra/config.schema.json` is the copy editors
read). What the keys are is `infra/config.py`.
"""

from __future__ import annotations

import functools
import json
import re
import typing
from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from inference_infra.components.errors import ConfigError, Problem, did_you_mean
from inference_infra.infra.config import NAMESPACE, StackSettings
from inference_infra.infra.schema import KeyRename, config_path, keys_of, rename_keys
from inference_infra.infra.stack_bounds import (
    MAX_ITEMS,
    decode,
    item_problems,
    raw_stack_values,
    size_problems,
    stack_file,
)
from inference_infra.infra.stack_bounds import join_text as _join_text


def parse_stack_settings(raw: Mapping[str, str], *, stack: str) -> StackSettings:
    """Validate the `inference-infra:` keys of a stack (namespace already stripped).

    Old keys are moved to their new names; `settings.warnings` says which (the program logs them).
    """
    if problems := size_problems(raw):  # before megabytes of values are decoded
        raise config_error(stack, problems)
    values = decode(raw)
    if problems := item_problems(values):  # before 100,000 entries are validated one by one
        raise config_error(stack, problems)
    values.setdefault("environment", stack)
    values, renames = rename_keys(StackSettings, values)
    clashes = [
        Problem(
            f"{NAMESPACE}:{r.old}", r.value, f"is the old name of {NAMESPACE}:{r.new}; set only the new key"
        )
        for r in renames
        if r.clash
    ]
    try:
        settings = StackSettings.model_validate(values)
    except ValidationError as e:
        problems = clashes + _problems(e, values)
        raise ConfigError(
            _join_text(stack, [str(c) for c in clashes] + _describe(e, values)), problems
        ) from None
    problems = clashes + settings.problems()
    if problems:
        raise config_error(stack, problems)
    settings._warnings = [_renamed_warning(r, stack) for r in renames]
    return settings


def _renamed_warning(rename: KeyRename, stack: str) -> str:
    write = f" (write {rename.replacement})" if rename.replacement else ""
    return (
        f"{stack_file(stack)}: {NAMESPACE}:{rename.old} is now {NAMESPACE}:{rename.new}{write}; the old key "
        "is accepted until the next release, rename it"
    )


def load_stack_settings() -> StackSettings:
    """The current stack's settings, read from Pulumi's config (inside a program); old keys are logged."""
    settings = parse_stack_settings(raw_stack_values(), stack=pulumi.get_stack())
    for warning in settings.warnings:
        pulumi.log.warn(warning)
    return settings


def _location(loc: tuple[Any, ...]) -> str:
    key = f"{NAMESPACE}:{loc[0]}" if loc else NAMESPACE
    for part in loc[1:]:
        key += f"[{part}]" if isinstance(part, int) else f".{part}"
    return key


def _value_at(values: Mapping[str, Any], loc: tuple[Any, ...]) -> Any:
    node: Any = values
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _problems(error: ValidationError, values: Mapping[str, Any]) -> list[Problem]:
    found = []
    for d in error.errors():
        loc, _ = config_path(StackSettings, tuple(d["loc"]))
        found.append(Problem(_location(loc), d.get("input"), _message(d)))
    return found


def _discriminator(ctx: Mapping[str, Any]) -> str:
    """The key that picks a union's member ('kind', an endpoint's 'cloud'): pydantic says 'cloud()'."""
    return str(ctx.get("discriminator", "kind")).removesuffix("()")


def _message(detail: Any) -> str:
    """What is allowed, in words: bounds as a range, a union's kinds by name."""
    kind, ctx = detail["type"], detail.get("ctx") or {}
    if kind == "union_tag_invalid":
        return f"{_discriminator(ctx)} {ctx.get('tag')!r} is not one of {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return f"needs {_discriminator(ctx)}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        low, high = _bounds(tuple(detail["loc"]))
        if low is not None and high is not None:
            return f"must be {low} to {high}"
    return str(detail["msg"]).removeprefix("Value error, ")


def _bounds(loc: tuple[Any, ...]) -> tuple[Any, Any]:
    """The ge/le of the field at a pydantic error location (None where it has none)."""
    _, model = config_path(StackSettings, loc[:-1])
    field = model.model_fields.get(str(loc[-1])) if model is not None else None
    if field is None and model is not None:
        field = next((f for n, f in model.model_fields.items() if to_camel(n) == loc[-1]), None)
    low = high = None
    for rule in getattr(field, "metadata", []):
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return low, high


def _describe(error: ValidationError, values: Mapping[str, Any]) -> list[str]:
    parts = []
    for d in error.errors():
        loc, _ = config_path(StackSettings, tuple(d["loc"]))
        key = _location(loc)
        if d["type"] == "extra_forbidden":
            siblings = _allowed_keys(loc[:-1])
            hint = did_you_mean(str(loc[-1]), siblings)
            parts.append(f"{key} is not a setting here{hint}; allowed: {', '.join(sorted(siblings))}")
        elif d["type"] == "missing":
            parts.append(f"{key} is required but not set")
        elif d["type"] == "union_tag_invalid":
            tag = _discriminator(d["ctx"])
            parts.append(f"{key}.{tag} = {d['ctx']['tag']!r}: must be one of {d['ctx']['expected_tags']}")
        elif d["type"] == "union_tag_not_found":
            parts.append(f"{key}.{_discriminator(d['ctx'])} is required but not set")
        else:
            parts.append(f"{key} = {_value_at(values, loc)!r}: {_message(d)}")
    return parts


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """camelCase keys of the model at loc (the root model when loc is empty)."""
    _, model = config_path(StackSettings, loc)
    return keys_of(model) if model is not None else []


def config_error(stack: str, problems: list[Problem]) -> ConfigError:
    """One ConfigError naming the stack file and every problem, keys and input names in camelCase."""
    shown = [Problem(p.input, p.value, camel_words(p.allowed)) for p in problems]
    return ConfigError(_join_text(stack, [str(p) for p in shown]), shown)


@functools.cache
def _snake_keys() -> dict[str, str]:
    """snake_case field name -> the stack key's camelCase, for every key of the stack file."""
    names: dict[str, str] = {}
    seen: set[type] = set()

    def walk(model: Any) -> None:
        if not isinstance(model, type) or not hasattr(model, "model_fields") or model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            if "_" in name:
                names[name] = field.alias or to_camel(name)
            for arg in typing.get_args(field.annotation) or (field.annotation,):
                for inner in typing.get_args(arg) or (arg,):
                    walk(inner)

    walk(StackSettings)
    return names


def camel_words(text: str) -> str:
    """A component's message with the Python names of stack keys (`on_demand`, `max_machines`) in
    the stack file's spelling (`onDemand`, `maxMachines`)."""
    keys = _snake_keys()
    return re.sub(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", lambda m: keys.get(m.group(0), m.group(0)), text)


def stack_file_schema() -> dict[str, Any]:
    """JSON Schema of a whole Pulumi.<stack>.yaml whose inference-infra keys are typed."""
    model = StackSettings.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
    defs = model.pop("$defs", {})
    properties = {f"{NAMESPACE}:{k}": v for k, v in model["properties"].items()}
    _bound_collections([properties, defs])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Pulumi.<stack>.yaml for the inference-infra project",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": properties,
                "required": [f"{NAMESPACE}:{k}" for k in model.get("required", []) if k != "environment"],
                "patternProperties": {r"^(?!inference-infra:)[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$": {}},
                "additionalProperties": False,
            },
            "secretsprovider": {"type": "string"},
            "encryptionsalt": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "environment": {},
        },
        "additionalProperties": False,
        "$defs": defs,
    }


def _bound_collections(schema: Any) -> None:
    """Every list and map of the stack file's schema with its MAX_ITEMS bound (infra/stack_bounds.py)."""
    if isinstance(schema, list):
        for part in schema:
            _bound_collections(part)
        return
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "array":
        schema.setdefault("maxItems", MAX_ITEMS)
    if schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), dict):
        schema.setdefault("maxProperties", MAX_ITEMS)
    for value in schema.values():
        _bound_collections(value)


def main() -> None:
    """Print the JSON Schema of a stack file (`python -m inference_infra.infra.config`)."""
    print(json.dumps(stack_file_schema(), indent=2))


if __name__ == "__main__":
    main()
