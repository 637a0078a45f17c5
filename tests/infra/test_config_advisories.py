"""A stack whose pool behind an endpoint runs an engine inside a known advisory is refused (exit 2)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from inference_infra.components.errors import ConfigError
from inference_infra.infra.stack_file import parse_stack_settings

MODEL = {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4}
BASE = {
    "costCenter": "ml-platform",
    "owner": "ml-team@example.com",
    "awsNetwork": json.dumps(
        {
            "vpcId": "vpc-0abc",
            "subnets": [
                {"id": "subnet-0a", "availabilityZone": "us-east-1a"},
                {"id": "subnet-0b", "availabilityZone": "us-east-1b"},
            ],
        }
    ),
    "awsGpuFleets": json.dumps([{"name": "gpu", "instanceType": "g6e.xlarge", "model": MODEL, "spot": 1}]),
    "awsInferentiaFleets": json.dumps(
        [{"name": "inf2", "instanceType": "inf2.8xlarge", "model": MODEL, "onDemand": 1}]
    ),
}


def _settings(endpoints: list[dict]):
    return parse_stack_settings({**BASE, "endpoints": json.dumps(endpoints)}, stack="dev")


@pytest.mark.parametrize(
    "endpoint",
    [
        {"routes": [{"pools": [{"pool": "gpu", "weight": 95}, {"pool": "inf2", "weight": 5}]}]},
        {"pools": ["inf2"], "routes": [{"pools": [{"pool": "gpu"}]}]},  # by the pool header only
        {"routes": [{"pools": [{"pool": "gpu", "weight": 100}, {"pool": "inf2", "weight": 0}]}]},
    ],
)
def test_config_rejects_a_neuron_pool_behind_an_endpoint(endpoint):
    with pytest.raises(ConfigError) as raised:
        _settings([{"name": "llm", "cloud": "aws", **endpoint}])
    (problem,) = [str(p) for p in raised.value.problems]
    assert problem.startswith("inference-infra:endpoints[0] 'inf2' routes to awsInferentiaFleets[0] 'inf2'")
    assert "GHSA-94f4-hr76-p5j6 / CVE-2026-48746" in problem
    assert "keep it off every endpoint until one exists" in problem


def test_config_passes_a_neuron_pool_off_every_endpoint_with_a_warning():
    settings = _settings([{"name": "llm", "cloud": "aws", "routes": [{"pools": [{"pool": "gpu"}]}]}])
    warned = [w for w in settings.warnings if "'inf2'" in w]
    assert len(warned) == 1
    assert "on no endpoint" in warned[0]


def test_config_rejects_an_accepted_advisory_after_its_date():
    settings = _settings([{"name": "llm", "cloud": "aws", "routes": [{"pools": [{"pool": "gpu"}]}]}])
    assert settings.advisory_problems(today=date(2026, 12, 2)) == []
    (problem,) = settings.advisory_problems(today=date(2027, 1, 16))
    assert "'gpu' routes to awsGpuFleets[0] 'gpu'" in str(problem)
    assert "CVE-2026-114049" in str(problem)
