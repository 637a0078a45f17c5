"""The planner against published maximum-throughput measurements: every point within 25%."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import find_instance_type
from inference_infra.components.planner import Assumptions, model_spec
from inference_infra.components.planner.calibration import TOLERANCE, errors, points
from inference_infra.components.planner.measurements import MEASUREMENTS
from inference_infra.components.planner.precision import Quantization

POINTS = points()


def test_measurements_every_point_is_sourced_dated_and_known_to_the_planner():
    assert len(MEASUREMENTS) >= 15
    for m in MEASUREMENTS:
        assert m.source.startswith("https://")
        assert m.as_of.year >= 2025
        assert m.engine
        assert m.engine_version
        assert m.tokens_per_s > 0
        assert m.prompt_tokens > 0
        assert m.output_tokens > 0
        model_spec(m.model)  # raises for an unknown preset
        assert find_instance_type(m.instance_type) is not None
        assert 1 <= m.devices <= find_instance_type(m.instance_type).accelerator_count
        Quantization(m.weights)
        Quantization(m.kv_cache)


@pytest.mark.parametrize(
    ("point", "error"),
    errors(table=POINTS),
    ids=[
        f"{p.measurement.model}-{p.measurement.instance_type}-x{p.measurement.devices}-"
        f"{p.measurement.prompt_tokens}-{p.measurement.output_tokens}"
        for p in POINTS
    ],
)
def test_planner_estimate_is_within_25_percent_of_each_measurement(point, error):
    assert abs(error) <= TOLERANCE, (point.measurement, f"{error:+.1%}")


def test_planner_calibration_fills_the_devices_as_a_max_throughput_run_does():
    for p in POINTS:
        assert p.layout.fits
        assert p.layout.tensor_parallel * p.layout.replicas <= p.measurement.devices
        assert 1 <= p.traffic.concurrency <= p.measurement.max_batch


def test_planner_calibration_without_the_tensor_parallel_factor_misses_the_405b_points():
    # The factor earns its place: with free communication the TP=8 points are far off.
    flat = Assumptions(tensor_parallel_efficiency=1.0)
    worst = max(abs(e) for p, e in errors(flat, POINTS) if p.measurement.devices == 8)
    assert worst > TOLERANCE
