"""gcp-no-basic-roles: no one is granted the basic Editor or Owner role on a project, folder or organization.

`roles/editor` can change almost every resource of a project and `roles/owner` everything, IAM
included; on Compute Engine's default service account (which every VM, GPU VMs included, runs as
unless told otherwise) they hand the whole project to whatever runs on a VM. This policy reads
project, folder and organization IAM (`IAMMember`, `IAMBinding`, `IAMPolicy`) and refuses a grant
of a role in `forbiddenRoles` to any member not in `allowedMembers` (a break-glass group).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources.iam import gcp_grants, is_default_service_account
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    rule_metadata,
    show,
)

NAME = "gcp-no-basic-roles"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "No project, folder or organization grants the basic roles/editor or roles/owner."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "forbiddenRoles": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": ["roles/editor", "roles/owner"],
            "description": "Roles no member may be granted on a project, folder or organization.",
        },
        "allowedMembers": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "description": 'Members that may hold them anyway, e.g. "group:break-glass@example.com".',
        },
    }
)

IAM_TYPES = frozenset(
    f"gcp:{scope}/iAM{kind}:IAM{kind}"
    for scope in ("projects", "folder", "organizations")
    for kind in ("Member", "Binding", "Policy")
)
APPLIES_TO = "project, folder and organization IAM members, bindings and policies"


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    if resource.type not in IAM_TYPES:
        return not_applicable(f"applies to {APPLIES_TO}")
    forbidden, allowed = set(config["forbiddenRoles"]), set(config["allowedMembers"])
    found = Findings()
    for grant in gcp_grants(resource.type, resource.props):
        if grant.role is UNKNOWN:
            found.not_known(grant.where if grant.where == "policyData" else "role")
            continue
        if grant.role not in forbidden:
            continue
        if grant.member is UNKNOWN:
            found.not_known(grant.where)
        elif grant.member not in allowed:
            default = (
                " (Compute Engine's default service account: every VM that names no other runs with it)"
                if is_default_service_account(grant.member)
                else ""
            )
            found.violation(
                f"{resource.label} grants {show(grant.role)} to {grant.member}{default} ({grant.where}); "
                "grant predefined or custom roles with the permissions needed instead (config "
                "forbiddenRoles, allowedMembers)."
            )
    return found.outcome()


POLICY = resource_policy(**rule_metadata(__name__), check=check)
