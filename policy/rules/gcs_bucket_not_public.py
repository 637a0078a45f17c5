"""gcs-bucket-not-public: no Cloud Storage bucket (or object) is granted to allUsers or allAuthenticatedUsers.

`allUsers` is anyone on the internet; `allAuthenticatedUsers` is anyone with a Google account.
Granting either any role on a bucket (`roles/storage.objectAdmin` lets them replace the weights a
fleet serves; `objectViewer` lets them download them) makes it public. This policy reads bucket
IAM (`BucketIAMMember`, `BucketIAMBinding`, `BucketIAMPolicy`), ACLs (`BucketACL`, `ObjectACL`,
`DefaultObjectACL` role entities and predefined ACLs, and the `...AccessControl` resources'
entity) and objects' predefined ACLs. `allowedNames` exempts resources by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources.iam import GCP_PUBLIC_MEMBERS, as_list, gcp_grants
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

NAME = "gcs-bucket-not-public"
SEVERITY = Severity.CRITICAL
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Cloud Storage buckets and objects grant no role or ACL to allUsers or allAuthenticatedUsers."
CONFIG_SCHEMA = PolicyConfigSchema(properties={"allowedNames": exempt_names("a bucket meant to be public")})

BUCKET_IAM = frozenset(
    {
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "gcp:storage/bucketIAMBinding:BucketIAMBinding",
        "gcp:storage/bucketIAMPolicy:BucketIAMPolicy",
    }
)
ROLE_ENTITY_ACLS = frozenset(
    {
        "gcp:storage/bucketACL:BucketACL",
        "gcp:storage/objectACL:ObjectACL",
        "gcp:storage/defaultObjectACL:DefaultObjectACL",
    }
)
ENTITY_ACLS = frozenset(
    {
        "gcp:storage/bucketAccessControl:BucketAccessControl",
        "gcp:storage/objectAccessControl:ObjectAccessControl",
        "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl",
    }
)
OBJECTS = frozenset({"gcp:storage/bucketObject:BucketObject"})
APPLIES_TO = "Cloud Storage bucket IAM, ACLs and objects"
# Predefined ACLs that open a bucket or object (cloud.google.com/storage/docs/access-control/lists,
# "Predefined ACLs", read 2026-11-25).
PUBLIC_PREDEFINED = frozenset({"publicRead", "publicReadWrite", "authenticatedRead", "public-read"})
_FIX = "grant the role to named service accounts or groups instead."


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    kind = resource.type
    if kind not in BUCKET_IAM | ROLE_ENTITY_ACLS | ENTITY_ACLS | OBJECTS:
        return not_applicable(f"applies to {APPLIES_TO}")
    if resource.name in config["allowedNames"]:
        return passed()
    found = Findings()
    props = resource.props
    for grant in gcp_grants(kind, props) if kind in BUCKET_IAM else []:
        if grant.member is UNKNOWN:
            found.not_known(grant.where)
        elif grant.member in GCP_PUBLIC_MEMBERS:
            role = "a role not known yet" if grant.role is UNKNOWN else show(grant.role)
            found.violation(f"{resource.label} grants {role} to {grant.member} ({grant.where}); {_FIX}")
    if kind in ROLE_ENTITY_ACLS:
        entities = props.get("roleEntities")
        if entities is UNKNOWN:
            found.not_known("roleEntities")
        for i, entry in enumerate(as_list(entities) if entities is not UNKNOWN else []):
            role, _, entity = str(entry).partition(":")
            if entity in GCP_PUBLIC_MEMBERS:
                found.violation(f"{resource.label} grants {role} to {entity} (roleEntities[{i}]); {_FIX}")
    if kind in ENTITY_ACLS:
        entity = props.get("entity")
        if entity is UNKNOWN:
            found.not_known("entity")
        elif entity in GCP_PUBLIC_MEMBERS:
            found.violation(f"{resource.label} grants {show(props.get('role'))} to {entity} (entity); {_FIX}")
    predefined = props.get("predefinedAcl")
    if predefined is UNKNOWN:
        found.not_known("predefinedAcl")
    elif predefined in PUBLIC_PREDEFINED:
        found.violation(
            f"{resource.label} uses the predefined ACL {show(predefined)} (predefinedAcl), which opens it to "
            "everyone; use uniform bucket-level access and grant roles to named principals."
        )
    return found.outcome()


POLICY = resource_policy(**rule_metadata(__name__), check=check)
