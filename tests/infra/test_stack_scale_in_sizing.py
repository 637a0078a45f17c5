"""The stack key `elastic.scaleInSizing` (issue #39): taken as the ElasticArgs field, refused by name."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import ConfigError
from tests.infra.test_aws_stack import _problems

FLEET = {"name": "serving", "instanceType": "g6.xlarge", "onDemand": 4}


@pytest.mark.parametrize("sizing", ["deficit", "share"])
def test_stack_takes_either_scale_in_sizing(sizing):
    problems = _problems(awsGpuFleets=[{**FLEET, "elastic": {"scaleInSizing": sizing}}])
    assert not [p for p in problems if "scaleInSizing" in p], problems


def test_stack_rejects_an_unknown_scale_in_sizing_naming_the_key():
    with pytest.raises(ConfigError) as raised:
        _problems(awsGpuFleets=[{**FLEET, "elastic": {"scaleInSizing": "fastest"}}])
    message = str(raised.value)
    assert "awsGpuFleets[0].elastic.scaleInSizing = 'fastest'" in message
    assert "'deficit' or 'share'" in message
    assert "Pulumi.dev.yaml" in message
