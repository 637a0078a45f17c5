"""The ECR repositories a node may pull from and import into (#33 item 4): exact names of the images it
runs, as mirrored; imports only behind a pull-through cache rule."""

from __future__ import annotations

import pytest

from inference_infra.components.aws.mirrors import is_pull_through_upstream, mirror_repositories

ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
DIGEST = "sha256:" + "a" * 64
ARN = "arn:aws:ecr:us-east-1:123456789012:repository/"


def test_mirror_repositories_names_each_image_repository_without_tag_or_digest():
    images = [
        f"vllm/vllm-openai:v0.11.0@{DIGEST}",  # Docker Hub, a tag for readers
        f"ubuntu@{DIGEST}",  # an official image: library/ on Docker Hub
        f"quay.io/prometheus/node-exporter:v1.9.1@{DIGEST}",
        f"nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1@{DIGEST}",
        f"localhost:5000/dev/thing:1@{DIGEST}",  # a registry with a port, not mirrored
    ]
    mirrors = {"docker.io": f"{ECR}/docker-hub", "quay.io": f"{ECR}/quay", "nvcr.io": f"{ECR}/nvcr"}
    pulls, imports = mirror_repositories(images, mirrors, "aws")
    assert pulls == [
        f"{ARN}docker-hub/library/ubuntu",
        f"{ARN}docker-hub/vllm/vllm-openai",
        f"{ARN}nvcr/nvidia/k8s/dcgm-exporter",
        f"{ARN}quay/prometheus/node-exporter",
    ]
    assert imports == [
        f"{ARN}docker-hub/library/ubuntu",
        f"{ARN}docker-hub/vllm/vllm-openai",
        f"{ARN}quay/prometheus/node-exporter",
    ]


def test_mirror_repositories_of_unmirrored_images_are_none():
    assert mirror_repositories([f"vllm/vllm-openai:v1@{DIGEST}"], {}, "aws") == ([], [])


def test_mirror_repositories_keep_the_partition_and_the_mirror_account_and_region():
    mirrors = {"public.ecr.aws": "210987654321.dkr.ecr.cn-north-1.amazonaws.com/ecr-public"}
    pulls, imports = mirror_repositories([f"public.ecr.aws/neuron/vllm:0.9@{DIGEST}"], mirrors, "aws-cn")
    assert pulls == ["arn:aws-cn:ecr:cn-north-1:210987654321:repository/ecr-public/neuron/vllm"]
    assert imports == pulls


def test_an_image_already_in_private_ecr_is_pulled_but_never_imported():
    pulls, imports = mirror_repositories([f"{ECR}/team/engine:1@{DIGEST}"], {}, "aws")
    assert pulls == [f"{ARN}team/engine"]
    assert imports == []


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("docker.io", True),
        ("quay.io", True),
        ("public.ecr.aws", True),
        ("myregistry.azurecr.io", True),
        ("nvcr.io", False),  # ECR pull-through cannot front NGC: a copy by digest
        ("evil.azurecr.io.example.com", False),  # a look-alike suffix is not Azure
        ("docker.io.example.com", False),
        ("", False),
    ],
)
def test_pull_through_upstreams(host, expected):
    assert is_pull_through_upstream(host) is expected
