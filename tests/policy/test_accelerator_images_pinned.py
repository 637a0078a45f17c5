"""accelerator-images-pinned (advisory): boot scripts run images by digest and no piped downloads."""

from __future__ import annotations

import base64

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.bootstrap import AcceleratorKind, NodeBootstrap
from inference_infra.policy.rules import accelerator_images_pinned as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome
from tests.policy.k8s_objects import (
    DEPLOYMENT,
    JOB,
    LWS,
    deployment,
    leader_worker_set,
    pod_spec,
    with_container,
)

INSTANCE = "aws:ec2/instance:Instance"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GCE = "gcp:compute/instance:Instance"
DIGEST = "sha256:" + "a" * 64


def test_accelerator_images_pinned_passes_the_librarys_own_gzip_user_data(check):
    spec = NodeBootstrap(accelerator=AcceleratorKind.NVIDIA, region="us-east-1", local_nvme_disks=1)
    user_data = boot.encode_user_data(boot.render_user_data(spec))
    assert check(rule, TEMPLATE, {"instanceType": "g5.xlarge", "userData": user_data}) == Outcome()


def test_accelerator_images_pinned_passes_digest_pinned_docker_run(check):
    script = f"#!/bin/bash\ndocker run -d --name vllm --gpus all vllm/vllm-openai@{DIGEST} --port 8000\n"
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge", "userData": script}) == Outcome()


def test_accelerator_images_pinned_rejects_an_image_by_tag(check):
    image = "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2"
    script = f"#!/bin/bash\ndocker run -d --gpus all -e A=1 {image} -f x\n"
    props = {"instanceType": "g5.xlarge", "userData": script}
    [message] = check(rule, INSTANCE, props, name="gpu").violations
    assert message.startswith(f"{INSTANCE} 'gpu' runs the container image {image!r} from its userData")


def test_accelerator_images_pinned_rejects_a_tag_in_base64_cloud_config_runcmd(check):
    document = "#cloud-config\nruncmd:\n  - [docker, pull, 'vllm/vllm-openai:latest']\n"
    encoded = base64.b64encode(document.encode()).decode()
    outcome = check(rule, TEMPLATE, {"instanceType": "p5.48xlarge", "userData": encoded})
    assert [m.split(" from ")[0] for m in outcome.violations] == [
        f"{TEMPLATE} 'r' runs the container image 'vllm/vllm-openai:latest'"
    ]


def test_accelerator_images_pinned_rejects_a_download_piped_into_a_shell(check):
    props = {
        "machineType": "g2-standard-8",
        "metadata": {"startup-script": "curl -fsSL https://example.com/install.sh | sudo bash\n"},
    }
    [message] = check(rule, GCE, props).violations
    assert "pipes a download into a shell in its metadata.startup-script" in message


def test_accelerator_images_pinned_skips_cpu_instances(check):
    script = "docker run busybox:latest\n"
    outcome = check(rule, INSTANCE, {"instanceType": "m5.large", "userData": script})
    assert outcome.not_applicable == f"applies to {rule.APPLIES_TO}"


def test_accelerator_images_pinned_defers_unknown_user_data(check):
    outcome = check(rule, INSTANCE, {"instanceType": "g5.xlarge", "userData": UNKNOWN})
    assert outcome == Outcome(unknown=("userData",))


def test_accelerator_images_pinned_on_the_prod_plan_finds_nothing(plan_stack):
    report = plan_stack("prod").policy
    assert not [v for v in report.violations if v.policy == rule.NAME]


def test_accelerator_images_pinned_on_captured_resources_rejects_only_the_tag(plan_of, run_pack):
    aws.ec2.Instance(
        "tagged", instance_type="g5.xlarge", ami="ami-1", user_data="docker run vllm/vllm-openai:v1\n"
    )
    aws.ec2.Instance("pinned", instance_type="g5.xlarge", ami="ami-1", user_data=f"docker run x/y@{DIGEST}\n")
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(" runs")[0] for v in report.violations] == [f"{INSTANCE} 'tagged'"]


# -- Kubernetes workloads ------------------------------------------------------------------------------


def test_accelerator_images_pinned_passes_kubernetes_pods_pinned_by_digest(check):
    assert check(rule, DEPLOYMENT, deployment()) == Outcome()
    assert check(rule, LWS, leader_worker_set(pod_spec(), pod_spec())) == Outcome()


@pytest.mark.parametrize(
    "image",
    [
        "vllm/vllm-openai:v0.11.0",
        "vllm/vllm-openai",
        "vllm/vllm-openai@sha256:" + "a" * 63,  # one digit short
        "vllm/vllm-openai@sha256:" + "a" * 65,
        "vllm/vllm-openai@sha256:" + "g" * 64,  # not hex
        "vllm/vllm-openai@sha512:" + "a" * 128,
    ],
)
def test_accelerator_images_pinned_rejects_kubernetes_images_without_a_valid_digest(check, image):
    spec = with_container(pod_spec(), image=image)
    [message] = check(rule, DEPLOYMENT, deployment(spec), name="vllm").violations
    assert message.startswith(
        f"{DEPLOYMENT} 'vllm' runs the container image {image!r} in container 'vllm' "
        "(spec.template.spec.containers[0].image) without a valid digest"
    )


def test_accelerator_images_pinned_rejects_an_init_container_by_tag(check):
    spec = with_container(pod_spec(), index=-1, image="python:3.13-slim")
    job = {"spec": {"template": {"metadata": {}, "spec": spec}}}
    [message] = check(rule, JOB, job, name="bench").violations
    assert (
        "'python:3.13-slim' in container 'verify-weights' (spec.template.spec.initContainers[0].image)"
        in message
    )


def test_accelerator_images_pinned_skips_cpu_kubernetes_workloads_and_waits_for_unknown_images(check):
    cpu = {"containers": [{"name": "web", "image": "nginx:latest"}]}
    assert check(rule, DEPLOYMENT, deployment(cpu)).not_applicable == "its pods use no accelerator"
    spec = with_container(pod_spec(), image=UNKNOWN)
    assert check(rule, DEPLOYMENT, deployment(spec)) == Outcome(
        unknown=("spec.template.spec.containers[0].image",)
    )


def test_accelerator_images_pinned_rejects_a_captured_stateful_set_by_tag(plan_of, run_pack):
    k8s.apps.v1.StatefulSet(
        "tpu",
        spec={
            "selector": {"match_labels": {"app": "tpu"}},
            "service_name": "tpu",
            "template": {
                "metadata": {"labels": {"app": "tpu"}},
                "spec": {
                    "containers": [
                        {
                            "name": "jetstream",
                            "image": "us-docker.pkg.dev/x/jetstream:latest",
                            "resources": {"limits": {"google.com/tpu": "4"}},
                        }
                    ]
                },
            },
        },
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(" in container")[0] for v in report.violations] == [
        "kubernetes:apps/v1:StatefulSet 'tpu' runs the container image 'us-docker.pkg.dev/x/jetstream:latest'"
    ]


def test_accelerator_images_pinned_judges_images_in_helm_values_on_accelerators(check):
    release = "kubernetes:helm.sh/v3:Release"
    gpu = {"resources": {"limits": {"nvidia.com/gpu": 1}}}
    pinned = [
        {"image": {"repository": "vllm/vllm-openai", "tag": f"v0.11.0@{DIGEST}"}},
        {"image": {"repository": "grafana/grafana", "registry": "docker.io", "tag": "13", "sha": "a" * 64}},
        {"image": {"repository": "vllm/vllm-openai", "digest": DIGEST}},
        {"image": f"vllm/vllm-openai@{DIGEST}"},
    ]
    for values in pinned:
        assert check(rule, release, {"values": {**gpu, **values}}) == Outcome()
    tagged = {**gpu, "image": {"repository": "vllm/vllm-openai", "registry": "docker.io", "tag": "v0.11.0"}}
    [message] = check(rule, release, {"values": tagged}, name="vllm").violations
    assert message.startswith(
        f"{release} 'vllm' runs the container image 'docker.io/vllm/vllm-openai:v0.11.0' (values.image) "
        "without"
    )
    short = {**gpu, "image": {"repository": "vllm/vllm-openai", "digest": "sha256:" + "a" * 63}}
    assert len(check(rule, release, {"values": short}).violations) == 1
    cpu = {"image": {"repository": "nginx", "tag": "latest"}}
    assert check(rule, release, {"values": cpu}).not_applicable is not None


def test_accelerator_images_pinned_says_why_helm_values_are_not_judged(check):
    """The gate shared with k8s-accelerator-pods-unprivileged (_k8s.helm_not_judged), word for word."""
    release = "kubernetes:helm.sh/v3:Release"
    cpu = {"image": {"repository": "nginx", "tag": "latest"}}
    assert check(rule, release, {"values": cpu}).not_applicable == (
        "a Helm release whose values request no accelerator and select no accelerator node"
    )
    assert check(rule, release, {"values": UNKNOWN}) == Outcome(unknown=("values",))
