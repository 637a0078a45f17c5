"""neuron-monitor reports in, one NeuronCore utilization gauge out (runs on Inferentia/Trainium nodes).

    neuron-monitor -c neuron-monitor.json | python3 neuron_utilization.py

Reads the JSON reports neuron-monitor writes to stdout (one per line) and sends
the utilization of the instance's busiest NeuronCore, in percent, as a StatsD gauge named
`neuroncore_utilization` to the CloudWatch agent's StatsD listener. The agent
publishes it in the `CWAgent` namespace and, like the GPU metric, aggregated
per `InstanceId` (see components/aws/README.md), which is what the idle
watchdog reads.

The busiest core, not the mean: on an inf2.48xlarge (24 NeuronCores) one fully
busy core would average to about 4 % and look idle to the watchdog, which would
then stop a working instance. A core no application uses counts as 0 %, so an
instance with nothing loaded reports 0 (evidence of idleness). A report that
carries an error, or does not say how many cores the instance has, sends
nothing: missing data must never look idle.

Standard library only: it runs on the node's system Python.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterable, Mapping
from typing import Any

METRIC_NAME = "neuroncore_utilization"
STATSD_ADDRESS = ("127.0.0.1", 8125)


def busiest_core_utilization(report: Mapping[str, Any]) -> float | None:
    """Utilization (0-100) of the instance's busiest NeuronCore, or None without evidence."""
    hardware = report.get("neuron_hardware_info")
    if not isinstance(hardware, Mapping) or hardware.get("error"):
        return None
    devices = hardware.get("neuron_device_count")
    per_device = hardware.get("neuroncore_per_device_count")
    if not isinstance(devices, int) or not isinstance(per_device, int) or devices * per_device <= 0:
        return None
    busy: dict[str, float] = {}
    for runtime in report.get("neuron_runtime_data") or []:
        if not isinstance(runtime, Mapping) or runtime.get("error"):
            return None
        counters = (runtime.get("report") or {}).get("neuroncore_counters")
        if not isinstance(counters, Mapping) or counters.get("error"):
            return None
        for index, core in (counters.get("neuroncores_in_use") or {}).items():
            value = core.get("neuroncore_utilization") if isinstance(core, Mapping) else None
            if not isinstance(value, (int, float)):
                return None
            busy[index] = max(busy.get(index, 0.0), float(value))
    return min(100.0, max(busy.values(), default=0.0))


def statsd_gauge(value: float) -> bytes:
    return f"{METRIC_NAME}:{value:.2f}|g".encode()


def gauges(lines: Iterable[str]) -> Iterable[bytes]:
    """One StatsD datagram per report line that carries evidence; other lines are skipped."""
    for line in lines:
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if isinstance(report, Mapping) and (value := busiest_core_utilization(report)) is not None:
            yield statsd_gauge(value)


def main() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for datagram in gauges(sys.stdin):
            sock.sendto(datagram, STATSD_ADDRESS)


if __name__ == "__main__":
    main()
