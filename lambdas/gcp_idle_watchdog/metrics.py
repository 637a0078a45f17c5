"""Utilisation for many machines with few calls: one `projects.timeSeries.list` per metric and project.

Each query asks Cloud Monitoring for the maximum per period (ALIGN_MAX) of every device's series,
grouped per machine and device (REDUCE_MAX over what else the series carry), so a project of 1,000
GPU VMs costs one query for the GPUs and one for the TPUs, plus one call per further page. The
maximum of a period below the threshold means every sample in it was below.

Devices: a GPU VM's series are per GPU (`metric.label.gpu_number`), a TPU VM's per worker
(`resource.label.worker_id`; the chips of a worker are reduced to their maximum). Every device the
machine has must have a point in every period: one missing GPU or worker is missing evidence. A
response carrying `executionErrors` (Monitoring could not read everything) makes its whole query
incomplete, so nothing it covers is judged idle.

The window ends at the last period boundary before `now` (the periods are whole and aligned as
Monitoring stores them). Aligned points carry the end of their period; a point is in bucket k when
its end lies in (start + k*period, start + (k+1)*period].
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..watchdog_core.window import Window, parse_utc, window_for
from .machines import Kind, Machine
from .settings import Settings

__all__ = ["Evidence", "Measured", "Query", "Window", "by_key", "collect", "fetch", "queries", "window_for"]

GPU_RESOURCE_TYPE = "gce_instance"
GPU_GROUP = ("resource.label.instance_id", "metric.label.gpu_number")
TPU_GROUP = ("resource.label.node_id", "resource.label.worker_id")


@dataclass
class Evidence:
    """What Monitoring returned for one machine: device -> [(period end, value)]."""

    devices: dict[str, list[tuple[datetime, float]]] = field(default_factory=dict)
    complete: bool = True  # False when the response said Monitoring could not read everything


@dataclass
class Query:
    project: str
    kind: Kind
    filter: str
    group_by: tuple[str, str]
    window: Window


def queries(machines: Sequence[Machine], settings: Settings, window: Window) -> list[Query]:
    """One query per metric and project that has machines to measure."""
    out = []
    wanted = sorted({(m.project, m.kind) for m in machines})
    for project, kind in wanted:
        if kind is Kind.VM:
            metric, resource, group, span = settings.metric_name, GPU_RESOURCE_TYPE, GPU_GROUP, window
        else:
            metric, resource, group = settings.tpu_metric_name, settings.tpu_resource_type, TPU_GROUP
            # A TPU node has no start time: the grace period is read from its series (decide.py).
            span = window.widened(settings.grace_minutes * 60)
        text = f'metric.type = "{metric}" AND resource.type = "{resource}"'
        out.append(Query(project, kind, text, group, span))
    return out


def request_params(query: Query) -> dict[str, Any]:
    """`projects.timeSeries.list` parameters (the discovery client's names for them)."""
    return {
        "name": f"projects/{query.project}",
        "filter": query.filter,
        "interval_startTime": _rfc3339(query.window.start),
        "interval_endTime": _rfc3339(query.window.end),
        "aggregation_alignmentPeriod": f"{query.window.period_seconds}s",
        "aggregation_perSeriesAligner": "ALIGN_MAX",
        "aggregation_crossSeriesReducer": "REDUCE_MAX",
        "aggregation_groupByFields": list(query.group_by),
        "view": "FULL",
    }


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _label(series: Mapping[str, Any], path: str) -> str:
    where, _, name = path.split(".", 2)
    labels = (series.get("resource" if where == "resource" else "metric") or {}).get("labels") or {}
    return str(labels.get(name, ""))


def _value(point: Mapping[str, Any]) -> float | None:
    value = point.get("value") or {}
    for kind in ("doubleValue", "int64Value"):
        if kind in value:
            return float(value[kind])
    return None


def collect(query: Query, pages: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Evidence], bool]:
    """Machine id (instance_id or node_id) -> Evidence, and whether every page was complete."""
    out: dict[str, Evidence] = {}
    complete = True
    machine_label, device_label = query.group_by
    for page in pages:
        if page.get("executionErrors"):
            complete = False
        for series in page.get("timeSeries") or ():
            machine = _label(series, machine_label)
            device = _label(series, device_label) or "0"
            points = out.setdefault(machine, Evidence()).devices.setdefault(device, [])
            for point in series.get("points") or ():
                end_time = parse_utc(str((point.get("interval") or {}).get("endTime", "")))
                value = _value(point)
                if end_time is not None and value is not None:
                    points.append((end_time, value))
    if not complete:
        for evidence in out.values():
            evidence.complete = False
    return out, complete


@dataclass
class Measured:
    evidence: dict[str, Evidence]  # machine key -> Evidence (empty when Monitoring had nothing)
    windows: dict[Kind, Window]
    calls: int = 0
    empty: list[str] = field(default_factory=list)  # queries that found no series at all


def fetch(
    monitoring: Any, machines: Sequence[Machine], settings: Settings, window: Window, *, retry: Any
) -> Measured:
    """Evidence for every machine, from one query per metric and project (plus its further pages).

    `monitoring` is the discovery-based REST client (`googleapiclient.discovery.build("monitoring",
    "v3")`): google-cloud-monitoring has no REST transport. Each page is fetched under `retry`.
    """
    measured = Measured(evidence={}, windows={Kind.VM: window})
    for query in queries(machines, settings, window):
        measured.windows[query.kind] = query.window
        by_id, complete = collect(query, _pages(monitoring, query, retry, measured))
        if not by_id:  # a wrong metric or resource type looks like this: say so, stop nothing
            measured.empty.append(f"projects/{query.project}: {query.filter}")
        for machine in machines:
            if machine.project != query.project or machine.kind is not query.kind:
                continue
            found = by_id.get(machine.numeric_id) or by_id.get(machine.name)
            measured.evidence[machine.key] = found if found is not None else Evidence(complete=complete)
    return measured


def _pages(monitoring: Any, query: Query, retry: Any, measured: Measured) -> Iterator[Mapping[str, Any]]:
    series = monitoring.projects().timeSeries()
    params = request_params(query)
    token = None
    while True:
        # Not list_next(): it refuses the repeated aggregation.groupByFields of the previous URL.
        request = series.list(**params, **({"pageToken": token} if token else {}))
        measured.calls += 1
        page = retry(request.execute)()
        yield page
        token = page.get("nextPageToken")
        if not token:
            return


def by_key(evidence: Mapping[str, Evidence], machine: Machine) -> Evidence:
    return evidence.get(machine.key) or Evidence()
