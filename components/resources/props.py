"""Reading a resource's props: the one path reader, and the marker for a value not known yet.

Props are engine-shaped (camelCase) plain values: dicts, lists, strings, numbers,
booleans, None, and `UNKNOWN_VALUE` where the engine does not know a value until
deploy time (preview). The offline plan and the policy pack both turn their wire
values into this shape, so every reader, the pricing and the policies read props
the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNKNOWN_MASK = "[unknown]"


class Unknown:
    """A value not known until deploy time (preview): `CapturedResource.props` and the policies use it.

    It has no truth value on purpose: `if props["x"]:` must not quietly treat it as
    empty; test `is UNKNOWN_VALUE` first.
    """

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return UNKNOWN_MASK

    def __bool__(self) -> bool:
        raise TypeError("an unknown value has no truth value; test `is UNKNOWN_VALUE` first")


UNKNOWN_VALUE = Unknown()

_PLAIN = (str, int, float, bool, list, dict)


def get_path(value: Any, *keys: str | int) -> Any:
    """value[k1][k2]...: None where a step is missing, UNKNOWN_VALUE where a step is not known yet.

    A string key reads a mapping, an integer key a list (negative from the end).
    """
    for key in keys:
        if value is UNKNOWN_VALUE:
            return UNKNOWN_VALUE
        if isinstance(key, int):
            value = value[key] if isinstance(value, list) and -len(value) <= key < len(value) else None
        else:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is None:
            return None
    return value


def known(value: Any) -> Any:
    """The value when it is a plain one usable as-is, else None: a value not known yet, or one that
    is not plain (an Output in a transform's props), reads as absent; it is never guessed."""
    return value if isinstance(value, _PLAIN) else None
