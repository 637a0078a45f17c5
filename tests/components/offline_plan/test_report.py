"""The plan's JSON object (docs/reference.md) and its readable table."""

from __future__ import annotations

import json
import re

import pytest

from inference_infra.components.offline_plan import plan, render_table
from inference_infra.components.offline_plan.report import display_type

PROGRAM = """
import pulumi, pulumi_aws as aws

class Pool(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("demo:index:Pool", name, None, None)
        opts = pulumi.ResourceOptions(parent=self)
        self.gpus = [aws.ec2.Instance(f"{name}-{i}", instance_type="p5.48xlarge", ami="ami-1",
                                      tags={"CostCenter": "ml"}, opts=opts) for i in range(2)]
        self.register_outputs({})

Pool("serving")
aws.iam.Role("role", assume_role_policy=pulumi.Output.secret("{}"))
"""


@pytest.fixture
def result(pulumi_project):
    return plan(pulumi_project(PROGRAM, {"prod": "config:\n  aws:region: us-east-1\n"}), "prod")


def test_plan_json_has_the_spec_shape(result):
    doc = json.loads(json.dumps(result.as_json()))
    assert {"project", "stack", "resources", "cost", "policy"} <= set(doc)
    assert (doc["project"], doc["stack"]) == ("outside", "prod")
    gpu = next(r for r in doc["resources"] if r["name"] == "serving-0")
    assert set(gpu) == {"urn", "type", "name", "parent", "custom", "props"}
    assert gpu["type"] == "aws:ec2/instance:Instance"
    assert gpu["custom"] is True
    assert gpu["props"]["instanceType"] == "p5.48xlarge"
    assert gpu["props"]["tags"] == {"CostCenter": "ml"}
    pool = next(r for r in doc["resources"] if r["name"] == "serving")
    assert pool["custom"] is False
    assert gpu["parent"] == pool["urn"]
    stack = next(r for r in doc["resources"] if r["type"] == "pulumi:pulumi:Stack")
    assert stack["parent"] is None
    assert doc["policy"]["evaluated"] is True
    assert doc["policy"]["violations"]
    assert all(set(v) == {"policy", "enforcement", "urn", "message"} for v in doc["policy"]["violations"])


def test_plan_json_cost_is_hourly_times_730(result):
    cost = result.as_json()["cost"]
    assert cost["hourly_usd"] == pytest.approx(2 * 55.04)
    assert cost["monthly_usd"] == pytest.approx(cost["hourly_usd"] * 730)
    assert {i["basis"] for i in cost["items"]} == {"p5.48xlarge on-demand us-east-1"}
    assert all(i["urn"].startswith("urn:pulumi:prod::outside::") for i in cost["items"])


def test_plan_json_masks_secrets(result):
    role = next(r for r in result.as_json()["resources"] if r["name"] == "role")
    assert role["props"]["assumeRolePolicy"] == "[secret]"


def test_plan_json_orders_resources_as_a_stable_tree(result, pulumi_project):
    names = [r["name"] for r in result.as_json()["resources"]]
    assert names == ["outside-prod", "serving", "serving-0", "serving-1", "role"]


def test_render_table_shows_components_costs_and_totals(result):
    text = render_table(result)
    assert "Plan for stack 'prod' of project 'outside': 5 resources (3 cloud resources, 2 components;" in text
    assert "serving-0" in text
    assert "p5.48xlarge on-demand us-east-1" in text
    assert "110.08  subtotal" in text
    assert "Accelerators:    $110.08/hour, $80,358.40/month" in text
    assert "Total:           $110.08/hour, $80,358.40/month" in text


def test_render_table_counts_resources_as_the_policy_lines_do(plan_stack):
    text = render_table(plan_stack("dev"))  # dev: resource policies that apply to nothing say so
    total = len(plan_stack("dev").capture.resources)
    assert f"'inference-infra': {total} resources (" in text
    counts = re.findall(r"not applicable to any of the (\d+) resources", text)
    assert counts
    assert {int(c) for c in counts} == {total}


def test_render_table_wide_shows_the_whole_basis(plan_stack):
    result = plan_stack("prod")
    text = render_table(result, wide=True)
    longest = max((i.basis for i in result.cost.items), key=len)
    assert len(longest) > 80
    assert longest in text
    assert "aws:ec2/vpcEndpoint:VpcEndpoint" in text  # the full type token


def test_render_table_fits_120_columns_by_default(plan_stack):
    result = plan_stack("prod")
    lines = render_table(result).splitlines()
    assert max(len(line) for line in lines) <= 120
    assert any(line.startswith("   └─ endpoints-ec2 ") and " aws:ec2:VpcEndpoint " in line for line in lines)
    cut = [line for line in lines if line.endswith("…")]
    assert cut  # long bases are cut to the column, `--wide` prints them
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert all(len(w) <= 120 for w in warnings)


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        ("aws:ec2/vpcEndpoint:VpcEndpoint", "aws:ec2:VpcEndpoint"),
        ("aws:lb/targetGroup:TargetGroup", "aws:lb:TargetGroup"),
        ("gcp:compute/instance:Instance", "gcp:compute:Instance"),
        ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v3:Release"),  # file != type name
        ("inference-infra:aws:GpuFleet", "inference-infra:aws:GpuFleet"),  # no slash
        ("pulumi:pulumi:Stack", "pulumi:pulumi:Stack"),
    ],
)
def test_display_type_shows_types_as_pulumi_does(token, shown):
    assert display_type(token) == shown
