"""s3-bucket-not-public: no S3 bucket (or object) is open to everyone.

Model weights, prompts and logs sit in buckets; a public one leaks them, a publicly writable one
lets anyone replace the weights a fleet serves. Amazon S3 calls a bucket public when an ACL grants
anything to the AllUsers or AuthenticatedUsers groups (any AWS account), or a bucket policy allows
everyone (`Principal: "*"`, `{"AWS": "*"}`, `NotPrincipal`) without a condition that fixes who
may act (`aws:SourceAccount`, `aws:SourceVpce`, `aws:PrincipalOrgID`, ...:
`inference_infra.components.resources.iam`). This policy refuses:

- a public access block (bucket or account) that leaves any of its four settings off (unset is
  off), since it is what keeps a later ACL or policy from making the bucket public;
- a canned ACL `public-read`, `public-read-write` or `authenticated-read`, and ACL grants to those
  groups, on buckets (`acl`, `grants`, `BucketAcl`) and objects;
- a bucket policy (`BucketPolicy`, or a bucket's `policy`) with such an Allow statement.

`allowedNames` exempts resources by name (a public website bucket, deliberately).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import get_path
from inference_infra.components.resources.iam import as_list, is_policy_text, statements
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    exempt_names,
    not_applicable,
    passed,
    resource_policy,
    rule_metadata,
    show,
)

NAME = "s3-bucket-not-public"
SEVERITY = Severity.CRITICAL
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "S3 buckets keep public access blocked and grant nothing to everyone (ACLs to AllUsers or "
    "AuthenticatedUsers, policies to Principal *)."
)
CONFIG_SCHEMA = PolicyConfigSchema(properties={"allowedNames": exempt_names("a bucket meant to be public")})

BUCKETS = frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"})
ACCESS_BLOCKS = frozenset(
    {
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        "aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock",
    }
)
ACLS = frozenset({"aws:s3/bucketAcl:BucketAcl", "aws:s3/bucketAclV2:BucketAclV2"})
OBJECTS = frozenset({"aws:s3/bucketObject:BucketObject", "aws:s3/bucketObjectv2:BucketObjectv2"})
POLICIES = frozenset({"aws:s3/bucketPolicy:BucketPolicy"})
APPLIES_TO = "S3 buckets, their public access blocks, ACLs, objects and bucket policies"
BLOCK_SETTINGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
PUBLIC_CANNED_ACLS = frozenset({"public-read", "public-read-write", "authenticated-read"})
PUBLIC_GROUPS = {
    "http://acs.amazonaws.com/groups/global/AllUsers": "AllUsers",
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers": "AuthenticatedUsers (any AWS account)",
}


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    kind = resource.type
    if kind not in BUCKETS | ACCESS_BLOCKS | ACLS | OBJECTS | POLICIES:
        return not_applicable(f"applies to {APPLIES_TO}")
    if resource.name in config["allowedNames"]:
        return passed()
    found = Findings()
    props = resource.props
    if kind in ACCESS_BLOCKS:
        _access_block(resource, found)
        return found.outcome()
    _canned_acl(resource, props.get("acl"), "acl", found)
    if kind in BUCKETS:
        _grants(resource, props.get("grants"), "grants", found)
    if kind in ACLS:
        grants = get_path(props, "accessControlPolicy", "grants")
        _grants(resource, grants, "accessControlPolicy.grants", found, grantee="grantee")
    if kind in BUCKETS | POLICIES:
        _policy(resource, props.get("policy"), found)
    return found.outcome()


def _access_block(resource: Resource, found: Findings) -> None:
    off = []
    for setting in BLOCK_SETTINGS:
        value = resource.props.get(setting)
        if value is UNKNOWN:
            found.not_known(setting)
        elif value is not True:
            off.append(setting)
    if off:
        found.violation(
            f"{resource.label} leaves {', '.join(off)} off (unset is off); set all four to true, so that no "
            "ACL or bucket policy can make the bucket public."
        )


def _canned_acl(resource: Resource, acl: Any, where: str, found: Findings) -> None:
    if acl is UNKNOWN:
        found.not_known(where)
    elif isinstance(acl, str) and acl in PUBLIC_CANNED_ACLS:
        found.violation(
            f"{resource.label} sets the canned ACL {show(acl)} ({where}), which opens it to "
            f"{'any AWS account' if acl == 'authenticated-read' else 'everyone'}; use 'private' (or no ACL, "
            "with object ownership BucketOwnerEnforced) and grant access by IAM."
        )


def _grants(resource: Resource, grants: Any, where: str, found: Findings, grantee: str | None = None) -> None:
    if grants is UNKNOWN:
        found.not_known(where)
        return
    for i, grant in enumerate(as_list(grants)):
        who = get_path(grant, grantee) if grantee else grant
        uri = get_path(who, "uri")
        if uri is UNKNOWN:
            found.not_known(f"{where}[{i}]")
        elif uri in PUBLIC_GROUPS:
            permissions = get_path(grant, "permission") or get_path(grant, "permissions")
            shown = ", ".join(str(p) for p in as_list(permissions)) or "access"
            found.violation(
                f"{resource.label} grants {shown} to {PUBLIC_GROUPS[uri]} ({where}[{i}]); remove the grant "
                "and give access to named principals by IAM."
            )


def _policy(resource: Resource, policy: Any, found: Findings) -> None:
    if policy is UNKNOWN:
        found.not_known("policy")
        return
    if policy is None or not is_policy_text(policy):
        return
    for statement in statements(policy):
        if statement.public():
            actions = ", ".join(statement.actions()) or "every action (NotAction)"
            found.violation(
                f"{resource.label}: policy {statement.where} allows everyone ({statement.who}) "
                f"{actions} with no condition that limits who; name the principals, or add a condition on "
                "aws:SourceAccount, aws:SourceVpce or aws:PrincipalOrgID."
            )


POLICY = resource_policy(**rule_metadata(__name__), check=check)
