"""Utilization for many instances with few calls: GetMetricData, 500 queries per call.

Each instance gets one query for the `Maximum` of its utilization metric per
period over the idle window (`Maximum` of a bucket below the threshold means
every sample in it was). The window ends at the last period boundary before
`now`, so its buckets are whole and aligned as CloudWatch stores them; a
bucket with no sample is missing evidence. Results may span pages (NextToken):
values are gathered per query across pages, and a query whose final status is
not `Complete` counts as having no evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..watchdog_core.window import Window, window_for
from .instances import Instance
from .settings import Settings

__all__ = [
    "MAX_QUERIES_PER_CALL",
    "Series",
    "Window",
    "build_queries",
    "collect_results",
    "fetch_utilization",
    "window_for",
]

MAX_QUERIES_PER_CALL = 500  # GetMetricData's limit on MetricDataQueries
STATISTIC = "Maximum"


@dataclass(frozen=True)
class Series:
    """What CloudWatch returned for one instance in the window."""

    points: tuple[tuple[datetime, float], ...] = ()
    complete: bool = True  # False when CloudWatch said PartialData/InternalError/Forbidden at the end


def metric_for(instance: Instance, settings: Settings) -> tuple[str, str]:
    if settings.uses_neuron_metric(instance.instance_type):
        return settings.neuron_metric_namespace, settings.neuron_metric_name
    return settings.metric_namespace, settings.metric_name


def build_queries(
    instances: Sequence[Instance], settings: Settings, period_seconds: int
) -> list[list[dict[str, Any]]]:
    """MetricDataQueries in batches of at most 500; query Id `m<n>` for the n-th instance."""
    queries = []
    for n, instance in enumerate(instances):
        namespace, name = metric_for(instance, settings)
        queries.append(
            {
                "Id": f"m{n}",
                "Label": instance.instance_id,
                "MetricStat": {
                    "Metric": {
                        "Namespace": namespace,
                        "MetricName": name,
                        "Dimensions": [{"Name": "InstanceId", "Value": instance.instance_id}],
                    },
                    "Period": period_seconds,
                    "Stat": STATISTIC,
                },
                "ReturnData": True,
            }
        )
    return [queries[i : i + MAX_QUERIES_PER_CALL] for i in range(0, len(queries), MAX_QUERIES_PER_CALL)]


def collect_results(pages: Iterable[Mapping[str, Any]]) -> dict[str, Series]:
    """Merge MetricDataResults across pages: query Id -> Series."""
    points: dict[str, list[tuple[datetime, float]]] = {}
    status: dict[str, str] = {}
    for page in pages:
        for result in page.get("MetricDataResults", ()):
            qid = result["Id"]
            pairs = zip(result.get("Timestamps", ()), result.get("Values", ()), strict=True)
            points.setdefault(qid, []).extend(pairs)
            status[qid] = result.get("StatusCode", "Complete")
    return {
        qid: Series(tuple(sorted(pts)), complete=status.get(qid) == "Complete") for qid, pts in points.items()
    }


def fetch_utilization(
    cloudwatch: Any, instances: Sequence[Instance], settings: Settings, window: Window
) -> dict[str, Series]:
    """instance id -> Series, for every instance (an empty Series when CloudWatch had nothing)."""
    out: dict[str, Series] = {}
    paginator = cloudwatch.get_paginator("get_metric_data")
    offset = 0
    for batch in build_queries(instances, settings, window.period_seconds):
        pages = paginator.paginate(
            MetricDataQueries=batch,
            StartTime=window.start,
            EndTime=window.end,
            ScanBy="TimestampAscending",
        )
        by_query = collect_results(pages)
        for n, query in enumerate(batch):
            instance_id = instances[offset + n].instance_id
            out[instance_id] = by_query.get(query["Id"], Series())
        offset += len(batch)
    return out
