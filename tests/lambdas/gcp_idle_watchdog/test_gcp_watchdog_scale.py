"""The scale benchmark's fleet (benchmarks/gcp_watchdog_scale.py) at 300 machines: every machine of known
truth decided right, no wrong stop, and the Monitoring calls stay a handful however many machines."""

from __future__ import annotations

import importlib.util
import io
import random
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials

from inference_infra.lambdas.gcp_idle_watchdog.handler import default_retry, make_clients
from inference_infra.lambdas.gcp_idle_watchdog.report import JsonLog
from inference_infra.lambdas.gcp_idle_watchdog.settings import Settings
from inference_infra.lambdas.gcp_idle_watchdog.watchdog import run

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "gcp_watchdog_scale.py"

pytestmark = pytest.mark.slow


def _bench():
    spec = importlib.util.spec_from_file_location("bench_gcp_watchdog_scale", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [1, 2])
def test_gcp_watchdog_scale_fleet_has_no_wrong_or_missed_stop(fake, fake_gcp, seed):
    bench = _bench()
    truth = bench.build(fake, fake_gcp, 300, random.Random(seed))
    fake.now = bench.NOW
    fake.page_size.update({"compute.list": 100, "tpu.list": 25, "monitoring.list": 100})
    fake.fail("monitoring.list", 429, times=2)
    settings = Settings(projects=(bench.PROJECT,))
    clients = make_clients(
        settings,
        endpoint=fake.url,
        credentials=AnonymousCredentials(),
        retry=default_retry(initial=0.01, maximum=0.05, timeout=10),
    )
    result = run(settings, clients, now=bench.NOW, log=JsonLog(io.StringIO()))
    assert set(result.stopped) == {key for key, what in truth.items() if what == "idle"}
    assert fake.unrouted == []  # no delete, no other call than list, query and stop
    assert result.checked == len(truth)
    expected_skip = {
        "busy": "busy",
        "silent": "no_metrics",
        "device_silent": "no_metrics",
        "gap": "no_metrics",
        "restarted": "grace",
        "mig": "managed",
        "reserved": "reserved_capacity",
        "excluded": "excluded",
        "spot_tpu": "not_stoppable",
        "queued_tpu": "not_stoppable",
    }
    reasons = {key: reason.value for reason, keys in result.skipped.items() for key in keys}
    for key, what in truth.items():
        if what != "idle":
            assert reasons[key] == expected_skip[what], (key, what)
    # Two queries (GPU, TPU), one page per 100 device series, two throttled answers: never one per machine.
    device_series = len(fake.series[bench.PROJECT])  # raw series; grouping per TPU worker only merges
    assert fake.calls["monitoring.list"] <= 2 + 2 + device_series // 100
    assert fake.calls["monitoring.list"] < len(truth) / 20
