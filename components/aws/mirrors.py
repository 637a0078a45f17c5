"""Container images from mirrors inside the VPC (pure): what a node pulls, and from where.

With `egress: endpoints-only` a node reaches no public registry. Every image
it runs must come from a private ECR registry in its region (reached through
the `ecr.api` / `ecr.dkr` interface endpoints, layers through the S3 gateway):
an ECR pull-through cache rule for registries ECR can cache (Docker Hub,
Quay, ECR Public, GitHub, GitLab, registry.k8s.io, Azure), or a copy made by
digest for those it cannot (NVIDIA's nvcr.io). `image_mirrors` maps the
upstream registry host to the ECR prefix that holds it:

    {"docker.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub"}

turns `vllm/vllm-openai@sha256:...` into
`123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub/vllm/vllm-openai@sha256:...`: same digest,
so the bytes are the ones pinned upstream. Source for the pull-through upstreams: Amazon ECR's
CreatePullThroughCacheRule reference, `upstreamRegistryUrl` (read 2026-11-24).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Reading image references is cloud-neutral (GCP's mirrors use it too): components/images.py.
from inference_infra.components.images import DOCKER_HUB, mirrored, split_reference

__all__ = [
    "DOCKER_HUB",
    "ECR_PRIVATE",
    "PULL_THROUGH_UPSTREAMS",
    "ecr_hosts",
    "is_pull_through_upstream",
    "mirror_problems",
    "mirror_repositories",
    "mirror_repository",
    "mirrored",
    "reachable_inside_vpc",
    "repository_arn",
    "split_reference",
]

# <account>.dkr.ecr.<region>.amazonaws.com[/<prefix>]
ECR_PRIVATE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z]{2}(-[a-z]+)+-\d)\.amazonaws\.com"
    r"(?:/(?P<prefix>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*))?$"
)
_HOST = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?$")


def reachable_inside_vpc(image: str, region: str | None = None) -> bool:
    """Whether a node with endpoints-only egress can pull it: a private ECR registry (in `region`)."""
    host, _ = split_reference(image)
    found = ECR_PRIVATE.fullmatch(host)
    return found is not None and (region is None or found["region"] == region)


def ecr_hosts(image_mirrors: Mapping[str, str]) -> list[str]:
    """The ECR registries the mirrors name (the docker credential helper is set up for each)."""
    return sorted(
        {mirror.split("/", 1)[0] for mirror in image_mirrors.values() if ECR_PRIVATE.fullmatch(mirror)}
    )


# Upstream registries an ECR pull-through cache rule can front (CreatePullThroughCacheRule,
# `upstreamRegistryUrl`, read 2026-11-24). A mirror of any other host (nvcr.io) is a copy the owner
# pushes by digest: nodes never import into it.
PULL_THROUGH_UPSTREAMS = frozenset(
    {"docker.io", "quay.io", "public.ecr.aws", "ghcr.io", "registry.gitlab.com", "registry.k8s.io"}
)
_AZURE_UPSTREAM = re.compile(r"^[a-z0-9]+\.azurecr\.io$")


def is_pull_through_upstream(host: str) -> bool:
    return host in PULL_THROUGH_UPSTREAMS or _AZURE_UPSTREAM.fullmatch(host) is not None


def mirror_repository(image: str, image_mirrors: Mapping[str, str]) -> tuple[str, str] | None:
    """(ECR registry host, repository name) the node pulls `image` from, or None when it is not pulled
    from a private ECR registry: the mirrored reference without tag or digest.

    `vllm/vllm-openai:v0.11.0@sha256:...` under `{"docker.io": "<registry>/docker-hub"}` is
    (`<registry>`, `docker-hub/vllm/vllm-openai`). The fleets' IAM (launch.py) and the repositories the
    stack makes (pull_through.py) both name repositories with it, so they cannot disagree.
    """
    host, rest = split_reference(mirrored(image, image_mirrors))
    if ECR_PRIVATE.fullmatch(host) is None:
        return None
    name = rest.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:  # the tag, for readers; the digest is what is pulled
        name = name[: len(name) - len(last[-1])] + last[-1].split(":", 1)[0]
    return host, name


def repository_arn(registry: str, name: str, partition: str) -> str:
    found = ECR_PRIVATE.fullmatch(registry)
    if found is None:
        raise ValueError(f"not a private ECR registry: {registry!r}")
    return f"arn:{partition}:ecr:{found['region']}:{found['account']}:repository/{name}"


def mirror_repositories(
    images: list[str] | tuple[str, ...], image_mirrors: Mapping[str, str], partition: str
) -> tuple[list[str], list[str]]:
    """(every repository ARN the node pulls from, those of them behind a pull-through cache rule).

    Exact repositories, no wildcard: the images the node runs, as mirrored. A node granted
    `<prefix>/*` could pull (and, through the cache, import) any image of the upstream registry; with
    the exact names it reaches only the pinned images' repositories. Images left unmirrored (pulled from
    the internet) name no ECR repository.
    """
    pulls, imports = set(), set()
    for image in images:
        upstream, _ = split_reference(image)
        found = mirror_repository(image, image_mirrors)
        if found is None:
            continue
        arn = repository_arn(*found, partition)
        pulls.add(arn)
        if upstream in image_mirrors and is_pull_through_upstream(upstream):
            imports.add(arn)
    return sorted(pulls), sorted(imports)


def mirror_problems(image_mirrors: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(input, value, allowed) for every malformed entry of image_mirrors."""
    problems = []
    for host, mirror in image_mirrors.items():
        if not isinstance(host, str) or not _HOST.fullmatch(host):
            problems.append(
                (f"image_mirrors[{host!r}]", host, "must be a registry host such as 'docker.io' or 'nvcr.io'")
            )
        if not isinstance(mirror, str) or not ECR_PRIVATE.fullmatch(mirror):
            problems.append(
                (
                    f"image_mirrors[{host!r}]",
                    mirror,
                    "must be a private ECR registry and prefix, "
                    "'<account>.dkr.ecr.<region>.amazonaws.com/<prefix>' (reached through the VPC endpoints)",
                )
            )
    return problems
