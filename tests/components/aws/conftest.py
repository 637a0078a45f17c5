"""Subnets and argument builders shared by the AWS component tests."""

from __future__ import annotations

import pytest

from inference_infra.components.aws.fleet_args import FleetArgs
from inference_infra.components.aws.network import SubnetRef

SUBNETS = [
    SubnetRef(id="subnet-0a", availability_zone="us-east-1a"),
    SubnetRef(id="subnet-0b", availability_zone="us-east-1b"),
]


@pytest.fixture
def subnets() -> list[SubnetRef]:
    return list(SUBNETS)


@pytest.fixture
def fleet_args():
    """FleetArgs with sensible test defaults; keyword arguments (old input names too) override them."""

    def build(cls=FleetArgs, **overrides) -> FleetArgs:
        values = {"instance_type": "g5.xlarge", "vpc_id": "vpc-0test", "subnets": SUBNETS, "spot": 1}
        return cls(**{**values, **overrides})

    return build
