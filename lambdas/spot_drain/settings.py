"""The drain's settings, read from the Lambda environment (every bad variable named at once).

- `SCOPE_TAGS` (required): a JSON object of tags. The drain touches only Auto Scaling groups and
  target groups that carry every one of them (the stack's cost tags in the reference stack); the
  execution role's IAM conditions say the same, so a mistake here cannot widen what it may do.
- `DRY_RUN` [false]: look everything up, change nothing, report what would have been done.
- `REPLACE_ON_REBALANCE` [true]: on a rebalance recommendation for an instance of a group that does
  not rebalance its capacity itself, take it out of service so the group starts a replacement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


class SettingsError(ValueError):
    """One or more environment variables are invalid."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    scope_tags: Mapping[str, str] = field(default_factory=dict)
    dry_run: bool = False
    replace_on_rebalance: bool = True

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        problems: list[str] = []
        raw_scope = (env.get("SCOPE_TAGS") or "").strip()
        scope: dict[str, str] = {}
        try:
            parsed = json.loads(raw_scope) if raw_scope else None
        except ValueError:
            parsed = None
        if (
            not isinstance(parsed, dict)
            or not parsed
            or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in parsed.items())
        ):
            problems.append(f"SCOPE_TAGS={raw_scope!r} must be a non-empty JSON object of tag keys to values")
        else:
            scope = parsed
        dry_run = _boolean(env, "DRY_RUN", False, problems)
        replace = _boolean(env, "REPLACE_ON_REBALANCE", True, problems)
        if problems:
            raise SettingsError("invalid spot-drain environment: " + "; ".join(problems) + ".")
        return cls(scope_tags=scope, dry_run=dry_run, replace_on_rebalance=replace)

    def as_env(self) -> dict[str, str]:
        return {
            "SCOPE_TAGS": json.dumps(dict(self.scope_tags), sort_keys=True),
            "DRY_RUN": "true" if self.dry_run else "false",
            "REPLACE_ON_REBALANCE": "true" if self.replace_on_rebalance else "false",
        }

    def in_scope(self, tags: Mapping[str, str]) -> bool:
        return all(tags.get(k) == v for k, v in self.scope_tags.items())


def _boolean(env: Mapping[str, str], name: str, default: bool, problems: list[str]) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    problems.append(f"{name}={env.get(name)!r} must be true or false")
    return default
