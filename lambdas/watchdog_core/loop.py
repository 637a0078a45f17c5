"""One watchdog run, the same on every cloud: list, decide, stop, tally, report.

The cloud comes in as a `Cloud`: it lists the labelled (tagged) running machines, decides on each
(the checks that need no metrics first, then one batched measurement of the rest), stops the idle
ones and sends the run's notice. This module holds the order of those steps and what is common to
both: a dry run stops nothing, a refused stop turns the machine `not_stoppable`, every machine is
logged with its evidence and price, and the summary line closes the run before the notice, so a
notice that cannot be sent fails the run *after* the stops.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from .decide import Decision, Reason
from .prices import Priced, PriceTable
from .report import JsonLog, RunResult
from .window import Window, window_for


class ReportError(RuntimeError):
    """The run decided and acted, but its summary metric or notice could not be sent."""


class Target(Priced, Protocol):
    """A machine as the loop sees it: a unique key, and what its price depends on."""

    @property
    def key(self) -> str: ...


T = TypeVar("T", bound=Target)


class LoopSettings(Protocol):
    @property
    def dry_run(self) -> bool: ...

    @property
    def metric_period_seconds(self) -> int: ...

    @property
    def window_seconds(self) -> int: ...


@dataclass
class StopOutcome:
    stopped: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # key -> why it cannot be stopped
    failed: dict[str, str] = field(default_factory=dict)  # key -> error after the retries
    calls: int = 0


class Cloud(Protocol):
    """What one cloud supplies to a run."""

    refusal: str  # how the detail of a refused stop starts: "StopInstances refused: "
    type_field: str  # the unpriced-types log line's field: "instance_types"

    def candidates(self, log: JsonLog) -> Sequence[Any]: ...

    def decide(
        self, targets: Sequence[Any], *, now: datetime, window: Window, log: JsonLog
    ) -> dict[str, Decision]: ...

    def stop(self, idle: Sequence[Any]) -> StopOutcome: ...

    def decision_fields(
        self, decision: Decision, target: Any, *, action: str, error: str | None, saving: float | None
    ) -> Mapping[str, Any]: ...

    def summary_fields(self, outcome: StopOutcome) -> Mapping[str, Any]: ...

    def report(self, result: RunResult, *, now: datetime, log: JsonLog) -> None: ...


def run(
    cloud: Cloud, settings: LoopSettings, *, now: datetime, prices: PriceTable, log: JsonLog
) -> RunResult:
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (UTC)")
    window = window_for(now, settings)
    targets = cloud.candidates(log)
    decisions = cloud.decide(targets, now=now, window=window, log=log)

    idle = [t for t in targets if decisions[t.key].idle]
    outcome = StopOutcome() if settings.dry_run else cloud.stop(idle)
    for key, why in outcome.refused.items():
        decisions[key] = decisions[key].overruled(Reason.NOT_STOPPABLE, f"{cloud.refusal}{why}")

    result = _tally(cloud, targets, decisions, outcome, settings.dry_run, prices, log)
    log.write(
        "summary",
        **{k: v for k, v in result.as_dict().items() if k not in ("idle", "stopped", "skipped", "failed")},
        idle=len(result.idle),
        stopped=len(result.stopped),
        failed=len(result.failed),
        skipped={r.value: len(keys) for r, keys in result.skipped.items()},
        window_start=window.start.isoformat(),
        window_end=window.end.isoformat(),
        period_seconds=window.period_seconds,
        **cloud.summary_fields(outcome),
        price_basis=prices.basis,
    )
    cloud.report(result, now=now, log=log)
    return result


def prechecked(
    targets: Sequence[T], precheck: Callable[[T], Decision | None]
) -> tuple[dict[str, Decision], list[T]]:
    """The decisions that need no metrics, and the targets left to measure (in their order)."""
    decisions: dict[str, Decision] = {}
    to_measure = []
    for target in targets:
        early = precheck(target)
        if early is not None:
            decisions[target.key] = early
        else:
            to_measure.append(target)
    return decisions, to_measure


def _tally(
    cloud: Cloud,
    targets: Sequence[Target],
    decisions: dict[str, Decision],
    outcome: StopOutcome,
    dry_run: bool,
    prices: PriceTable,
    log: JsonLog,
) -> RunResult:
    stopped = set(outcome.stopped)
    skipped: dict[Reason, list[str]] = {reason: [] for reason in Reason}
    result = RunResult(checked=len(targets), idle=[], stopped=[], dry_run=dry_run, skipped=skipped)
    unpriced: set[str] = set()
    for target in targets:
        decision = decisions[target.key]
        hourly = prices.hourly_usd(target)
        error = outcome.failed.get(target.key) or outcome.refused.get(target.key)
        if decision.reason is not None:
            skipped[decision.reason].append(target.key)
            action = "skip"
        else:
            result.idle.append(target.key)
            if dry_run:
                action = "would_stop"
            elif target.key in stopped:
                action = "stopped"
                result.stopped.append(target.key)
            else:
                action = "stop_failed"
                result.failed.append(target.key)
            if action in ("would_stop", "stopped"):
                result.estimated_hourly_saving_usd += hourly or 0.0
                if hourly is None:
                    unpriced.add(target.type_name)
        fields = cloud.decision_fields(decision, target, action=action, error=error, saving=hourly)
        log.write("decision", "ERROR" if action == "stop_failed" else "INFO", **fields)
    if unpriced:
        log.write("unpriced_types", **{cloud.type_field: sorted(unpriced)}, basis=prices.basis)
    return result
