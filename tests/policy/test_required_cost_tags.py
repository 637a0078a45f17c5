"""required-cost-tags: AWS tags / GCP labels on every taggable resource."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE as WIRE_UNKNOWN

from inference_infra.policy.rules import required_cost_tags as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome
from tests.policy.k8s_objects import (
    COST_LABELS,
    DEPLOYMENT,
    LWS,
    POD,
    deployment,
    leader_worker_set,
    pod_spec,
)

BUCKET = "aws:s3/bucket:Bucket"
INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GCE = "gcp:compute/instance:Instance"
TAGS = {"CostCenter": "ml-platform", "Environment": "dev", "Owner": "ml-team"}
LABELS = {"cost-center": "ml-platform", "environment": "dev", "owner": "ml-team"}


def test_required_cost_tags_passes_a_tagged_bucket(check):
    assert check(rule, BUCKET, {"tags": TAGS}) == Outcome()


def test_required_cost_tags_accepts_tags_all_and_provider_default_tags(check):
    assert check(rule, BUCKET, {"tagsAll": TAGS}) == Outcome()
    provider = {"defaultTags": '{"tags": {"CostCenter": "ml-platform", "Owner": "ml-team"}}'}
    assert check(rule, BUCKET, {"tags": {"Environment": "dev"}}, provider=provider) == Outcome()


def test_required_cost_tags_rejects_missing_tags(check):
    outcome = check(rule, BUCKET, {"tags": {"CostCenter": "ml-platform"}}, name="weights")
    assert outcome.violations == (
        "aws:s3/bucket:Bucket 'weights' is missing the cost tags Environment, Owner; "
        "set them on `tags` or the provider's defaultTags.",
    )


def test_required_cost_tags_rejects_an_empty_value_and_no_tags_at_all(check):
    assert check(rule, BUCKET, {"tags": {**TAGS, "Owner": "  "}}).violations == (
        "aws:s3/bucket:Bucket 'r' is missing the cost tag Owner; "
        "set it on `tags` or the provider's defaultTags.",
    )
    assert check(rule, BUCKET, {}).violations == (
        "aws:s3/bucket:Bucket 'r' is missing the cost tags CostCenter, Environment, Owner; "
        "set them on `tags` or the provider's defaultTags.",
    )


def test_required_cost_tags_rejects_an_accelerator_instance_without_auto_shutdown(check):
    props = {"instanceType": "g5.xlarge", "tags": TAGS}
    assert check(rule, INSTANCE, props, name="gpu").violations == (
        "aws:ec2/instance:Instance 'gpu' is missing the cost tag AutoShutdown; "
        "set it on `tags` or the provider's defaultTags.",
    )
    assert check(rule, INSTANCE, {**props, "tags": {**TAGS, "AutoShutdown": "false"}}) == Outcome()
    assert check(rule, INSTANCE, {"instanceType": "m5.large", "tags": TAGS}) == Outcome()  # CPU only


def test_required_cost_tags_rejects_values_outside_the_allowed_set(check):
    tags = {**TAGS, "AutoShutdown": "yes", "Environment": "qa"}
    outcome = check(
        rule,
        INSTANCE,
        {"instanceType": "g5.xlarge", "tags": tags},
        {"allowedValues": {"Environment": ["dev"]}},
    )
    assert outcome.violations == (
        "aws:ec2/instance:Instance 'r' has AutoShutdown='yes', which is not allowed; allowed: true, false.",
        "aws:ec2/instance:Instance 'r' has Environment='qa', which is not allowed; allowed: dev.",
    )


def test_required_cost_tags_reads_gcp_labels_in_label_form(check):
    props = {"machineType": "g2-standard-4", "labels": {**LABELS, "auto-shutdown": "true"}}
    assert check(rule, GCE, props, {"allowedValues": {"Environment": ["Dev"]}}) == Outcome()
    outcome = check(rule, GCE, {"machineType": "g2-standard-4", "labels": {"environment": "dev"}}, name="vm")
    assert outcome.violations == (
        "gcp:compute/instance:Instance 'vm' is missing the cost labels cost-center, owner, auto-shutdown; "
        "set them on `labels` or the provider's defaultLabels.",
    )


def test_required_cost_tags_reads_auto_scaling_group_tag_lists(check):
    tags = [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in TAGS.items()]
    assert check(rule, "aws:autoscaling/group:Group", {"tags": tags}) == Outcome()
    assert check(rule, "aws:autoscaling/group:Group", {"tags": tags[:2]}, name="asg").violations == (
        "aws:autoscaling/group:Group 'asg' is missing the cost tag Owner; "
        "set it on `tags` or the provider's defaultTags.",
        "aws:autoscaling/group:Group 'asg' launches instances without the cost tag Owner; propagate it at "
        "launch (propagateAtLaunch: true) or add it to its launch template's tagSpecifications for "
        "resourceType 'instance'.",
    )


def test_required_cost_tags_rejects_a_launch_template_whose_instances_go_untagged(check):
    template = {"instanceType": "g5.xlarge", "tags": TAGS}
    assert check(rule, TEMPLATE, template, name="lt").violations == (
        "aws:ec2/launchTemplate:LaunchTemplate 'lt' launches instances without the cost tags "
        "CostCenter, Environment, Owner, AutoShutdown; add them to its tagSpecifications for resourceType "
        "'instance'.",
    )
    specs = [{"resourceType": "instance", "tags": {**TAGS, "AutoShutdown": "true"}}]
    assert check(rule, TEMPLATE, {**template, "tagSpecifications": specs}) == Outcome()
    assert check(rule, TEMPLATE, template, {"launchTemplateInstanceTags": False}) == Outcome()


def test_required_cost_tags_does_not_apply_to_untaggable_types(check):
    outcome = check(rule, "aws:iam/rolePolicy:RolePolicy", {"policy": "{}"})
    assert outcome == Outcome(not_applicable=f"applies to {rule.APPLIES_TO}")
    assert check(rule, "random:index/randomPet:RandomPet", {}).not_applicable is not None


def test_required_cost_tags_does_not_judge_values_not_known_yet(check):
    assert check(rule, BUCKET, {"tags": UNKNOWN}) == Outcome(unknown=("tags",))
    assert check(rule, BUCKET, {"tags": {**TAGS, "Owner": UNKNOWN}}) == Outcome(unknown=("tags.Owner",))


def test_required_cost_tags_through_the_sdk_reports_unknowns_as_preview_gaps(sdk):
    tags = {"CostCenter": "x", "Environment": "dev", "Owner": ""}
    assert sdk(rule, BUCKET, {"tags": tags}) == (
        [
            "aws:s3/bucket:Bucket 'r' is missing the cost tag Owner; "
            "set it on `tags` or the provider's defaultTags."
        ],
        None,
        None,
    )
    assert sdk(rule, BUCKET, {"tags": WIRE_UNKNOWN}) == (
        [],
        None,
        "string value at .r.tags can't be known during preview",
    )
    assert sdk(rule, "aws:iam/role:Role", {"tags": TAGS}) == ([], None, None)
    assert sdk(rule, "aws:iam/rolePolicy:RolePolicy", {}) == (
        [],
        f"not applicable to any of the 1 resources: applies to {rule.APPLIES_TO}; the stack has none",
        None,
    )


def test_required_cost_tags_passes_resources_tagged_by_the_stack_transform(plan_of, tagged, run_pack):
    aws.s3.Bucket("weights")
    aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-1")
    aws.ec2.LaunchTemplate("lt", instance_type="g6.xlarge", image_id="ami-1")
    gcp.compute.Instance(
        "vm",
        machine_type="g2-standard-4",
        zone="us-central1-a",
        boot_disk={"initialize_params": {"image": "debian-12"}},
        network_interfaces=[{"network": "default"}],
    )
    report = run_pack(plan_of(), rule.NAME, {"allowedValues": {"Environment": ["test"]}})
    assert report.violations == []


def test_required_cost_tags_rejects_captured_untagged_resources(plan_of, run_pack):
    aws.s3.Bucket("weights", tags={"CostCenter": "ml"})
    aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-1", tags=TAGS)
    aws.iam.Role("role", assume_role_policy="{}", tags=TAGS)
    report = run_pack(plan_of(), rule.NAME)
    assert sorted((v.urn.rsplit("::", 1)[1], v.message) for v in report.violations) == [
        (
            "gpu",
            "aws:ec2/instance:Instance 'gpu' is missing the cost tag AutoShutdown; "
            "set it on `tags` or the provider's defaultTags.",
        ),
        (
            "weights",
            "aws:s3/bucket:Bucket 'weights' is missing the cost tags Environment, Owner; "
            "set them on `tags` or the provider's defaultTags.",
        ),
    ]
    assert report.gate_failed


@pytest.mark.stack_config({"aws:defaultTags": json.dumps({"tags": TAGS})})
def test_required_cost_tags_counts_the_default_providers_default_tags(plan_of, run_pack):
    aws.s3.Bucket("weights")
    assert run_pack(plan_of(), rule.NAME).violations == []


# -- Kubernetes accelerator workloads: the cost tags as pod labels --------------------------------------


def test_required_cost_tags_passes_accelerator_pods_labelled_in_any_accepted_form(check):
    assert check(rule, DEPLOYMENT, deployment()) == Outcome()
    gcp_form = {"cost-center": "ml", "environment": "dev", "owner": "me"}
    prefixed = {"example.com/cost-center": "ml", "example.com/Environment": "dev", "owner": "me"}
    for labels in (gcp_form, prefixed):
        pod = {"metadata": {"labels": labels}, "spec": pod_spec()}
        assert check(rule, POD, pod) == Outcome()


def test_required_cost_tags_rejects_accelerator_pods_without_cost_labels(check):
    props = deployment()
    props["spec"]["template"]["metadata"]["labels"] = {"app": "vllm", "CostCenter": "ml", "Owner": " "}
    [message] = check(rule, DEPLOYMENT, props, name="vllm").violations
    assert message == (
        f"{DEPLOYMENT} 'vllm' runs accelerator pods without the cost labels environment, owner; set them on "
        "spec.template.metadata.labels (the pods' labels, which cost allocation reads)."
    )
    # Labels on the Deployment itself are not on its pods.
    lws = leader_worker_set(pod_spec(), pod_spec())
    lws["metadata"]["labels"] = COST_LABELS
    del lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]
    [message] = check(rule, LWS, lws, name="vllm").violations
    assert message.startswith(
        f"{LWS} 'vllm' (pod template at spec.leaderWorkerTemplate.workerTemplate) runs accelerator pods "
        "without the cost labels cost-center, environment, owner; set them on "
        "spec.leaderWorkerTemplate.workerTemplate.metadata.labels"
    )


def test_required_cost_tags_rejects_a_pod_label_value_not_allowed(check):
    [message] = check(rule, DEPLOYMENT, deployment(), {"allowedValues": {"Environment": ["prod"]}}).violations
    assert message.endswith("labels its pods Environment='dev', which is not allowed; allowed: prod.")


def test_required_cost_tags_skips_cpu_workloads_and_waits_for_unknown_labels(check):
    cpu = deployment({"containers": [{"name": "web", "image": "nginx"}]}, labels={})
    cpu["spec"]["template"]["metadata"]["labels"] = {}
    assert (
        check(rule, DEPLOYMENT, cpu).not_applicable == "a Kubernetes workload whose pods use no accelerator"
    )
    unknown = deployment()
    unknown["spec"]["template"]["metadata"]["labels"] = UNKNOWN
    assert check(rule, DEPLOYMENT, unknown) == Outcome(unknown=("spec.template.metadata.labels",))


def test_required_cost_tags_rejects_a_captured_gpu_job_without_pod_labels(plan_of, run_pack):
    k8s.batch.v1.Job(
        "bench",
        metadata={"labels": COST_LABELS},
        spec={
            "template": {
                "spec": {
                    "restart_policy": "Never",
                    "containers": [
                        {"name": "b", "image": "b", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                    ],
                }
            }
        },
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(";")[0] for v in report.violations] == [
        "kubernetes:batch/v1:Job 'bench' runs accelerator pods without the cost labels cost-center, "
        "environment, owner"
    ]
