"""gcs-bucket-not-public: no role or ACL for allUsers or allAuthenticatedUsers."""

from __future__ import annotations

import json

import pulumi_gcp as gcp

from inference_infra.policy.rules import gcs_bucket_not_public as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
ACL = "gcp:storage/bucketACL:BucketACL"
FIX = "grant the role to named service accounts or groups instead."


def test_gcs_bucket_not_public_passes_named_members(check):
    reader = {
        "bucket": "b",
        "role": "roles/storage.objectViewer",
        "member": "serviceAccount:sa@p.iam.gserviceaccount.com",
    }
    assert check(rule, MEMBER, reader) == Outcome()
    assert check(rule, ACL, {"bucket": "b", "roleEntities": ["READER:group-ml@example.com"]}) == Outcome()
    assert check(rule, "gcp:storage/bucket:Bucket", {"name": "b"}).not_applicable


def test_gcs_bucket_not_public_rejects_all_users_object_admin(check):
    admin = {"bucket": "b", "role": "roles/storage.objectAdmin", "member": "allUsers"}
    assert check(rule, MEMBER, admin, name="m").violations == (
        f"{MEMBER} 'm' grants 'roles/storage.objectAdmin' to allUsers (member); {FIX}",
    )
    binding = {
        "bucket": "b",
        "role": "roles/storage.objectViewer",
        "members": ["user:a@example.com", "allAuthenticatedUsers"],
    }
    assert check(rule, BINDING, binding, name="b").violations == (
        f"{BINDING} 'b' grants 'roles/storage.objectViewer' to allAuthenticatedUsers (members[1]); {FIX}",
    )
    data = json.dumps({"bindings": [{"role": "roles/storage.legacyBucketReader", "members": ["allUsers"]}]})
    assert check(rule, POLICY, {"bucket": "b", "policyData": data}, name="p").violations == (
        f"{POLICY} 'p' grants 'roles/storage.legacyBucketReader' to allUsers "
        f"(policyData.bindings[0].members[0]); {FIX}",
    )
    assert check(rule, ACL, {"bucket": "b", "roleEntities": ["OWNER:allUsers"]}, name="a").violations == (
        f"{ACL} 'a' grants OWNER to allUsers (roleEntities[0]); {FIX}",
    )
    assert "predefined ACL 'publicRead'" in check(rule, ACL, {"predefinedAcl": "publicRead"}).violations[0]


def test_gcs_bucket_not_public_does_not_judge_values_not_known_yet(check):
    assert check(rule, MEMBER, {"role": "roles/x", "member": UNKNOWN}) == Outcome(unknown=("member",))
    assert check(rule, MEMBER, {"role": "r", "member": "allUsers"}, {"allowedNames": ["r"]}) == Outcome()


def test_gcs_bucket_not_public_on_captured_resources(plan_of, run_pack):
    bucket = gcp.storage.Bucket("weights", location="US")
    gcp.storage.BucketIAMMember(
        "public-admin", bucket=bucket.name, role="roles/storage.objectAdmin", member="allUsers"
    )
    gcp.storage.BucketIAMMember(
        "reader", bucket=bucket.name, role="roles/storage.objectViewer", member="group:ml@example.com"
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        f"{MEMBER} 'public-admin' grants 'roles/storage.objectAdmin' to allUsers (member); {FIX}"
    ]
