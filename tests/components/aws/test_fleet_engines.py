"""Fleets with engines: user data runs them, the security group opens every engine port, bad args rejected."""

from __future__ import annotations

import pytest
import yaml

from inference_infra.components.aws import GpuFleet, GpuFleetArgs
from inference_infra.components.aws.bootstrap import decode_user_data
from inference_infra.components.aws.fleet_args import ModelSource
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def _engines(**overrides):
    return plan_engines(
        model="llama-3.1-70b",
        traffic=Traffic(context_tokens=8192, concurrency=64),
        precision=None,
        instance_type_name="p5.48xlarge",
        cloud="aws",
        **overrides,
    )


def _args(fleet_args, **overrides):
    values = {
        "instance_type": "p5.48xlarge",
        "model": ModelSource(bucket_name="acme-models", prefix="meta-llama/70b"),
        "inference_security_group_ids": ["sg-0lb"],
        "engines": _engines(),
    }
    return fleet_args(GpuFleetArgs, **(values | overrides))


def test_gpu_fleet_with_engines_opens_every_engine_port(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _args(fleet_args)))
    [rule] = [r.props for r in capture.of_type(INGRESS) if r.props["fromPort"] == 8000]
    assert (rule["toPort"], rule["referencedSecurityGroupId"]) == (8001, "sg-0lb")


def test_gpu_fleet_with_engines_starts_them_from_user_data(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _args(fleet_args)))
    template = capture.one("aws:ec2/launchTemplate:LaunchTemplate").props
    user_data = decode_user_data(template["userData"])
    assert "inference-engine@.service" in user_data
    assert [
        "systemctl",
        "enable",
        "--now",
        "--no-block",
        "inference-engine@0.service",
        "inference-engine@1.service",
    ] in yaml.safe_load(user_data)["runcmd"]
    assert "--tensor-parallel-size 4" in user_data


def test_gpu_fleet_rejects_engines_without_prefetched_model(plan_of, fleet_args):
    with pytest.raises(ValueError, match=r"engines 'llama-3\.1-70b' need model with prefetch"):
        plan_of(GpuFleet("serving", _args(fleet_args, model=None)))


def test_gpu_fleet_rejects_unknown_engine_argument(plan_of, fleet_args):
    args = _args(fleet_args, engines=_engines(extra_args=["--max-batch-size", "8"]))
    with pytest.raises(ValueError, match=r"engines.engine_args\[0\] '--max-batch-size' is not an option"):
        plan_of(GpuFleet("serving", args))


def test_gpu_fleet_rejects_engine_ports_over_reserved_ports(plan_of, fleet_args):
    args = _args(fleet_args, inference_port=9399, engines=_engines(first_port=9399))
    with pytest.raises(ValueError, match=r"engine ports 9399\.\.9400 must not include"):
        plan_of(GpuFleet("serving", args))
