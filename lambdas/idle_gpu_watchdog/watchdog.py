"""One watchdog run: list, measure, decide, stop, report. AWS clients and the clock come in.

Calls per run, for N tagged running instances of which K pass the metric-free
checks and I end up idle: ceil(N/1000) DescribeInstances pages,
ceil(K/500) GetMetricData calls (more only when CloudWatch pages a response),
one DescribeSpotInstanceRequests page per 200 idle Spot instances,
ceil(I/100) StopInstances calls (plus splits around failing instances),
one PutMetricData and at most one SNS Publish.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .actions import StopOutcome, stop_instances
from .decide import Decision, Reason, judge, precheck, spot_check
from .instances import Instance, list_candidates, spot_request_types
from .metrics import Window, fetch_utilization, window_for
from .prices import PriceTable
from .report import JsonLog, RunResult, decision_fields, needs_notice, sns_message, summary_metric_data
from .settings import Settings


class ReportError(RuntimeError):
    """The run decided and acted, but its summary metric or SNS notice could not be sent."""


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
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (UTC)")
    prices = prices or PriceTable()
    log = log or JsonLog()
    window = window_for(now, settings)
    instances = list_candidates(clients.ec2, settings)
    decisions = decide_all(instances, settings, clients, now=now, window=window)

    idle_ids = [i.instance_id for i in instances if decisions[i.instance_id].idle]
    outcome = StopOutcome() if settings.dry_run else stop_instances(clients.ec2, idle_ids)
    for instance_id, why in outcome.refused.items():
        old = decisions[instance_id]
        decisions[instance_id] = Decision(
            instance_id, Reason.NOT_STOPPABLE, f"StopInstances refused: {why}", *_facts(old)
        )

    result = _result(instances, decisions, outcome, settings, prices, log)
    log.write(
        "summary",
        **{k: v for k, v in result.as_dict().items() if k not in ("idle", "stopped", "skipped", "failed")},
        idle=len(result.idle),
        stopped=len(result.stopped),
        failed=len(result.failed),
        skipped={r.value: len(ids) for r, ids in result.skipped.items()},
        window_start=window.start.isoformat(),
        window_end=window.end.isoformat(),
        period_seconds=window.period_seconds,
        price_basis=prices.basis,
    )
    _report(result, settings, clients, now=now, log=log, function_name=function_name, region=region)
    return result


def decide_all(
    instances: Sequence[Instance], settings: Settings, clients: Clients, *, now: datetime, window: Window
) -> dict[str, Decision]:
    decisions: dict[str, Decision] = {}
    to_measure = []
    for instance in instances:
        early = precheck(instance, settings, now)
        if early is not None:
            decisions[instance.instance_id] = early
        else:
            to_measure.append(instance)
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


def _facts(decision: Decision) -> tuple[float | None, int | None, int | None]:
    return decision.max_percent, decision.points, decision.expected_points


def _result(
    instances: Sequence[Instance],
    decisions: dict[str, Decision],
    outcome: StopOutcome,
    settings: Settings,
    prices: PriceTable,
    log: JsonLog,
) -> RunResult:
    stopped = set(outcome.stopped)
    skipped: dict[Reason, list[str]] = {reason: [] for reason in Reason}
    result = RunResult(checked=len(instances), idle=[], stopped=[], dry_run=settings.dry_run, skipped=skipped)
    unpriced: set[str] = set()
    for instance in instances:
        decision = decisions[instance.instance_id]
        hourly = prices.hourly_usd(instance)
        error = outcome.failed.get(instance.instance_id) or outcome.refused.get(instance.instance_id)
        if decision.reason is not None:
            skipped[decision.reason].append(instance.instance_id)
            action = "skip"
        else:
            result.idle.append(instance.instance_id)
            if settings.dry_run:
                action = "would_stop"
            elif instance.instance_id in stopped:
                action = "stopped"
                result.stopped.append(instance.instance_id)
            else:
                action = "stop_failed"
                result.failed.append(instance.instance_id)
            if action in ("would_stop", "stopped"):
                result.estimated_hourly_saving_usd += hourly or 0.0
                if hourly is None:
                    unpriced.add(instance.instance_type)
        fields = decision_fields(decision, instance, action=action, error=error, saving=hourly)
        log.write("decision", **fields)
    if unpriced:
        log.write("unpriced_types", instance_types=sorted(unpriced), basis=prices.basis)
    return result


def _report(
    result: RunResult,
    settings: Settings,
    clients: Clients,
    *,
    now: datetime,
    log: JsonLog,
    function_name: str,
    region: str | None,
) -> None:
    errors = []
    try:
        clients.cloudwatch.put_metric_data(
            Namespace=settings.summary_namespace, MetricData=summary_metric_data(result, now)
        )
    except (ClientError, BotoCoreError) as error:
        errors.append(f"PutMetricData: {error}")
    if settings.sns_topic_arn and clients.sns is not None and needs_notice(result):
        subject, body = sns_message(result, function=function_name, region=region)
        try:
            clients.sns.publish(TopicArn=settings.sns_topic_arn, Subject=subject, Message=body)
        except (ClientError, BotoCoreError) as error:
            errors.append(f"SNS Publish: {error}")
    if errors:
        log.write("report_failed", errors=errors)
        raise ReportError("; ".join(errors))
