"""iam-no-wildcard-access: no role is trusted by everyone or allowed every action.

A GPU node's role is what a compromised serving container gets; a role anyone can assume is
anyone's. This policy refuses, on IAM roles and what attaches to them:

- a trust policy (`assumeRolePolicy`) that allows everyone (`Principal: "*"`, `{"AWS": "*"}`,
  `NotPrincipal`) to assume it without a condition that fixes who (`aws:PrincipalOrgID`,
  `aws:PrincipalAccount`, `aws:SourceAccount`, ...: `inference_infra.components.resources.iam`);
- an Allow of every action (`Action: "*"` or `"*:*"`, or `NotAction`) in a role's inline policies,
  a `RolePolicy`, a user's or group's inline policy (`UserPolicy`, `GroupPolicy`) or a managed `Policy`;
- an attached managed policy listed in `forbiddenPolicies` (AdministratorAccess by default), on a
  role (`managedPolicyArns`, `RolePolicyAttachment`, `RolePolicyAttachmentsExclusive`), on a user or
  group (`UserPolicyAttachment`, `GroupPolicyAttachment`) or through a `PolicyAttachment`.

`allowedNames` exempts resources by name (a break-glass administrator role, deliberately).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import get_path
from inference_infra.components.resources.iam import ADMINISTRATOR_ACCESS, is_policy_text, statements
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
)

NAME = "iam-no-wildcard-access"
SEVERITY = Severity.CRITICAL
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "IAM roles are not trusted by everyone, and allow neither every action nor AdministratorAccess."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "forbiddenPolicies": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [ADMINISTRATOR_ACCESS],
            "description": "Managed policy ARNs no role may have attached.",
        },
        "allowedNames": exempt_names("a break-glass administrator role"),
    }
)

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
MANAGED_POLICY = "aws:iam/policy:Policy"
ROLE_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ROLE_ATTACHMENTS = "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive"
POLICY_ATTACHMENT = "aws:iam/policyAttachment:PolicyAttachment"
# Users and groups hold policies too: an inline policy (UserPolicy, GroupPolicy) or an attachment.
USER_GROUP_POLICIES = frozenset({"aws:iam/userPolicy:UserPolicy", "aws:iam/groupPolicy:GroupPolicy"})
USER_GROUP_ATTACHMENTS = frozenset(
    {
        "aws:iam/userPolicyAttachment:UserPolicyAttachment",
        "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
    }
)
APPLIES_TO = "IAM roles, users' and groups' policies, and policy attachments"


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    kind, props = resource.type, resource.props
    known = (ROLE, ROLE_POLICY, MANAGED_POLICY, ROLE_ATTACHMENT, ROLE_ATTACHMENTS, POLICY_ATTACHMENT)
    if kind not in known and kind not in USER_GROUP_POLICIES | USER_GROUP_ATTACHMENTS:
        return not_applicable(f"applies to {APPLIES_TO}")
    if resource.name in config["allowedNames"]:
        return passed()
    found = Findings()
    forbidden = list(config["forbiddenPolicies"])
    if kind == ROLE:
        _trust(resource, props.get("assumeRolePolicy"), found)
        inline = props.get("inlinePolicies")
        if inline is UNKNOWN:
            found.not_known("inlinePolicies")
        for i, item in enumerate(inline if isinstance(inline, list) else []):
            _every_action(resource, get_path(item, "policy"), f"inlinePolicies[{i}].policy", found)
        _attached(resource, props.get("managedPolicyArns"), "managedPolicyArns", forbidden, found)
    elif kind in (ROLE_POLICY, MANAGED_POLICY) or kind in USER_GROUP_POLICIES:
        _every_action(resource, props.get("policy"), "policy", found)
    elif kind == ROLE_ATTACHMENTS:
        _attached(resource, props.get("policyArns"), "policyArns", forbidden, found)
    else:
        _attached(resource, props.get("policyArn"), "policyArn", forbidden, found)
    return found.outcome()


def _trust(resource: Resource, policy: Any, found: Findings) -> None:
    if policy is UNKNOWN:
        found.not_known("assumeRolePolicy")
        return
    for statement in statements(policy) if is_policy_text(policy) else ():
        if statement.public():
            found.violation(
                f"{resource.label}: assumeRolePolicy {statement.where} lets everyone ({statement.who}) "
                "assume the role with no condition that limits who; name the service, account or role that "
                "may assume it (or add aws:PrincipalOrgID)."
            )


def _every_action(resource: Resource, policy: Any, where: str, found: Findings) -> None:
    if policy is UNKNOWN:
        found.not_known(where)
        return
    for statement in statements(policy) if is_policy_text(policy) else ():
        if statement.allows and statement.every_action():
            how = "NotAction" if statement.body.get("NotAction") is not None else 'Action "*"'
            found.violation(
                f"{resource.label}: {where} {statement.where} allows every action ({how}); allow only the "
                "actions the workload needs, on its own resources."
            )


def _attached(resource: Resource, arns: Any, where: str, forbidden: list[str], found: Findings) -> None:
    if arns is UNKNOWN:
        found.not_known(where)
        return
    for arn in arns if isinstance(arns, list) else [arns]:
        if arn is UNKNOWN:
            found.not_known(where)
        elif isinstance(arn, str) and arn in forbidden:
            short = arn.rsplit("/", 1)[-1]
            found.violation(
                f"{resource.label} attaches {short} ({where} {arn}), which config forbiddenPolicies forbids; "
                "attach a policy with the actions the workload needs."
            )


POLICY = resource_policy(**rule_metadata(__name__), check=check)
