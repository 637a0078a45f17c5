"""PullThroughCache's arguments, the repositories and rules it makes, and their validation (pure).

Apart from `pull_through.py` so that the stack and the tests read the plan without the provider SDK.

What the ECR API allows, read 2026-12-02 in the Amazon ECR API Reference (CreatePullThroughCacheRule,
CreateRepository) and the Amazon ECR User Guide ("Sync an upstream registry with an Amazon ECR private
registry", "IAM permissions required to sync an upstream registry", "Templates to control repositories
created during a pull through cache or replication action"):

- `upstreamRegistryUrl` is one of `registry-1.docker.io` (Docker Hub), `quay.io`, `public.ecr.aws`,
  `ghcr.io`, `registry.gitlab.com`, `registry.k8s.io`, `<name>.azurecr.io` (and another account's
  private ECR, which this library does not mirror). NVIDIA's `nvcr.io` is not on the list: its mirror is
  a repository the owner copies digests into (`crane cp` / `skopeo copy --preserve-digests`).
- Docker Hub, GitHub, GitLab and Azure need `credentialArn`: a Secrets Manager secret whose name starts
  with `ecr-pullthroughcache/` (pattern `arn:aws:secretsmanager:...:secret:ecr-pullthroughcache/...`,
  50 to 612 characters), in the rule's own account and region ("Creating a pull through cache rule in
  Amazon ECR", prerequisites).
- `ecrRepositoryPrefix`: 2 to 30 characters, `(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*`.
- A repository name: 2 to 256 characters of the same pattern.
- `ecr:CreateRepository` "is required if the repository storing the cached images doesn't already
  exist": the repositories made here remove the need for it on every node. A repository creation
  template (`applied_for = ["PULL_THROUGH_CACHE"]`) only sets the settings of a repository the cache
  creates on the puller's behalf, so the puller would still need CreateRepository: not used.
- `ecr:BatchImportUpstreamImage` is what retrieves an upstream image into the cache, into an existing
  repository too: the first pull of every new digest needs it, so nodes keep it on their exact
  repositories (launch.py).

Tags: nodes pull by digest, so the cache never has a tag to keep in step with the upstream (the 24-hour
tag check applies to pulls by tag); the repositories are made with immutable tags, which CreateRepository
accepts for any repository (no exception for pull-through ones in the API reference).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from inference_infra.components.arguments import arg
from inference_infra.components.aws.mirrors import (
    ECR_PRIVATE,
    is_pull_through_upstream,
    mirror_problems,
    mirror_repository,
    repository_arn,
    split_reference,
)
from inference_infra.components.errors import Problem
from inference_infra.components.images import is_pinned

__all__ = [
    "CREDENTIAL_ARN",
    "NEEDS_CREDENTIAL",
    "MirrorRepository",
    "PullThroughCacheArgs",
    "PullThroughRule",
    "lifecycle_policy",
    "planned_repositories",
    "planned_rules",
    "upstream_registry_url",
    "validate_pull_through",
]

WHERE = "components/aws/pull_through_args.py"

# The ECR name rules (CreateRepository repositoryName, CreatePullThroughCacheRule ecrRepositoryPrefix).
_ECR_NAME = re.compile(r"(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*")
REPOSITORY_NAME_CHARS = (2, 256)
RULE_PREFIX_CHARS = (2, 30)

# Upstreams whose pull-through rule needs a Secrets Manager credential.
NEEDS_CREDENTIAL = frozenset({"docker.io", "ghcr.io", "registry.gitlab.com"})
_AZURE = re.compile(r"^[a-z0-9]+\.azurecr\.io$")
# credentialArn's pattern and length (CreatePullThroughCacheRule), with the region and account read apart.
CREDENTIAL_ARN = re.compile(
    r"^arn:aws:secretsmanager:(?P<region>[a-z]{2}(-[a-z]+)+-\d):(?P<account>\d{12}):secret:"
    r"ecr-pullthroughcache/[a-zA-Z0-9/_+=.@-]+\Z"
)
CREDENTIAL_ARN_CHARS = (50, 612)


def needs_credential(upstream: str) -> bool:
    return upstream in NEEDS_CREDENTIAL or _AZURE.fullmatch(upstream) is not None


def upstream_registry_url(upstream: str) -> str:
    """The rule's upstreamRegistryUrl: Docker Hub's is registry-1.docker.io, the others their host."""
    return "registry-1.docker.io" if upstream == "docker.io" else upstream


@dataclass(frozen=True, kw_only=True)
class PullThroughCacheArgs:
    """The ECR repositories the nodes pull from, and the pull-through cache rules that fill them."""

    image_mirrors: Mapping[str, str] = arg(
        doc="Upstream registry host -> private ECR prefix, as the fleets' image_mirrors "
        "(components/aws/mirrors.py); every prefix in the deploying account.",
        stack=False,
    )
    images: Sequence[str] = arg(
        doc="The images the nodes run, pinned upstream by digest (fleet_args.node_images of each fleet): "
        "one repository each, named as the node pulls it.",
        stack=False,
    )
    credential_arns: Mapping[str, str] = arg(
        factory=dict,
        doc="Upstream registry host -> Secrets Manager secret ARN (name ecr-pullthroughcache/...) for the "
        "upstreams that need one: docker.io, ghcr.io, registry.gitlab.com, <name>.azurecr.io.",
    )
    kms_key_arn: str | None = arg(
        None, "Encrypt the repositories with this KMS key; default: AES-256 (ECR-managed keys)."
    )
    keep_images: int = arg(
        20,
        "Lifecycle: images kept per repository, newest first (a pinned digest plus its platform "
        "manifests and the previous pins); older ones expire.",
        ge=1,
        le=1000,
    )


@dataclass(frozen=True, kw_only=True)
class MirrorRepository:
    """One repository a node pulls from, and whether a pull-through rule fills it."""

    upstream: str  # docker.io
    registry: str  # <account>.dkr.ecr.<region>.amazonaws.com
    name: str  # docker-hub/vllm/vllm-openai
    pull_through: bool  # False: a copy the owner pushes by digest (nvcr.io)

    @property
    def region(self) -> str:
        return _registry_part(self.registry, "region")

    def arn(self, partition: str) -> str:
        return repository_arn(self.registry, self.name, partition)


@dataclass(frozen=True, kw_only=True)
class PullThroughRule:
    upstream: str
    registry: str
    prefix: str  # ecrRepositoryPrefix
    url: str  # upstreamRegistryUrl

    @property
    def region(self) -> str:
        return _registry_part(self.registry, "region")


def _registry_part(registry: str, part: str) -> str:
    found = ECR_PRIVATE.fullmatch(registry)
    if found is None:
        raise ValueError(f"not a private ECR registry: {registry!r}")
    return str(found[part])


def planned_repositories(images: Sequence[str], image_mirrors: Mapping[str, str]) -> list[MirrorRepository]:
    """One repository per distinct mirrored image, sorted by registry and name (images whose registry
    has no mirror name none: validate_pull_through refuses them)."""
    found: dict[tuple[str, str], MirrorRepository] = {}
    for image in images:
        upstream, _ = split_reference(image)
        where = mirror_repository(image, image_mirrors)
        if upstream not in image_mirrors or where is None:
            continue
        registry, name = where
        found[(registry, name)] = MirrorRepository(
            upstream=upstream, registry=registry, name=name, pull_through=is_pull_through_upstream(upstream)
        )
    return [found[key] for key in sorted(found)]


def planned_rules(image_mirrors: Mapping[str, str]) -> list[PullThroughRule]:
    """One rule per mirrored upstream that ECR can cache, sorted by upstream."""
    rules = []
    for upstream, mirror in sorted(image_mirrors.items()):
        registry, _, prefix = mirror.rstrip("/").partition("/")
        if is_pull_through_upstream(upstream):
            rules.append(
                PullThroughRule(
                    upstream=upstream, registry=registry, prefix=prefix, url=upstream_registry_url(upstream)
                )
            )
    return rules


def lifecycle_policy(keep_images: int) -> str:
    """Keep the newest `keep_images` images of any tag status; expire the rest.

    A count rule on `any`, not an age rule on untagged images: a pull by digest stores an untagged image,
    and an age rule would expire the pinned digest the fleet still runs.
    """
    return json.dumps(
        {
            "rules": [
                {
                    "rulePriority": 1,
                    "description": f"keep the newest {keep_images} images",
                    "selection": {
                        "tagStatus": "any",
                        "countType": "imageCountMoreThan",
                        "countNumber": keep_images,
                    },
                    "action": {"type": "expire"},
                }
            ]
        },
        sort_keys=True,
    )


def validate_pull_through(args: PullThroughCacheArgs) -> list[Problem]:
    """Every problem of the mirrors, images and credentials, before any resource is registered."""
    problems = [Problem(i, v, a) for i, v, a in mirror_problems(args.image_mirrors)]
    if problems:
        return problems
    if not args.images:
        problems.append(Problem("images", [], "must list the images the nodes run (one repository each)"))
    accounts = sorted(
        {_registry_part(m.rstrip("/").split("/", 1)[0], "account") for m in args.image_mirrors.values()}
    )
    if len(accounts) > 1:
        problems.append(
            Problem(
                "image_mirrors",
                dict(args.image_mirrors),
                f"name registries of several accounts {accounts}: the cache is made in one account, the "
                "deploying one; give each account its own PullThroughCache",
            )
        )
    problems += _image_problems(args)
    problems += _rule_problems(args.image_mirrors)
    problems += _credential_problems(args)
    if args.kms_key_arn is not None and not re.fullmatch(
        r"arn:aws[a-z-]*:kms:[a-z]{2}(-[a-z]+)+-\d:\d{12}:(key|alias)/[A-Za-z0-9/_-]+", args.kms_key_arn
    ):
        problems.append(
            Problem("kms_key_arn", args.kms_key_arn, "must be a KMS key or alias ARN (arn:aws:kms:...)")
        )
    if not isinstance(args.keep_images, int) or not 1 <= args.keep_images <= 1000:
        problems.append(Problem("keep_images", args.keep_images, "must be a whole number from 1 to 1000"))
    return problems


def _image_problems(args: PullThroughCacheArgs) -> list[Problem]:
    problems = []
    low, high = REPOSITORY_NAME_CHARS
    for i, image in enumerate(args.images):
        where = f"images[{i}]"
        if not isinstance(image, str) or not is_pinned(image) or any(c.isspace() for c in image):
            problems.append(
                Problem(where, image, "must be an image pinned by digest, '<name>@sha256:<64 hex>'")
            )
            continue
        upstream, _ = split_reference(image)
        if upstream not in args.image_mirrors:
            problems.append(
                Problem(
                    where,
                    image,
                    f"comes from {upstream!r}, which image_mirrors does not map "
                    f"({sorted(args.image_mirrors)}): map it or leave the image out",
                )
            )
            continue
        found = mirror_repository(image, args.image_mirrors)
        name = found[1] if found else ""
        if not (low <= len(name) <= high and _ECR_NAME.fullmatch(name)):
            problems.append(
                Problem(
                    where,
                    image,
                    f"names the repository {name!r}, which ECR refuses: {low} to {high} characters, "
                    "lowercase letters and digits in path parts joined by one '.', '_' or '-' and split "
                    "by single '/' (no '..', '//', leading or trailing separator)",
                )
            )
    return problems


def _rule_problems(image_mirrors: Mapping[str, str]) -> list[Problem]:
    problems = []
    low, high = RULE_PREFIX_CHARS
    rules = planned_rules(image_mirrors)
    for rule in rules:
        where = f"image_mirrors[{rule.upstream!r}]"
        if not rule.prefix:
            problems.append(
                Problem(
                    where,
                    image_mirrors[rule.upstream],
                    "must name a repository prefix after the registry ('<registry>/docker-hub'): a "
                    "pull-through cache rule needs its own namespace",
                )
            )
        elif not (low <= len(rule.prefix) <= high and _ECR_NAME.fullmatch(rule.prefix)):
            problems.append(
                Problem(
                    where,
                    rule.prefix,
                    f"is a pull-through rule prefix, which ECR limits to {low} to {high} characters",
                )
            )
    for mine in rules:
        for other in rules:
            if (
                mine.upstream < other.upstream
                and mine.registry == other.registry
                and mine.prefix
                and (
                    mine.prefix == other.prefix
                    or other.prefix.startswith(f"{mine.prefix}/")
                    or mine.prefix.startswith(f"{other.prefix}/")
                )
            ):
                problems.append(
                    Problem(
                        f"image_mirrors[{other.upstream!r}]",
                        image_mirrors[other.upstream],
                        f"overlaps the prefix of {mine.upstream!r} ({mine.prefix!r}): each pull-through "
                        "upstream needs a namespace of its own",
                    )
                )
    # A copied mirror (nvcr.io) inside a pull-through namespace would have its pulls sent upstream.
    copies = {u: m.rstrip("/") for u, m in image_mirrors.items() if not is_pull_through_upstream(u)}
    for upstream, mirror in sorted(copies.items()):
        for rule in rules:
            if rule.prefix and (
                mirror == f"{rule.registry}/{rule.prefix}"
                or mirror.startswith(f"{rule.registry}/{rule.prefix}/")
            ):
                problems.append(
                    Problem(
                        f"image_mirrors[{upstream!r}]",
                        image_mirrors[upstream],
                        f"lies inside the pull-through namespace of {rule.upstream!r}; give the copy its own "
                        "prefix",
                    )
                )
    return problems


def _credential_problems(args: PullThroughCacheArgs) -> list[Problem]:
    problems = []
    low, high = CREDENTIAL_ARN_CHARS
    for rule in planned_rules(args.image_mirrors):
        if needs_credential(rule.upstream) and rule.upstream not in args.credential_arns:
            problems.append(
                Problem(
                    "credential_arns",
                    dict(args.credential_arns),
                    f"must give {rule.upstream!r} a Secrets Manager secret ARN (name "
                    "'ecr-pullthroughcache/...'): ECR's pull-through cache authenticates to it",
                )
            )
    for upstream, arn in args.credential_arns.items():
        where = f"credential_arns[{upstream!r}]"
        if upstream not in args.image_mirrors or not is_pull_through_upstream(upstream):
            problems.append(
                Problem(
                    where,
                    arn,
                    "names no pull-through upstream of image_mirrors (ECR caches docker.io, quay.io, "
                    "public.ecr.aws, ghcr.io, registry.gitlab.com, registry.k8s.io, <name>.azurecr.io; "
                    "nvcr.io is a copy)",
                )
            )
            continue
        if not needs_credential(upstream):
            problems.append(Problem(where, arn, f"is not needed: ECR reads {upstream!r} without credentials"))
            continue
        found = CREDENTIAL_ARN.fullmatch(arn) if isinstance(arn, str) else None
        if found is None or not low <= len(arn) <= high:
            problems.append(
                Problem(
                    where,
                    arn,
                    "must be a Secrets Manager secret ARN whose name starts with 'ecr-pullthroughcache/', "
                    f"'arn:aws:secretsmanager:<region>:<account>:secret:ecr-pullthroughcache/<name>' "
                    f"({low} to {high} characters)",
                )
            )
            continue
        registry = ECR_PRIVATE.fullmatch(args.image_mirrors[upstream].rstrip("/").split("/", 1)[0])
        if registry is not None and (found["account"], found["region"]) != (
            registry["account"],
            registry["region"],
        ):
            problems.append(
                Problem(
                    where,
                    arn,
                    f"must be in the mirror's account and region ({registry['account']}, "
                    f"{registry['region']}), where the rule is made",
                )
            )
    return problems
