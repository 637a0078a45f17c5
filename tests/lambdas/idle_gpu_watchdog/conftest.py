"""moto fixtures for the watchdog: a mocked account, fleet helpers, API-call counting, throttling.

The mock starts before any client exists; credentials and region come from
monkeypatch, never from the machine. Where moto lacks a field EC2 returns
(an instance's SpotInstanceRequestId or CapacityReservationId), `set_field`
fills it in moto's own model, so the watchdog still reads it from a real
DescribeInstances response.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.botocore_stubber import MockRawResponse
from moto.ec2 import ec2_backends

from inference_infra.lambdas.idle_gpu_watchdog.handler import CLIENT_CONFIG
from inference_infra.lambdas.idle_gpu_watchdog.watchdog import Clients

REGION = "us-east-1"
AMI = "ami-12c6146b"  # one of moto's built-in AMIs
GPU_METRIC = ("CWAgent", "nvidia_smi_utilization_gpu")


class Account:
    """A moto account with the watchdog's clients and helpers to build a fleet."""

    def __init__(self) -> None:
        session = boto3.session.Session(region_name=REGION)
        self.ec2 = session.client("ec2", config=CLIENT_CONFIG)
        self.cloudwatch = session.client("cloudwatch", config=CLIENT_CONFIG)
        self.sns = session.client("sns", config=CLIENT_CONFIG)
        self.sqs = session.client("sqs", config=CLIENT_CONFIG)
        self.calls: Counter[str] = Counter()  # API calls the watchdog made, e.g. "ec2.StopInstances"
        self.attempts: Counter[str] = Counter()  # HTTP attempts, retries included
        for client in (self.ec2, self.cloudwatch, self.sns):
            client.meta.events.register("before-call", self._count_call)
            client.meta.events.register("request-created", self._count_attempt)

    @property
    def clients(self) -> Clients:
        return Clients(ec2=self.ec2, cloudwatch=self.cloudwatch, sns=self.sns)

    def _count_call(self, event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".")
        self.calls[f"{service}.{operation}"] += 1

    def _count_attempt(self, event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".")
        self.attempts[f"{service}.{operation}"] += 1

    def reset_counts(self) -> None:
        self.calls.clear()
        self.attempts.clear()

    def launch(
        self,
        count: int = 1,
        *,
        instance_type: str = "g5.xlarge",
        tags: dict[str, str] | None = None,
        per_reservation: int | None = None,
        **run_args: Any,
    ) -> list[str]:
        """Launch count instances tagged AutoShutdown=true (plus tags); returns their ids."""
        all_tags = {"AutoShutdown": "true", **(tags or {})}
        spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in all_tags.items()]}]
        ids: list[str] = []
        step = per_reservation or count
        for start in range(0, count, step):
            n = min(step, count - start)
            response = self.ec2.run_instances(
                ImageId=AMI,
                MinCount=n,
                MaxCount=n,
                InstanceType=instance_type,
                TagSpecifications=spec,
                **run_args,
            )
            ids += [i["InstanceId"] for i in response["Instances"]]
        return ids

    def clock_after_launch(self, ids: Sequence[str], hours: float = 2) -> datetime:
        """A 'now' some hours after the latest of these launches (moto stamps LaunchTime with real time)."""
        reservations = self.ec2.describe_instances(InstanceIds=list(ids))["Reservations"]
        latest = max(i["LaunchTime"] for r in reservations for i in r["Instances"])
        return latest + timedelta(hours=hours)

    def seed(
        self,
        ids: Sequence[str],
        values: Sequence[float],
        *,
        now: datetime,
        metric: tuple[str, str] = GPU_METRIC,
        period_minutes: int = 5,
    ) -> None:
        """One datapoint per period, newest last, ending in the period just before now's boundary."""
        boundary = now - timedelta(
            seconds=int(now.timestamp()) % (period_minutes * 60), microseconds=now.microsecond
        )
        data = []
        for instance_id in ids:
            for back, value in enumerate(reversed(values), start=1):
                stamp = boundary - timedelta(minutes=back * period_minutes) + timedelta(seconds=30)
                data.append(
                    {
                        "MetricName": metric[1],
                        "Dimensions": [{"Name": "InstanceId", "Value": instance_id}],
                        "Timestamp": stamp,
                        "Value": value,
                        "Unit": "Percent",
                    }
                )
        for start in range(0, len(data), 1000):  # PutMetricData takes up to 1,000 items
            self.cloudwatch.put_metric_data(Namespace=metric[0], MetricData=data[start : start + 1000])

    def states(self, ids: Sequence[str]) -> dict[str, str]:
        reservations = self.ec2.describe_instances(InstanceIds=list(ids))["Reservations"]
        return {i["InstanceId"]: i["State"]["Name"] for r in reservations for i in r["Instances"]}

    @staticmethod
    def set_field(instance_id: str, **fields: Any) -> None:
        """Fill fields moto's RunInstances leaves out (spot_instance_request_id, capacity_reservation_id)."""
        instance = ec2_backends[DEFAULT_ACCOUNT_ID][REGION].get_instance_by_id(instance_id)
        for name, value in fields.items():
            setattr(instance, name, value)

    @staticmethod
    def throttle(client: Any, operation: str, times: int) -> Counter[str]:
        """Answer the first `times` attempts of operation with the service's throttling error.

        The error goes through botocore's retry handler like a real one. botocore
        lets every `before-send` handler run, so moto still applies the throttled
        attempt; for StopInstances the retry then meets an instance already
        stopping: the idempotent path.
        """
        service = client.meta.service_model
        seen: Counter[str] = Counter()

        def answer(request: Any, **_: Any) -> AWSResponse | None:
            seen["attempts"] += 1
            if seen["attempts"] > times:
                return None
            seen["throttled"] += 1
            status, headers, body = _throttling_error(service.resolved_protocol)
            return AWSResponse(request.url, status, headers, MockRawResponse(body))

        client.meta.events.register_first(f"before-send.{service.service_id.hyphenize()}.{operation}", answer)
        return seen

    @staticmethod
    def refuse(client: Any, operation: str, code: str, *, when_params_have: str = "") -> None:
        """Fail calls of operation whose parameters include when_params_have with error code.

        Answered at `before-call`, which short-circuits the request: moto never
        sees it, as AWS applies nothing on an authorization error.
        """
        service_id = client.meta.service_model.service_id.hyphenize()

        def answer(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
            if when_params_have not in json.dumps(params.get("body"), default=str):
                return None
            error = {"Error": {"Code": code, "Message": f"injected {code}"}, "ResponseMetadata": {}}
            return AWSResponse(params.get("url", ""), 400, {}, MockRawResponse(b"")), error

        client.meta.events.register_first(f"before-call.{service_id}.{operation}", answer)


def _throttling_error(protocol: str) -> tuple[int, dict[str, str], bytes]:
    """The wire form of a throttling error for the protocols the watchdog's clients speak."""
    if protocol == "ec2":
        body = (
            b"<?xml version='1.0' encoding='UTF-8'?><Response><Errors><Error>"
            b"<Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message>"
            b"</Error></Errors><RequestID>r-1</RequestID></Response>"
        )
        return 503, {"Content-Type": "text/xml"}, body
    if protocol == "json":
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-query-error": "Throttling;Sender"}
        return 400, headers, json.dumps({"__type": "Throttling", "message": "Rate exceeded"}).encode()
    raise AssertionError(f"no throttling error for protocol {protocol}")


@pytest.fixture
def account(aws_credentials: None) -> Iterator[Account]:
    with mock_aws():
        yield Account()
