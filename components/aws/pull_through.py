"""PullThroughCache: the ECR repositories accelerator nodes pull from, made before the nodes boot.

For each upstream registry that ECR can cache (Docker Hub, Quay, ECR Public, GitHub, GitLab,
registry.k8s.io, Azure) one pull-through cache rule (`aws.ecr.PullThroughCacheRule`, with the Secrets
Manager credential the upstream needs), and for every image the fleets run one repository
(`aws.ecr.Repository`, named `<prefix>/<upstream path>` exactly as the node pulls it: immutable tags,
scan on push, encryption, a lifecycle policy). A mirror ECR cannot cache (nvcr.io) gets its repository
too, for the digests you copy into it; no rule.

Because the repositories exist, no node needs `ecr:CreateRepository` (fleets default to
`mirror_repositories_created=True`); nodes keep `ecr:BatchImportUpstreamImage` on their exact
repositories, which the first pull of each new digest needs. Why repositories rather than a repository
creation template, and the API rules checked: pull_through_args.py.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from inference_infra.components.aws.pull_through_args import (
    MirrorRepository,
    PullThroughCacheArgs,
    lifecycle_policy,
    planned_repositories,
    planned_rules,
    validate_pull_through,
)
from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.validation import check_types

__all__ = ["PullThroughCache", "PullThroughCacheArgs", "validate_pull_through"]


class PullThroughCache(pulumi.ComponentResource):
    """Pull-through cache rules and one repository per image the nodes run."""

    repositories: dict[str, aws.ecr.Repository]  # by repository name, e.g. docker-hub/vllm/vllm-openai
    rules: dict[str, aws.ecr.PullThroughCacheRule]  # by upstream registry host
    repository_arns: pulumi.Output[list[str]]

    def __init__(
        self, name: str, args: PullThroughCacheArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(
            f"PullThroughCache {name!r} (components/aws/pull_through_args.py)",
            check_types(args) or validate_pull_through(args),
        )
        super().__init__("inference-infra:aws:PullThroughCache", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.rules = {}
        for rule in planned_rules(args.image_mirrors):
            self.rules[rule.upstream] = aws.ecr.PullThroughCacheRule(
                f"{name}-{rule.prefix.replace('/', '--')}",
                ecr_repository_prefix=rule.prefix,
                upstream_registry_url=rule.url,
                credential_arn=args.credential_arns.get(rule.upstream),
                region=rule.region,
                opts=child,
            )
        planned = planned_repositories(args.images, args.image_mirrors)
        several = len({r.registry for r in planned}) > 1
        self.repositories = {}
        for repository in planned:
            resource = _resource_name(name, repository, several)
            made = aws.ecr.Repository(
                resource,
                name=repository.name,
                image_tag_mutability="IMMUTABLE",
                image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(
                    scan_on_push=True
                ),
                encryption_configurations=[
                    aws.ecr.RepositoryEncryptionConfigurationArgs(
                        encryption_type="KMS", kms_key=args.kms_key_arn
                    )
                    if args.kms_key_arn
                    else aws.ecr.RepositoryEncryptionConfigurationArgs(encryption_type="AES256")
                ],
                force_delete=False,  # cached layers are cheap to keep and slow to lose mid-rollout
                region=repository.region,
                opts=child,
            )
            aws.ecr.LifecyclePolicy(
                f"{resource}-lifecycle",
                repository=made.name,
                policy=lifecycle_policy(args.keep_images),
                region=repository.region,
                opts=child,
            )
            self.repositories[f"{repository.registry}/{repository.name}"] = made
        self.repository_arns = pulumi.Output.all(*[r.arn for r in self.repositories.values()]).apply(
            lambda arns: sorted(arns)
        )
        self.register_outputs({"repository_arns": self.repository_arns})


def _resource_name(name: str, repository: MirrorRepository, several_registries: bool) -> str:
    # '/' cannot be doubled inside an ECR name, so '--' keeps the logical names distinct.
    flat = repository.name.replace("/", "--")
    return f"{name}-{repository.region}-{flat}" if several_registries else f"{name}-{flat}"
