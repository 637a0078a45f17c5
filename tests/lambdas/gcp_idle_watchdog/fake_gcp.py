"""A local fake of the Compute Engine, Cloud TPU, Cloud Monitoring and Pub/Sub REST APIs on 127.0.0.1.

Only what the GCP idle watchdog calls, with the paths, query parameters and JSON shapes of the real
APIs (Compute `v1` instances.aggregatedList and instances.stop, TPU `v2` nodes.list and nodes.stop,
Monitoring `v3` projects.timeSeries.list with an aggregation, Pub/Sub `v1` topics.publish), so that
Google's own client libraries (REST transport) talk to it unchanged. Faults are injected per route:
HTTP errors for the next n calls (429 throttling, 5xx), small pages, `executionErrors` in a
Monitoring answer (partial results), filters ignored, and a server clock that differs from the
caller's (skew). Every call is counted per route.

Used by tests/lambdas/gcp_idle_watchdog/ and benchmarks/gcp_watchdog_scale.py (loaded by path).
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

COMPUTE = "https://www.googleapis.com/compute/v1"
_AGG = re.compile(r"^/compute/v1/projects/([^/]+)/aggregated/instances$")
_STOP_VM = re.compile(r"^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances/([^/]+)/stop$")
_LIST_TPU = re.compile(r"^/v2/projects/([^/]+)/locations/([^/]+)/nodes$")
_STOP_TPU = re.compile(r"^/v2/(projects/[^/]+/locations/[^/]+/nodes/[^/]+):stop$")
_SERIES = re.compile(r"^/v3/projects/([^/]+)/timeSeries$")
_PUBLISH = re.compile(r"^/v1/(projects/[^/]+/topics/[^/]+):publish$")
_FILTER_STATUS = re.compile(r'status\s*=\s*"([^"]+)"')
_FILTER_LABEL = re.compile(r'labels\.([a-z0-9_-]+)\s*=\s*"([^"]*)"')
_FILTER_METRIC = re.compile(r'metric\.type\s*=\s*"([^"]+)"')
_FILTER_RESOURCE = re.compile(r'resource\.type\s*=\s*"([^"]+)"')


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Series:
    """One device's raw samples: (time, percent)."""

    metric: str
    resource_type: str
    resource_labels: dict[str, str]
    metric_labels: dict[str, str]
    samples: list[tuple[datetime, float]] = field(default_factory=list)


@dataclass
class Fault:
    status: int
    times: int
    message: str = "injected fault"


class FakeGcp:
    """The fake's state; `serve()` runs it on 127.0.0.1 (a free port) in a thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.vms: dict[str, list[dict[str, Any]]] = defaultdict(list)  # project -> Instance JSON
        self.tpus: dict[str, list[dict[str, Any]]] = defaultdict(list)  # project -> Node JSON
        self.series: dict[str, list[Series]] = defaultdict(list)  # project -> series
        self.calls: Counter[str] = Counter()
        self.faults: dict[str, list[Fault]] = defaultdict(list)
        self.refuse: dict[str, tuple[int, str]] = {}  # machine key -> (status, message) on stop
        self.stopped: list[str] = []
        self.unrouted: list[tuple[str, str]] = []  # any other call (a DELETE, say): the tests want none
        self.published: list[dict[str, Any]] = []
        self.page_size = {"compute.list": 500, "tpu.list": 1000, "monitoring.list": 100_000}
        self.partial_monitoring = False  # executionErrors on every Monitoring answer
        self.ignore_filters = False
        self.now: datetime | None = None  # the server's clock (None: the wall clock)
        self._server: ThreadingHTTPServer | None = None
        self._ids = 1000

    # -- setup -------------------------------------------------------------------------------
    def next_id(self) -> str:
        self._ids += 1
        return str(self._ids * 7919)

    def add_vm(self, project: str, zone: str, name: str, **fields: Any) -> dict[str, Any]:
        vm = {
            "kind": "compute#instance",
            "id": self.next_id(),
            "name": name,
            "zone": f"{COMPUTE}/projects/{project}/zones/{zone}",
            "machineType": f"{COMPUTE}/projects/{project}/zones/{zone}/machineTypes/g2-standard-8",
            "status": "RUNNING",
            "labels": {"auto-shutdown": "true"},
            "creationTimestamp": "2026-11-01T00:00:00.000-07:00",
            "scheduling": {"provisioningModel": "STANDARD"},
            "guestAccelerators": [
                {
                    "acceleratorType": f"{COMPUTE}/projects/{project}/zones/{zone}/acceleratorTypes/nvidia-l4",  # noqa: E501
                    "acceleratorCount": 1,
                }
            ],
            "disks": [{"type": "PERSISTENT", "boot": True}],
        }
        vm.update(fields)
        self.vms[project].append(vm)
        return vm

    def add_tpu(
        self, project: str, zone: str, name: str, *, workers: int = 1, **fields: Any
    ) -> dict[str, Any]:
        node = {
            "name": f"projects/{project}/locations/{zone}/nodes/{name}",
            "id": self.next_id(),
            "acceleratorType": "v5litepod-8",
            "state": "READY",
            "labels": {"auto-shutdown": "true"},
            "createTime": "2026-11-01T00:00:00Z",
            "schedulingConfig": {},
            "networkEndpoints": [{"ipAddress": f"10.0.0.{n + 2}", "port": 8470} for n in range(workers)],
        }
        node.update(fields)
        self.tpus[project].append(node)
        return node

    def add_gpu_series(
        self,
        project: str,
        vm: dict[str, Any],
        gpu: int,
        samples: list[tuple[datetime, float]],
        metric: str = "agent.googleapis.com/gpu/utilization",
    ) -> None:
        zone = vm["zone"].rsplit("/", 1)[-1]
        labels = {"project_id": project, "instance_id": vm["id"], "zone": zone}
        gpu_labels = {"gpu_number": str(gpu), "model": "NVIDIA L4", "uuid": f"GPU-{vm['id']}-{gpu}"}
        self.series[project].append(Series(metric, "gce_instance", labels, gpu_labels, samples))

    def add_tpu_series(
        self,
        project: str,
        node: dict[str, Any],
        worker: int,
        chip: int,
        samples: list[tuple[datetime, float]],
        metric: str = "tpu.googleapis.com/accelerator/duty_cycle",
        resource_type: str = "tpu_worker",
    ) -> None:
        _, _, _, zone, _, name = node["name"].split("/")
        labels = {"project_id": project, "zone": zone, "node_id": name, "worker_id": str(worker)}
        self.series[project].append(
            Series(metric, resource_type, labels, {"accelerator_id": str(chip)}, samples)
        )

    def fail(self, route: str, status: int, times: int = 1) -> None:
        """The next `times` calls of route (`compute.list`, `compute.stop`, `tpu.list`, `tpu.stop`,
        `monitoring.list`, `pubsub.publish`) answer HTTP `status`."""
        self.faults[route].append(Fault(status, times))

    # -- serving -----------------------------------------------------------------------------
    def serve(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                url = urlsplit(self.path)
                status, answer = fake.route(method, unquote(url.path), parse_qs(url.query), body)
                self._answer(status, answer)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def clock(self) -> datetime:
        return self.now or datetime.now(UTC)

    def route(
        self, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]
    ) -> tuple[int, dict]:
        for name, pattern, verb, handler in (
            ("compute.list", _AGG, "GET", self._aggregated),
            ("compute.stop", _STOP_VM, "POST", self._stop_vm),
            ("tpu.list", _LIST_TPU, "GET", self._list_tpu),
            ("tpu.stop", _STOP_TPU, "POST", self._stop_tpu),
            ("monitoring.list", _SERIES, "GET", self._series),
            ("pubsub.publish", _PUBLISH, "POST", self._publish),
        ):
            match = pattern.match(path)
            if match and method == verb:
                with self.lock:
                    self.calls[name] += 1
                    if (fault := self._take_fault(name)) is not None:
                        return fault.status, _error(fault.status, fault.message)
                    return handler(match, query, body)
        with self.lock:
            self.unrouted.append((method, path))
        return 404, _error(404, f"no route for {method} {path}")

    def _take_fault(self, route: str) -> Fault | None:
        queue = self.faults.get(route) or []
        while queue:
            fault = queue[0]
            if fault.times <= 0:
                queue.pop(0)
                continue
            fault.times -= 1
            return fault
        return None

    # -- Compute Engine ----------------------------------------------------------------------
    def _aggregated(self, match: re.Match, query: dict, body: dict) -> tuple[int, dict]:
        project = match.group(1)
        text = (query.get("filter") or [""])[0]
        wanted_status = _FILTER_STATUS.findall(text)
        wanted_labels = _FILTER_LABEL.findall(text)
        rows = [
            vm
            for vm in self.vms.get(project, [])
            if self.ignore_filters
            or (
                all(vm["status"] == s for s in wanted_status)
                and all(vm.get("labels", {}).get(k) == v for k, v in wanted_labels)
            )
        ]
        size = min(int((query.get("maxResults") or ["500"])[0]), self.page_size["compute.list"])
        start = int((query.get("pageToken") or ["0"])[0])
        page = rows[start : start + size]
        items: dict[str, Any] = {}
        for vm in page:
            zone = vm["zone"].rsplit("/", 1)[-1]
            items.setdefault(f"zones/{zone}", {"instances": []})["instances"].append(vm)
        answer: dict[str, Any] = {
            "kind": "compute#instanceAggregatedList",
            "id": f"projects/{project}/aggregated/instances",
            "items": items,
        }
        if start + size < len(rows):
            answer["nextPageToken"] = str(start + size)
        return 200, answer

    def _stop_vm(self, match: re.Match, query: dict, body: dict) -> tuple[int, dict]:
        project, zone, name = match.groups()
        key = f"projects/{project}/zones/{zone}/instances/{name}"
        if key in self.refuse:
            status, message = self.refuse[key]
            return status, _error(status, message)
        for vm in self.vms.get(project, []):
            if vm["name"] == name and vm["zone"].endswith(f"/zones/{zone}"):
                has_ssd = any(d.get("type") == "SCRATCH" for d in vm.get("disks", []))
                if has_ssd and (query.get("discardLocalSsd") or [""])[0] != "true":
                    return 400, _error(400, "Instances with local SSD need discardLocalSsd")
                vm["status"] = "TERMINATED"
                self.stopped.append(key)
                return 200, {
                    "kind": "compute#operation",
                    "id": self.next_id(),
                    "name": f"operation-stop-{name}",
                    "operationType": "stop",
                    "status": "RUNNING",
                    "targetLink": f"{COMPUTE}/{key}",
                    "zone": f"{COMPUTE}/projects/{project}/zones/{zone}",
                    "selfLink": f"{COMPUTE}/projects/{project}/zones/{zone}/operations/operation-stop-{name}",
                }
        return 404, _error(404, f"The resource '{key}' was not found")

    # -- Cloud TPU ---------------------------------------------------------------------------
    def _list_tpu(self, match: re.Match, query: dict, body: dict) -> tuple[int, dict]:
        project, location = match.groups()
        rows = [
            n for n in self.tpus.get(project, []) if location == "-" or n["name"].split("/")[3] == location
        ]
        size = self.page_size["tpu.list"]
        start = int((query.get("pageToken") or ["0"])[0])
        answer: dict[str, Any] = {"nodes": rows[start : start + size]}
        if start + size < len(rows):
            answer["nextPageToken"] = str(start + size)
        return 200, answer

    def _stop_tpu(self, match: re.Match, query: dict, body: dict) -> tuple[int, dict]:
        key = match.group(1)
        if key in self.refuse:
            status, message = self.refuse[key]
            return status, _error(status, message)
        for node in self.tpus.get(key.split("/")[1], []):
            if node["name"] == key:
                node["state"] = "STOPPING"
                self.stopped.append(key)
                operation = (
                    f"{key.rsplit('/nodes/', 1)[0]}/operations/operation-stop-{key.rsplit('/', 1)[-1]}"
                )
                return 200, {"name": operation, "done": False}
        return 404, _error(404, f"{key} not found")

    # -- Cloud Monitoring --------------------------------------------------------------------
    def _series(self, match: re.Match, query: dict, body: dict) -> tuple[int, dict]:
        project = match.group(1)
        text = (query.get("filter") or [""])[0]
        metric = (_FILTER_METRIC.findall(text) or [""])[0]
        resource = (_FILTER_RESOURCE.findall(text) or [""])[0]
        start = _parse_time(query["interval.startTime"][0])
        end = _parse_time(query["interval.endTime"][0])
        period = int(query["aggregation.alignmentPeriod"][0].rstrip("s"))
        if query.get("aggregation.perSeriesAligner") != ["ALIGN_MAX"]:
            return 400, _error(400, "the fake aligns with ALIGN_MAX only")
        group_by = query.get("aggregation.groupByFields", [])
        groups: dict[tuple, dict[datetime, float]] = {}
        labels_of: dict[tuple, tuple[dict, dict]] = {}
        visible_until = min(end, self.clock())
        for series in self.series.get(project, []):
            if series.metric != metric or series.resource_type != resource:
                continue
            key = tuple(_get(series, path) for path in group_by)
            labels_of[key] = (
                {
                    p.split(".", 2)[2]: v
                    for p, v in zip(group_by, key, strict=True)
                    if p.startswith("resource.")
                },
                {
                    p.split(".", 2)[2]: v
                    for p, v in zip(group_by, key, strict=True)
                    if p.startswith("metric.")
                },
            )
            buckets = groups.setdefault(key, {})
            for moment, value in series.samples:
                if not start < moment <= visible_until:
                    continue
                offset = (moment - start).total_seconds()
                bucket_end = start + timedelta(seconds=-(-offset // period) * period)
                if bucket_end > visible_until:
                    continue  # the period is not over on the server's clock
                buckets[bucket_end] = max(value, buckets.get(bucket_end, value))
        all_series = []
        for key, buckets in groups.items():
            if not buckets:
                continue
            resource_labels, metric_labels = labels_of[key]
            all_series.append(
                {
                    "metric": {"type": metric, "labels": metric_labels},
                    "resource": {"type": resource, "labels": resource_labels},
                    "metricKind": "GAUGE",
                    "valueType": "DOUBLE",
                    "points": [
                        {
                            "interval": {
                                "startTime": rfc3339(t - timedelta(seconds=period)),
                                "endTime": rfc3339(t),
                            },
                            "value": {"doubleValue": v},
                        }
                        for t, v in sorted(buckets.items(), reverse=True)  # newest first, as Monitoring
                    ],
                }
            )
        size = self.page_size["monitoring.list"]
        first = int((query.get("pageToken") or ["0"])[0])
        answer: dict[str, Any] = {"timeSeries": all_series[first : first + size], "unit": "%"}
        if first + size < len(all_series):
            answer["nextPageToken"] = str(first + size)
        if self.partial_monitoring:
            answer["executionErrors"] = [{"code": 14, "message": "some data could not be read"}]
        return 200, answer

    # -- Pub/Sub -----------------------------------------------------------------------------
    def _publish(self, match: re.Match, query: dict, body: dict) -> tuple[int, dict]:
        for message in body.get("messages", []):
            self.published.append(
                {
                    "topic": match.group(1),
                    "data": base64.b64decode(message.get("data", "")).decode(),
                    "attributes": message.get("attributes", {}),
                }
            )
        return 200, {"messageIds": [str(n) for n in range(len(body.get("messages", [])))]}


def _get(series: Series, path: str) -> str:
    where, _, name = path.split(".", 2)
    return (series.resource_labels if where == "resource" else series.metric_labels).get(name, "")


def _error(status: int, message: str) -> dict[str, Any]:
    names = {
        400: "INVALID_ARGUMENT",
        404: "NOT_FOUND",
        409: "ABORTED",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        502: "UNAVAILABLE",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
    }
    return {"error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}}


def samples(
    since: datetime, until: datetime, value: float | Any, *, every_seconds: int = 60
) -> list[tuple[datetime, float]]:
    """Samples every `every_seconds` in (since, until]; value is a number or a function of the time."""
    out = []
    moment = since + timedelta(seconds=every_seconds)
    while moment <= until:
        out.append((moment, float(value(moment) if callable(value) else value)))
        moment += timedelta(seconds=every_seconds)
    return out
