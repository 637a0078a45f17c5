"""Policy evaluation for the offline plan.

Until the policy pack lands, nothing is evaluated and the plan says so
(`"evaluated": false`); `--policy-pack` and `--policy-config` are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.offline_plan.model import Capture

MANDATORY = "mandatory"


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str
    urn: str | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "urn": self.urn,
            "message": self.message,
        }


@dataclass
class PolicyReport:
    evaluated: bool
    violations: list[Violation] = field(default_factory=list)
    pack: str | None = None
    note: str | None = None

    @property
    def gate_failed(self) -> bool:
        return any(v.enforcement == MANDATORY for v in self.violations)

    def as_json(self) -> dict[str, Any]:
        return {"evaluated": self.evaluated, "violations": [v.as_json() for v in self.violations]}


def evaluate_policies(capture: Capture, pack_dir: Path | None, config_path: Path | None) -> PolicyReport:
    return PolicyReport(evaluated=False, note="the policy pack is not wired into plan yet")
