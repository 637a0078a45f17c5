"""The real handler against moto running as a separate server process on loopback.

Unlike the in-process tests, every call here crosses HTTP: the handler builds
its own clients from the environment (AWS_ENDPOINT_URL points them at the
server), exactly as it does in Lambda.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from inference_infra.lambdas.idle_gpu_watchdog.handler import handler

AMI = "ami-12c6146b"


@pytest.fixture
def server(moto_server_session: boto3.Session) -> dict[str, Any]:
    """Clients of the server (tests/lambdas/conftest.py), a clean state per test."""
    return {name: moto_server_session.client(name) for name in ("ec2", "cloudwatch", "sns", "sqs")}


def launch(ec2: Any, count: int, tags: dict[str, str] | None = None) -> list[str]:
    all_tags = {"AutoShutdown": "true", **(tags or {})}
    ids: list[str] = []
    for start in range(0, count, 100):
        n = min(100, count - start)
        response = ec2.run_instances(
            ImageId=AMI,
            MinCount=n,
            MaxCount=n,
            InstanceType="g5.xlarge",
            TagSpecifications=[
                {"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in all_tags.items()]}
            ],
        )
        ids += [i["InstanceId"] for i in response["Instances"]]
    return ids


def seed(cloudwatch: Any, ids: list[str], value: float) -> None:
    """Seven 5-minute periods ending one period after the current boundary, so the handler's window
    (which reads the real clock) is covered even if a boundary passes during the test."""
    now = datetime.now(UTC) + timedelta(minutes=5)
    boundary = now - timedelta(seconds=int(now.timestamp()) % 300, microseconds=now.microsecond)
    data = [
        {
            "MetricName": "nvidia_smi_utilization_gpu",
            "Dimensions": [{"Name": "InstanceId", "Value": i}],
            "Timestamp": boundary - timedelta(minutes=5 * back) + timedelta(seconds=30),
            "Value": value,
        }
        for i in ids
        for back in range(1, 8)
    ]
    for start in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace="CWAgent", MetricData=data[start : start + 1000])


def states(ec2: Any, ids: list[str]) -> dict[str, str]:
    pages = ec2.get_paginator("describe_instances").paginate(InstanceIds=ids)
    return {
        i["InstanceId"]: i["State"]["Name"] for p in pages for r in p["Reservations"] for i in r["Instances"]
    }


@pytest.mark.slow
def test_handler_against_moto_server_stops_idle_instances_across_metric_batches(server, monkeypatch):
    ec2, cloudwatch, sns, sqs = server["ec2"], server["cloudwatch"], server["sns"], server["sqs"]
    topic = sns.create_topic(Name="watchdog")["TopicArn"]
    queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    idle = launch(ec2, 510)  # more than one GetMetricData call's worth of queries
    busy = launch(ec2, 5)
    silent = launch(ec2, 3)
    excluded = launch(ec2, 2, tags={"AutoShutdownExcludeUntil": "2999-01-01"})
    seed(cloudwatch, idle + excluded, 0.5)
    seed(cloudwatch, busy, 75.0)
    monkeypatch.setenv("GRACE_MINUTES", "0")  # moto stamps LaunchTime with the real clock
    monkeypatch.setenv("SNS_TOPIC_ARN", topic)

    result = handler({}, None)

    assert result["checked"] == 520
    assert sorted(result["stopped"]) == sorted(idle)
    assert sorted(result["skipped"]["busy"]) == sorted(busy)
    assert sorted(result["skipped"]["no_metrics"]) == sorted(silent)
    assert sorted(result["skipped"]["excluded"]) == sorted(excluded)
    assert result["failed"] == []
    after = states(ec2, idle + busy + silent + excluded)
    assert {after[i] for i in idle} == {"stopped"}
    assert {after[i] for i in busy + silent + excluded} == {"running"}
    (message,) = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert json.loads(message["Body"])["Subject"].startswith("Idle GPU watchdog stopped 510 instance(s)")
    listed = cloudwatch.list_metrics(Namespace="InferenceInfra/IdleWatchdog")["Metrics"]
    assert {m["MetricName"] for m in listed} >= {"InstancesStopped", "EstimatedHourlySavingUSD"}


def test_handler_against_moto_server_in_dry_run_changes_nothing(server, monkeypatch):
    ec2, cloudwatch = server["ec2"], server["cloudwatch"]
    ids = launch(ec2, 3)
    seed(cloudwatch, ids, 0.0)
    monkeypatch.setenv("GRACE_MINUTES", "0")
    monkeypatch.setenv("DRY_RUN", "true")

    result = handler({}, None)

    assert result["dry_run"] is True
    assert sorted(result["idle"]) == sorted(ids)
    assert result["stopped"] == []
    assert set(states(ec2, ids).values()) == {"running"}
