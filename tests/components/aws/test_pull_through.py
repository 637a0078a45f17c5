"""PullThroughCache (#33 item 4): the pull-through rules and one repository per image, made by the library so
no node creates a repository; hostile and careless inputs refused before anything is registered.

The API rules asserted here were read 2026-12-02 in the Amazon ECR API Reference (CreatePullThroughCacheRule:
upstreamRegistryUrl list, ecrRepositoryPrefix 2-30 characters and pattern, credentialArn pattern and
50-612 characters; CreateRepository: name 2-256 characters) and the ECR User Guide ("Creating a pull through
cache rule": the secret's name prefix, account and region).
"""

from __future__ import annotations

import json

import pytest

from inference_infra.components.aws.fleet_args import GPU_FLEET, INFERENTIA_FLEET, node_images
from inference_infra.components.aws.mirrors import mirror_repositories
from inference_infra.components.aws.pull_through import PullThroughCache
from inference_infra.components.aws.pull_through_args import (
    PullThroughCacheArgs,
    lifecycle_policy,
    planned_repositories,
    validate_pull_through,
)
from inference_infra.components.errors import InputError
from inference_infra.components.serving.engines import EngineFamily, engine_image

ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
DIGEST = "sha256:" + "b" * 64
MIRRORS = {
    "docker.io": f"{ECR}/docker-hub",
    "quay.io": f"{ECR}/quay",
    "public.ecr.aws": f"{ECR}/ecr-public",
    "nvcr.io": f"{ECR}/nvcr",
}
HUB_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:ecr-pullthroughcache/docker-hub-Q1w2E3"
RULE = "aws:ecr/pullThroughCacheRule:PullThroughCacheRule"
REPOSITORY = "aws:ecr/repository:Repository"
LIFECYCLE = "aws:ecr/lifecyclePolicy:LifecyclePolicy"


def _images() -> list[str]:
    """Every image an NVIDIA and a Neuron node runs, as the fleets list them."""
    nvidia = [*node_images(GPU_FLEET, None), engine_image(EngineFamily.NVIDIA_VLLM).reference]
    neuron = [*node_images(INFERENTIA_FLEET, None), engine_image(EngineFamily.NEURON_VLLM).reference]
    return sorted(set(nvidia + neuron))


def _args(**overrides) -> PullThroughCacheArgs:
    values = {"image_mirrors": MIRRORS, "images": _images(), "credential_arns": {"docker.io": HUB_SECRET}}
    return PullThroughCacheArgs(**{**values, **overrides})


def _problems(**overrides) -> list[str]:
    return [str(p) for p in validate_pull_through(_args(**overrides))]


def test_every_image_maps_to_exactly_one_repository_the_node_role_names():
    images = _images()
    repositories = planned_repositories(images, MIRRORS)
    arns = [r.arn("aws") for r in repositories]
    assert len(arns) == len(set(arns))
    for image in images:  # each image: one repository, the one its node may pull from
        pulls, _ = mirror_repositories([image], MIRRORS, "aws")
        assert len(pulls) == 1, image
        assert pulls[0] in arns, image
    pulls, _ = mirror_repositories(images, MIRRORS, "aws")
    assert pulls == sorted(arns)  # and no repository nobody pulls


def test_the_cache_makes_rules_for_cacheable_upstreams_only_with_their_urls_and_credentials(plan_of):
    capture = plan_of(PullThroughCache("mirrors", _args()))
    rules = {r.props["ecrRepositoryPrefix"]: r.props for r in capture.of_type(RULE)}
    assert sorted(rules) == ["docker-hub", "ecr-public", "quay"]  # no rule for nvcr.io: a copy
    assert rules["docker-hub"]["upstreamRegistryUrl"] == "registry-1.docker.io"
    assert rules["docker-hub"]["credentialArn"] == HUB_SECRET
    assert rules["quay"]["upstreamRegistryUrl"] == "quay.io"
    assert "credentialArn" not in rules["quay"]
    assert rules["ecr-public"]["upstreamRegistryUrl"] == "public.ecr.aws"
    assert {p["region"] for p in rules.values()} == {"us-east-1"}


def test_the_cache_makes_each_repository_immutable_scanned_encrypted_with_a_lifecycle(plan_of):
    capture = plan_of(PullThroughCache("mirrors", _args(kms_key_arn=None)))
    repositories = capture.of_type(REPOSITORY)
    names = sorted(r.props["name"] for r in repositories)
    assert names == sorted(r.name for r in planned_repositories(_images(), MIRRORS))
    assert any(n.startswith("nvcr/") for n in names)  # the copy's repository is made too
    for repository in repositories:
        props = repository.props
        assert props["imageTagMutability"] == "IMMUTABLE"
        assert props["imageScanningConfiguration"] == {"scanOnPush": True}
        assert props["encryptionConfigurations"] == [{"encryptionType": "AES256"}]
        assert props["forceDelete"] is False
        assert props["region"] == "us-east-1"
    policies = capture.of_type(LIFECYCLE)
    assert len(policies) == len(repositories)
    rule = json.loads(policies[0].props["policy"])["rules"][0]
    # by count on any tag status: a pull by digest stores an untagged image the fleet still runs
    assert rule["selection"] == {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": 20}
    assert rule["action"] == {"type": "expire"}


def test_the_cache_encrypts_with_the_given_kms_key(plan_of):
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    capture = plan_of(PullThroughCache("mirrors", _args(kms_key_arn=key)))
    for repository in capture.of_type(REPOSITORY):
        assert repository.props["encryptionConfigurations"] == [{"encryptionType": "KMS", "kmsKey": key}]


def test_the_lifecycle_keeps_the_number_asked():
    assert json.loads(lifecycle_policy(3))["rules"][0]["selection"]["countNumber"] == 3


@pytest.mark.parametrize(
    "image",
    [
        f"docker.io/../../etc/passwd@{DIGEST}",  # path climbing
        f"quay.io/Prometheus/node-exporter@{DIGEST}",  # uppercase
        f"quay.io/prometheus//node-exporter@{DIGEST}",  # empty path part
        f"quay.io/prometheus/node-exporter-@{DIGEST}",  # trailing separator
        f"quay.io/prometheus/-node-exporter@{DIGEST}",  # leading separator
        f"quay.io/prometheus/node--exporter@{DIGEST}",  # doubled separator
        f"quay.io/{'a' * 260}@{DIGEST}",  # longer than ECR's 256 characters
    ],
)
def test_hostile_upstream_paths_are_refused_naming_the_image(image):
    [problem] = _problems(images=[image])
    assert problem.startswith(f"images[0] {image!r} names the repository")
    assert "which ECR refuses" in problem


@pytest.mark.parametrize(
    "image",
    [
        "quay.io/prometheus/node-exporter:v1.9.1",  # a tag moves; only a digest is pinned
        f"quay.io/prometheus/node-exporter@{DIGEST}\n",  # a newline after the digest
        f"quay.io/prometheus/node exporter@{DIGEST}",  # whitespace
    ],
)
def test_unpinned_or_malformed_images_are_refused(image):
    [problem] = _problems(images=[image])
    assert "must be an image pinned by digest" in problem


def test_an_image_of_an_unmirrored_registry_is_refused():
    [problem] = _problems(images=[f"ghcr.io/acme/engine@{DIGEST}"])
    assert "comes from 'ghcr.io', which image_mirrors does not map" in problem


def test_no_images_is_refused():
    assert _problems(images=[]) == ["images [] must list the images the nodes run (one repository each)"]


def test_docker_hub_needs_its_secrets_manager_credential():
    [problem] = _problems(credential_arns={})
    assert problem.startswith("credential_arns {} must give 'docker.io' a Secrets Manager secret ARN")


@pytest.mark.parametrize(
    ("arn", "says"),
    [
        ("arn:aws:secretsmanager:us-east-1:123456789012:secret:docker-hub-Q1w2E3", "ecr-pullthroughcache/"),
        (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:ecr-pullthroughcache/a b",
            "ecr-pullthroughcache/",
        ),
        ("arn:aws:iam::123456789012:role/ecr-pullthroughcache/x", "ecr-pullthroughcache/"),
        (
            "arn:aws:secretsmanager:us-west-2:123456789012:secret:ecr-pullthroughcache/hub-Q1w2E3",
            "mirror's account and region",
        ),
        (
            "arn:aws:secretsmanager:us-east-1:999999999999:secret:ecr-pullthroughcache/hub-Q1w2E3",
            "mirror's account and region",
        ),
    ],
)
def test_a_credential_outside_the_api_pattern_or_the_rule_region_is_refused(arn, says):
    [problem] = _problems(credential_arns={"docker.io": arn})
    assert problem.startswith("credential_arns['docker.io']")
    assert says in problem


def test_credentials_for_upstreams_that_take_none_are_refused():
    secret = HUB_SECRET.replace("docker-hub", "other")
    problems = _problems(credential_arns={"docker.io": HUB_SECRET, "quay.io": secret, "nvcr.io": secret})
    assert len(problems) == 2
    assert any(p.startswith("credential_arns['quay.io']") and "is not needed" in p for p in problems)
    assert any(p.startswith("credential_arns['nvcr.io']") and "nvcr.io is a copy" in p for p in problems)


def test_a_pull_through_mirror_needs_a_prefix_of_its_own():
    problems = _problems(image_mirrors={**MIRRORS, "quay.io": ECR})
    assert any(
        p.startswith(f"image_mirrors['quay.io'] {ECR!r} must name a repository prefix") for p in problems
    )


def test_a_rule_prefix_longer_than_ecr_allows_is_refused():
    long = "q" * 31
    problems = _problems(image_mirrors={**MIRRORS, "quay.io": f"{ECR}/{long}"})
    assert any(
        p.startswith(f"image_mirrors['quay.io'] {long!r} is a pull-through rule prefix") for p in problems
    )


def test_overlapping_namespaces_are_refused():
    problems = _problems(image_mirrors={**MIRRORS, "quay.io": f"{ECR}/docker-hub/quay"})
    assert any("overlaps the prefix of 'docker.io'" in p for p in problems)
    problems = _problems(image_mirrors={**MIRRORS, "nvcr.io": f"{ECR}/quay/nvcr"})
    assert any(
        p.startswith("image_mirrors['nvcr.io']") and "inside the pull-through namespace" in p
        for p in problems
    )


def test_mirrors_in_two_accounts_are_refused():
    other = "210987654321.dkr.ecr.us-east-1.amazonaws.com"
    problems = _problems(image_mirrors={**MIRRORS, "quay.io": f"{other}/quay"})
    assert any(p.startswith("image_mirrors {") and "several accounts" in p for p in problems)


def test_the_component_refuses_before_registering_anything(plan_of):
    with pytest.raises(InputError, match=r"PullThroughCache 'mirrors'.*credential_arns"):
        PullThroughCache("mirrors", _args(credential_arns={}))
    assert plan_of().of_type(REPOSITORY) == []
