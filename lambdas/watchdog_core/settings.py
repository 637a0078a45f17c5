"""Reading a watchdog's environment: every variable checked at once.

A bad value fails the run with one message naming every bad variable, its value and what is allowed,
rather than running with a guessed default. An empty string counts as unset. The defaults and names
that both clouds share live on `WatchdogSettings`; each cloud's `Settings` adds its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})


class SettingsError(ValueError):
    """One or more environment variables are invalid."""


@dataclass(frozen=True, kw_only=True)
class WatchdogSettings:
    """The contract's variables that mean the same on every cloud (docs/reference.md); each cloud's
    Settings gives `tag_key` its default (a tag on AWS, a label on GCP)."""

    tag_key: str
    tag_value: str = "true"
    idle_minutes: int = 30
    util_threshold_percent: float = 5.0
    grace_minutes: int = 60
    dry_run: bool = False
    metric_period_seconds: int = 300
    stop_reserved_capacity: bool = False

    @property
    def window_seconds(self) -> int:
        return self.idle_minutes * 60

    def opt_in_env(self) -> dict[str, str]:
        """The first variables of the environment that reproduces these settings: the opt-in tag,
        the window, the threshold and the grace period."""
        return {
            "TAG_KEY": self.tag_key,
            "TAG_VALUE": self.tag_value,
            "IDLE_MINUTES": str(self.idle_minutes),
            "UTIL_THRESHOLD_PERCENT": number(self.util_threshold_percent),
            "GRACE_MINUTES": str(self.grace_minutes),
        }


def default_period_seconds(idle_minutes: int) -> int:
    """5-minute buckets when they tile the window (robust to a missed sample), else 1-minute."""
    return 300 if idle_minutes % 5 == 0 else 60


def number(value: float) -> str:
    """A percentage as an environment value: `5`, not `5.0`."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def flag(value: bool) -> str:
    return "true" if value else "false"


class Reader:
    """Reads variables from an environment, collecting every problem; `raise_if_any` reports them."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._problems: list[str] = []

    def problem(self, name: str, allowed: str) -> None:
        self._problems.append(f"{name}={self._env.get(name, '')!r} {allowed}")

    def raise_if_any(self) -> None:
        if self._problems:
            raise SettingsError("invalid watchdog environment: " + "; ".join(self._problems) + ".")

    def raw(self, name: str) -> str | None:
        value = self._env.get(name)
        return value.strip() if value is not None and value.strip() else None

    def text(self, name: str, default: str) -> str:
        return self.raw(name) or default

    def pattern(self, name: str, default: str, regex: re.Pattern[str], what: str) -> str:
        raw = self.raw(name) or default
        if not regex.fullmatch(raw):
            self.problem(name, f"must be {what}")
        return raw

    def optional(self, name: str, valid: Callable[[str], object], what: str) -> str | None:
        raw = self.raw(name)
        if raw is not None and not valid(raw):
            self.problem(name, f"must be {what}")
        return raw

    def items(
        self,
        name: str,
        default: tuple[str, ...],
        regex: re.Pattern[str],
        what: str,
        *,
        required: bool = False,
    ) -> tuple[str, ...]:
        """Comma-separated values, each matching `regex`, duplicates dropped."""
        raw = self.raw(name)
        if raw is None:
            if required:
                self.problem(name, f"must be set: {what}")
            return default
        items = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
        if not items or not all(regex.fullmatch(i) for i in items):
            self.problem(name, f"must be {what}")
            return default
        return items

    def integer(self, name: str, default: int, *, minimum: int) -> int:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            self.problem(name, f"must be a whole number >= {minimum}")
            return 0
        return value

    def percent(self, name: str, default: float) -> float:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0 < value <= 100:
            self.problem(name, "must be a number above 0 and at most 100 (percent)")
            return default
        return value

    def boolean(self, name: str, default: bool) -> bool:
        raw = self.raw(name)
        if raw is None:
            return default
        if raw.lower() in TRUE_WORDS:
            return True
        if raw.lower() in FALSE_WORDS:
            return False
        self.problem(name, "must be true or false")
        return default

    def period(self, idle_minutes: int, default_idle_minutes: int) -> int:
        """METRIC_PERIOD_SECONDS (default from the window), checked against IDLE_MINUTES' window."""
        default = default_period_seconds(idle_minutes or default_idle_minutes)
        period = self.integer("METRIC_PERIOD_SECONDS", default, minimum=60)
        if not idle_minutes or not period:
            return period  # already reported
        if period % 60:
            self.problem("METRIC_PERIOD_SECONDS", "must be a multiple of 60")
        elif (idle_minutes * 60) % period:
            self.problem(
                "METRIC_PERIOD_SECONDS",
                f"must divide the idle window (IDLE_MINUTES={idle_minutes} is {idle_minutes * 60} s)",
            )
        return period
