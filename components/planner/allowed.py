"""Which accelerator types an environment allows: the one reading the planner and the policy share.

The policy pack's `allowed-accelerator-types` maps an environment to glob patterns of machine
types (`allowedTypes`), with `@one-accelerator` standing for every catalog type with exactly one
accelerator; the "*" entry covers every other environment. Its default (`DEFAULT_ALLOWED_TYPES`)
allows everything in production and one-accelerator machines elsewhere. The planner picks among the
machines the same config allows, so a default pick does not fail the default gate.

A stack's own pack config may override `allowedTypes` (and name the stack's `environment`): the
offline plan reads it (`--policy-config`, else the project pack's `config/<stack>.json`) before the
program runs and holds it here for the program's run (`stack_pack_config`), so the fleets' picks keep
to the types the stack's own gate allows, not the default's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache

from inference_infra.components.catalog import instance_types
from inference_infra.components.catalog.gcp import GCP_GUEST_ACCELERATORS
from inference_infra.components.tagging import is_production

ONE_ACCELERATOR = "@one-accelerator"
# Every production environment (components.tagging.is_production: a name starting with prod or prd)
# that has no entry of its own.
PRODUCTION_KEY = "@production"
# allowed-accelerator-types' default allowedTypes (policy/rules/allowed_accelerator_types.py).
DEFAULT_ALLOWED_TYPES: Mapping[str, tuple[str, ...]] = {
    PRODUCTION_KEY: ("*",),
    "*": (ONE_ACCELERATOR,),
}


@cache
def one_accelerator_types() -> frozenset[str]:
    """Catalog machine types with exactly one accelerator, and the GPUs an N1 VM may attach (one of)."""
    machines = {t.name for t in instance_types() if t.accelerator_count == 1}
    return frozenset(machines | {g.accelerator_type for g in GCP_GUEST_ACCELERATORS})


def allows(pattern: str, name: str, single: bool = True) -> bool:
    """Whether one allowedTypes pattern admits a machine type (`single`: it carries one accelerator)."""
    if pattern == ONE_ACCELERATOR:
        return single and name in one_accelerator_types()
    return fnmatchcase(name, pattern)


def allowed_patterns(
    environment: str | None, allowed_types: Mapping[str, Sequence[str]] | None = None
) -> tuple[tuple[str, ...] | None, str]:
    """(the patterns that apply to environment, or None when the config has no entry; the entry's key)."""
    table = DEFAULT_ALLOWED_TYPES if allowed_types is None else allowed_types
    if environment is not None and environment in table:
        key = environment
    elif is_production(environment) and PRODUCTION_KEY in table:
        key = PRODUCTION_KEY
    else:
        key = "*"
    patterns = table.get(key)
    return (tuple(patterns) if patterns is not None else None), key


def describe_patterns(patterns: Sequence[str]) -> str:
    shown = [
        f"{p} (every catalog type with one accelerator)" if p == ONE_ACCELERATOR else p for p in patterns
    ]
    return ", ".join(shown) or "(none)"


def allowed(name: str, patterns: Sequence[str]) -> bool:
    """Whether a catalog machine type is among the patterns."""
    return any(allows(p, name) for p in patterns)


@dataclass(frozen=True)
class PackAllowed:
    """allowed-accelerator-types' settings in the stack's own pack config."""

    allowed_types: Mapping[str, tuple[str, ...]]
    environment: str | None  # the config's `environment`; None: each resource's Environment tag decides
    source: str  # the config file it came from, or "(defaults)"

    @property
    def is_default(self) -> bool:
        return dict(self.allowed_types) == dict(DEFAULT_ALLOWED_TYPES)


_STACK_PACK: PackAllowed | None = None


@contextmanager
def stack_pack_config(found: PackAllowed | None) -> Iterator[None]:
    """Hold the stack's allowed-accelerator-types settings while its program runs (the offline plan)."""
    global _STACK_PACK
    before, _STACK_PACK = _STACK_PACK, found
    try:
        yield
    finally:
        _STACK_PACK = before


def pack_config_allowed(config: object, source: str) -> PackAllowed | None:
    """allowed-accelerator-types' settings from a pack config's JSON (`{"allowed-accelerator-types":
    {"allowedTypes": ..., "environment": ...}}`), over the policy's defaults; None when the config
    disables the policy or its settings are not the shape the policy's schema takes (the pack's own
    check of the config says so)."""
    entry = config.get("allowed-accelerator-types") if isinstance(config, Mapping) else None
    if entry == "disabled" or (isinstance(entry, Mapping) and entry.get("enforcementLevel") == "disabled"):
        return None
    entry = entry if isinstance(entry, Mapping) else {}
    table = entry.get("allowedTypes", DEFAULT_ALLOWED_TYPES)
    if not isinstance(table, Mapping) or not all(
        isinstance(v, list | tuple) and all(isinstance(p, str) for p in v) for v in table.values()
    ):
        return None
    environment = entry.get("environment")
    return PackAllowed(
        allowed_types={str(k): tuple(v) for k, v in table.items()},
        environment=environment if isinstance(environment, str) and environment else None,
        source=source,
    )


def stack_pack_allowed() -> PackAllowed | None:
    """The settings `stack_pack_config` holds for the running program, or None (the pack's defaults)."""
    return _STACK_PACK
