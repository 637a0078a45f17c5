"""Type checks of a component's arguments, read from the args dataclass's own type hints.

A component calls `check_types(args)` before its own validation, so a string
where a `SubnetRef` belongs, or an int where a string does, is one clear
problem (the input, the value received and what is allowed) instead of an
AttributeError from deep inside the checks. Values wired from other resources
(`pulumi.Input[...]`: an Output or an awaitable) are accepted wherever the hint
allows them; their values are checked by the engine at deploy time.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence, Set
from typing import Any

import pulumi

from inference_infra.components.arguments import GE, LE
from inference_infra.components.errors import Problem


def check_types(args: object, prefix: str = "") -> list[Problem]:
    """Every field of the dataclass `args` whose value does not fit its type hint or lies outside its
    documented bounds (arg(ge=..., le=...)), nested dataclasses too."""
    blocking, floors = _check(args, prefix)
    return blocking + floors


def blocking_problems(args: object) -> list[Problem]:
    """check_types' problems that must stop a component before its validator: a wrong type (the
    validator would fail on it) and a value above its bound (a mistyped 100000 would be computed
    from). A value below its floor is not among them: see `input_problems`."""
    return _check(args, "")[0]


def type_problems(args: object) -> tuple[list[Problem], list[Problem]]:
    """check_types' problems in two lists: (wrong types and values above their bound, values below their
    floor). The fleet skeleton stops on the first and reports the second with everything else it finds,
    computing nothing from a refused value (components/fleet/plan.py step 0)."""
    return _check(args, "")


def input_problems(args: object, validate: Callable[[Any], Sequence[Problem]]) -> list[Problem]:
    """Every problem of a component's inputs at once: the blocking ones alone when there are any, else
    the values below their floors together with everything `validate(args)` finds (where both name
    an input, the validator's message, which says more, is kept)."""
    blocking, floors = _check(args, "")
    if blocking:
        return blocking
    found = list(validate(args))
    named = {p.input for p in found}
    return [p for p in floors if p.input not in named] + found


def _check(args: object, prefix: str) -> tuple[list[Problem], list[Problem]]:
    """(wrong types and values above their bound, values below their floor)."""
    if not dataclasses.is_dataclass(args) or isinstance(args, type):
        return [Problem(prefix or "args", args, "must be the component's Args dataclass")], []
    hints = _hints(type(args))
    blocking: list[Problem] = []
    floors: list[Problem] = []
    for f in dataclasses.fields(args):
        if f.name.startswith("_") or f.name not in hints:
            continue
        name = f"{prefix}{f.name}"
        value = getattr(args, f.name)
        hint = hints[f.name]
        low, high = f.metadata.get(GE), f.metadata.get(LE)
        if not _fits(value, hint):
            blocking.append(Problem(name, value, f"must be {describe(hint)}"))
        elif (bound := _out_of_bounds(value, low, high)) is not None:
            # The documented bounds of every count and size, checked before anything is computed from
            # the value: a mistyped 100000 is one problem, not a plan that never ends.
            (floors if low is not None and value < low else blocking).append(Problem(name, value, bound))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            inner = _check(value, f"{name}.")
            blocking, floors = blocking + inner[0], floors + inner[1]
        elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item) and not isinstance(item, type):
                    inner = _check(item, f"{name}[{i}].")
                    blocking, floors = blocking + inner[0], floors + inner[1]
    return blocking, floors


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _out_of_bounds(value: Any, low: float | None, high: float | None) -> str | None:
    """What is allowed, when a number lies outside its arg() bounds (None when inside, or not a number)."""
    if not _number(value) or ((low is None or value >= low) and (high is None or value <= high)):
        return None
    if low is not None and value < low:
        return f"must be at least {low}"
    return f"must be {low}..{high}" if low is not None else f"must be at most {high}"


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # pulumi.Input is Union[T, Awaitable[T], "Output[T]"]: its forward reference needs the name.
    return typing.get_type_hints(cls, localns={"Output": pulumi.Output, "T": Any})


def _is_wired(value: Any) -> bool:
    return isinstance(value, pulumi.Output) or inspect.isawaitable(value)


def _fits(value: Any, hint: Any) -> bool:
    if hint is Any or isinstance(hint, typing.TypeVar):
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_fits(value, option) for option in typing.get_args(hint))
    if hint is type(None) or hint is None:
        return value is None
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if origin in (Awaitable, typing.Awaitable) or hint is pulumi.Output or origin is pulumi.Output:
        return _is_wired(value)
    if origin in (Callable, typing.Callable) or hint is Callable:
        return callable(value)
    if origin in (Sequence, list, tuple, typing.Sequence, Set, set, frozenset):
        if isinstance(value, str | bytes) or not isinstance(value, Sequence | Set):
            return False
        item_hints = [h for h in typing.get_args(hint) if h is not Ellipsis]
        if origin is tuple and len(item_hints) > 1:
            return len(item_hints) == len(value) and all(map(_fits, value, item_hints))
        return not item_hints or all(_fits(item, item_hints[0]) for item in value)
    if origin in (Mapping, dict, typing.Mapping):
        if not isinstance(value, Mapping):
            return False
        key_hint, value_hint = (typing.get_args(hint) or (Any, Any))[:2]
        return all(_fits(k, key_hint) and _fits(v, value_hint) for k, v in value.items())
    if isinstance(hint, type):
        if hint is float:
            return isinstance(value, int | float) and not isinstance(value, bool)
        if hint is int:
            return isinstance(value, int) and not isinstance(value, bool)
        return isinstance(value, hint)
    return True  # a hint this checker does not understand is not grounds for rejecting a value


def describe(hint: Any) -> str:
    """What a hint allows, in words: "a str or an Output", "a sequence of SubnetRef", "one of 'a', 'b'"."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = [h for h in typing.get_args(hint)]
        wired = any(_is_input_part(h) for h in options)
        plain = [describe(h) for h in options if not _is_input_part(h) and h is not type(None)]
        words = list(dict.fromkeys(plain)) + (["an Output of another resource"] if wired else [])
        if type(None) in options:
            words.append("None")
        return " or ".join(words)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(hint))
    if origin in (Sequence, list, tuple, typing.Sequence, Set, set, frozenset):
        items = [h for h in typing.get_args(hint) if h is not Ellipsis]
        return f"a list of {_bare(describe(items[0]))}" if items else "a list"
    if origin in (Mapping, dict, typing.Mapping):
        args = typing.get_args(hint)
        return f"a mapping of {describe(args[0])} to {describe(args[1])}" if args else "a mapping"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        members = ", ".join(f"{hint.__name__}.{m.name}" for m in hint)
        return f"a {hint.__name__} ({members})"
    if hint is str:
        return "a string"
    if hint is bool:
        return "True or False"
    if hint is int:
        return "a whole number"
    if hint is float:
        return "a number"
    if isinstance(hint, type):
        return f"a {hint.__name__}"
    return str(hint)


def _bare(words: str) -> str:
    return words.removeprefix("a ").removeprefix("an ")


def _is_input_part(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin in (Awaitable, typing.Awaitable) or hint is pulumi.Output or origin is pulumi.Output


def whole(value: Any) -> bool:
    """An int that is not a bool (True is an int to Python, never a count to a user)."""
    return isinstance(value, int) and not isinstance(value, bool)


def between(value: Any, low: int, high: int) -> bool:
    return whole(value) and low <= value <= high


def number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def idle_window_problems(args: Any) -> list[Problem]:
    """The idle window both clouds' watchdogs share (their Args name these fields alike): idle minutes,
    the utilisation threshold, the grace after a start and the metric period dividing the window."""
    problems = []
    if not between(args.idle_minutes, 10, 1440):
        problems.append(
            Problem("idle_minutes", args.idle_minutes, "must be a whole number of minutes, 10 to 1440")
        )
    threshold = args.util_threshold_percent
    if not (number(threshold) and 0 < threshold <= 100):
        problems.append(
            Problem("util_threshold_percent", threshold, "must be a number above 0 and at most 100 (percent)")
        )
    if not between(args.grace_minutes, 0, 10080):
        problems.append(
            Problem("grace_minutes", args.grace_minutes, "must be a whole number of minutes, 0 to 10080")
        )
    return problems + watchdog_period_problems(args.idle_minutes, args.metric_period_seconds)


def watchdog_period_problems(idle_minutes: Any, period: Any) -> list[Problem]:
    """An idle watchdog's metric period (both clouds' watchdogs): whole minutes dividing the idle window."""
    if period is None or not whole(idle_minutes):
        return []
    if not whole(period) or period < 60 or period % 60:
        return [Problem("metric_period_seconds", period, "must be a multiple of 60 seconds")]
    if (idle_minutes * 60) % period:
        return [Problem("metric_period_seconds", period, f"must divide the idle window ({idle_minutes} min)")]
    return []
