"""The neuron-monitor -> StatsD bridge that runs on Inferentia nodes."""

from __future__ import annotations

import json

from inference_infra.components.aws.node.neuron_utilization import (
    busiest_core_utilization,
    gauges,
    statsd_gauge,
)

HARDWARE = {"neuron_device_count": 1, "neuroncore_per_device_count": 2, "error": ""}


def _runtime(cores: dict[str, float], error: str = "") -> dict:
    return {
        "pid": 42,
        "error": "",
        "report": {
            "neuroncore_counters": {
                "period": 1.0,
                "neuroncores_in_use": {k: {"neuroncore_utilization": v} for k, v in cores.items()},
                "error": error,
            }
        },
    }


def test_busiest_core_utilization_reports_the_busiest_core_not_the_mean():
    report = {"neuron_hardware_info": HARDWARE, "neuron_runtime_data": [_runtime({"0": 80.0})]}
    assert busiest_core_utilization(report) == 80.0  # core 1 is unused; a mean would say 40


def test_busiest_core_utilization_keeps_one_busy_core_of_many_from_looking_idle():
    hardware = {"neuron_device_count": 12, "neuroncore_per_device_count": 2, "error": ""}  # inf2.48xlarge
    report = {"neuron_hardware_info": hardware, "neuron_runtime_data": [_runtime({"7": 95.0})]}
    assert busiest_core_utilization(report) == 95.0  # the mean over 24 cores would be ~4, below 5


def test_busiest_core_utilization_is_zero_with_nothing_running():
    assert busiest_core_utilization({"neuron_hardware_info": HARDWARE, "neuron_runtime_data": []}) == 0.0


def test_busiest_core_utilization_gives_no_value_without_evidence():
    assert busiest_core_utilization({"neuron_runtime_data": []}) is None
    broken = {**HARDWARE, "error": "driver not loaded"}
    assert busiest_core_utilization({"neuron_hardware_info": broken, "neuron_runtime_data": []}) is None
    failing = {
        "neuron_hardware_info": HARDWARE,
        "neuron_runtime_data": [_runtime({"0": 10.0}, error="timeout")],
    }
    assert busiest_core_utilization(failing) is None


def test_busiest_core_utilization_counts_a_core_shared_by_two_runtimes_once():
    report = {
        "neuron_hardware_info": HARDWARE,
        "neuron_runtime_data": [_runtime({"0": 30.0}), _runtime({"0": 50.0, "1": 10.0})],
    }
    assert busiest_core_utilization(report) == 50.0


def test_gauges_turns_report_lines_into_statsd_datagrams_and_skips_noise():
    lines = [
        json.dumps(
            {"neuron_hardware_info": HARDWARE, "neuron_runtime_data": [_runtime({"0": 50.0, "1": 50.0})]}
        ),
        "not json",
        json.dumps({"neuron_runtime_data": []}),
    ]
    assert list(gauges(lines)) == [b"neuroncore_utilization:50.00|g"]
    assert statsd_gauge(3.14159) == b"neuroncore_utilization:3.14|g"
