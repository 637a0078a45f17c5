"""gcp-no-basic-roles: no roles/editor or roles/owner on projects, folders or organizations."""

from __future__ import annotations

import json

import pulumi_gcp as gcp

from inference_infra.policy.rules import gcp_no_basic_roles as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

MEMBER = "gcp:projects/iAMMember:IAMMember"
POLICY = "gcp:projects/iAMPolicy:IAMPolicy"
DEFAULT_SA = "serviceAccount:123456789012-compute@developer.gserviceaccount.com"
FIX = (
    "grant predefined or custom roles with the permissions needed instead (config forbiddenRoles, "
    "allowedMembers)."
)


def test_gcp_no_basic_roles_passes_predefined_roles(check):
    writer = {"project": "p", "role": "roles/logging.logWriter", "member": DEFAULT_SA}
    assert check(rule, MEMBER, writer) == Outcome()
    owner = {"project": "p", "role": "roles/owner", "member": "group:break-glass@example.com"}
    assert check(rule, MEMBER, owner, {"allowedMembers": ["group:break-glass@example.com"]}) == Outcome()
    assert check(rule, "gcp:storage/bucketIAMMember:BucketIAMMember", {}).not_applicable


def test_gcp_no_basic_roles_rejects_editor_for_the_default_service_account(check):
    editor = {"project": "p", "role": "roles/editor", "member": DEFAULT_SA}
    assert check(rule, MEMBER, editor, name="editor").violations == (
        f"{MEMBER} 'editor' grants 'roles/editor' to {DEFAULT_SA} (Compute Engine's default service account: "
        f"every VM that names no other runs with it) (member); {FIX}",
    )
    data = json.dumps({"bindings": [{"role": "roles/owner", "members": ["user:a@example.com"]}]})
    assert check(rule, POLICY, {"project": "p", "policyData": data}, name="p").violations == (
        f"{POLICY} 'p' grants 'roles/owner' to user:a@example.com (policyData.bindings[0].members[0]); {FIX}",
    )


def test_gcp_no_basic_roles_does_not_judge_values_not_known_yet(check):
    assert check(rule, MEMBER, {"role": "roles/editor", "member": UNKNOWN}) == Outcome(unknown=("member",))
    assert check(rule, MEMBER, {"role": UNKNOWN, "member": "user:a@example.com"}) == Outcome(
        unknown=("role",)
    )


def test_gcp_no_basic_roles_on_captured_resources(plan_of, run_pack):
    gcp.projects.IAMMember("editor", project="p", role="roles/editor", member=DEFAULT_SA)
    gcp.projects.IAMMember("logs", project="p", role="roles/logging.logWriter", member=DEFAULT_SA)
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(" ", 2)[1] for v in report.violations] == ["'editor'"]
