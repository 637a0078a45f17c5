"""One watchdog run on AWS: the shared loop (`lambdas/watchdog_core/loop.py`) with EC2 and CloudWatch.
AWS clients and the clock come in.

Calls per run, for N tagged running instances of which K pass the metric-free
checks and I end up idle: ceil(N/1000) DescribeInstances pages,
ceil(K/500) GetMetricData calls (more only when CloudWatch pages a response),
one DescribeSpotInstanceRequests page per 200 idle Spot instances,
ceil(I/100) StopInstances calls (plus splits around failing instances),
one PutMetricData and at most one SNS Publish.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ..watchdog_core import loop
from ..watchdog_core.loop import ReportError, StopOutcome
from .actions import stop_instances
from .decide import Decision, judge, precheck, spot_check
from .instances import Instance, list_candidates, spot_request_types
from .metrics import Window, fetch_utilization
from .prices import PriceTable
from .report import JsonLog, RunResult, decision_fields, needs_notice, sns_message, summary_metric_data
from .settings import Settings

__all__ = ["Clients", "ReportError", "decide_all", "run"]


@dataclass(frozen=True)
class Clients:
    ec2: Any
    cloudwatch: Any
    sns: Any | None = None


def run(
    settings: Settings,
    clients: Clients,
    *,
    now: datetime,
    prices: PriceTable | None = None,
    log: JsonLog | None = None,
    function_name: str = "idle-gpu-watchdog",
    region: str | None = None,
) -> RunResult:
    cloud = _Aws(settings, clients, function_name=function_name, region=region)
    return loop.run(cloud, settings, now=now, prices=prices or PriceTable(), log=log or JsonLog())


def decide_all(
    instances: Sequence[Instance], settings: Settings, clients: Clients, *, now: datetime, window: Window
) -> dict[str, Decision]:
    decisions, to_measure = loop.prechecked(instances, lambda i: precheck(i, settings, now))
    if to_measure:
        series = fetch_utilization(clients.cloudwatch, to_measure, settings, window)
        for instance in to_measure:
            decisions[instance.instance_id] = judge(
                instance.instance_id, series[instance.instance_id], window, settings.util_threshold_percent
            )
    idle_spot = [i for i in to_measure if i.is_spot and decisions[i.instance_id].idle]
    if idle_spot:
        kinds = spot_request_types(clients.ec2, [i.spot_request_id or "" for i in idle_spot])
        for instance in idle_spot:
            decisions[instance.instance_id] = spot_check(decisions[instance.instance_id], instance, kinds)
    return decisions


@dataclass
class _Aws:
    """EC2 instances, CloudWatch metrics, StopInstances, a summary metric and SNS (loop.Cloud)."""

    settings: Settings
    clients: Clients
    function_name: str
    region: str | None
    refusal: str = "StopInstances refused: "
    type_field: str = "instance_types"

    def candidates(self, log: JsonLog) -> list[Instance]:
        return list_candidates(self.clients.ec2, self.settings)

    def decide(
        self, targets: Sequence[Instance], *, now: datetime, window: Window, log: JsonLog
    ) -> dict[str, Decision]:
        return decide_all(targets, self.settings, self.clients, now=now, window=window)

    def stop(self, idle: Sequence[Instance]) -> StopOutcome:
        return stop_instances(self.clients.ec2, [i.instance_id for i in idle])

    def decision_fields(
        self, decision: Decision, target: Instance, *, action: str, error: str | None, saving: float | None
    ) -> Mapping[str, Any]:
        return decision_fields(decision, target, action=action, error=error, saving=saving)

    def summary_fields(self, outcome: StopOutcome) -> Mapping[str, Any]:
        return {}

    def report(self, result: RunResult, *, now: datetime, log: JsonLog) -> None:
        """The summary metric, then SNS; either failing fails the run (after the stops)."""
        errors = []
        try:
            self.clients.cloudwatch.put_metric_data(
                Namespace=self.settings.summary_namespace, MetricData=summary_metric_data(result, now)
            )
        except (ClientError, BotoCoreError) as error:
            errors.append(f"PutMetricData: {error}")
        if self.settings.sns_topic_arn and self.clients.sns is not None and needs_notice(result):
            subject, body = sns_message(result, function=self.function_name, region=self.region)
            try:
                self.clients.sns.publish(TopicArn=self.settings.sns_topic_arn, Subject=subject, Message=body)
            except (ClientError, BotoCoreError) as error:
                errors.append(f"SNS Publish: {error}")
        if errors:
            log.write("report_failed", errors=errors)
            raise ReportError("; ".join(errors))
