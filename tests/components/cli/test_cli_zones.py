"""`plan` exits 2 with one paragraph naming the zone, the program line and the fix when a program
places a fleet in a zone its region lacks, outside aws:region, or a TPU slice where its generation
is not offered (issues #35 item 4, #33 item 8)."""

from __future__ import annotations

import pytest

from inference_infra.components.cli import main

AWS_FLEET = """
from inference_infra.components.aws import GpuFleet, GpuFleetArgs, SubnetRef

GpuFleet("serving", GpuFleetArgs(instance_type="g5.xlarge", vpc_id="vpc-0a", spot=1,
    subnets=[SubnetRef(id="subnet-0a", availability_zone="{zone}")]))
"""
TPU_SLICE = """
from inference_infra.components.gcp import TpuVm, TpuVmArgs

TpuVm("qwen", TpuVmArgs(zone="us-central1-a", accelerator_type="v6e-4",
    network="projects/p/global/networks/n", subnetwork="projects/p/regions/us-central1/subnetworks/s"))
"""


@pytest.mark.parametrize(
    ("zone", "region", "expected"),
    [
        ("us-east-1z", "us-east-1", "'us-east-1z' is not a zone of us-east-1 (did you mean 'us-east-1f'"),
        ("us-east-1a", "eu-west-1", "'us-east-1a' is outside the provider's region 'eu-west-1'"),
        (
            "us-east-1a",
            "us-east-9",
            "aws:region (the aws provider's region) 'us-east-9' is an unknown region",
        ),
    ],
)
def test_cli_plan_rejects_aws_zones_with_exit_2(pulumi_project, capsys, zone, region, expected):
    folder = pulumi_project(AWS_FLEET.replace("{zone}", zone), {"dev": f"config:\n  aws:region: {region}\n"})
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert expected in err
    assert "__main__.py:4" in err  # the program's line
    assert "Traceback" not in err


def test_cli_plan_rejects_a_tpu_slice_where_its_generation_is_not_offered(pulumi_project, capsys):
    folder = pulumi_project(TPU_SLICE, {"dev": "config:\n  gcp:project: p\n  gcp:region: us-central1\n"})
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "zone 'us-central1-a' does not offer TPU v6e (v6e-4) (in its region: us-central1-b)" in err
    assert "Traceback" not in err
