"""InferentiaFleet: the same machinery with the Neuron AMI and the NeuronCore utilization pipeline."""

from __future__ import annotations

import pytest
import yaml

from inference_infra.components.aws import InferentiaFleet, InferentiaFleetArgs
from inference_infra.components.aws.bootstrap import decode_user_data
from inference_infra.components.aws.inferentia_fleet import neuron_cores
from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.pricing import price_capture


def test_inferentia_fleet_uses_the_neuron_ami_and_bridge(plan_of, fleet_args):
    capture = plan_of(InferentiaFleet("inf2", fleet_args(InferentiaFleetArgs, instance_type="inf2.8xlarge")))
    template = capture.one("aws:ec2/launchTemplate:LaunchTemplate").props
    assert (
        template["imageId"]
        == "resolve:ssm:/aws/service/neuron/dlami/multi-framework/amazon-linux-2023/latest/image_id"
    )
    assert template["metadataOptions"]["httpTokens"] == "required"
    document = yaml.safe_load(decode_user_data(template["userData"]))
    paths = {f["path"] for f in document["write_files"]}
    assert "/usr/local/lib/inference-infra/neuron_utilization.py" in paths
    assert not any("dcgm-exporter" in c for c in document["runcmd"])
    instance = capture.one("aws:ec2/instance:Instance").props
    assert instance["instanceType"] == "inf2.8xlarge"
    assert instance["instanceMarketOptions"]["marketType"] == "spot"


def test_inferentia_fleet_is_priced_from_the_catalog(plan_of, fleet_args):
    capture = plan_of(
        InferentiaFleet(
            "inf2", fleet_args(InferentiaFleetArgs, instance_type="inf2.xlarge", spot=0, on_demand=2)
        )
    )
    assert price_capture(capture).accelerators_hourly_usd == pytest.approx(2 * 0.7582)


def test_inferentia_fleet_knows_neuron_cores_from_the_catalog():
    assert neuron_cores("inf2.48xlarge") == 24
    assert neuron_cores("trn1.32xlarge") == 32


def test_inferentia_fleet_accepts_trainium(plan_of, fleet_args):
    capture = plan_of(InferentiaFleet("trn1", fleet_args(InferentiaFleetArgs, instance_type="trn1.2xlarge")))
    assert capture.one("aws:ec2/instance:Instance").props["instanceType"] == "trn1.2xlarge"


def test_inferentia_fleet_rejects_gpu_instance_type(fleet_args):
    with pytest.raises(
        InputError, match=r"instance_type 'g5.xlarge' carries NVIDIA GPU, not AWS Neuron .* use GpuFleet"
    ):
        InferentiaFleet("inf2", fleet_args(InferentiaFleetArgs, instance_type="g5.xlarge"))


def test_inferentia_fleet_rejects_unknown_type_naming_neuron_matches(fleet_args):
    with pytest.raises(
        InputError, match=r"instance_type 'inf2.4xlarge' has no AWS Neuron .* close matches: inf2"
    ):
        InferentiaFleet("inf2", fleet_args(InferentiaFleetArgs, instance_type="inf2.4xlarge"))


def test_inferentia_fleet_rejects_a_root_volume_smaller_than_the_ami(fleet_args):
    with pytest.raises(InputError, match=r"root_volume_gib 80 must be 100..16384"):
        InferentiaFleet(
            "inf2", fleet_args(InferentiaFleetArgs, instance_type="inf2.xlarge", root_volume_gib=80)
        )
