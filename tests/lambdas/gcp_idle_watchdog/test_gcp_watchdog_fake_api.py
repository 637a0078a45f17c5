"""The GCP watchdog end to end against the loopback fake of Compute Engine, Cloud TPU, Cloud
Monitoring and Pub/Sub, through Google's own client libraries (REST): listing, measuring, deciding,
stopping and notifying, with throttling, server errors, small pages, partial results and skewed clocks.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from inference_infra.lambdas.gcp_idle_watchdog.report import JsonLog
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings
from inference_infra.lambdas.gcp_idle_watchdog.watchdog import run

NOW = datetime(2026, 12, 2, 1, 2, 30, tzinfo=UTC)
P = "acme-inference-prod"
ZONE = "us-central1-a"
SETTINGS = Settings(projects=(P,))


def vm_key(name: str, zone: str = ZONE, project: str = P) -> str:
    return f"projects/{project}/zones/{zone}/instances/{name}"


def tpu_key(name: str, zone: str = "us-west4-a", project: str = P) -> str:
    return f"projects/{project}/locations/{zone}/nodes/{name}"


def gpu_vm(fake, fake_gcp, name: str, percent, *, gpus: int = 1, zone: str = ZONE, hours: float = 3, **fields):
    accelerators = [{"acceleratorType": "nvidia-l4", "acceleratorCount": gpus}]
    vm = fake.add_vm(P, zone, name, guestAccelerators=accelerators, **fields)
    for gpu in range(gpus):
        value = percent(gpu) if callable(percent) and percent.__code__.co_argcount == 1 else percent
        fake.add_gpu_series(P, vm, gpu, fake_gcp.samples(NOW - timedelta(hours=hours), NOW, value))
    return vm


def watch(fake, clients_for, settings: Settings = SETTINGS, now: datetime = NOW, *, skew: timedelta = timedelta()):
    """One run at `now`; the fake's clock reads now + skew."""
    fake.now = now + skew
    stream = io.StringIO()
    result = run(settings, clients_for(settings), now=now, log=JsonLog(stream))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    return result.as_dict(), lines


def test_watchdog_stops_idle_gpu_vm_and_leaves_busy_and_silent_ones(fake, fake_gcp, clients_for):
    gpu_vm(fake, fake_gcp, "idle", 1.0)
    gpu_vm(fake, fake_gcp, "busy", 60.0)
    fake.add_vm(P, ZONE, "silent")  # no series at all: no evidence
    out, lines = watch(fake, clients_for)
    assert out["stopped"] == [vm_key("idle")]
    assert out["skipped"]["busy"] == [vm_key("busy")]
    assert out["skipped"]["no_metrics"] == [vm_key("silent")]
    assert fake.stopped == [vm_key("idle")]
    decision = next(line for line in lines if line.get("machine") == vm_key("idle"))
    assert decision["action"] == "stopped" and decision["points"] == decision["expected_points"] == 6
    assert fake.calls["monitoring.list"] == 1 and fake.calls["compute.list"] == 1
