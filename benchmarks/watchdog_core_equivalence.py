"""The idle watchdogs before and after they moved onto lambdas/watchdog_core, on the same scenarios:
return values, every log line and every notice compared as text.

    .venv/bin/python benchmarks/watchdog_core_equivalence.py [--base 2883514]

`--base` is a commit that still has the two watchdogs as standalone packages (lambdas/idle_gpu_watchdog/
and lambdas/gcp_idle_watchdog/, no shared core). Their files are read from git into a temporary folder
and imported as top-level packages, beside this checkout's `lambdas` package. Scenarios, each in a real
run and a dry run:

- GCP: the fleet of benchmarks/gcp_watchdog_scale.py (1,000 machines, seed 7, small pages, a Pub/Sub
  topic) on the loopback fake at its fixed clock;
- AWS: eleven instances on moto in-process (idle, busy, silent, a gap in the window, opted out, an
  unparsable opt-out, owned by an Auto Scaling group, an Inferentia instance on the Neuron metric),
  instance ids and launch times replaced by names before comparing.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
from google.auth.credentials import AnonymousCredentials
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends

from inference_infra.components.aws.idle_watchdog import price_table as aws_price_table
from inference_infra.components.gcp.idle_watchdog import price_table as gcp_price_table

REPO = Path(__file__).resolve().parents[1]
MODULES = ("watchdog", "report", "settings", "handler", "prices")
# (name, count, extra tags, utilization: a number, None for no series, "gap" for a missing period)
AWS_FLEET: tuple[tuple[str, int, dict[str, str], float | str | None], ...] = (
    ("idle", 3, {}, 1.0),
    ("busy", 2, {}, 60.0),
    ("silent", 1, {}, None),
    ("gap", 1, {}, "gap"),
    ("excluded", 1, {"AutoShutdownExcludeUntil": "2999-01-01"}, 1.0),
    ("badexclude", 1, {"AutoShutdownExcludeUntil": "next week"}, 1.0),
    ("managed", 1, {}, 1.0),
    ("inf2", 1, {}, 1.0),
)


def old_packages(base: str) -> str:
    """The two watchdog packages at `base`, written into a temporary folder (to put on sys.path)."""
    folder = tempfile.mkdtemp(prefix="watchdogs-before-")
    for package in ("idle_gpu_watchdog", "gcp_idle_watchdog"):
        listing = ["git", "-C", str(REPO), "ls-tree", "--name-only", base, f"lambdas/{package}/"]
        names = subprocess.run(listing, capture_output=True, text=True, check=True).stdout.split()
        Path(folder, package).mkdir()
        for name in names:
            shown = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{base}:{name}"], capture_output=True, check=True
            )
            Path(folder, package, Path(name).name).write_bytes(shown.stdout)
    return folder


def tree(package: str) -> dict[str, ModuleType]:
    return {name: importlib.import_module(f"{package}.{name}") for name in MODULES}


def load_gcp_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gcp_watchdog_scale", REPO / "benchmarks" / "gcp_watchdog_scale.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gcp_run(package: str, bench: ModuleType, *, dry_run: bool) -> tuple[str, str, str]:
    """(result, log, notices) of one run on a fresh fake holding the benchmark's fleet."""
    modules = tree(package)
    fake_gcp = bench.load_fake()
    fake = fake_gcp.FakeGcp()
    url = fake.serve()
    try:
        bench.build(fake, fake_gcp, 1000, random.Random(7))
        fake.now = bench.NOW
        fake.page_size.update({"compute.list": 500, "tpu.list": 100, "monitoring.list": 300})
        settings = modules["settings"].Settings(
            projects=(bench.PROJECT,),
            dry_run=dry_run,
            pubsub_topic=f"projects/{bench.PROJECT}/topics/watchdog",
        )
        retry = modules["handler"].default_retry(initial=0.01, maximum=0.05, timeout=30)
        clients = modules["handler"].make_clients(
            settings, endpoint=url, credentials=AnonymousCredentials(), retry=retry
        )
        stream = io.StringIO()
        prices = modules["prices"].parse_prices(gcp_price_table("us-central1"))
        result = modules["watchdog"].run(
            settings, clients, now=bench.NOW, log=modules["report"].JsonLog(stream), prices=prices
        )
        return json.dumps(result.as_dict()), stream.getvalue(), json.dumps(fake.published, sort_keys=True)
    finally:
        fake.close()


class Recorder:
    """Stands in for the SNS client: keeps what would have been published."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def publish(self, **message: Any) -> None:
        self.sent.append(message)


def aws_fleet(ec2: Any, cloudwatch: Any, now: datetime) -> dict[str, str]:
    """Launch AWS_FLEET and its metrics; instance id -> name."""
    names = {}
    end = now - timedelta(seconds=int(now.timestamp()) % 300)
    for label, count, tags, value in AWS_FLEET:
        for k in range(count):
            all_tags = {"AutoShutdown": "true", "Name": f"{label}-{k}", **tags}
            spec = [
                {"ResourceType": "instance", "Tags": [{"Key": a, "Value": b} for a, b in all_tags.items()]}
            ]
            instance_type = "inf2.xlarge" if label == "inf2" else "g5.xlarge"
            launched = ec2.run_instances(
                ImageId="ami-12c6146b",
                MinCount=1,
                MaxCount=1,
                InstanceType=instance_type,
                TagSpecifications=spec,
            )
            iid = launched["Instances"][0]["InstanceId"]
            names[iid] = f"{label}-{k}"
            if label == "managed":  # EC2 refuses aws: tags from callers; the group writes it
                backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
                backend.get_instance(iid).add_tag("aws:autoscaling:groupName", "pool")
            if value is None:
                continue
            metric = "neuroncore_utilization" if label == "inf2" else "nvidia_smi_utilization_gpu"
            periods = (1, 2, 4, 5, 6) if value == "gap" else range(1, 7)
            percent = 1.0 if value == "gap" else float(value)
            data = [
                {
                    "MetricName": metric,
                    "Dimensions": [{"Name": "InstanceId", "Value": iid}],
                    "Timestamp": end - timedelta(minutes=5 * back) + timedelta(seconds=20),
                    "Value": percent,
                }
                for back in periods
            ]
            cloudwatch.put_metric_data(Namespace="CWAgent", MetricData=data)
    return names


def aws_run(package: str, now: datetime, *, dry_run: bool) -> str:
    """Result, log and notices of one run on a fresh moto account, ids and launch times normalised."""
    modules = tree(package)
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
        names = aws_fleet(ec2, cloudwatch, now)
        settings = modules["settings"].Settings(
            grace_minutes=0, dry_run=dry_run, sns_topic_arn="arn:aws:sns:us-east-1:123456789012:watchdog"
        )
        sns = Recorder()
        clients = modules["watchdog"].Clients(ec2=ec2, cloudwatch=cloudwatch, sns=sns)
        stream = io.StringIO()
        prices = modules["prices"].parse_prices(aws_price_table("us-east-1"))
        result = modules["watchdog"].run(
            settings,
            clients,
            now=now,
            log=modules["report"].JsonLog(stream),
            prices=prices,
            region="us-east-1",
        )
    text = "\n".join([json.dumps(result.as_dict()), stream.getvalue(), json.dumps(sns.sent, default=str)])
    for iid, name in names.items():
        text = text.replace(iid, name)
    return re.sub(r'"launch_time": "[^"]+"', '"launch_time": "T"', text)


def first_difference(old: str, new: str) -> str:
    for a, b in zip(old.splitlines(), new.splitlines(), strict=False):
        if a != b:
            return f"\n  before: {a[:300]}\n  after:  {b[:300]}"
    return f"\n  {len(old.splitlines())} lines before, {len(new.splitlines())} after"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="2883514", help="a commit with the standalone watchdogs")
    options = parser.parse_args()
    sys.path[:0] = [old_packages(options.base), str(REPO)]
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1"
    )
    print(f"idle watchdogs at {options.base} vs this checkout (2026-12-02)")
    bench = load_gcp_benchmark()
    aws_now = datetime.now(UTC) + timedelta(minutes=2)  # moto stamps launches with the real clock
    same = True
    for dry_run in (False, True):
        before = gcp_run("gcp_idle_watchdog", bench, dry_run=dry_run)
        after = gcp_run("lambdas.gcp_idle_watchdog", bench, dry_run=dry_run)
        verdicts = ["same" if a == b else "DIFFERENT" for a, b in zip(before, after, strict=True)]
        lines = len(before[1].splitlines())
        print(
            f"GCP dry_run={dry_run}: result {verdicts[0]}, {lines} log lines {verdicts[1]}, "
            f"notices {verdicts[2]}"
        )
        same &= before == after
        if before[1] != after[1]:
            print(first_difference(before[1], after[1]))
        old_text = aws_run("idle_gpu_watchdog", aws_now, dry_run=dry_run)
        new_text = aws_run("lambdas.idle_gpu_watchdog", aws_now, dry_run=dry_run)
        verdict = "same" if old_text == new_text else "DIFFERENT" + first_difference(old_text, new_text)
        print(
            f"AWS dry_run={dry_run}: result, {len(old_text.splitlines()) - 2} log lines and notices {verdict}"
        )
        same &= old_text == new_text
        summary = json.loads(new_text.splitlines()[0])
        skipped = {k: v for k, v in summary["skipped"].items() if v}
        print(f"  AWS run: idle {summary['idle']}, skipped {skipped}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
