"""One serving fleet per target, valid as given: the args the skeleton tests plan (test_plan.py's step count,
test_floor_messages.py's one message per input), so a change to a fleet's required inputs is made once."""

from __future__ import annotations

from inference_infra.components.aws.fleet_args import GpuFleetArgs as AwsArgs
from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.aws.network_args import SubnetRef
from inference_infra.components.fleet import ElasticArgs, ServedModel
from inference_infra.components.gcp.gpu_fleet_args import GpuFleetArgs as GcpArgs
from inference_infra.components.gcp.tpu_vm_args import TpuVmArgs
from tests.components.gcp.helpers import pinned_weights

LLAMA = ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=4)
QWEN = ServedModel(name="qwen2.5-7b", context_tokens=8192, concurrency=32)


def aws_args() -> AwsArgs:
    """An elastic g6.xlarge pool serving Llama 3.1 8B from S3."""
    return AwsArgs(
        instance_type="g6.xlarge",
        vpc_id="vpc-0a",
        subnets=[SubnetRef(id="subnet-0a", availability_zone="us-east-1a")],
        on_demand=4,
        model=LLAMA,
        weights=S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256="ab" * 32),
        elastic=ElasticArgs(),
    )


def gcp_args() -> GcpArgs:
    """An elastic g2-standard-8 fleet in us-central1-a serving Llama 3.1 8B from Cloud Storage."""
    return GcpArgs(
        machine_type="g2-standard-8",
        zone="us-central1-a",
        subnetwork="projects/p-1234/regions/us-central1/subnetworks/gpu",
        network="projects/p-1234/global/networks/gpu",
        spot=4,
        model=LLAMA,
        weights=pinned_weights("models", ["gs://models/llama-3.1-8b-instruct"]),
        elastic=ElasticArgs(),
    )


def tpu_args(zone: str | None = "us-central1-a") -> TpuVmArgs:
    """A v5litepod-8 slice serving Qwen2.5 7B from Cloud Storage."""
    return TpuVmArgs(
        accelerator_type="v5litepod-8",
        zone=zone,
        network="n",
        subnetwork="s",
        model=QWEN,
        weights=pinned_weights("models", ["gs://models/qwen2.5-7b"]),
    )
