"""The watchdog end to end against moto in-process: real boto3 calls, real responses."""

from __future__ import annotations

import io
import json
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError
from botocore.retries.standard import ExponentialBackoff

from inference_infra.lambdas.idle_gpu_watchdog import handler as handler_module
from inference_infra.lambdas.idle_gpu_watchdog import instances as instances_module
from inference_infra.lambdas.idle_gpu_watchdog.actions import stop_instances
from inference_infra.lambdas.idle_gpu_watchdog.prices import PriceTable
from inference_infra.lambdas.idle_gpu_watchdog.report import JsonLog
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings
from inference_infra.lambdas.idle_gpu_watchdog.watchdog import ReportError, run

IDLE = [0.0, 1.0, 0.5, 2.0, 0.0, 1.0]
BUSY = [0.0, 0.0, 0.0, 0.0, 0.0, 88.0]
PRICES = PriceTable(region="us-east-1", basis="test", on_demand={"g5.xlarge": 1.0, "p5.48xlarge": 55.0})


def log_lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_run_stops_only_the_provably_idle_and_names_every_reason(account):
    idle = account.launch(2)
    big_idle = account.launch(1, instance_type="p5.48xlarge")
    busy = account.launch(1)
    partial = account.launch(1)
    silent = account.launch(1)
    excluded = account.launch(1, tags={"AutoShutdownExcludeUntil": "2999-01-01T00:00:00Z"})
    in_group = account.launch(1, tags={"aws:autoscaling:groupName": "serving"})
    reserved = account.launch(1)
    account.set_field(reserved[0], capacity_reservation_id="cr-0123456789abcdef0")
    one_time_spot = account.launch(
        1, InstanceMarketOptions={"MarketType": "spot", "SpotOptions": {"SpotInstanceType": "one-time"}}
    )
    untagged = account.launch(1, tags={"AutoShutdown": "false"})
    everything = idle + big_idle + busy + partial + silent + excluded + in_group + reserved + one_time_spot
    now = account.clock_after_launch(everything + untagged)
    account.seed(idle + big_idle + excluded + in_group + reserved + one_time_spot + untagged, IDLE, now=now)
    account.seed(busy, BUSY, now=now)
    account.seed(partial, IDLE[1:], now=now)  # the oldest period is missing
    stream = io.StringIO()

    result = run(Settings(), account.clients, now=now, prices=PRICES, log=JsonLog(stream)).as_dict()

    assert result["checked"] == len(everything)
    assert sorted(result["idle"]) == sorted(idle + big_idle)
    assert sorted(result["stopped"]) == sorted(idle + big_idle)
    assert result["dry_run"] is False
    assert result["skipped"] == {
        "no_metrics": sorted(partial + silent, key=everything.index),
        "grace": [],
        "busy": busy,
        "excluded": excluded,
        "not_stoppable": one_time_spot,
        "reserved_capacity": reserved,
        "managed": in_group,
    }
    assert result["failed"] == []
    assert result["estimated_hourly_saving_usd"] == pytest.approx(57.0)
    states = account.states(everything + untagged)
    assert {states[i] for i in idle + big_idle} == {"stopped"}
    assert {states[i] for i in everything + untagged if i not in idle + big_idle} == {"running"}
    assert "ec2.TerminateInstances" not in account.calls

    lines = log_lines(stream)
    decisions = {line["instance_id"]: line for line in lines if line["event"] == "decision"}
    assert set(decisions) == set(everything)
    assert decisions[busy[0]]["reason"] == "busy"
    assert decisions[busy[0]]["max_percent"] == 88.0
    assert decisions[partial[0]]["detail"] == "5 of 6 periods have data"
    assert decisions[idle[0]]["action"] == "stopped"
    assert decisions[big_idle[0]]["hourly_usd"] == 55.0
    assert lines[-1]["event"] == "summary"
    assert lines[-1]["stopped"] == 3


def test_run_respects_the_grace_period_since_launch(account):
    ids = account.launch(2)
    now = account.clock_after_launch(ids, hours=0.5)
    account.seed(ids, IDLE, now=now)
    result = run(Settings(), account.clients, now=now, log=JsonLog(io.StringIO())).as_dict()
    assert result["skipped"]["grace"] == ids
    assert result["stopped"] == []
    assert "cloudwatch.GetMetricData" not in account.calls  # no query is spent on instances in grace


def test_run_stops_a_persistent_spot_instance_but_not_a_one_time_one(account):
    persistent = account.ec2.request_spot_instances(
        InstanceCount=1,
        Type="persistent",
        LaunchSpecification={"ImageId": "ami-12c6146b", "InstanceType": "g5.xlarge"},
    )["SpotInstanceRequests"][0]
    one_time = account.ec2.request_spot_instances(
        InstanceCount=1,
        Type="one-time",
        LaunchSpecification={"ImageId": "ami-12c6146b", "InstanceType": "g5.xlarge"},
    )["SpotInstanceRequests"][0]
    ids = []
    for request in (persistent, one_time):
        iid = request["InstanceId"]
        account.ec2.create_tags(Resources=[iid], Tags=[{"Key": "AutoShutdown", "Value": "true"}])
        account.set_field(iid, spot_instance_request_id=request["SpotInstanceRequestId"])
        ids.append(iid)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    prices = replace(PRICES, spot={"g5.xlarge": 0.4})
    stream = io.StringIO()

    result = run(Settings(), account.clients, now=now, prices=prices, log=JsonLog(stream)).as_dict()

    assert result["stopped"] == [persistent["InstanceId"]]
    assert result["skipped"]["not_stoppable"] == [one_time["InstanceId"]]
    assert result["estimated_hourly_saving_usd"] == pytest.approx(0.4)
    assert account.calls["ec2.DescribeSpotInstanceRequests"] == 1
    detail = next(
        line["detail"] for line in log_lines(stream) if line.get("instance_id") == one_time["InstanceId"]
    )
    assert "one-time Spot request" in detail


def test_run_in_dry_run_stops_nothing(account):
    ids = account.launch(3)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    stream = io.StringIO()
    settings = Settings.from_env({"DRY_RUN": "true"})
    result = run(settings, account.clients, now=now, prices=PRICES, log=JsonLog(stream)).as_dict()
    assert result["dry_run"] is True
    assert result["idle"] == ids
    assert result["stopped"] == []
    assert result["estimated_hourly_saving_usd"] == pytest.approx(3.0)
    assert "ec2.StopInstances" not in account.calls
    assert set(account.states(ids).values()) == {"running"}
    assert {line["action"] for line in log_lines(stream) if line["event"] == "decision"} == {"would_stop"}


def test_run_stops_the_rest_when_one_instance_refuses(account):
    ids = account.launch(5)
    protected = account.launch(1, DisableApiStop=True)
    everything = ids[:2] + protected + ids[2:]
    now = account.clock_after_launch(everything)
    account.seed(everything, IDLE, now=now)
    result = run(Settings(), account.clients, now=now, log=JsonLog(io.StringIO())).as_dict()
    assert sorted(result["stopped"]) == sorted(ids)
    assert result["skipped"]["not_stoppable"] == protected
    assert result["failed"] == []
    assert account.states(protected) == {protected[0]: "running"}
    assert "ec2.TerminateInstances" not in account.calls


def test_run_is_idempotent_across_overlapping_runs(account):
    ids = account.launch(4)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    first = run(Settings(), account.clients, now=now, log=JsonLog(io.StringIO())).as_dict()
    # A second run that listed the same instances before the first stopped them stops them again:
    repeat = stop_instances(account.ec2, ids)
    later = run(Settings(), account.clients, now=now + timedelta(minutes=5), log=JsonLog(io.StringIO()))
    assert sorted(first["stopped"]) == sorted(ids)
    assert sorted(repeat.stopped) == sorted(ids)
    assert (repeat.failed, repeat.refused) == ({}, {})
    assert later.checked == 0  # stopped instances are no longer listed


def test_run_publishes_a_summary_to_sns_and_a_summary_metric(account):
    topic = account.sns.create_topic(Name="watchdog")["TopicArn"]
    queue = account.sqs.create_queue(QueueName="inbox")["QueueUrl"]
    queue_arn = account.sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    account.sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    ids = account.launch(2)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    settings = Settings.from_env({"SNS_TOPIC_ARN": topic})

    run(settings, account.clients, now=now, prices=PRICES, log=JsonLog(io.StringIO()), region="us-east-1")

    (message,) = account.sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    envelope = json.loads(message["Body"])
    assert envelope["Subject"] == "Idle GPU watchdog stopped 2 instance(s), ~$2.00/h"
    assert all(i in envelope["Message"] for i in ids)
    stats = account.cloudwatch.get_metric_statistics(
        Namespace="InferenceInfra/IdleWatchdog",
        MetricName="InstancesStopped",
        Dimensions=[{"Name": "DryRun", "Value": "false"}],
        StartTime=now - timedelta(minutes=5),
        EndTime=now + timedelta(minutes=5),
        Period=600,
        Statistics=["Sum"],
    )
    assert [p["Sum"] for p in stats["Datapoints"]] == [2.0]


def test_run_sends_no_sns_message_when_nothing_is_idle(account):
    topic = account.sns.create_topic(Name="watchdog")["TopicArn"]
    ids = account.launch(1)
    now = account.clock_after_launch(ids)
    account.seed(ids, BUSY, now=now)
    account.reset_counts()
    run(Settings.from_env({"SNS_TOPIC_ARN": topic}), account.clients, now=now, log=JsonLog(io.StringIO()))
    assert "sns.Publish" not in account.calls
    assert account.calls["cloudwatch.PutMetricData"] == 1


def test_run_retries_throttled_calls(account, monkeypatch):
    # botocore's backoff between attempts is up to 1-2 s of random jitter; the waits are its business.
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.0)
    ids = account.launch(3)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    account.reset_counts()
    describe = account.throttle(account.ec2, "DescribeInstances", times=2)
    metrics = account.throttle(account.cloudwatch, "GetMetricData", times=1)
    stop = account.throttle(account.ec2, "StopInstances", times=1)

    result = run(Settings(), account.clients, now=now, log=JsonLog(io.StringIO())).as_dict()

    assert sorted(result["stopped"]) == sorted(ids)
    assert (describe["throttled"], metrics["throttled"], stop["throttled"]) == (2, 1, 1)
    assert account.calls["ec2.DescribeInstances"] == 1
    assert account.attempts["ec2.DescribeInstances"] == 3
    assert account.attempts["cloudwatch.GetMetricData"] == 2
    assert account.calls["ec2.StopInstances"] == 1


def test_run_reports_an_instance_that_iam_refuses_and_stops_the_others(account):
    # E.g. its opt-in tag was removed between DescribeInstances and StopInstances: IAM denies the stop.
    ids = account.launch(6)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    topic = account.sns.create_topic(Name="watchdog")["TopicArn"]
    account.refuse(account.ec2, "StopInstances", "UnauthorizedOperation", when_params_have=ids[3])
    stream = io.StringIO()

    result = run(
        Settings.from_env({"SNS_TOPIC_ARN": topic}), account.clients, now=now, log=JsonLog(stream)
    ).as_dict()

    assert result["failed"] == [ids[3]]
    assert sorted(result["stopped"]) == sorted(ids[:3] + ids[4:])
    assert result["idle"] == ids
    assert account.states([ids[3]]) == {ids[3]: "running"}
    line = next(x for x in log_lines(stream) if x.get("instance_id") == ids[3])
    assert (line["action"], line["error"]) == (
        "stop_failed",
        "UnauthorizedOperation: injected UnauthorizedOperation",
    )
    assert account.calls["sns.Publish"] == 1


def test_run_stops_first_and_then_fails_loudly_when_it_cannot_report(account):
    ids = account.launch(2)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    account.refuse(account.cloudwatch, "PutMetricData", "AccessDenied")
    stream = io.StringIO()
    with pytest.raises(ReportError, match="PutMetricData"):
        run(Settings(), account.clients, now=now, log=JsonLog(stream))
    assert set(account.states(ids).values()) == {"stopped"}
    assert log_lines(stream)[-1]["event"] == "report_failed"


def test_run_never_stops_without_evidence_when_cloudwatch_keeps_failing(account, monkeypatch):
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.0)
    ids = account.launch(2)
    now = account.clock_after_launch(ids)
    account.seed(ids, IDLE, now=now)
    account.refuse(account.cloudwatch, "GetMetricData", "InternalFailure")
    with pytest.raises(ClientError):
        run(Settings(), account.clients, now=now, log=JsonLog(io.StringIO()))
    assert "ec2.StopInstances" not in account.calls
    assert set(account.states(ids).values()) == {"running"}


@pytest.mark.slow
def test_run_handles_a_fleet_of_1200_with_paged_listing_and_batched_metrics(account, monkeypatch):
    # moto pages DescribeInstances by reservation: 120 reservations of 10, 50 per page -> 3 pages.
    monkeypatch.setattr(instances_module, "DESCRIBE_PAGE_SIZE", 50)
    ids = account.launch(1200, per_reservation=10)
    now = account.clock_after_launch(ids[:1])
    idle, busy, silent = ids[:700], ids[700:1100], ids[1100:]
    account.seed(idle, IDLE, now=now)
    account.seed(busy, BUSY, now=now)
    account.reset_counts()

    result = run(Settings(), account.clients, now=now, log=JsonLog(io.StringIO())).as_dict()

    assert result["checked"] == 1200
    assert sorted(result["stopped"]) == sorted(idle)
    assert sorted(result["skipped"]["busy"]) == sorted(busy)
    assert sorted(result["skipped"]["no_metrics"]) == sorted(silent)
    assert account.calls["ec2.DescribeInstances"] == 3
    assert account.calls["cloudwatch.GetMetricData"] == math.ceil(1200 / 500)
    assert account.calls["ec2.StopInstances"] == math.ceil(700 / 100)
    assert "cloudwatch.GetMetricStatistics" not in account.calls
    assert "ec2.TerminateInstances" not in account.calls


def test_handler_runs_with_settings_from_the_environment(account, monkeypatch):
    ids = account.launch(2)
    monkeypatch.setenv(
        "GRACE_MINUTES", "0"
    )  # moto stamps LaunchTime with the real clock, as does the handler
    # Seven periods ending one period ahead cover the handler's window even if a boundary passes meanwhile.
    account.seed(ids, [0.0] * 7, now=datetime.now(UTC) + timedelta(minutes=5))
    result = handler_module.handler({"dry_run": True}, None)
    assert result["dry_run"] is True
    assert sorted(result["idle"]) == sorted(ids)
    assert result["stopped"] == []
    assert set(account.states(ids).values()) == {"running"}


def test_handler_rejects_a_bad_environment(account, monkeypatch):
    monkeypatch.setenv("IDLE_MINUTES", "soon")
    with pytest.raises(ValueError, match="IDLE_MINUTES='soon' must be a whole number"):
        handler_module.handler({}, None)


def test_run_stops_only_the_instances_of_its_own_scope(account):
    """SCOPE_TAGS (the stack's Environment by default): an opted-in idle machine of another stack in the
    same account is neither listed nor stopped (#33 item 9)."""
    ours = account.launch(1, tags={"Environment": "prod"})
    theirs = account.launch(1, tags={"Environment": "dev"})
    unscoped = account.launch(1)  # opted in, but without the stack's tag at all
    lookalike = account.launch(1, tags={"Environment": "prod "})  # a trailing space is another value
    everything = ours + theirs + unscoped + lookalike
    now = account.clock_after_launch(everything)
    account.seed(everything, IDLE, now=now)
    settings = Settings.from_env({"SCOPE_TAGS": '{"Environment":"prod"}'})

    result = run(settings, account.clients, now=now, prices=PRICES, log=JsonLog(io.StringIO())).as_dict()

    assert result["checked"] == 1
    assert result["stopped"] == ours
    assert account.states(everything) == {
        ours[0]: "stopped",
        theirs[0]: "running",
        unscoped[0]: "running",
        lookalike[0]: "running",
    }
