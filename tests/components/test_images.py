"""components/images.py: every pinned image in one table, with its source; reading references."""

from __future__ import annotations

from datetime import date

import pytest

from inference_infra.components import images
from inference_infra.components.images import (
    DIGEST,
    PINNED_IMAGES,
    PINNED_REFERENCE,
    PinnedImage,
    is_pinned,
    mirrored,
    split_reference,
)


def _pins_in_module() -> set[str]:
    return {name for name, value in vars(images).items() if isinstance(value, PinnedImage)}


def test_pinned_images_lists_every_pin_of_the_module_once():
    listed = [name for name, value in vars(images).items() if isinstance(value, PinnedImage)]
    assert len(PINNED_IMAGES) == len(set(map(id, PINNED_IMAGES))) == len(listed) == len(_pins_in_module())
    assert {id(p) for p in PINNED_IMAGES} == {id(getattr(images, n)) for n in listed}


@pytest.mark.parametrize("image", PINNED_IMAGES, ids=lambda i: i.repository)
def test_pinned_image_has_a_digest_a_source_and_a_date(image):
    assert DIGEST.match(image.digest)
    assert PINNED_REFERENCE.match(image.reference)
    assert is_pinned(image.reference)
    assert is_pinned(image.by_digest)
    assert image.source.strip()
    assert isinstance(image.as_of, date)
    assert image.index in (True, None)


def test_pinned_image_names_docker_hub_images_as_docker_does():
    assert images.VLLM_OPENAI.name == "vllm/vllm-openai"
    assert images.VLLM_NEURON.name == "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx"
    assert images.GRAFANA.reference.startswith("docker.io/grafana/grafana:13.1.1@sha256:")


def test_old_homes_name_the_same_pins():
    from inference_infra.components.k8s import images as cluster
    from inference_infra.components.monitoring.host_exporters import DCGM_EXPORTER_IMAGE, NODE_EXPORTER_IMAGE
    from inference_infra.components.serving.engines import IMAGES

    assert images.DCGM_EXPORTER.reference == DCGM_EXPORTER_IMAGE
    assert images.NODE_EXPORTER.reference == NODE_EXPORTER_IMAGE
    assert set(map(id, cluster.CLUSTER_IMAGES)) <= set(map(id, PINNED_IMAGES))
    assert {e.image for e in IMAGES.values()} == {images.VLLM_OPENAI, images.VLLM_NEURON, images.VLLM_TPU}


def test_is_pinned_rejects_a_tag():
    assert not is_pinned("quay.io/prometheus/node-exporter:v1.8.2")
    assert not is_pinned(images.NEURON_MONITOR.reference)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("vllm/vllm-openai@sha256:" + "0" * 64, ("docker.io", "vllm/vllm-openai@sha256:" + "0" * 64)),
        ("ubuntu:24.04", ("docker.io", "library/ubuntu:24.04")),
        ("nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1", ("nvcr.io", "nvidia/k8s/dcgm-exporter:4.4.1")),
        ("localhost/tool:1", ("localhost", "tool:1")),
        ("registry:5000/tool:1", ("registry:5000", "tool:1")),
    ],
)
def test_split_reference_reads_the_registry_as_docker_does(image, expected):
    assert split_reference(image) == expected


def test_mirrored_keeps_the_digest_under_the_mirror():
    mirror = "us-central1-docker.pkg.dev/acme-inference/docker-hub"
    mirrors = {"docker.io": mirror + "/"}
    pulled = mirrored(images.VLLM_OPENAI.by_digest, mirrors)
    assert pulled == f"{mirror}/vllm/vllm-openai@{images.VLLM_OPENAI.digest}"
    assert mirrored(images.NODE_EXPORTER.reference, mirrors) == images.NODE_EXPORTER.reference


def test_images_rejects_a_pin_with_a_trailing_newline():
    from inference_infra.components.images import DIGEST, PINNED_REFERENCE, VLLM_OPENAI, is_pinned

    assert is_pinned(VLLM_OPENAI.reference)
    assert not is_pinned(VLLM_OPENAI.reference + "\n")
    assert DIGEST.match(VLLM_OPENAI.digest + "\n") is None
    assert PINNED_REFERENCE.match(VLLM_OPENAI.reference + "\n") is None
