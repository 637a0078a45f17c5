"""Stack config models generated from the components' Args, and the way back to Args.

A component declares each input once, on its Args dataclass (`components/arguments.py`: `arg()`
carries the description and bounds, `stack=False` marks inputs the stack wires itself). The stack
config takes its keys from there: `args_model(EfsModelCacheArgs)` is a pydantic model whose keys are
the inputs in camelCase, with their types, defaults, bounds and descriptions, unknown keys refused.
`settings.to_args(vpc_id=..., subnets=...)` turns validated settings back into the Args, the wired
inputs given by the stack, so a stack module never copies fields one by one.

How Args types become config types: `pulumi.Input[T]` is `T` (a stack file holds plain values);
`Sequence`/`tuple` are lists and `Mapping` dicts; a StrEnum accepts its values; a nested dataclass is
a nested model; a union of dataclasses is one object whose `kind` key says which (the union's first
member when `kind` is left out). A type the config cannot hold (a callable, `Any`) is an error unless
the input is excluded or marked `stack=False`.

A stack-only key (which fleets, references to stack-made things such as `efs: true`) is declared on
a subclass of the generated model, as any pydantic field; `to_args` passes only the Args' inputs.
An input renamed with `@renamed_inputs` keeps its old config key for one release: `rename_keys`
moves it to the new key and says so, naming both keys (the stack emits it with `pulumi.log.warn`).
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
import warnings
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Union

import pulumi
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, create_model, model_validator
from pydantic.alias_generators import to_camel

from inference_infra.components.arguments import DOC, GE, LE, STACK

KIND = "kind"


class Settings(BaseModel):
    """Base of every config model: camelCase keys, unknown keys rejected, values immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=True,
    )


@dataclass(frozen=True)
class RenamedKey:
    """A config key of the previous release: `old` is now `new` (snake_case field names).

    `convert(value, section)` returns the new keys (snake_case) when the shape changed too; it may
    read the section's other keys and pop those it replaces. Without it the value moves to `new`.
    """

    old: str
    new: str
    convert: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None


class ArgsSettings(Settings):
    """A model generated from an Args dataclass (see `args_model`); converts back with `to_args`."""

    args_class: ClassVar[type]
    args_fields: ClassVar[tuple[str, ...]] = ()
    old_keys: ClassVar[Mapping[str, RenamedKey]] = {}

    @model_validator(mode="before")
    @classmethod
    def _accept_old_keys(cls, data: Any) -> Any:
        """Old keys given to the model directly (the stack renames them first, naming the path)."""
        if not isinstance(data, Mapping) or not cls.old_keys:
            return data
        data, found = _rename(cls, data)
        clashes = [f"{r.old} is the old name of {r.new}: give only {r.new}" for r in found if r.clash]
        if clashes:
            raise ValueError("; ".join(clashes))
        for r in found:
            message = f"{cls.__name__}: {r.old} is deprecated; use {r.new}"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
        return data

    def args_kwargs(self) -> dict[str, Any]:
        """The Args' inputs this model holds, nested settings converted to their dataclasses."""
        return {name: _to_args_value(getattr(self, name)) for name in type(self).args_fields}

    def to_args(self, **wired: Any) -> Any:
        """The component's Args: these settings plus the inputs the stack wires (which win)."""
        return type(self).args_class(**{**self.args_kwargs(), **wired})


def _to_args_value(value: Any) -> Any:
    if isinstance(value, ArgsSettings):
        return value.to_args()
    if isinstance(value, list):
        return [_to_args_value(v) for v in value]
    if isinstance(value, tuple):  # an Args default, kept as it is
        return tuple(_to_args_value(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_args_value(v) for k, v in value.items()}
    return value


_CACHE: dict[Any, type[ArgsSettings]] = {}


def args_model(
    args: type,
    *,
    name: str | None = None,
    exclude: Collection[str] = (),
    renamed: Sequence[RenamedKey] = (),
    defaults: Mapping[str, Any] | None = None,
    docs: Mapping[str, str] | None = None,
    notes: Mapping[str, str] | None = None,
    constraints: Mapping[str, Mapping[str, Any]] | None = None,
    models: Mapping[type, type[BaseModel]] | None = None,
    kinds: Mapping[type, str] | None = None,
) -> type[ArgsSettings]:
    """A config model of the Args dataclass `args`.

    Every input is a key unless marked `stack=False` or named in `exclude` (inputs the stack sets
    from elsewhere: a provider's region, another section). The other options adjust the stack's view:

    - `renamed`: old config keys accepted for one release (the Args' own `@renamed_inputs` simple
      renames are accepted too);
    - `defaults`: a stack default for an input (None makes a required input optional; the stack
      then fills it in through `to_args`);
    - `docs` replaces an input's description where the stack gives the key another meaning (a
      secret's name instead of its value); `notes` appends to it (where a default comes from);
    - `constraints`: more pydantic `Field` constraints for a key (e.g. a `pattern`);
    - `models`: the model to use for a nested dataclass (a subclass with validators or stack-only
      keys); other nested dataclasses get a generated model;
    - `kinds`: the `kind` value of each member of a union of dataclasses (default: the class name in
      kebab-case).
    """
    hints = _hints(args)
    all_fields = {f.name: f for f in dataclasses.fields(args)}
    options = {
        "exclude": set(exclude),
        "defaults": dict(defaults or {}),
        "docs": dict(docs or {}),
        "notes": dict(notes or {}),
        "constraints": dict(constraints or {}),
    }
    for option, names in options.items():
        unknown = sorted(set(names) - set(all_fields))
        if unknown:
            raise TypeError(f"args_model({args.__name__}, {option}=...): no input named {', '.join(unknown)}")
    context = _Context(models=dict(models or {}), kinds=dict(kinds or {}))
    definitions: dict[str, Any] = {}
    for f in all_fields.values():
        if not f.init or f.name.startswith("_") or not f.metadata.get(STACK, True) or f.name in exclude:
            continue
        where = f"{args.__name__}.{f.name}"
        annotation = context.settings_type(hints[f.name], where)
        if f.name in options["defaults"] and options["defaults"][f.name] is None:
            annotation = annotation | None  # the stack fills it in when unset
        definitions[f.name] = (annotation, _field_info(f, annotation, options, context))
    keys = _renamed_keys(args, renamed, definitions)
    model = create_model(
        name or f"{args.__name__.removesuffix('Args')}Settings", __base__=ArgsSettings, **definitions
    )
    model.__doc__ = (
        args.__doc__ if args.__doc__ and not args.__doc__.startswith(f"{args.__name__}(") else None
    )
    model.args_class = args
    model.args_fields = tuple(definitions)
    model.old_keys = keys
    return model


def _field_info(
    f: dataclasses.Field[Any], annotation: Any, options: dict[str, Any], context: _Context
) -> Any:
    description = options["docs"].get(f.name, f.metadata.get(DOC) or "")
    if note := options["notes"].get(f.name):
        description = f"{description} {note}".strip()
    extra: dict[str, Any] = {"description": description or None}
    for key in (GE, LE):
        if key in f.metadata:
            extra[key] = f.metadata[key]
    extra.update(options["constraints"].get(f.name, {}))
    if f.name in options["defaults"]:
        return Field(default=options["defaults"][f.name], **extra)
    if f.default is not dataclasses.MISSING:
        default = f.default
        if dataclasses.is_dataclass(default):
            model = context.model_of(type(default), f.name)
            return Field(default_factory=lambda: _settings_of(model, default), **extra)
        return Field(default=default, **extra)
    if f.default_factory is not dataclasses.MISSING:
        factory = f.default_factory
        target = _model_in(annotation)
        if target is not None:
            return Field(default_factory=lambda: _settings_of(target, factory()), **extra)
        return Field(default_factory=factory, **extra)
    return Field(**extra)


def _settings_of(model: type[BaseModel], value: Any) -> Any:
    """A default given as a dataclass instance, as settings (only the model's keys)."""
    if not dataclasses.is_dataclass(value):
        return value
    known = set(model.model_fields)
    return model.model_validate({k: v for k, v in _shallow(value).items() if k in known})


def _shallow(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (Union, types.UnionType):
        found = [m for a in typing.get_args(annotation) if (m := _model_in(a)) is not None]
        return found[0] if len(found) == 1 else None
    return None


def _renamed_keys(
    args: type, renamed: Sequence[RenamedKey], definitions: Mapping[str, Any]
) -> dict[str, RenamedKey]:
    keys = {
        old: RenamedKey(old, r.new)
        for old, r in getattr(args, "__renamed_inputs__", {}).items()  # set by @renamed_inputs
        if r.convert is None and r.new in definitions
    }
    for r in renamed:
        if r.convert is None and r.new not in definitions:
            raise TypeError(f"args_model({args.__name__}): renamed key {r.old!r} -> {r.new!r}, not a key")
        keys[r.old] = r
    return keys


def input_field(args: type, name: str, *, note: str = "", **extra: Any) -> Any:
    """A stack-only key that stands for the Args input `name` (e.g. a fleet's `prefetch`, which the
    stack puts into its weights): the input's plain default, description and bounds, `note` appended;
    `extra` are more pydantic Field options."""
    f = next((f for f in dataclasses.fields(args) if f.name == name), None)
    if f is None:
        raise TypeError(f"input_field({args.__name__}, {name!r}): no such input")
    description = f"{f.metadata.get(DOC) or ''} {note}".strip()
    bounds = {key: f.metadata[key] for key in (GE, LE) if key in f.metadata}
    given = f.default is not dataclasses.MISSING and not {"default", "default_factory"} & set(extra)
    default = {"default": f.default} if given else {}
    return Field(**default, description=description or None, **bounds, **extra)


# --- types -------------------------------------------------------------------------------------------


@dataclass
class _Context:
    models: dict[type, type[BaseModel]]
    kinds: dict[type, str]

    def settings_type(self, hint: Any, where: str) -> Any:
        """The config type of an Args type hint."""
        origin = typing.get_origin(hint)
        if origin in (Union, types.UnionType):
            options = [h for h in typing.get_args(hint) if not _is_wired(h)]
            optional = type(None) in options
            plain = [h for h in options if h is not type(None)]
            if len([h for h in plain if dataclasses.is_dataclass(h)]) > 1:
                mapped = self.tagged_union(plain, where)
            else:
                members = list(dict.fromkeys(self.settings_type(h, where) for h in plain))
                if not members:
                    raise TypeError(f"{where}: only wired values (Outputs); mark it stack=False")
                mapped = members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007
            return mapped | None if optional else mapped
        if origin is Literal or hint in (str, int, float, bool, type(None)):
            return hint
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return hint
        if origin in (Sequence, list, tuple, Set, set, frozenset) or hint in (list, tuple):
            items = [h for h in typing.get_args(hint) if h is not Ellipsis]
            if origin is tuple and len(set(items)) > 1:
                raise TypeError(f"{where}: a fixed-shape tuple has no config form")
            return list[self.settings_type(items[0], f"{where}[]")] if items else list[Any]
        if origin in (Mapping, dict) or hint is dict:
            key, value = typing.get_args(hint) or (str, Any)
            return dict[self.settings_type(key, where), self.settings_type(value, f"{where}[]")]
        if dataclasses.is_dataclass(hint):
            return self.model_of(hint, where)
        raise TypeError(
            f"{where}: the stack config cannot hold {hint!r}; exclude the input or mark it stack=False"
        )

    def model_of(self, cls: type, where: str) -> type[BaseModel]:
        if cls in self.models:
            return self.models[cls]
        key = (cls, tuple(self.models.items()), tuple(self.kinds.items()))
        if key not in _CACHE:
            _CACHE[key] = args_model(cls, models=self.models, kinds=self.kinds)
        return _CACHE[key]

    def tagged_union(self, members: list[type], where: str) -> Any:
        """One object whose `kind` says which member it is; the first member when `kind` is absent."""
        if not all(dataclasses.is_dataclass(m) for m in members):
            raise TypeError(f"{where}: a union mixing dataclasses and other types has no config form")
        tags = [self.kinds.get(m) or _kebab(m.__name__) for m in members]
        variants = []
        for member, tag in zip(members, tags, strict=True):
            base = self.model_of(member, where)
            default = tag if member is members[0] else ...
            others = ", ".join(t for t in tags if t != tag)
            variant = create_model(
                base.__name__,
                __base__=base,
                kind=(
                    Literal[tag],
                    Field(
                        default,
                        description=f"'{tag}'{' (the default)' if default is tag else ''}; or "
                        f"{others} for another kind.",
                    ),
                ),
            )
            variant.__doc__ = base.__doc__
            variants.append(Annotated[variant, Tag(tag)])
        return Annotated[Union[tuple(variants)], Discriminator(_tag_of(tags[0]))]  # noqa: UP007


def _tag_of(default: str | None, key: str = KIND) -> Callable[[Any], str | None]:
    """The discriminator: the value of `key` (`default` when it is absent). Named after the key, so
    pydantic's errors say which key picks the member."""

    def tag(value: Any) -> str | None:
        found = value.get(key, default) if isinstance(value, Mapping) else getattr(value, key, default)
        return None if found is None else str(found)

    tag.__name__ = tag.__qualname__ = key
    return tag


def tagged(key: str, members: Mapping[str, type[BaseModel]]) -> Any:
    """One object whose `key` (required) says which model it is, e.g. an endpoint's `cloud: aws|gcp`.

    The members declare `key` as a Literal field themselves; old keys are renamed per member.
    """
    variants = [Annotated[model, Tag(tag)] for tag, model in members.items()]
    return Annotated[Union[tuple(variants)], Discriminator(_tag_of(None, key))]  # noqa: UP007


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _is_wired(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin in (Awaitable, typing.Awaitable) or hint is pulumi.Output or origin is pulumi.Output


def _hints(cls: type) -> dict[str, Any]:
    # pulumi.Input is Union[T, Awaitable[T], "Output[T]"]: its forward reference needs the name.
    return typing.get_type_hints(cls, localns={"Output": pulumi.Output, "T": Any}, include_extras=False)


# --- old keys -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyRename:
    """An old key found in a config section: where it is, what it is called now."""

    old: str  # the key's path, e.g. 'watchdog.schedule'
    new: str
    value: Any = None
    clash: bool = False  # the new key is given too: an error
    replacement: str | None = None  # a converted key: what to write instead, e.g. 'spot: 2'


def _rename(
    model: type[ArgsSettings], data: Mapping[str, Any], path: str = ""
) -> tuple[dict[str, Any], list[KeyRename]]:
    """data with the model's old keys moved to their new ones (dropped where the new one is given too)."""
    out = dict(data)
    found = []
    for old, rename in model.old_keys.items():
        given = next((k for k in (to_camel(old), old) if k in out), None)
        if given is None:
            continue
        value = out.pop(given)
        new = rename.convert(value, out) if rename.convert else {rename.new: value}
        clash = any(k in out or to_camel(k) in out for k in new)
        if not clash:
            out.update({to_camel(k): v for k, v in new.items()})
        replacement = None
        if rename.convert is not None:
            replacement = ", ".join(f"{to_camel(k)}: {_yaml(v)}" for k, v in new.items())
        where = _join(path, to_camel(next(iter(new), rename.new)))
        found.append(KeyRename(_join(path, given), where, value, clash, replacement))
    return out, found


def _yaml(value: Any) -> str:
    """A value as a stack file spells it in flow style: spot, 2, [spot], {}."""
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{to_camel(str(k))}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return str(value)


def rename_keys(model: type[BaseModel], values: Any, path: str = "") -> tuple[Any, list[KeyRename]]:
    """values (a config section, raw) with every old key in it and its nested sections renamed."""
    if not isinstance(values, Mapping):
        return values, []
    found: list[KeyRename] = []
    out = dict(values)
    if issubclass(model, ArgsSettings) and model.old_keys:
        out, found = _rename(model, out, path)
    for key, value in list(out.items()):
        field = _field(model, key)
        if field is None:
            continue
        out[key], more = _rename_in(field.annotation, value, _join(path, key))
        found += more
    return out, found


def _rename_in(annotation: Any, value: Any, path: str) -> tuple[Any, list[KeyRename]]:
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return rename_keys(annotation, value, path)
    if (variants := _variants(annotation)) is not None:
        tag, choose = variants
        model = choose.get(tag(value)) if isinstance(value, Mapping) else None
        return rename_keys(model, value, path) if model is not None else (value, [])
    origin, parts = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in parts if a is not type(None)]
        return _rename_in(inner[0], value, path) if len(inner) == 1 else (value, [])
    if origin is list and isinstance(value, list):
        pairs = [_rename_in(parts[0], v, f"{path}[{i}]") for i, v in enumerate(value)]
        return [v for v, _ in pairs], [r for _, found in pairs for r in found]
    if origin is dict and isinstance(value, Mapping):
        pairs = {k: _rename_in(parts[1], v, f"{path}[{k!r}]") for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, [r for _, found in pairs.values() for r in found]
    return value, []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- walking a model along a key path (error locations, did-you-mean) ---------------------------------


def _unwrap(annotation: Any) -> Any:
    """Annotated[X, ...] -> X, unless it is a tagged union (kept: its tags are part of error paths)."""
    while typing.get_origin(annotation) is Annotated and _variants(annotation) is None:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _variants(annotation: Any) -> tuple[Callable[[Any], str], dict[str, type[BaseModel]]] | None:
    """A tagged union's discriminator and its models by tag; None for any other annotation."""
    if typing.get_origin(annotation) is not Annotated:
        return None
    inner, *meta = typing.get_args(annotation)
    found = next((m for m in meta if isinstance(m, Discriminator)), None)
    if found is None or not callable(found.discriminator):
        return None
    choose = {}
    for member in typing.get_args(inner):
        model, *tags = typing.get_args(member)
        choose.update({t.tag: model for t in tags if isinstance(t, Tag)})
    return found.discriminator, choose


def _field(model: type[BaseModel], key: Any) -> Any:
    if not isinstance(key, str):
        return None
    return model.model_fields.get(key) or next(
        (f for n, f in model.model_fields.items() if (f.alias or to_camel(n)) == key), None
    )


def config_path(model: type[BaseModel], loc: Sequence[Any]) -> tuple[tuple[Any, ...], type[BaseModel] | None]:
    """A pydantic error location as config keys (union tags dropped), and the model it ends in."""
    parts: list[Any] = []
    annotation: Any = model
    for part in loc:
        annotation = _unwrap(annotation)
        while typing.get_origin(annotation) in (Union, types.UnionType):
            inner = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = _unwrap(inner[0]) if len(inner) == 1 else None
        if (variants := _variants(annotation)) is not None:
            annotation = variants[1].get(part)
            if annotation is not None:
                continue  # the tag pydantic adds to the path: not a key
            parts.append(part)
            continue
        parts.append(part)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = _field(annotation, part)
            annotation = field.annotation if field is not None else None
        elif typing.get_origin(annotation) is list:
            annotation = typing.get_args(annotation)[0]
        elif typing.get_origin(annotation) is dict:
            annotation = typing.get_args(annotation)[1]
        else:
            annotation = None
    annotation = _unwrap(annotation)
    while typing.get_origin(annotation) in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = _unwrap(inner[0]) if len(inner) == 1 else None
    ends = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    return tuple(parts), ends


def camel_path(path: str) -> str:
    """A component input path in config spelling: 'subnets[0].availability_zone' -> '...availabilityZone'."""
    return re.sub(r"[a-z_]+", lambda m: to_camel(m.group()), path)


def keys_of(model: type[BaseModel]) -> list[str]:
    """The camelCase keys a model accepts."""
    return [f.alias or to_camel(n) for n, f in model.model_fields.items()]


def models_in(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    """model and every model nested in it (each once)."""
    seen: set[type[BaseModel]] = set()

    def walk(annotation: Any) -> Iterator[type[BaseModel]]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in seen:
                seen.add(annotation)
                yield annotation
                for f in annotation.model_fields.values():
                    yield from walk(f.annotation)
            return
        for part in typing.get_args(annotation):
            yield from walk(part)

    yield from walk(model)
