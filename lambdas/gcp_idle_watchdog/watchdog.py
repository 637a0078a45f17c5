"""One watchdog run: list, measure, decide, stop, report. Google clients and the clock come in.

Calls per run, for P projects holding N labelled running machines of which K pass the metric-free
checks and I end up idle: per project ceil(N_vm/500) aggregated-list pages and one TPU node list
per location (plus its pages), one Monitoring query per metric (GPU, TPU) that has machines to
measure (plus its pages), I stop calls and at most one Pub/Sub publish. Throttling and server errors
are retried inside each call (google-api-core Retry). If listing or measuring still fails, the run
fails before stopping anything; if the notice cannot be sent, it fails after stopping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .actions import StopOutcome, stop_machines
from .decide import Decision, Reason, judge, precheck
from .machines import Inventory, Kind, Machine, dedupe, list_tpus, list_vms
from .metrics import Measured, by_key, fetch, window_for
from .prices import PriceTable
from .report import PUBSUB_ENDPOINT, JsonLog, RunResult, decision_fields, needs_notice, notice, publish
from .settings import Settings


class ReportError(RuntimeError):
    """The run decided and acted, but its Pub/Sub notice could not be sent."""


@dataclass(frozen=True)
class Clients:
    compute: Any  # compute_v1.InstancesClient
    tpu: Any  # tpu_v2.TpuClient
    monitoring: Any  # monitoring_v3.MetricServiceClient
    retry: Any  # google.api_core.retry.Retry for every call
    pubsub: Any | None = None  # an authorised requests session, when PUBSUB_TOPIC is set
    pubsub_endpoint: str = PUBSUB_ENDPOINT


def run(
    settings: Settings,
    clients: Clients,
    *,
    now: datetime,
    prices: PriceTable | None = None,
    log: JsonLog | None = None,
    function_name: str = "gcp-idle-watchdog",
) -> RunResult:
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (UTC)")
    prices = prices or PriceTable()
    log = log or JsonLog()
    window = window_for(now, settings)
    inventory = Inventory()
    for project in settings.projects:
        list_vms(clients.compute, project, settings, retry=clients.retry, inventory=inventory)
        list_tpus(clients.tpu, project, settings, retry=clients.retry, inventory=inventory)
    if inventory.unreachable or inventory.unreadable:
        log.write(
            "partial_inventory", "WARNING", unreachable=inventory.unreachable, unreadable=inventory.unreadable
        )
    machines = dedupe(inventory.machines)
    decisions, measured = decide_all(machines, settings, clients, now=now)
    if measured.empty:
        log.write(
            "no_series",
            "WARNING",
            queries=measured.empty,
            hint="check METRIC_NAME, TPU_METRIC_NAME, TPU_RESOURCE_TYPE",
        )

    idle = [m for m in machines if decisions[m.key].idle]
    outcome = (
        StopOutcome()
        if settings.dry_run
        else stop_machines(
            clients.compute,
            clients.tpu,
            idle,
            discard_local_ssd=settings.discard_local_ssd,
            retry=clients.retry,
        )
    )
    for key, why in outcome.refused.items():
        old = decisions[key]
        decisions[key] = Decision(
            key,
            Reason.NOT_STOPPABLE,
            f"stop refused: {why}",
            old.max_percent,
            old.points,
            old.expected_points,
        )

    result = _result(machines, decisions, outcome, settings, prices, log)
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
        monitoring_pages=measured.calls,
        stop_calls=outcome.calls,
        price_basis=prices.basis,
    )
    if settings.pubsub_topic and clients.pubsub is not None and needs_notice(result):
        body, attributes = notice(result, function=function_name)
        try:
            publish(clients.pubsub, settings.pubsub_topic, body, attributes, endpoint=clients.pubsub_endpoint)
        except Exception as error:  # requests' and google-auth's errors alike: the run must say so
            log.write("report_failed", "ERROR", errors=[str(error)])
            raise ReportError(str(error)) from error
    return result


def decide_all(
    machines: Sequence[Machine], settings: Settings, clients: Clients, *, now: datetime
) -> tuple[dict[str, Decision], Measured]:
    window = window_for(now, settings)
    decisions: dict[str, Decision] = {}
    to_measure = []
    for machine in machines:
        early = precheck(machine, settings, now)
        if early is not None:
            decisions[machine.key] = early
        else:
            to_measure.append(machine)
    measured = Measured(evidence={}, windows={Kind.VM: window})
    if to_measure:
        measured = fetch(clients.monitoring, to_measure, settings, window, retry=clients.retry)
    for machine in to_measure:
        grace = measured.windows.get(Kind.TPU) if machine.kind is Kind.TPU else None
        decisions[machine.key] = judge(
            machine, by_key(measured.evidence, machine), window, settings.util_threshold_percent, grace
        )
    return decisions, measured


def _result(
    machines: Sequence[Machine],
    decisions: dict[str, Decision],
    outcome: StopOutcome,
    settings: Settings,
    prices: PriceTable,
    log: JsonLog,
) -> RunResult:
    stopped = set(outcome.stopped)
    skipped: dict[Reason, list[str]] = {reason: [] for reason in Reason}
    result = RunResult(checked=len(machines), idle=[], stopped=[], dry_run=settings.dry_run, skipped=skipped)
    unpriced: set[str] = set()
    for machine in machines:
        decision = decisions[machine.key]
        hourly = prices.hourly_usd(machine)
        error = outcome.failed.get(machine.key) or outcome.refused.get(machine.key)
        if decision.reason is not None:
            skipped[decision.reason].append(machine.key)
            action = "skip"
        else:
            result.idle.append(machine.key)
            if settings.dry_run:
                action = "would_stop"
            elif machine.key in stopped:
                action = "stopped"
                result.stopped.append(machine.key)
            else:
                action = "stop_failed"
                result.failed.append(machine.key)
            if action in ("would_stop", "stopped"):
                result.estimated_hourly_saving_usd += hourly or 0.0
                if hourly is None:
                    unpriced.add(machine.machine_type)
        fields = decision_fields(decision, machine, action=action, error=error, saving=hourly)
        log.write("decision", "ERROR" if action == "stop_failed" else "INFO", **fields)
    if unpriced:
        log.write("unpriced_types", machine_types=sorted(unpriced), basis=prices.basis)
    return result
