"""API calls and wrong stops of one GCP idle-watchdog run over 1,000 machines across zones (loopback fake).

    .venv/bin/python benchmarks/gcp_watchdog_scale.py [--machines 1000] [--seed 7]

The fleet lives in the loopback fake of Compute Engine, Cloud TPU and Cloud Monitoring
(tests/lambdas/gcp_idle_watchdog/fake_gcp.py) and the watchdog runs through Google's own client
libraries (`inference_infra.lambdas.gcp_idle_watchdog.watchdog.run`), exactly as the tests do. Every
machine is drawn with a known truth: idle and stoppable (the only ones that may be stopped), busy,
silent (no series), one GPU or TPU worker silent, a gap in its window, restarted within the grace
period, a managed-instance-group member, on a reservation, a Spot TPU, opted out by label, or a TPU
node created by a queued resource. Throttling (429) and server errors (5xx) are injected on every
route, and pages are small (Compute 500 VMs, TPU 100 nodes, Monitoring 300 series), so the retries
and the paging are part of the count.

Reported: calls per route against what a per-VM script would make (one list per zone, one Monitoring
query per machine, one stop per idle machine), wrong stops (a stopped machine that was not idle and
stoppable; target 0) and missed stops (an idle, stoppable machine left running), and wall time.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import random
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from google.auth.credentials import AnonymousCredentials

from inference_infra.lambdas.gcp_idle_watchdog.handler import default_retry, make_clients
from inference_infra.lambdas.gcp_idle_watchdog.report import JsonLog
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings
from inference_infra.lambdas.gcp_idle_watchdog.watchdog import run

REPO_ROOT = Path(__file__).resolve().parents[1]
FAKE = REPO_ROOT / "tests" / "lambdas" / "gcp_idle_watchdog" / "fake_gcp.py"
NOW = datetime(2026, 12, 2, 1, 2, 30, tzinfo=UTC)
PROJECT = "acme-inference-prod"
GPU_ZONES = ("us-central1-a", "us-central1-b", "us-central1-c", "us-east4-a", "us-east4-c", "europe-west4-a")
TPU_ZONES = ("us-west4-a", "us-east5-b", "europe-west4-b")
HISTORY = timedelta(minutes=80)
# truth -> share of the fleet; only "idle" may be stopped
TRUTHS = {
    "idle": 0.40,
    "busy": 0.20,
    "silent": 0.05,
    "device_silent": 0.05,
    "gap": 0.05,
    "restarted": 0.05,
    "mig": 0.05,
    "reserved": 0.05,
    "excluded": 0.04,
    "spot_tpu": 0.03,
    "queued_tpu": 0.03,
}


def load_fake():
    spec = importlib.util.spec_from_file_location("fake_gcp", FAKE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_gcp"] = module
    spec.loader.exec_module(module)
    return module


def build(fake, fake_gcp, machines: int, rng: random.Random) -> dict[str, str]:
    """The fleet; returns machine key -> truth."""
    truth: dict[str, str] = {}
    kinds = list(TRUTHS)
    weights = [TRUTHS[k] for k in kinds]
    since = NOW - HISTORY
    for n in range(machines):
        what = rng.choices(kinds, weights)[0]
        tpu = what in ("spot_tpu", "queued_tpu") or (what not in ("mig",) and rng.random() < 0.2)
        busy = what == "busy"

        def level(_moment, busy=busy):
            return rng.uniform(20, 95) if busy else rng.uniform(0, 3)

        start = since if what != "restarted" else NOW - timedelta(minutes=40)
        if tpu:
            zone = TPU_ZONES[n % len(TPU_ZONES)]
            workers = rng.choice((1, 1, 2, 4))
            fields = {}
            if what == "spot_tpu":
                fields["schedulingConfig"] = {"spot": True}
            elif what == "queued_tpu":
                fields["queuedResource"] = f"projects/{PROJECT}/locations/{zone}/queuedResources/q{n}"
            elif what == "reserved":
                fields["schedulingConfig"] = {"reserved": True}
            elif what == "excluded":
                fields["labels"] = {"auto-shutdown": "true", "auto-shutdown-exclude-until": "2026-12-09"}
            node = fake.add_tpu(PROJECT, zone, f"tpu-{n}", workers=workers, **fields)
            key = node["name"]
            for worker in range(workers):
                if what == "device_silent" and worker == workers - 1 and workers > 1:
                    continue
                if what == "silent" or (what == "device_silent" and workers == 1):
                    continue
                for chip in range(4):
                    points = fake_gcp.samples(start, NOW, level)
                    if what == "gap":
                        points = [
                            p
                            for p in points
                            if not NOW - timedelta(minutes=25) < p[0] <= NOW - timedelta(minutes=14)
                        ]
                    fake.add_tpu_series(PROJECT, node, worker, chip, points)
        else:
            zone = GPU_ZONES[n % len(GPU_ZONES)]
            gpus = rng.choice((1, 1, 2, 4, 8))
            fields = {"guestAccelerators": [{"acceleratorType": "nvidia-l4", "acceleratorCount": gpus}]}
            if what == "restarted":
                fields["lastStartTimestamp"] = (NOW - timedelta(minutes=40)).isoformat()
            elif what == "mig":
                fields["metadata"] = {
                    "items": [
                        {"key": "created-by", "value": f"projects/1/zones/{zone}/instanceGroupManagers/pool"}
                    ]
                }
            elif what == "reserved":
                fields["reservationAffinity"] = {
                    "consumeReservationType": "SPECIFIC_RESERVATION",
                    "values": ["res"],
                }
            elif what == "excluded":
                fields["labels"] = {"auto-shutdown": "true", "auto-shutdown-exclude-until": "2026-12-09"}
            if rng.random() < 0.3:
                fields["disks"] = [{"type": "PERSISTENT", "boot": True}, {"type": "SCRATCH"}]
            vm = fake.add_vm(PROJECT, zone, f"vm-{n}", **fields)
            key = f"projects/{PROJECT}/zones/{zone}/instances/vm-{n}"
            for gpu in range(gpus):
                if what == "silent" or (what == "device_silent" and gpu == gpus - 1):
                    continue
                points = fake_gcp.samples(start, NOW, level)
                if what == "gap":
                    points = [
                        p
                        for p in points
                        if not NOW - timedelta(minutes=25) < p[0] <= NOW - timedelta(minutes=14)
                    ]
                fake.add_gpu_series(PROJECT, vm, gpu, points)
        truth[key] = what
    # VMs that must never be candidates: preempted Spot VMs and unlabelled ones
    for n in range(machines // 20):
        fake.add_vm(
            PROJECT,
            GPU_ZONES[n % len(GPU_ZONES)],
            f"preempted-{n}",
            status="TERMINATED",
            scheduling={"provisioningModel": "SPOT"},
        )
        fake.add_vm(PROJECT, GPU_ZONES[n % len(GPU_ZONES)], f"unlabelled-{n}", labels={})
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    fake_gcp = load_fake()
    fake = fake_gcp.FakeGcp()
    url = fake.serve()
    try:
        truth = build(fake, fake_gcp, options.machines, rng)
        fake.now = NOW
        fake.page_size.update({"compute.list": 500, "tpu.list": 100, "monitoring.list": 300})
        for route, status in (
            ("compute.list", 429),
            ("tpu.list", 503),
            ("monitoring.list", 429),
            ("monitoring.list", 500),
            ("compute.stop", 429),
            ("compute.stop", 502),
            ("tpu.stop", 503),
        ):
            fake.fail(route, status, times=2)
        settings = Settings(projects=(PROJECT,))
        clients = make_clients(
            settings,
            endpoint=url,
            credentials=AnonymousCredentials(),
            retry=default_retry(initial=0.05, maximum=0.5, timeout=60),
        )
        started = time.perf_counter()
        result = run(settings, clients, now=NOW, log=JsonLog(io.StringIO()))
        seconds = time.perf_counter() - started
    finally:
        fake.close()
    stopped = set(result.stopped)
    should = {k for k, t in truth.items() if t == "idle"}
    wrong = sorted(stopped - should)
    missed = sorted(should - stopped)
    counts = Counter(truth.values())
    vms = sum(1 for k in truth if "/instances/" in k)
    zones = len(GPU_ZONES) + len(TPU_ZONES)
    naive = zones + len(truth) + len(should)
    calls = dict(sorted(fake.calls.items()))
    total = sum(calls.values())
    print(
        f"GCP idle watchdog, {len(truth)} labelled machines ({vms} GPU VMs, {len(truth) - vms} TPU VMs) in "
        f"{zones} zones, plus {2 * (options.machines // 20)} VMs that are never candidates; "
        "2026-12-02, loopback fake"
    )
    print("truth: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(
        f"decided: checked {result.checked}, stopped {len(result.stopped)}, failed {len(result.failed)}, "
        + ", ".join(f"{r.value} {len(ids)}" for r, ids in result.skipped.items() if ids)
    )
    print(
        "API calls (injected faults included): "
        + ", ".join(f"{k} {v}" for k, v in calls.items())
        + f"; total {total}"
    )
    monitoring = calls.get("monitoring.list", 0)
    print(
        f"  Monitoring: {monitoring} calls ({monitoring - 4} pages + 4 retried faults), 2 queries (GPU, TPU)"
    )
    print(
        f"  a per-VM script: {naive} calls ({zones} zone lists + {len(truth)} Monitoring queries + "
        f"{len(should)} stops)"
    )
    print(f"wrong stops: {len(wrong)} (target 0); missed stops: {len(missed)}")
    print(f"wall time: {seconds:.1f} s")
    if wrong:
        print("WRONG: " + ", ".join(wrong[:10]))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
