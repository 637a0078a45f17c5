"""The Lambda archive the stack uploads, unpacked into an empty folder and run from there alone.

The archive is taken from what IdleGpuWatchdog hands the engine (the function's `code` input under
Pulumi's mock runtime), zipped as the engine zips it and extracted; a fresh interpreter with only
that folder of ours imports the handler the way Lambda's runtime does (`lambdas.idle_gpu_watchdog.
handler.handler`: the module path before the last dot, awslambdaric/bootstrap.py `_get_handler`,
4.0.1) and runs it against moto, in that process and as a server on loopback. A module missing from
the archive (the shared core's, say) fails the import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inference_infra.components.aws import IdleGpuWatchdog, IdleGpuWatchdogArgs
from inference_infra.components.aws.idle_watchdog import HANDLER

FUNCTION = "aws:lambda/function:Function"

PROBE = """
import os, sys
from datetime import UTC, datetime, timedelta
sys.path.insert(0, sys.argv[1])
import boto3

module, _, attribute = os.environ["HANDLER"].rpartition(".")
handler = getattr(__import__(module, fromlist=[attribute]), attribute)


def launch(ec2, count):
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "AutoShutdown", "Value": "true"}]}]
    response = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=count, MaxCount=count, InstanceType="g5.xlarge",
        TagSpecifications=tags,
    )
    return sorted(i["InstanceId"] for i in response["Instances"])


def seed(cloudwatch, ids, value):
    # seven 5-minute periods up to one past the current boundary: the handler reads the real clock
    now = datetime.now(UTC) + timedelta(minutes=5)
    boundary = now - timedelta(seconds=int(now.timestamp()) % 300, microseconds=now.microsecond)
    cloudwatch.put_metric_data(Namespace="CWAgent", MetricData=[
        {"MetricName": "nvidia_smi_utilization_gpu", "Dimensions": [{"Name": "InstanceId", "Value": i}],
         "Timestamp": boundary - timedelta(minutes=5 * back) + timedelta(seconds=30), "Value": value}
        for i in ids for back in range(1, 8)
    ])


def scenario():
    session = boto3.session.Session(region_name="us-east-1")
    ec2, cloudwatch, sns = session.client("ec2"), session.client("cloudwatch"), session.client("sns")
    os.environ["SNS_TOPIC_ARN"] = sns.create_topic(Name="watchdog")["TopicArn"]
    idle, busy = launch(ec2, 2), launch(ec2, 1)
    seed(cloudwatch, idle, 0.5)
    seed(cloudwatch, busy, 80.0)
    result = handler({}, None)
    pages = ec2.get_paginator("describe_instances").paginate(InstanceIds=idle + busy)
    found = [i for p in pages for r in p["Reservations"] for i in r["Instances"]]
    states = {i["InstanceId"]: i["State"]["Name"] for i in found}
    return {"idle": idle, "busy": busy, "result": result, "states": states}


if sys.argv[2] == "in-process":
    from moto import mock_aws
    with mock_aws():
        OUT = scenario()
else:
    OUT = scenario()
"""


@pytest.fixture
def archive_root(plan_of, archive_files, unpack) -> Path:
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(region="us-east-1"))
    function = plan_of().one(FUNCTION).props
    assert function["handler"] == HANDLER
    return unpack(archive_files(function["code"]["assets"]))


def environment(tmp_path: Path, **more: str) -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "HOME": str(tmp_path),
        "HANDLER": HANDLER,
        "GRACE_MINUTES": "0",  # moto stamps LaunchTime with the real clock
        **more,
    }


def check_run(report: dict[str, Any], root: Path) -> None:
    out = report["out"]
    result = out["result"]
    assert sorted(result["stopped"]) == out["idle"]
    assert sorted(result["skipped"]["busy"]) == out["busy"]
    assert result["failed"] == []
    assert {out["states"][i] for i in out["idle"]} <= {"stopping", "stopped"}
    assert {out["states"][i] for i in out["busy"]} == {"running"}
    # the price table shipped beside the function: two g5.xlarge at the catalog's us-east-1 price
    assert result["estimated_hourly_saving_usd"] > 1.0
    loaded = report["modules"]
    assert loaded["lambdas.watchdog_core.loop"] == str(root / "lambdas" / "watchdog_core" / "loop.py")
    assert loaded["lambdas.idle_gpu_watchdog.handler"] == str(
        root / "lambdas" / "idle_gpu_watchdog" / "handler.py"
    )


def test_watchdog_archive_holds_the_function_and_the_shared_core_only(archive_root):
    names = {str(p.relative_to(archive_root)) for p in archive_root.rglob("*") if p.is_file()}
    assert {
        "lambdas/__init__.py",
        "lambdas/idle_gpu_watchdog/handler.py",
        "lambdas/idle_gpu_watchdog/prices.json",
    } <= names
    assert {n.split("/")[1] for n in names if n.count("/") == 2} == {"idle_gpu_watchdog", "watchdog_core"}


def test_watchdog_archive_runs_alone_against_moto_in_process(archive_root, alone, tmp_path):
    report = alone(archive_root, PROBE, environment(tmp_path), "in-process")
    check_run(report, archive_root)


@pytest.mark.slow
def test_watchdog_archive_runs_alone_against_moto_server(archive_root, alone, tmp_path, moto_server_session):
    env = environment(tmp_path, AWS_ENDPOINT_URL=moto_server_session.client("ec2").meta.endpoint_url)
    report = alone(archive_root, PROBE, env, "server")
    check_run(report, archive_root)


def test_watchdog_archive_without_the_shared_core_fails_to_import(
    plan_of, archive_files, unpack, alone, tmp_path
):
    IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs(region="us-east-1"))
    files = archive_files(plan_of().one(FUNCTION).props["code"]["assets"])
    root = unpack({name: content for name, content in files.items() if "watchdog_core/loop.py" not in name})
    with pytest.raises(AssertionError, match=r"cannot import name 'loop' from 'lambdas\.watchdog_core'"):
        alone(root, PROBE, environment(tmp_path), "in-process")
