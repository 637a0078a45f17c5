"""Every container image the reference stacks run is pinned by digest, wherever the project names one.

Walks every resource's inputs in the prod and dev plans: Kubernetes objects'
`image` fields, Helm values' image blocks (`repository`/`tag` with `sha` or
`digest`, as the charts compose them), and every string, decoded the way a node
reads it (base64, gzip: AWS user data, GCP and TPU startup scripts, cloud-init
files, systemd units and engine environment files inside them). A reference
without `@sha256:<64 hex>` fails the test, naming the resource and where.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from inference_infra.policy.rules.accelerator_images_pinned import decoded

PINNED = re.compile(r"@sha256:[0-9a-f]{64}$")
# registry host (with a dot or a port) / path : tag, optionally @sha256:digest; not part of a URL or path.
_REFERENCE = re.compile(
    r"(?<![\w./:@-])((?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d+)?/[a-z0-9._-]+(?:/[a-z0-9._-]+)*"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?)(?![\w./:@-])"
)
# Docker Hub's short names (vllm/vllm-openai) count when they carry a tag or a digest.
_SHORT_REFERENCE = re.compile(
    r"(?<![\w./:@=-])([a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*"
    r"(?::[\w][\w.-]{0,127}(?:@sha256:[0-9a-f]{64})?|@sha256:[0-9a-f]{64}))(?![\w./:@-])"
)
_IMAGE_HOSTS = re.compile(
    r"^(?:[a-z0-9-]+\.)*(?:docker\.io|quay\.io|ghcr\.io|gcr\.io|nvcr\.io|registry\.k8s\.io|"
    r"public\.ecr\.aws|pkg\.dev|amazonaws\.com|example\.com)(?::\d+)?/"
)
# Compute Engine disk images (bootDisk.initializeParams.image), not container images.
_VM_IMAGES = ("projects/", "https://www.googleapis.com/compute/")
_MAX_DEPTH = 3  # base64 inside gzip inside base64 ...


def _helm_image(block: Mapping[str, Any]) -> str | None:
    """A chart's image block as the chart renders it, or None when it is not one."""
    repository, tag = block.get("repository"), block.get("tag")
    if not isinstance(repository, str) or not any(k in block for k in ("tag", "sha", "digest")):
        return None
    reference = f"{block['registry']}/{repository}" if block.get("registry") else repository
    if tag:
        reference += f":{tag}"
    sha = block.get("sha") or block.get("digest")
    if sha:
        reference += sha if str(sha).startswith("@") else f"@{sha}" if ":" in str(sha) else f"@sha256:{sha}"
    return reference


def _text_references(text: str, depth: int = 0) -> Iterator[str]:
    for match in _REFERENCE.finditer(text):
        if _IMAGE_HOSTS.match(match.group(1)):
            yield match.group(1)
    for match in _SHORT_REFERENCE.finditer(text):
        if "." not in match.group(1).split("/")[0]:
            yield match.group(1)
    if depth < _MAX_DEPTH:
        plain = decoded(text)
        if plain != text:
            yield from _text_references(plain, depth + 1)
        for blob in re.findall(r"[A-Za-z0-9+/]{40,}={0,2}", text):
            inner = decoded(blob)
            if inner != blob and (inner.isprintable() or "\n" in inner):
                yield from _text_references(inner, depth + 1)


def image_references(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, image reference) of every image named anywhere in a resource's inputs."""
    if isinstance(value, Mapping):
        if (reference := _helm_image(value)) is not None:
            yield path, reference  # its repository/tag strings are parts of this one reference
            value = {k: v for k, v in value.items() if not isinstance(v, str)}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key == "image" and isinstance(item, str):
                if not item.startswith(_VM_IMAGES):
                    yield where, item
            else:
                yield from image_references(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from image_references(item, f"{path}[{i}]")
    elif isinstance(value, str):
        for reference in _text_references(value):
            yield path, reference


def unpinned(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    return sorted({(where, ref) for where, ref in image_references(props) if not PINNED.search(ref)})


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_stack_runs_every_image_by_digest(plan_stack, stack):
    capture = plan_stack(stack).capture
    found, loose = 0, []
    for resource in capture:
        refs = list(image_references(resource.props))
        found += len(refs)
        loose += [
            f"{resource.type} {resource.name}: {where} = {ref}" for where, ref in unpinned(resource.props)
        ]
    assert loose == []
    assert found > 0


def test_prod_stack_names_the_cluster_and_host_images(plan_stack):
    from inference_infra.components.k8s.images import CLUSTER_IMAGES

    capture = plan_stack("prod").capture
    references = {ref for r in capture for _, ref in image_references(r.props)}
    assert {image.reference for image in CLUSTER_IMAGES} <= references
    # The serving engines, from EC2 user data, GCE and TPU startup scripts; the host exporters. Prod's AWS
    # nodes pull them from private mirrors (egress endpoints-only): the same digest under another registry.
    from inference_infra.components.aws.bootstrap import DCGM_EXPORTER_IMAGE, NODE_EXPORTER_IMAGE
    from inference_infra.components.serving.engines import IMAGES

    pinned = [image.reference for image in IMAGES.values()] + [DCGM_EXPORTER_IMAGE, NODE_EXPORTER_IMAGE]
    for reference in pinned:
        digest = reference.rsplit("@", 1)[1]
        assert any(ref.endswith("@" + digest) for ref in references), reference


def test_image_references_find_unpinned_images_everywhere():
    import base64
    import gzip

    script = (
        "#!/bin/bash\ndocker run -d --gpus all nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.7.1-ubuntu22.04\n"
    )
    user_data = base64.b64encode(gzip.compress(script.encode())).decode()
    props = {
        "userData": user_data,
        "spec": {
            "template": {"spec": {"containers": [{"image": "public.ecr.aws/neuron/neuron-monitor:1.3.0"}]}}
        },
        "values": {
            "grafana": {"image": {"registry": "docker.io", "repository": "grafana/grafana", "tag": "13.1.1"}},
            "sidecar": {
                "image": {"registry": "quay.io", "repository": "kiwigrid/k8s-sidecar", "sha": "a" * 64}
            },
        },
        "metadata": {"startup-script": "podman pull us-docker.pkg.dev/vllm/vllm-tpu:nightly"},
        "metadataStartupScript": "docker run --rm vllm/vllm-openai:v0.8.0 --model m",
        "docs": "https://docs.example.com/path/page:1 is a URL, not an image",
    }
    loose = {ref for _, ref in unpinned(props)}
    assert loose == {
        "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.7.1-ubuntu22.04",
        "public.ecr.aws/neuron/neuron-monitor:1.3.0",
        "docker.io/grafana/grafana:13.1.1",
        "us-docker.pkg.dev/vllm/vllm-tpu:nightly",
        "vllm/vllm-openai:v0.8.0",
    }
    pinned = {ref for _, ref in image_references(props)} - loose
    assert pinned == {"quay.io/kiwigrid/k8s-sidecar@sha256:" + "a" * 64}


def test_image_references_accept_the_charts_digest_spellings():
    digest = "b" * 64
    blocks = {
        "kps": {"registry": "quay.io", "repository": "prometheus/prometheus", "tag": "v3", "sha": digest},
        "ksm": {"registry": "registry.k8s.io", "repository": "ksm", "tag": "v2", "sha": f"sha256:{digest}"},
        "node": {
            "registry": "quay.io",
            "repository": "node-exporter",
            "tag": "v1",
            "digest": f"sha256:{digest}",
        },
        "dcgm": {"repository": "nvcr.io/nvidia/k8s/dcgm-exporter", "tag": f"4.4.1@sha256:{digest}"},
    }
    assert unpinned(blocks) == []
