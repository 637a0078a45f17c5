"""End to end: a real Prometheus (Debian's package) on loopback loads the rendered rules,
scrapes a small DCGM-format exporter served by this test, and evaluates them.

Everything binds 127.0.0.1 on free ports; every wait is bounded; the server is
killed in teardown whatever happens.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from inference_infra.components.catalog import instance_type
from inference_infra.components.monitoring.rules import (
    ALERT_NAMES,
    GPU_IDLE_COST_SERIES,
    RuleSettings,
    render_rules_yaml,
)
from inference_infra.components.monitoring.serving import SERVING_ALERT_NAMES
from inference_infra.components.monitoring.weights import WEIGHTS_ALERT_NAMES

pytestmark = pytest.mark.slow

_LABELS = 'Hostname="gpu-vm-1",DCGM_FI_DRIVER_VERSION="550.54.15",modelName="NVIDIA A10G"'
# Two GPUs of a g5.12xlarge: GPU 0 idle, GPU 1 busy and reporting XID 79 (fallen off the bus).
DCGM_METRICS = f"""\
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="GPU-aaaa",device="nvidia0",{_LABELS}}} 0
DCGM_FI_DEV_GPU_UTIL{{gpu="1",UUID="GPU-bbbb",device="nvidia1",{_LABELS}}} 97
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{{gpu="0",UUID="GPU-aaaa",device="nvidia0",{_LABELS}}} 512
DCGM_FI_DEV_FB_USED{{gpu="1",UUID="GPU-bbbb",device="nvidia1",{_LABELS}}} 20000
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{{gpu="0",UUID="GPU-aaaa",device="nvidia0",{_LABELS}}} 22000
DCGM_FI_DEV_FB_FREE{{gpu="1",UUID="GPU-bbbb",device="nvidia1",{_LABELS}}} 2500
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{{gpu="0",UUID="GPU-aaaa",device="nvidia0",{_LABELS}}} 38
DCGM_FI_DEV_GPU_TEMP{{gpu="1",UUID="GPU-bbbb",device="nvidia1",{_LABELS}}} 71
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{{gpu="0",UUID="GPU-aaaa",device="nvidia0",{_LABELS}}} 0
DCGM_FI_DEV_XID_ERRORS{{gpu="1",UUID="GPU-bbbb",device="nvidia1",{_LABELS}}} 79
"""
WAIT_SECONDS = 45

ENGINE_PATH = "/engine/metrics"
_ENGINE = 'model_name="llama-3.1-8b",engine="0"'


def vllm_metrics(scrape: int) -> str:
    """A vLLM v0.28.0 engine's /metrics (the names of serving.VLLM_METRICS) on its n-th scrape.

    Full KV cache, one request running at a time, and every request's first token after 4 s
    (counted into the 5 s bucket, more requests on every scrape so the rates are positive).
    """
    done = 10 * scrape
    buckets = "".join(
        f'vllm:time_to_first_token_seconds_bucket{{{_ENGINE},le="{le}"}} {0 if le == "2.5" else done}\n'
        for le in ("2.5", "5.0", "7.5", "+Inf")
    )
    return (
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        f"vllm:kv_cache_usage_perc{{{_ENGINE}}} 0.98\n"
        "# TYPE vllm:num_requests_running gauge\n"
        f"vllm:num_requests_running{{{_ENGINE}}} 1\n"
        "# TYPE vllm:num_requests_waiting gauge\n"
        f"vllm:num_requests_waiting{{{_ENGINE}}} 0\n"
        "# TYPE vllm:request_success counter\n"
        f'vllm:request_success_total{{{_ENGINE},finished_reason="stop"}} {done}\n'
        "# TYPE vllm:time_to_first_token_seconds histogram\n"
        f"{buckets}"
        f"vllm:time_to_first_token_seconds_sum{{{_ENGINE}}} {4 * done}\n"
        f"vllm:time_to_first_token_seconds_count{{{_ENGINE}}} {done}\n"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dcgm_exporter() -> Iterator[str]:
    """A stand-in dcgm-exporter on loopback serving fixed metrics at /metrics; yields host:port."""

    scrapes = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == ENGINE_PATH:  # the same loopback server stands in for the vLLM engine
                scrapes[0] += 1
                body = vllm_metrics(scrapes[0]).encode()
            elif self.path == "/metrics":
                body = DCGM_METRICS.encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def prometheus(tmp_path: Path, prometheus_bin: str, dcgm_exporter: str) -> Iterator[str]:
    """A real Prometheus with the rendered rules, scraping the exporter every second; yields its base URL."""
    (tmp_path / "gpu-rules.yml").write_text(render_rules_yaml(RuleSettings()))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": ["gpu-rules.yml"],
        "scrape_configs": [
            {
                "job_name": "dcgm-exporter",
                "static_configs": [
                    {
                        "targets": [dcgm_exporter],
                        # What the EC2 scrape config's relabelling puts on a real target.
                        "labels": {"node": "i-0e2e", "instance_type": "g5.12xlarge", "cloud": "aws"},
                    }
                ],
            },
            {
                "job_name": "vllm",
                "metrics_path": ENGINE_PATH,
                "static_configs": [
                    {"targets": [dcgm_exporter], "labels": {"node": "i-0e2e", "pool": "chat"}}
                ],
            },
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = _free_port()
    log = (tmp_path / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            prometheus_bin,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(
            lambda: _get(f"{url}/-/ready", raw=True) == "ready", "Prometheus to be ready", process, tmp_path
        )
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def _get(url: str, raw: bool = False) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return None
    if raw:
        return "ready" if "Ready" in text else text
    return json.loads(text)


def _query(url: str, promql: str) -> list[dict[str, Any]]:
    body = _get(f"{url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}")
    assert body is not None, promql
    assert body["status"] == "success", body
    return body["data"]["result"]


def _wait_for(
    condition: Callable[[], Any], what: str, process: subprocess.Popen | None = None, logs: Path | None = None
) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            log = (logs / "prometheus.log").read_text() if logs else ""
            pytest.fail(f"prometheus exited with {process.returncode} while waiting for {what}:\n{log}")
        result = condition()
        if result:
            return result
        time.sleep(0.25)
    pytest.fail(f"timed out after {WAIT_SECONDS}s waiting for {what}")


def test_prometheus_scrapes_the_exporter_and_evaluates_the_gpu_rules(prometheus):
    url = prometheus

    def target_up() -> dict[str, Any] | None:
        body = _get(f"{url}/api/v1/targets")
        targets = body["data"]["activeTargets"] if body else []
        return next((t for t in targets if t["health"] == "up"), None)

    _wait_for(target_up, "a target to be up")

    def rules_evaluated() -> list[dict[str, Any]] | None:
        body = _get(f"{url}/api/v1/rules")
        groups = body["data"]["groups"] if body else []
        rules = [r for g in groups for r in g["rules"]]
        done = rules and all(
            r["health"] == "ok" and not r["lastEvaluation"].startswith("0001") for r in rules
        )
        return groups if done else None

    groups = _wait_for(rules_evaluated, "every rule to be evaluated without error")
    alerts = {r["name"]: r for g in groups for r in g["rules"] if r["type"] == "alerting"}
    assert set(alerts) == set(ALERT_NAMES) | set(SERVING_ALERT_NAMES) | set(WEIGHTS_ALERT_NAMES)

    # GPU 1 reports XID 79: the alert has no `for`, so it fires at once.
    firing = _wait_for(
        lambda: _query(url, 'ALERTS{alertname="GpuXidErrors", alertstate="firing"}'), "GpuXidErrors to fire"
    )
    assert [(a["metric"]["gpu"], a["metric"]["severity"]) for a in firing] == [("1", "critical")]
    # GPU 0 is idle and GPU 1 at 97%: GpuIdle and GpuSaturated are pending (their `for` windows
    # are 30 and 15 minutes), each for its own GPU only.
    for alert, gpu in (("GpuIdle", "0"), ("GpuSaturated", "1")):
        pending = _wait_for(
            lambda a=alert: _query(url, f'ALERTS{{alertname="{a}"}}'), f"{alert} to be pending"
        )
        assert [(p["metric"]["gpu"], p["metric"]["alertstate"]) for p in pending] == [(gpu, "pending")]
    assert _query(url, 'ALERTS{alertname=~"GpuMemoryPressure|GpuHighTemperature|DcgmExporterDown"}') == []

    # The idle GPU costs its share of a g5.12xlarge per hour; the busy one nothing idle.
    item = instance_type("g5.12xlarge", "aws")
    per_gpu = round(item.hourly_usd[item.reference_region] / item.accelerator_count, 4)
    costs = _wait_for(lambda: _query(url, GPU_IDLE_COST_SERIES), "the idle cost to be recorded")
    by_gpu = {c["metric"]["gpu"]: float(c["value"][1]) for c in costs}
    assert by_gpu == {"0": pytest.approx(per_gpu), "1": 0.0}


def test_prometheus_evaluates_the_serving_rules_on_vllm_0_28_names(prometheus):
    url = prometheus

    def engine_up() -> bool:
        return bool(_query(url, 'up{job="vllm"} == 1'))

    _wait_for(engine_up, "the vLLM engine target to be up")
    # What promtool predicts for these series (test_serving_rules.py): a full KV cache, one request at
    # a time and a 5 s p99 TTFT in a pool with no latency class (interactive, 2 s) all hold, so
    # each alert is pending until its `for` window passes; nothing else is raised.
    expected = {"ServingKvCacheFull", "ServingBatchUnderused", "ServingTtftHigh"}

    def pending() -> set[str] | None:
        found = {a["metric"]["alertname"] for a in _query(url, 'ALERTS{alertstate="pending"}')}
        return found if expected <= found else None

    found = _wait_for(pending, "the serving alerts to be pending")
    serving = {a for a in found if a.startswith(("Serving", "Model"))}
    assert serving == expected
    ttft = _query(url, 'ALERTS{alertname="ServingTtftHigh"}')
    assert [(a["metric"]["pool"], a["metric"]["slo"]) for a in ttft] == [("chat", "ttft")]
