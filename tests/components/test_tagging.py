"""Cost tags: the pure merge, the GCP label mapping, and the stack transform end to end."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.tagging import (
    CostTags,
    gcp_label_key,
    gcp_label_value,
    is_production,
    production_name_warning,
    register_cost_tags,
    tag_field,
    tagged_props,
    validate_cost_tags,
)

TAGS = CostTags(cost_center="ml-platform", environment="dev", owner="ML Team@acme.io", auto_shutdown=True)


def test_tag_field_reads_the_provider_sdk():
    assert tag_field("aws:ec2/instance:Instance") == "tags"
    assert tag_field("aws:s3/bucketV2:BucketV2") == "tags"
    assert tag_field("gcp:compute/instance:Instance") == "labels"
    assert tag_field("gcp:tpu/v2Vm:V2Vm") == "labels"


def test_tag_field_is_none_for_untaggable_types():
    assert tag_field("aws:iam/rolePolicy:RolePolicy") is None
    assert tag_field("aws:ec2/securityGroupRule:SecurityGroupRule") is None
    assert tag_field("gcp:compute/network:Network") is None
    assert tag_field("kubernetes:core/v1:Namespace") is None
    assert tag_field("not-a-token") is None


def test_tagged_props_adds_cost_tags_and_auto_shutdown_on_accelerator_instances():
    props = tagged_props("aws:ec2/instance:Instance", {"instanceType": "p5.48xlarge"}, TAGS)
    assert props["tags"] == {
        "CostCenter": "ml-platform",
        "Environment": "dev",
        "Owner": "ML Team@acme.io",
        "AutoShutdown": "true",
    }


def test_tagged_props_leaves_auto_shutdown_off_cpu_instances():
    props = tagged_props("aws:ec2/instance:Instance", {"instanceType": "m5.large"}, TAGS)
    assert "AutoShutdown" not in props["tags"]
    assert props["tags"]["CostCenter"] == "ml-platform"


def test_tagged_props_keeps_the_resources_own_tags():
    own = {"instanceType": "g5.xlarge", "tags": {"AutoShutdown": "false", "Name": "pinned"}}
    props = tagged_props("aws:ec2/instance:Instance", own, TAGS)
    assert props["tags"]["AutoShutdown"] == "false"
    assert props["tags"]["Name"] == "pinned"
    assert own["tags"] == {"AutoShutdown": "false", "Name": "pinned"}  # input not mutated


def test_tagged_props_tags_launch_template_instances_and_volumes():
    props = tagged_props("aws:ec2/launchTemplate:LaunchTemplate", {"instanceType": "g5.xlarge"}, TAGS)
    specs = {s["resourceType"]: s["tags"] for s in props["tagSpecifications"]}
    assert specs["instance"]["AutoShutdown"] == "true"
    assert specs["volume"]["CostCenter"] == "ml-platform"
    assert "AutoShutdown" not in specs["volume"]


def test_tagged_props_writes_gcp_labels_with_label_rules():
    props = tagged_props(
        "gcp:tpu/v2Vm:V2Vm", {"acceleratorType": "v5litepod-8", "labels": {"team": "x"}}, TAGS
    )
    assert props["labels"] == {
        "cost-center": "ml-platform",
        "environment": "dev",
        "owner": "ml_team_acme_io",
        "auto-shutdown": "true",
        "team": "x",
    }


def test_tagged_props_autoscaling_group_uses_list_tags_propagated_at_launch():
    props = tagged_props("aws:autoscaling/group:Group", {"tags": [{"key": "Name", "value": "n"}]}, TAGS)
    by_key = {t["key"]: t for t in props["tags"]}
    assert by_key["CostCenter"] == {"key": "CostCenter", "value": "ml-platform", "propagateAtLaunch": True}
    assert by_key["Name"]["value"] == "n"


def test_tagged_props_leaves_unknown_tags_alone():
    class Unknown:  # what the SDK hands a transform for a value not known in preview
        pass

    assert tagged_props("aws:ec2/instance:Instance", {"tags": Unknown()}, TAGS) is None


def test_tagged_props_returns_none_for_untaggable():
    assert tagged_props("aws:iam/rolePolicy:RolePolicy", {"policy": "{}"}, TAGS) is None


def test_gcp_label_mapping():
    assert gcp_label_key("CostCenter") == "cost-center"
    assert gcp_label_key("AutoShutdown") == "auto-shutdown"
    assert gcp_label_value("Team.Name@Example.com") == "team_name_example_com"
    assert len(gcp_label_value("x" * 100)) == 63


def test_validate_cost_tags_rejects_empty_and_reserved():
    problems = validate_cost_tags(
        CostTags(cost_center=" ", environment="dev", owner="o", auto_shutdown=False, extra={"aws:foo": "x"})
    )
    assert [p.input for p in problems] == ["tag CostCenter", "tag key 'aws:foo'"]
    assert "must not be empty" in str(problems[0])
    assert "reserved prefix 'aws:'" in str(problems[1])


def test_register_cost_tags_rejects_invalid_tags_before_registering(harness):
    with pytest.raises(InputError, match=r"cost tags: tag Owner '' must not be empty"):
        harness.in_loop(
            lambda: register_cost_tags(
                CostTags(cost_center="c", environment="e", owner="", auto_shutdown=True)
            )
        )


def test_stack_transform_tags_every_taggable_resource_in_components(plan_of, tagged):
    class Pool(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("test:index:Pool", name, None, None)
            child = pulumi.ResourceOptions(parent=self)
            self.sg = aws.ec2.SecurityGroup(f"{name}-sg", vpc_id="vpc-1", opts=child)
            self.gpu = aws.ec2.Instance(f"{name}-gpu", instance_type="g5.xlarge", ami="ami-1", opts=child)
            self.policy = aws.iam.RolePolicy(f"{name}-rp", role="r", policy="{}", opts=child)
            self.register_outputs({})

    Pool("serving")
    gcp.compute.Instance(
        "tpu-host",
        machine_type="a3-highgpu-8g",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12"}},
        network_interfaces=[{"network": "default"}],
    )
    capture = plan_of()
    assert capture.named("serving-sg").props["tags"] == tagged.aws_tags()
    assert capture.named("serving-gpu").props["tags"]["AutoShutdown"] == "true"
    assert "tags" not in capture.named("serving-rp").props
    assert capture.named("tpu-host").props["labels"]["auto-shutdown"] == "true"
    assert capture.named("tpu-host").props["labels"]["cost-center"] == "ml-platform"


def test_tag_field_gke_cluster_takes_resource_labels():
    from inference_infra.components.tagging import CostTags, tag_field, tagged_props

    assert tag_field("gcp:container/cluster:Cluster") == "resourceLabels"
    tags = CostTags(cost_center="ml", environment="dev", owner="a@example.com", auto_shutdown=False)
    props = tagged_props("gcp:container/cluster:Cluster", {"resourceLabels": {"team": "x"}}, tags)
    assert props["resourceLabels"]["team"] == "x"
    assert props["resourceLabels"]["cost-center"] == "ml"
    assert "labels" not in props


@pytest.mark.parametrize(
    ("name", "production"),
    [
        ("prod", True),
        ("production", True),
        ("production-eu", True),
        ("prd", True),
        ("PRD-us", True),
        (" prod ", True),
        ("preprod", False),
        ("pre-prod", False),
        ("non-prod", False),
        ("nonprod", False),
        ("eu-prod", False),
        ("dev", False),
        ("", False),
        (None, False),
        (7, False),
    ],
)
def test_tagging_is_production_by_prefix(name, production):
    assert is_production(name) is production


@pytest.mark.parametrize("name", ["eu-prod", "live", "main", "customer-a"])
def test_tagging_warns_about_a_name_the_rule_does_not_read(name):
    warning = production_name_warning(name)
    assert warning is not None
    assert f"{name!r} is not production" in warning
    assert "starting with 'prod' or 'prd'" in warning


@pytest.mark.parametrize(
    "name", ["prod", "prd-eu", "dev", "dev-alice", "test", "staging", "qa-2", "preprod", "ci"]
)
def test_tagging_passes_names_the_rule_reads_without_a_warning(name):
    assert production_name_warning(name) is None
