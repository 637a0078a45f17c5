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

from inference_infra.components.aws.fleet_args import GPU_AMI_SSM_PARAMETER, GPU_FLEET, GpuFleetArgs
from inference_infra.components.aws.launch import AcceleratorFleet


class GpuFleet(AcceleratorFleet):
    """GpuFleet(name, GpuFleetArgs(...), opts=None): see launch.AcceleratorFleet."""

    KIND = GPU_FLEET


__all__ = ["GPU_AMI_SSM_PARAMETER", "GPU_FLEET", "GpuFleet", "GpuFleetArgs"]
