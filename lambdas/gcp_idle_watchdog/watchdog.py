"""One watchdog run on GCP: the shared loop (`lambdas/watchdog_core/loop.py`) with Compute Engine,
Cloud TPU and Cloud Monitoring. Google clients and the clock come in.

Calls per run, for P projects holding N labelled running machines of which K pass the metric-free
checks and I end up idle: per project ceil(N_vm/500) aggregated-list pages and one TPU node list
per location (plus its pages), one Monitoring query per metric (GPU, TPU) that has machines to
measure (plus its pages), I stop calls and at most one Pub/Sub publish. Throttling and server errors
are retried inside each call (google-api-core Retry). If listing or measuring still fails, the run
fails before stopping anything; if the notice cannot be sent, it fails after stopping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..watchdog_core import loop
from ..watchdog_core.loop import ReportError, StopOutcome
from .actions import stop_machines
from .decide import Decision, judge, precheck
from .machines import Inventory, Kind, Machine, dedupe, list_tpus, list_vms
from .metrics import Measured, Window, by_key, fetch, window_for
from .prices import PriceTable
from .report import PUBSUB_ENDPOINT, JsonLog, RunResult, decision_fields, needs_notice, notice, publish
from .settings import Settings

__all__ = ["Clients", "ReportError", "decide_all", "run"]


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
    cloud = _Gcp(settings, clients, function_name=function_name)
    return loop.run(cloud, settings, now=now, prices=prices or PriceTable(), log=log or JsonLog())


def decide_all(
    machines: Sequence[Machine], settings: Settings, clients: Clients, *, now: datetime
) -> tuple[dict[str, Decision], Measured]:
    window = window_for(now, settings)
    decisions, to_measure = loop.prechecked(machines, lambda m: precheck(m, settings, now))
    measured = Measured(evidence={}, windows={Kind.VM: window})
    if to_measure:
        measured = fetch(clients.monitoring, to_measure, settings, window, retry=clients.retry)
    for machine in to_measure:
        grace = measured.windows.get(Kind.TPU) if machine.kind is Kind.TPU else None
        decisions[machine.key] = judge(
            machine, by_key(measured.evidence, machine), window, settings.util_threshold_percent, grace
        )
    return decisions, measured


@dataclass
class _Gcp:
    """GCE VMs and TPU nodes, Cloud Monitoring, instances.stop / nodes.stop and Pub/Sub (loop.Cloud)."""

    settings: Settings
    clients: Clients
    function_name: str
    refusal: str = "stop refused: "
    type_field: str = "machine_types"
    measured: Measured = field(default_factory=lambda: Measured(evidence={}, windows={}))

    def candidates(self, log: JsonLog) -> list[Machine]:
        inventory = Inventory()
        for project in self.settings.projects:
            list_vms(
                self.clients.compute, project, self.settings, retry=self.clients.retry, inventory=inventory
            )
            list_tpus(self.clients.tpu, project, self.settings, retry=self.clients.retry, inventory=inventory)
        if inventory.unreachable or inventory.unreadable:
            log.write(
                "partial_inventory",
                "WARNING",
                unreachable=inventory.unreachable,
                unreadable=inventory.unreadable,
            )
        return dedupe(inventory.machines)

    def decide(
        self, targets: Sequence[Machine], *, now: datetime, window: Window, log: JsonLog
    ) -> dict[str, Decision]:
        decisions, self.measured = decide_all(targets, self.settings, self.clients, now=now)
        if self.measured.empty:
            log.write(
                "no_series",
                "WARNING",
                queries=self.measured.empty,
                hint="check METRIC_NAME, TPU_METRIC_NAME, TPU_RESOURCE_TYPE",
            )
        return decisions

    def stop(self, idle: Sequence[Machine]) -> StopOutcome:
        return stop_machines(
            self.clients.compute,
            self.clients.tpu,
            idle,
            discard_local_ssd=self.settings.discard_local_ssd,
            retry=self.clients.retry,
        )

    def decision_fields(
        self, decision: Decision, target: Machine, *, action: str, error: str | None, saving: float | None
    ) -> Mapping[str, Any]:
        return decision_fields(decision, target, action=action, error=error, saving=saving)

    def summary_fields(self, outcome: StopOutcome) -> Mapping[str, Any]:
        return {"monitoring_pages": self.measured.calls, "stop_calls": outcome.calls}

    def report(self, result: RunResult, *, now: datetime, log: JsonLog) -> None:
        """The Pub/Sub notice; failing to send it fails the run (after the stops)."""
        if not (self.settings.pubsub_topic and self.clients.pubsub is not None and needs_notice(result)):
            return
        body, attributes = notice(result, function=self.function_name)
        try:
            publish(
                self.clients.pubsub,
                self.settings.pubsub_topic,
                body,
                attributes,
                endpoint=self.clients.pubsub_endpoint,
            )
        except Exception as error:  # requests' and google-auth's errors alike: the run must say so
            log.write("report_failed", "ERROR", errors=[str(error)])
            raise ReportError(str(error)) from error
