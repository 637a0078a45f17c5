"""InferentiaFleet: a pool of AWS Inferentia2 (inf2) or Trainium (trn1) instances.

The same machinery as GpuFleet (launch.py) with the Neuron Deep Learning AMI,
and neuron-monitor feeding NeuronCore utilization to the CloudWatch agent
(metric `neuroncore_utilization` in `CWAgent`, per `InstanceId`; see README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import renamed_inputs
from inference_infra.components.aws.bootstrap import AcceleratorKind
from inference_infra.components.aws.fleet_args import FleetArgs, FleetKind
from inference_infra.components.aws.launch import AcceleratorFleet
from inference_infra.components.catalog import AcceleratorFamily, Cloud, accelerator, instance_type
from inference_infra.components.serving.host_images import AWS_NEURON_AMI

# AWS's public parameter for the current Deep Learning AMI Neuron (Amazon Linux 2023): its Neuron driver
# is at least as new as the pinned container's SDK (components/serving/host_images.py).
NEURON_AMI_SSM_PARAMETER = AWS_NEURON_AMI.name

INFERENTIA_FLEET = FleetKind(
    component="InferentiaFleet",
    family=AcceleratorFamily.AWS_NEURON,
    accelerator=AcceleratorKind.NEURON,
    ami_ssm_parameter=NEURON_AMI_SSM_PARAMETER,
    min_root_volume_gib=100,
)


def neuron_cores(instance_type_name: str) -> int:
    """NeuronCores of an instance type, from the catalog (chips x cores per chip)."""
    item = instance_type(instance_type_name, Cloud.AWS)
    return item.accelerator_count * accelerator(item.accelerator).cores_per_device


@renamed_inputs()
@dataclass(frozen=True, kw_only=True)
class InferentiaFleetArgs(FleetArgs):
    """Arguments of an InferentiaFleet (all of FleetArgs; see launch.py)."""


class InferentiaFleet(AcceleratorFleet):
    KIND = INFERENTIA_FLEET

    def __init__(
        self, name: str, args: InferentiaFleetArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(name, args, opts)
        self.neuron_cores = neuron_cores(self.instance_type)
