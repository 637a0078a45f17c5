"""accelerator-imdsv2-required: metadataOptions.httpTokens 'required' on AWS accelerator machines."""

from __future__ import annotations

import pulumi_aws as aws
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE as WIRE_UNKNOWN

from inference_infra.policy.rules import accelerator_imdsv2_required as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SPOT = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
V2 = {"httpTokens": "required", "httpEndpoint": "enabled"}
FIX = (
    "set httpTokens to 'required' (IMDSv2) so code on the host cannot read the instance role's "
    "credentials over IMDSv1."
)


def test_imdsv2_passes_instances_templates_and_spot_requests_that_require_tokens(check):
    for type_token in (INSTANCE, TEMPLATE, SPOT):
        assert check(rule, type_token, {"instanceType": "p5.48xlarge", "metadataOptions": V2}) == Outcome()


def test_imdsv2_passes_a_disabled_metadata_endpoint(check):
    props = {"instanceType": "g5.xlarge", "metadataOptions": {"httpEndpoint": "disabled"}}
    assert check(rule, INSTANCE, props) == Outcome()


def test_imdsv2_rejects_optional_tokens(check):
    props = {"instanceType": "g5.xlarge", "metadataOptions": {"httpTokens": "optional"}}
    assert check(rule, TEMPLATE, props, name="lt").violations == (
        "aws:ec2/launchTemplate:LaunchTemplate 'lt' runs g5.xlarge with metadataOptions.httpTokens "
        f"'optional'; {FIX}",
    )


def test_imdsv2_rejects_unset_metadata_options(check):
    assert check(rule, INSTANCE, {"instanceType": "p5.48xlarge"}, name="gpu").violations == (
        "aws:ec2/instance:Instance 'gpu' runs p5.48xlarge with metadataOptions.httpTokens unset "
        f"(the AMI or account default decides, often 'optional'); {FIX}",
    )


def test_imdsv2_rejects_a_template_that_leaves_the_instance_type_to_the_launch(check):
    assert check(rule, TEMPLATE, {"imageId": "ami-1"}, name="any").violations == (
        "aws:ec2/launchTemplate:LaunchTemplate 'any' runs instances of a type chosen at launch with "
        "metadataOptions.httpTokens unset (the AMI or account default decides, often 'optional'); "
        f"{FIX}",
    )
    assert check(rule, TEMPLATE, {"imageId": "ami-1", "metadataOptions": V2}) == Outcome()


def test_imdsv2_leaves_an_instance_without_options_to_its_launch_template(check):
    props = {"instanceType": "g5.xlarge", "launchTemplate": {"id": "lt-1", "version": "$Latest"}}
    assert check(rule, INSTANCE, props) == Outcome()


def test_imdsv2_does_not_apply_to_cpu_instances_or_gcp(check):
    reason = (
        "applies to AWS instances, spot requests and launch templates with accelerators, "
        "and to launch templates that leave the instance type to the launch"
    )
    assert check(rule, INSTANCE, {"instanceType": "m5.large"}) == Outcome(not_applicable=reason)
    assert (
        check(rule, "gcp:compute/instance:Instance", {"machineType": "a3-highgpu-8g"}).not_applicable
        == reason
    )


def test_imdsv2_does_not_judge_values_not_known_yet(check, sdk):
    props = {"instanceType": "g5.xlarge", "metadataOptions": {"httpTokens": UNKNOWN}}
    assert check(rule, INSTANCE, props) == Outcome(unknown=("metadataOptions.httpTokens",))
    wire = {"instanceType": "g5.xlarge", "metadataOptions": WIRE_UNKNOWN}
    assert sdk(rule, INSTANCE, wire) == (
        [],
        None,
        "string value at .metadataOptions can't be known during preview",
    )


def test_imdsv2_on_captured_resources(plan_of, run_pack):
    aws.ec2.Instance(
        "good", instance_type="g5.xlarge", ami="ami-1", metadata_options={"http_tokens": "required"}
    )
    aws.ec2.LaunchTemplate("bad", instance_type="g6.xlarge", image_id="ami-1")
    aws.ec2.Instance("cpu", instance_type="m5.large", ami="ami-1")
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        "aws:ec2/launchTemplate:LaunchTemplate 'bad' runs g6.xlarge with metadataOptions.httpTokens unset "
        f"(the AMI or account default decides, often 'optional'); {FIX}"
    ]
    assert report.violations[0].urn.endswith("::bad")


SAGEMAKER = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
GROUP = "aws:autoscaling/group:Group"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def test_imdsv2_does_not_apply_to_sagemaker_hosted_instances(check):
    endpoint = {"productionVariants": [{"instanceType": "ml.g5.2xlarge", "initialInstanceCount": 1}]}
    assert check(rule, SAGEMAKER, endpoint).not_applicable.startswith("SageMaker runs endpoint instances")


def test_imdsv2_leaves_a_group_launching_from_a_template_to_that_template(check):
    mixed = {
        "mixedInstancesPolicy": {
            "launchTemplate": {
                "launchTemplateSpecification": {"launchTemplateId": "lt-1"},
                "overrides": [{"instanceType": "g5.2xlarge"}],
            }
        }
    }
    assert check(rule, GROUP, mixed) == Outcome()


def test_imdsv2_rejects_a_node_group_without_a_launch_template(check):
    group = {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": 1}}
    assert check(rule, NODE_GROUP, group, name="ng").violations == (
        "aws:eks/nodeGroup:NodeGroup 'ng' runs g5.xlarge without a launch template, so its instances get the "
        "AMI's or the account's metadata default (often IMDSv1 allowed); launch them from a template whose "
        "metadataOptions set httpTokens to 'required'.",
    )


def test_imdsv2_rejects_a_hop_limit_that_reaches_containers(check):
    for hops in (2, 3, 64):
        props = {"instanceType": "g5.xlarge", "metadataOptions": {**V2, "httpPutResponseHopLimit": hops}}
        (violation,) = check(rule, TEMPLATE, props, name="lt").violations
        assert f"httpPutResponseHopLimit {hops}: a container one hop away" in violation
    props = {"instanceType": "g5.xlarge", "metadataOptions": {**V2, "httpPutResponseHopLimit": 2}}
    assert check(rule, TEMPLATE, props, {"maxHopLimit": 2}) == Outcome()  # an explicit choice


def test_imdsv2_passes_a_hop_limit_of_one_or_unset(check):
    for options in ({**V2, "httpPutResponseHopLimit": 1}, V2):
        assert check(rule, TEMPLATE, {"instanceType": "g5.xlarge", "metadataOptions": options}) == Outcome()
    unknown = {**V2, "httpPutResponseHopLimit": UNKNOWN}
    assert check(rule, TEMPLATE, {"instanceType": "g5.xlarge", "metadataOptions": unknown}).unknown
    # Not an accelerator: not judged at all.
    cpu = {"instanceType": "m5.large", "metadataOptions": {**V2, "httpPutResponseHopLimit": 2}}
    assert check(rule, TEMPLATE, cpu).not_applicable
