"""The plan on programs written by others: remote components, data sources, secrets."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.offline_plan import plan, render_table

REMOTE = """
import pulumi

class Vpc(pulumi.ComponentResource):
    # What a generated multi-language SDK (awsx.ec2.Vpc) does: remote=True, outputs as None props.
    def __init__(self, name, opts=None):
        props = {"cidr_block": "10.0.0.0/16", "vpc_id": None, "nat_gateways": None}
        super().__init__("awsx:ec2:Vpc", name, props, opts, remote=True)

    @property
    @pulumi.getter(name="vpcId")
    def vpc_id(self):
        return pulumi.get(self, "vpc_id")

vpc = Vpc("spoke2-vpc")
pulumi.export("vpc_id", vpc.vpc_id)
"""


def test_plan_lists_remote_component_with_unknown_outputs_and_a_warning(pulumi_project):
    result = plan(pulumi_project(REMOTE), "dev")
    doc = result.as_json()
    vpc = next(r for r in doc["resources"] if r["type"] == "awsx:ec2:Vpc")
    assert vpc["custom"] is False
    assert vpc["remote"] is True
    assert vpc["outputs"] == "[unknown]"
    assert doc["outputs"] == {"vpc_id": "[unknown]"}
    assert any("awsx:ec2:Vpc 'spoke2-vpc'" in w and "not visible offline" in w for w in doc["warnings"])
    table = render_table(result)
    assert "output: vpc_id = [unknown]" in table
    assert "04da6b54" not in table + json.dumps(doc)
    assert result.exit_code == 0


@pytest.mark.parametrize("stack", ["dev"])
def test_plan_remote_component_children_are_not_registered(pulumi_project, stack):
    result = plan(pulumi_project(REMOTE), stack)
    vpc = result.capture.one("awsx:ec2:Vpc")
    assert result.capture.children(vpc) == []
