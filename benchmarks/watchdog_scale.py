"""API calls and time of one idle-watchdog run over 100, 1,000 and 5,000 tagged instances (moto).

    .venv/bin/python benchmarks/watchdog_scale.py [--sizes 100 1000]   # `make bench`: about 30 s
    .venv/bin/python benchmarks/watchdog_scale.py --sizes 100 1000 5000  # `make bench-large`: ~15 min

For each fleet size, two fresh moto accounts get the same fleet: half the
instances idle, 40% busy, 10% without metrics, six 5-minute datapoints each.
In one, the watchdog runs (`inference_infra.lambdas.idle_gpu_watchdog.watchdog.run`: paged
DescribeInstances, GetMetricData with 500 queries per call, StopInstances in
batches of 100). In the other, a naive baseline written here does what
hand-rolled scripts do: DescribeInstances, then one GetMetricStatistics call
per instance and one StopInstances call per idle instance.

Calls are counted with botocore's `before-call` event, so they are the calls a
real account would be billed and throttled for. Seconds are wall time against
moto in-process: they measure moto's backend (whose GetMetricData and
GetMetricStatistics scan every stored datapoint per query) as much as the
code, so the "at 50 ms/call" column gives a latency-bound estimate for a real
account where each call is a network round trip.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import boto3
from moto import mock_aws

from inference_infra.lambdas.idle_gpu_watchdog.handler import CLIENT_CONFIG
from inference_infra.lambdas.idle_gpu_watchdog.report import JsonLog
from inference_infra.lambdas.idle_gpu_watchdog.settings import Settings
from inference_infra.lambdas.idle_gpu_watchdog.watchdog import Clients, run

REGION = "us-east-1"
AMI = "ami-12c6146b"
NAMESPACE, METRIC = "CWAgent", "nvidia_smi_utilization_gpu"
CALL_LATENCY_S = 0.05


def build_fleet(ec2: Any, cloudwatch: Any, size: int) -> datetime:
    """size tagged instances with metrics; returns a 'now' two hours after they launched."""
    ids: list[str] = []
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "AutoShutdown", "Value": "true"}]}]
    for start in range(0, size, 100):
        n = min(100, size - start)
        out = ec2.run_instances(
            ImageId=AMI, MinCount=n, MaxCount=n, InstanceType="g5.xlarge", TagSpecifications=tags
        )
        ids += [i["InstanceId"] for i in out["Instances"]]
    now = max(i["LaunchTime"] for i in out["Instances"]) + timedelta(hours=2)
    boundary = now - timedelta(seconds=int(now.timestamp()) % 300, microseconds=now.microsecond)
    idle, busy = ids[: size // 2], ids[size // 2 : size * 9 // 10]  # the last 10% publish nothing
    data = [
        {
            "MetricName": METRIC,
            "Dimensions": [{"Name": "InstanceId", "Value": iid}],
            "Timestamp": boundary - timedelta(minutes=5 * back) + timedelta(seconds=30),
            "Value": value,
        }
        for group, value in ((idle, 1.0), (busy, 60.0))
        for iid in group
        for back in range(1, 7)
    ]
    for start in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace=NAMESPACE, MetricData=data[start : start + 1000])
    return now


def naive_run(ec2: Any, cloudwatch: Any, now: datetime) -> int:
    """The baseline: one GetMetricStatistics per instance, one StopInstances per idle instance.

    Same window and rule as the watchdog (six whole 5-minute periods, all below 5%), so both stop
    the same instances and only the calls differ.
    """
    stopped = 0
    end = now - timedelta(seconds=int(now.timestamp()) % 300, microseconds=now.microsecond)
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[
            {"Name": "instance-state-name", "Values": ["running"]},
            {"Name": "tag:AutoShutdown", "Values": ["true"]},
        ]
    )
    for page in pages:
        for reservation in page["Reservations"]:
            for instance in reservation["Instances"]:
                stats = cloudwatch.get_metric_statistics(
                    Namespace=NAMESPACE,
                    MetricName=METRIC,
                    Dimensions=[{"Name": "InstanceId", "Value": instance["InstanceId"]}],
                    StartTime=end - timedelta(minutes=30),
                    EndTime=end,
                    Period=300,
                    Statistics=["Maximum"],
                )
                points = stats["Datapoints"]
                if len(points) >= 6 and all(p["Maximum"] < 5 for p in points):
                    ec2.stop_instances(InstanceIds=[instance["InstanceId"]])
                    stopped += 1
    return stopped


@dataclass
class Measurement:
    calls: Counter[str]
    seconds: float  # wall time of the run
    in_calls_seconds: float  # of which inside AWS calls (here: moto's backend)
    stopped: int

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def measure(size: int, body: Callable[[Any, Any, datetime], int]) -> Measurement:
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        ec2 = session.client("ec2", config=CLIENT_CONFIG)
        cloudwatch = session.client("cloudwatch", config=CLIENT_CONFIG)
        now = build_fleet(ec2, cloudwatch, size)
        calls: Counter[str] = Counter()
        in_calls = [0.0, 0.0]  # accumulated seconds, start of the current call

        def before(event_name: str, **_: Any) -> None:
            calls[event_name.split(".", 2)[2]] += 1
            in_calls[1] = time.perf_counter()

        def after(**_: Any) -> None:
            in_calls[0] += time.perf_counter() - in_calls[1]

        for client in (ec2, cloudwatch):
            client.meta.events.register("before-call", before)
            client.meta.events.register("after-call", after)
        started = time.perf_counter()
        stopped = body(ec2, cloudwatch, now)
        return Measurement(calls, time.perf_counter() - started, in_calls[0], stopped)


def watchdog_run(ec2: Any, cloudwatch: Any, now: datetime) -> int:
    result = run(Settings(), Clients(ec2=ec2, cloudwatch=cloudwatch), now=now, log=JsonLog(io.StringIO()))
    return len(result.stopped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    sizes = parser.parse_args().sizes
    if max(sizes) >= 5000:
        print(
            f"watchdog_scale: {max(sizes):,} instances take about 15 minutes under moto (its GetMetricData "
            "scans every stored datapoint per query); smaller sizes take seconds.",
            flush=True,
        )
    for name, value in (("AWS_ACCESS_KEY_ID", "bench"), ("AWS_SECRET_ACCESS_KEY", "bench")):
        os.environ[name] = value  # moto intercepts every call; these only satisfy botocore
    os.environ.pop("AWS_PROFILE", None)
    os.environ.pop("AWS_ENDPOINT_URL", None)

    header = (
        f"{'instances':>9} | {'watchdog calls':>14} {'s':>7} {'own s':>6} {'@50ms':>6} | "
        f"{'baseline calls':>14} {'s':>7} {'@50ms':>6} | {'fewer calls':>11} | bound ok"
    )
    print(header)
    print("-" * len(header))
    details = []
    for step, size in enumerate(sizes, start=1):
        progress = f"[{step}/{len(sizes)}] {size:,} instances: the watchdog, then the per-instance baseline"
        print(progress, file=sys.stderr, flush=True)
        ours, naive = measure(size, watchdog_run), measure(size, naive_run)
        assert ours.stopped == naive.stopped == size // 2, (ours.stopped, naive.stopped)
        # GetMetricData for every instance + describe pages + stop batches + one PutMetricData.
        bound = math.ceil(size / 500) + ours.calls["DescribeInstances"] + math.ceil(size // 2 / 100) + 1
        ok = ours.calls["GetMetricData"] <= math.ceil(size / 500) and ours.total <= bound
        print(
            f"{size:>9} | {ours.total:>14} {ours.seconds:>7.2f} {ours.seconds - ours.in_calls_seconds:>6.2f} "
            f"{ours.total * CALL_LATENCY_S:>6.1f} | {naive.total:>14} {naive.seconds:>7.2f} "
            f"{naive.total * CALL_LATENCY_S:>6.1f} | {naive.total / ours.total:>10.0f}x | "
            f"{'yes' if ok else 'NO'}",
            flush=True,
        )
        details.append((size, ours, naive))
    print()
    print(
        "s: wall time against moto (dominated by moto's backend: its GetMetricData scans every stored\n"
        "datapoint per query and period); own s: the watchdog's time outside AWS calls; @50ms: calls x\n"
        "50 ms, a latency-bound estimate for a real account. moto pages DescribeInstances by reservation\n"
        "(here 100 instances each), AWS by instance (1,000 per page)."
    )
    for size, ours, naive in details:
        print(f"{size:>5} instances, watchdog: {dict(sorted(ours.calls.items()))}")
        print(f"{size:>5} instances, baseline: {dict(sorted(naive.calls.items()))}")


if __name__ == "__main__":
    main()
