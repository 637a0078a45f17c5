"""GpuFleet: a pool of NVIDIA GPU instances of one catalog type (reserved, spot and on-demand).

    from inference_infra.components.aws import GpuFleet, GpuFleetArgs, S3Weights
    from inference_infra.components.fleet import ServedModel
    fleet = GpuFleet("serving-70b", GpuFleetArgs(
        vpc_id=..., subnets=[...], reserved=2,
        reservation=NewCapacityReservation(availability_zone="us-east-1a", instance_count=2),
        instance_type="p5.48xlarge",  # or None: the capacity planner picks from the model
        model=ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64),
        weights=S3Weights(bucket_name=store.bucket_name, prefix="meta-llama/Llama-3.1-70B-Instruct")))
    fleet.serving            # its engines (ports 8000, 8001, ...) and cold start
    fleet.endpoint_pool()    # the pool an InferenceEndpoint routes to

The machinery (launch template, security group, IAM, reservations, instances)
is shared with InferentiaFleet and lives in launch.py; README.md next to this
file explains the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from inference_infra.components.arguments import renamed_inputs
from inference_infra.components.aws.bootstrap import AcceleratorKind
from inference_infra.components.aws.fleet_args import FleetArgs, FleetKind
from inference_infra.components.aws.launch import AcceleratorFleet
from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.serving.host_images import AWS_GPU_AMI

# AWS's public parameter for the current Deep Learning Base OSS NVIDIA Driver GPU AMI (Amazon Linux 2023):
# its driver (595.x as of 2026-09) runs the pinned vLLM's CUDA 13 runtime; the sourced table and its test
# are in components/serving/host_images.py.
GPU_AMI_SSM_PARAMETER = AWS_GPU_AMI.name

GPU_FLEET = FleetKind(
    component="GpuFleet",
    family=AcceleratorFamily.NVIDIA_GPU,
    accelerator=AcceleratorKind.NVIDIA,
    ami_ssm_parameter=GPU_AMI_SSM_PARAMETER,
    min_root_volume_gib=75,
)


@renamed_inputs()
@dataclass(frozen=True, kw_only=True)
class GpuFleetArgs(FleetArgs):
    """Arguments of a GpuFleet (all of FleetArgs; see launch.py)."""


class GpuFleet(AcceleratorFleet):
    """GpuFleet(name, GpuFleetArgs(...), opts=None): see launch.AcceleratorFleet."""

    KIND = GPU_FLEET
