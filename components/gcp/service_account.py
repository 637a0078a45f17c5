"""The identity a GPU or TPU node runs as: a dedicated, least-privilege service account.

Never the default Compute Engine service account (which often holds Editor on
the project): each fleet gets its own account that may write logs and
metrics, read the one bucket that holds its model weights and, when its
engines have an API key, read that one secret; nothing else.
The VM's OAuth scopes are narrowed to the same three services as a second
fence (not `cloud-platform`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

METRIC_WRITER = "roles/monitoring.metricWriter"
PROJECT_ROLES = ("roles/logging.logWriter", METRIC_WRITER)
MODEL_BUCKET_ROLE = "roles/storage.objectViewer"
NODE_SCOPES = (
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring.write",
)
# Secret Manager accepts only the cloud-platform scope (its API has no narrower one): a node that fetches
# its engines' API key gets it, and IAM (one secretAccessor grant on that one secret) is the fence.
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
SECRET_ROLE = "roles/secretmanager.secretAccessor"


def node_scopes(*, api_key: bool) -> list[str]:
    """The VM's OAuth scopes: storage read, logs and metrics; cloud-platform too when it reads a secret."""
    return [*NODE_SCOPES, *([CLOUD_PLATFORM_SCOPE] if api_key else [])]


_ACCOUNT_ID_MIN, _ACCOUNT_ID_MAX = 6, 30


def account_id(name: str) -> str:
    """A valid service account id (6-30 characters, [a-z0-9-]) derived from a component name.

    Short names get a suffix; long ones are cut and end in a hash of the full
    name, so two long names that share a prefix still differ.
    """
    candidate = f"{name}-sa"
    if len(candidate) < _ACCOUNT_ID_MIN:
        candidate = f"{name}-node-sa"
    if len(candidate) > _ACCOUNT_ID_MAX:
        digest = hashlib.sha256(name.encode()).hexdigest()[:6]
        candidate = f"{name[: _ACCOUNT_ID_MAX - 7].rstrip('-')}-{digest}"
    return candidate


@dataclass(frozen=True)
class NodeIdentity:
    """The service account a fleet's VMs run as, and the grants it holds."""

    account: pulumi.Resource
    email: pulumi.Output[str]
    grants: tuple[pulumi.Resource, ...]


def model_prefixes(model_uris: Sequence[str]) -> list[str]:
    """gs://bucket/a/b/ -> 'a/b/' for each model folder (the prefixes a fleet may read)."""
    prefixes = []
    for uri in model_uris:
        folder = (
            uri.removeprefix("gs://").split("/", 1)[1].strip("/") if "/" in uri.removeprefix("gs://") else ""
        )
        if folder:
            prefixes.append(f"{folder}/")
    return sorted(set(prefixes))


def prefix_condition(bucket: str, prefixes: Sequence[str]) -> dict[str, str]:
    """An IAM condition that limits objectViewer to the given object prefixes: object reads under them,
    and bucket listings only with a list prefix under them (GCS's objectListPrefix attribute). IAM
    conditions on a bucket need uniform bucket-level access on it."""
    clauses = []
    for prefix in prefixes:
        clauses.append(f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{prefix}")')
        clauses.append(
            f'(resource.type == "storage.googleapis.com/Bucket" && '
            f'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("{prefix}"))'
        )
    return {
        "title": "model-prefixes-only",
        "description": "Read only the fleet's model folders: " + ", ".join(prefixes),
        "expression": " || ".join(clauses),
    }


def node_identity(
    name: str,
    *,
    project: str,
    model_bucket: str | None,
    description: str,
    parent: pulumi.Resource,
    model_uris: Sequence[str] = (),
    api_key_secret: str | None = None,
    metrics: bool = True,
) -> NodeIdentity:
    """Create the fleet's service account and its grants as children of parent.

    `metrics` False (a GPU fleet without the Ops Agent) leaves out roles/monitoring.metricWriter: nothing
    on the node writes to Cloud Monitoring then. With it, the Ops Agent writes the GPU metrics and, on an
    elastic pool, the engines' load its autoscaler reads (components/gcp/elastic.py).
    """
    import pulumi_gcp as gcp

    child = pulumi.ResourceOptions(parent=parent)
    account = gcp.serviceaccount.Account(
        f"{name}-sa",
        account_id=account_id(name),
        display_name=f"inference-infra {name}",
        description=description,
        project=project,
        opts=child,
    )
    grants: list[pulumi.Resource] = [
        gcp.projects.IAMMember(
            f"{name}-{role.rsplit('.', 1)[-1].lower()}",
            project=project,
            role=role,
            member=account.member,
            opts=child,
        )
        for role in PROJECT_ROLES
        if metrics or role != METRIC_WRITER
    ]
    if model_bucket is not None:
        grants.append(
            gcp.storage.BucketIAMMember(
                f"{name}-model-reader",
                bucket=model_bucket,
                role=MODEL_BUCKET_ROLE,
                member=account.member,
                # Only the fleet's own model folders, as the AWS roles are limited to their prefix.
                condition=prefix_condition(model_bucket, model_prefixes(model_uris))
                if model_prefixes(model_uris)
                else None,
                opts=child,
            )
        )
    if api_key_secret is not None:  # projects/P/secrets/NAME: this secret only, to read its versions
        grants.append(
            gcp.secretmanager.SecretIamMember(
                f"{name}-api-key-reader",
                secret_id=api_key_secret,
                role=SECRET_ROLE,
                member=account.member,
                opts=child,
            )
        )
    return NodeIdentity(account=account, email=account.email, grants=tuple(grants))
