"""Component arguments: each input's description written once, and the names of the last release kept.

`arg()` declares a field of an Args dataclass together with its description and bounds. The stack
config (`infra/config.py`) builds its keys, JSON Schema and messages from these, so an input's name,
type, default and description live only on the component.

`renamed_inputs()` lets an Args class accept the input names of the previous release for one more,
each with a `DeprecationWarning` that names the new input; reading an old attribute name warns the
same way.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

MISSING: Any = dataclasses.MISSING

# Metadata keys of an `arg()` field.
DOC = "doc"
STACK = "stack"  # False: the stack wires this input itself (ids, outputs); it is not a stack config key
GE = "ge"
LE = "le"


def arg(
    default: Any = MISSING,
    doc: str = "",
    *,
    factory: Callable[[], Any] | Any = MISSING,
    stack: bool = True,
    ge: int | float | None = None,
    le: int | float | None = None,
) -> Any:
    """A dataclass field with its description (`doc`) and, for numbers, its documented bounds.

    `stack=False` marks an input the stack wires from other resources (a VPC id, a subnet list), so
    it is not offered as a config key. Bounds are documentation and schema: the component's own
    validator still checks them and names the input in its message.
    """
    metadata: dict[str, Any] = {DOC: doc, STACK: stack}
    if ge is not None:
        metadata[GE] = ge
    if le is not None:
        metadata[LE] = le
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def doc_of(cls: type, name: str) -> str:
    """The description of input `name` of the Args dataclass `cls` ('' when it has none)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            return str(f.metadata.get(DOC, ""))
    raise KeyError(f"{cls.__name__} has no input {name!r}")


@dataclass(frozen=True)
class Renamed:
    """An input of the previous release: `old` is now `new`.

    `convert` turns the old value into the new inputs when the shape changed too (e.g. a GCP fleet's
    `capacity=SPOT, count=2` became `spot=2`); without it the value moves to `new` unchanged.
    `since` names the release that renamed it.
    """

    old: str
    new: str
    convert: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None
    since: str = "0.2.0"


T = TypeVar("T")


def deprecated(message: str, *, stacklevel: int = 3) -> None:
    """One DeprecationWarning (the caller's caller is blamed, i.e. the user's line)."""
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)


def renamed_inputs(*renames: Renamed) -> Callable[[type[T]], type[T]]:
    """Class decorator (above `@dataclass`): accept the old input names with a DeprecationWarning.

    Renames declared on a base Args class apply to its subclasses too (decorate each concrete class,
    even with no renames of its own, so its generated `__init__` is wrapped).
    """

    def decorate(cls: type[T]) -> type[T]:
        table: dict[str, Renamed] = {}
        for base in reversed(cls.__mro__[1:]):
            table.update(getattr(base, "__renamed_inputs__", {}))
        table.update({r.old: r for r in renames})
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
            for old in [k for k in kwargs if k in table]:
                rename = table[old]
                if old not in kwargs:  # taken by another old input's convert (two old inputs became one)
                    deprecated(
                        f"{cls.__name__}({old}=...) is deprecated since {rename.since} and goes in the next "
                        f"release; use {rename.new}",
                    )
                    continue
                value = kwargs.pop(old)
                moved = rename.convert(value, kwargs) if rename.convert else {rename.new: value}
                clash = sorted(k for k in moved if k in kwargs)
                if clash:
                    raise TypeError(
                        f"{cls.__name__}: {old!r} is the old name of {rename.new!r}; give one of them, "
                        f"not both ({', '.join(clash)} given too)"
                    )
                deprecated(
                    f"{cls.__name__}({old}=...) is deprecated since {rename.since} and goes in the next "
                    f"release; use {rename.new}",
                )
                kwargs.update(moved)
            init(self, *args, **kwargs)

        cls.__init__ = __init__  # type: ignore[method-assign]
        cls.__renamed_inputs__ = table  # type: ignore[attr-defined]
        simple = {old: r.new for old, r in table.items() if r.convert is None}

        def __getattr__(self: Any, name: str) -> Any:  # noqa: N807 (only called for missing names)
            new = simple.get(name)
            if new is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            deprecated(f"{type(self).__name__}.{name} is deprecated; use {new}")
            return getattr(self, new)

        cls.__getattr__ = __getattr__  # type: ignore[attr-defined]
        return cls

    return decorate


def renamed_input_names(cls: type) -> dict[str, str]:
    """Old input name -> new input name, for an Args class decorated with `renamed_inputs`."""
    return {old: r.new for old, r in getattr(cls, "__renamed_inputs__", {}).items()}
