"""GcsModelPublishers' arguments and their checks (pure: no provider SDK).

Who may write a model bucket decides which bytes every GCP node serves (the pinned manifest covers what
was pinned; the next pin trusts the bucket again), so the stack names its publishers and denies object
writes to everyone else. Apart from `model_bucket.py` so that the stack config reads them without
loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem
from inference_infra.components.gcp.names import bucket_problems

_EMAIL = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}"
# IAM v1 member forms the stack accepts, and the IAM v2 principal each denies or exempts
# (https://cloud.google.com/iam/docs/principal-identifiers, read 2026-11-25).
_MEMBER_FORMS = (
    (
        re.compile(rf"^serviceAccount:({_EMAIL})$"),
        "principal://iam.googleapis.com/projects/-/serviceAccounts/{}",
    ),
    (re.compile(rf"^user:({_EMAIL})$"), "principal://goog/subject/{}"),
    (re.compile(rf"^group:({_EMAIL})$"), "principalSet://goog/group/{}"),
)
_LOCATION = re.compile(r"^[a-z]+(-[a-z]+[0-9]+)?(-[a-z0-9]+)?$")
# Object writes a deny policy refuses to every principal but the publishers. Cloud Storage permissions
# in deny policies: https://cloud.google.com/iam/docs/deny-permissions-support (read 2026-11-25).
DENIED_PERMISSIONS = (
    "storage.googleapis.com/objects.create",
    "storage.googleapis.com/objects.delete",
    "storage.googleapis.com/objects.update",
    "storage.googleapis.com/objects.move",
    "storage.googleapis.com/objects.restore",
)
PUBLISHER_ROLE = "roles/storage.objectUser"  # create, replace and delete objects; nothing on the bucket
MEMBER_RULE = (
    "must be an IAM member: serviceAccount:<email>, user:<email> or group:<email> (no wildcards, no "
    "allUsers or domain:)"
)


@dataclass(frozen=True, kw_only=True)
class GcsModelPublishersArgs:
    """The model bucket whose object writes only its publishers may make."""

    bucket: str = arg(doc="The Cloud Storage bucket of the weights (a name, without gs://).")
    publishers: Sequence[str] = arg(
        (),
        "IAM members that may create, replace or delete objects (weights and manifests) in the bucket: "
        "serviceAccount:<email>, user:<email> or group:<email>. They get roles/storage.objectUser on the "
        "bucket, and a deny policy refuses object writes to every other principal, project owners and the "
        "deploying identity included (unless listed). Required in production.",
    )
    location: str | None = arg(
        None,
        "The bucket's location as Cloud Storage names it in lower case (us-central1, us, eu, ...), where its "
        "tag binding lives. Default: the gcp:region config.",
    )
    project: str | None = arg(
        None,
        "The project of the bucket, where the tag key and the deny policy are made. Default: the "
        "gcp:project config.",
        stack=False,
    )


def principal_of(member: str) -> str | None:
    """The IAM v2 principal of an IAM v1 member (serviceAccount:, user:, group:), or None."""
    for pattern, form in _MEMBER_FORMS:
        match = pattern.fullmatch(member)
        if match is not None:
            return form.format(match.group(1))
    return None


def validate_publishers(args: GcsModelPublishersArgs, *, location: str | None = None) -> list[Problem]:
    """Every problem with the inputs; `location` is the default for args.location (gcp:region)."""
    problems = bucket_problems("bucket", args.bucket)
    if not args.publishers:
        problems.append(
            Problem(
                "publishers",
                [],
                "must name at least one IAM member: without publishers nobody could write the bucket once "
                "the deny policy exists",
            )
        )
    for i, member in enumerate(args.publishers):
        if not isinstance(member, str) or principal_of(member) is None:
            problems.append(Problem(f"publishers[{i}]", member, MEMBER_RULE))
    if len(set(args.publishers)) != len(args.publishers):
        problems.append(Problem("publishers", list(args.publishers), "must not repeat a member"))
    where = args.location or location
    if where is None:
        problems.append(Problem("location", None, "is required: pass location or set the gcp:region config"))
    elif not _LOCATION.fullmatch(where):
        problems.append(
            Problem("location", where, "must be a Cloud Storage location in lower case (us-central1, us, eu)")
        )
    return problems
