"""InferentiaFleet: a pool of AWS Inferentia2 (inf2) or Trainium (trn1) instances.

The same machinery as GpuFleet (launch.py) with the Neuron Deep Learning AMI,
and neuron-monitor feeding NeuronCore utilization to the CloudWatch agent
(metric `neuroncore_utilization` in `CWAgent`, per `InstanceId`; see README.md).
"""

from __future__ import annotations

import pulumi

from inference_infra.components.aws.fleet_args import (
    INFERENTIA_FLEET,
    NEURON_AMI_SSM_PARAMETER,
    InferentiaFleetArgs,
)
from inference_infra.components.aws.launch import AcceleratorFleet
from inference_infra.components.catalog import Cloud, accelerator, instance_type
from inference_infra.components.fleet.plan import FleetPlan


def neuron_cores(instance_type_name: str) -> int:
    """NeuronCores of an instance type, from the catalog (chips x cores per chip)."""
    item = instance_type(instance_type_name, Cloud.AWS)
    return item.accelerator_count * accelerator(item.accelerator).cores_per_device


class InferentiaFleet(AcceleratorFleet):
    KIND = INFERENTIA_FLEET

    def __init__(
        self,
        name: str,
        args: InferentiaFleetArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        plan: FleetPlan | None = None,
    ) -> None:
        super().__init__(name, args, opts, plan=plan)
        self.neuron_cores = neuron_cores(self.instance_type)


__all__ = [
    "INFERENTIA_FLEET",
    "NEURON_AMI_SSM_PARAMETER",
    "InferentiaFleet",
    "InferentiaFleetArgs",
    "neuron_cores",
]
