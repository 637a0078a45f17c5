"""Input errors shared by the components, the stack config and the CLI.

Validation collects every problem first and raises once, before any resource
is registered, so a stack with bad input creates nothing at all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One bad input: which input, the value received, and what is allowed."""

    input: str
    value: Any
    allowed: str

    def __str__(self) -> str:
        return f"{self.input} {_show(self.value)} {self.allowed}"


class InputError(ValueError):
    """Bad input to a component, the stack config or the CLI (CLI exit code 2)."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class ConfigError(InputError):
    """Bad stack configuration (CLI exit code 2). Its message starts with the stack file's name and
    names each key as the stack file spells it, so the plan reports it as it is, with no program line."""


def raise_if_invalid(subject: str, problems: Iterable[Problem]) -> None:
    """Raise one InputError naming every problem, or return when there are none."""
    found = list(problems)
    if not found:
        return
    if len(found) == 1:
        raise InputError(f"{subject}: {found[0]}.", found)
    listed = "; ".join(f"({i}) {p}" for i, p in enumerate(found, start=1))
    raise InputError(f"{subject}: {len(found)} problems: {listed}.", found)


def close_matches(word: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    """Names from choices that look like a mistyped word (case-insensitive)."""
    by_lower = {c.lower(): c for c in choices}
    hits = difflib.get_close_matches(word.lower(), list(by_lower), n=limit, cutoff=0.6)
    return [by_lower[h] for h in hits]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean x or y?)' for a near miss, else ''."""
    hits = close_matches(word, choices)
    if not hits:
        return ""
    return f" (did you mean {' or '.join(repr(h) for h in hits)}?)"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return f"{value!r}" if value is not None else "(unset)"
