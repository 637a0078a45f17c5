"""How the rule renderers write values into PromQL (one definition for every rule file)."""

from __future__ import annotations


def num(value: float) -> str:
    """A number as PromQL writes it: 30 rather than 30.0; 0.001 stays 0.001."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
