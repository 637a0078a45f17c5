"""Container images from Artifact Registry mirrors (GCP): what a node pulls, and from where.

With `egress="endpoints-only"` a GCP node reaches only Google's APIs (Private
Google Access), so every image it runs must come from Artifact Registry
(`LOCATION-docker.pkg.dev`, resolved to the Google API range by the network's
private `pkg.dev` zone). `image_mirrors` maps the upstream registry host to the
Artifact Registry repository that holds it, as on AWS (components/aws/mirrors.py):

    {"docker.io": "us-central1-docker.pkg.dev/acme-inference/docker-hub"}

turns `vllm/vllm-openai@sha256:...` into
`us-central1-docker.pkg.dev/acme-inference/docker-hub/vllm/vllm-openai@sha256:...`: the same digest,
so the bytes are the ones pinned upstream. `ArtifactMirrors` makes such repositories as Artifact
Registry *remote* repositories (a pull-through cache of the upstream) and gives each node service
account `roles/artifactregistry.reader` on them only.

Upstreams (pulumi-gcp 10.2 `artifactregistry.Repository`, `remote_repository_config.docker_repository`):
`public_repository="DOCKER_HUB"` is the one predefined Docker upstream; any other registry is a
`custom_repository` with its `https://` URI (Artifact Registry API reference,
RemoteRepositoryConfig.DockerRepository, read 2026-11-24).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.images import DOCKER_HUB, mirrored, split_reference
from inference_infra.components.validation import check_types

__all__ = [
    "ARTIFACT_REGISTRY_DOCKER",
    "ArtifactMirrors",
    "ArtifactMirrorsArgs",
    "mirror_problems",
    "mirrored",
    "reader_grants",
    "registry_hosts",
    "unmirrored_hosts",
]

READER_ROLE = "roles/artifactregistry.reader"
# LOCATION-docker.pkg.dev/PROJECT/REPOSITORY (project ids: 6-30 chars; repository ids: lowercase, hyphens)
ARTIFACT_REGISTRY_DOCKER = re.compile(
    r"^(?P<location>[a-z]+(?:-[a-z0-9]+)*)-docker\.pkg\.dev"
    r"/(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])"
    r"/(?P<repository>[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?)$"
)
_HOST = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?$")


def mirror_problems(image_mirrors: Mapping[str, str], key: str = "image_mirrors") -> list[Problem]:
    """Every malformed entry: the host must be a registry host, the mirror an Artifact Registry repository."""
    problems = []
    for host, mirror in image_mirrors.items():
        if not isinstance(host, str) or not _HOST.fullmatch(host):
            problems.append(
                Problem(f"{key}[{host!r}]", host, "must be a registry host such as 'docker.io' or 'nvcr.io'")
            )
        if not isinstance(mirror, str) or not ARTIFACT_REGISTRY_DOCKER.fullmatch(mirror):
            problems.append(
                Problem(
                    f"{key}[{host!r}]",
                    mirror,
                    "must be an Artifact Registry Docker repository, "
                    "'LOCATION-docker.pkg.dev/PROJECT/REPOSITORY' (reached through Private Google Access "
                    "and the network's pkg.dev zone)",
                )
            )
    return problems


def registry_hosts(image_mirrors: Mapping[str, str]) -> list[str]:
    """The Artifact Registry hosts the mirrors name (docker's credential helper is set up for each)."""
    return sorted(
        {
            mirror.split("/", 1)[0]
            for mirror in image_mirrors.values()
            if ARTIFACT_REGISTRY_DOCKER.fullmatch(mirror)
        }
    )


def unmirrored_hosts(images: Sequence[str], image_mirrors: Mapping[str, str]) -> list[str]:
    """The upstream registries of `images` no mirror covers (a node without internet cannot pull them)."""
    return sorted({split_reference(image)[0] for image in images} - set(image_mirrors))


@dataclass(frozen=True, kw_only=True)
class ArtifactMirrorsArgs:
    # Upstream registry host -> LOCATION-docker.pkg.dev/PROJECT/REPOSITORY to create as a remote repository.
    image_mirrors: Mapping[str, str]
    # Node service accounts (emails) that pull: each gets roles/artifactregistry.reader on each repository.
    readers: Sequence[pulumi.Input[str]] = ()
    labels: Mapping[str, str] | None = None


def validate_artifact_mirrors(args: ArtifactMirrorsArgs) -> list[Problem]:
    problems = mirror_problems(args.image_mirrors)
    if not args.image_mirrors:
        problems.append(Problem("image_mirrors", {}, "must name at least one upstream registry to mirror"))
    return problems


def remote_config(upstream: str) -> gcp.artifactregistry.RepositoryRemoteRepositoryConfigArgs:
    """Docker Hub is Artifact Registry's predefined upstream; any other registry is a custom URI."""
    docker = (
        gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryArgs(
            public_repository="DOCKER_HUB"
        )
        if upstream == DOCKER_HUB
        else gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryArgs(
            custom_repository=gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryCustomRepositoryArgs(
                uri=f"https://{upstream}"
            )
        )
    )
    return gcp.artifactregistry.RepositoryRemoteRepositoryConfigArgs(
        description=f"pull-through cache of {upstream}", docker_repository=docker
    )


class ArtifactMirrors(pulumi.ComponentResource):
    """Artifact Registry remote repositories caching upstream registries, readable by the named nodes only."""

    repositories: dict[str, gcp.artifactregistry.Repository]

    def __init__(
        self, name: str, args: ArtifactMirrorsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(f"ArtifactMirrors {name!r}", check_types(args) or validate_artifact_mirrors(args))
        super().__init__("inference-infra:gcp:ArtifactMirrors", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.repositories = {}
        for upstream, mirror in sorted(args.image_mirrors.items()):
            found = ARTIFACT_REGISTRY_DOCKER.fullmatch(mirror)
            assert found is not None  # validated above
            slug = found["repository"]
            repository = gcp.artifactregistry.Repository(
                f"{name}-{slug}",
                repository_id=found["repository"],
                location=found["location"],
                project=found["project"],
                format="DOCKER",
                mode="REMOTE_REPOSITORY",
                description=f"inference-infra {name}: {upstream} for nodes without internet egress",
                remote_repository_config=remote_config(upstream),
                labels=dict(args.labels) if args.labels else None,
                opts=child,
            )
            self.repositories[upstream] = repository
        reader_grants(
            name,
            args.image_mirrors,
            args.readers,
            pulumi.ResourceOptions(parent=self, depends_on=list(self.repositories.values())),
        )
        self.register_outputs({"repositories": {u: r.id for u, r in self.repositories.items()}})


def reader_grants(
    name: str,
    image_mirrors: Mapping[str, str],
    readers: Sequence[pulumi.Input[str]],
    opts: pulumi.ResourceOptions | None = None,
) -> list[gcp.artifactregistry.RepositoryIamMember]:
    """roles/artifactregistry.reader for each reader on each mirror repository (nothing project-wide)."""
    grants = []
    for mirror in sorted(set(image_mirrors.values())):
        found = ARTIFACT_REGISTRY_DOCKER.fullmatch(mirror)
        if found is None:
            continue  # validated by the caller
        for i, email in enumerate(readers):
            grants.append(
                gcp.artifactregistry.RepositoryIamMember(
                    f"{name}-{found['repository']}-reader-{i}",
                    project=found["project"],
                    location=found["location"],
                    repository=found["repository"],
                    role=READER_ROLE,
                    member=pulumi.Output.concat("serviceAccount:", email),
                    opts=opts,
                )
            )
    return grants
