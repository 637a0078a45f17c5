"""accelerator-images-pinned (advisory): boot scripts run images by digest and no piped downloads."""

from __future__ import annotations

import base64

import pulumi_aws as aws

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.bootstrap import AcceleratorKind, NodeBootstrap
from inference_infra.policy.rules import accelerator_images_pinned as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

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
    assert outcome.not_applicable == "applies to accelerator instances, templates and TPU nodes"


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
