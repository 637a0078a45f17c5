"""IAM policy documents (identity, trust and resource policies), read the way AWS evaluates them.

A statement lets everyone in when it allows the principal `*` (or `{"AWS": "*"}`, or any
principal with `NotPrincipal`) and no condition fixes who may act. Amazon S3 calls such a bucket
policy public unless a condition fixes one of the keys below to values that are not wildcards; for
`aws:SourceIp`, ranges that are themselves public (`addresses.exposure`) fix nothing. Source:
"The meaning of public", Amazon S3 User Guide
(https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html,
read 2026-11-25); `aws:PrincipalOrgID`, `aws:PrincipalOrgPaths` and `aws:PrincipalAccount` are the
keys IAM Access Analyzer also accepts as limiting a trust policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from inference_infra.components.resources.addresses import exposure
from inference_infra.components.resources.props import UNKNOWN_VALUE

# Condition keys whose fixed values limit who may act (compared lower-case, as IAM does).
LIMITING_KEYS = frozenset(
    k.lower()
    for k in (
        "aws:SourceArn",
        "aws:SourceVpc",
        "aws:SourceVpce",
        "aws:SourceOwner",
        "aws:SourceAccount",
        "aws:SourceOrgID",
        "aws:SourceOrgPaths",
        "aws:userid",
        "aws:PrincipalArn",
        "aws:PrincipalAccount",
        "aws:PrincipalOrgID",
        "aws:PrincipalOrgPaths",
        "s3:DataAccessPointArn",
        "s3:DataAccessPointAccount",
        "aws:SourceIp",
    )
)
# Operators that test a key against values (not the negated or existence operators).
_POSITIVE = ("stringequals", "stringequalsignorecase", "stringlike", "arnequals", "arnlike", "ipaddress")

ADMINISTRATOR_ACCESS = "arn:aws:iam::aws:policy/AdministratorAccess"


@dataclass(frozen=True)
class Statement:
    """One statement of a document, at its position (`Statement[i]`)."""

    index: int
    body: Mapping[str, Any]

    @property
    def where(self) -> str:
        sid = self.body.get("Sid")
        return f"Statement[{self.index}]" + (f" ({sid})" if isinstance(sid, str) and sid else "")

    @property
    def allows(self) -> bool:
        return self.body.get("Effect") == "Allow"

    def actions(self) -> list[str]:
        return [a for a in as_list(self.body.get("Action")) if isinstance(a, str)]

    def every_action(self) -> bool:
        """Action "*" (or "*:*"), or NotAction (everything but a few)."""
        return any(a in ("*", "*:*") for a in self.actions()) or self.body.get("NotAction") is not None

    def anyone(self) -> bool:
        """The principal is everyone: "*", {"AWS": "*"}, or any NotPrincipal in an Allow."""
        if self.body.get("NotPrincipal") is not None:
            return True
        principal = self.body.get("Principal")
        if principal == "*":
            return True
        if isinstance(principal, Mapping):
            return "*" in as_list(principal.get("AWS")) or "*" in as_list(principal.get("CanonicalUser"))
        return False

    def limited(self) -> bool:
        """A condition fixes who may act (a limiting key tested against non-wildcard values)."""
        condition = self.body.get("Condition")
        if not isinstance(condition, Mapping):
            return False
        for operator, tests in condition.items():
            op = str(operator).lower().removeprefix("forallvalues:").removeprefix("foranyvalue:")
            if not op.startswith(_POSITIVE) or op.endswith("ifexists") or not isinstance(tests, Mapping):
                continue
            for key, values in tests.items():
                if str(key).lower() not in LIMITING_KEYS:
                    continue
                values = [v for v in as_list(values) if isinstance(v, str)]
                if not values or any(v in ("*", "") for v in values):
                    continue
                if str(key).lower() == "aws:sourceip" and exposure(values).public():
                    continue  # ranges that are themselves the internet fix nothing
                return True
        return False

    def public(self) -> bool:
        """An Allow to everyone that no condition limits."""
        return self.allows and self.anyone() and not self.limited()

    @property
    def who(self) -> str:
        """How the statement names everyone: 'Principal "*"', 'Principal {"AWS": "*"}', 'NotPrincipal'."""
        if self.body.get("NotPrincipal") is not None:
            return "NotPrincipal"
        return 'Principal "*"' if self.body.get("Principal") == "*" else 'Principal {"AWS": "*"}'


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def document(value: Any) -> Mapping[str, Any] | None:
    """A policy document from its JSON text (or an already parsed mapping); None when not JSON."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, Mapping) else None
    return None


def statements(value: Any) -> Iterator[Statement]:
    """The statements of a policy document (JSON text or mapping); none when it is not one."""
    parsed = document(value)
    if parsed is None:
        return
    body = parsed.get("Statement")
    for i, item in enumerate(as_list(body)):
        if isinstance(item, Mapping):
            yield Statement(i, item)


def is_policy_text(value: Any) -> bool:
    """A value that can be judged: a mapping, or JSON text (not a value unknown until deploy)."""
    return value is not UNKNOWN_VALUE and document(value) is not None


# --- GCP IAM: members granted roles by IAMMember, IAMBinding and IAMPolicy resources --------------

GCP_PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")


@dataclass(frozen=True)
class Grant:
    """One member granted one role, and where the grant sits."""

    where: str
    role: Any  # UNKNOWN_VALUE when not known yet
    member: Any


def gcp_grants(type_token: str, props: Mapping[str, Any]) -> list[Grant]:
    """The (role, member) grants of a GCP IAM resource: `...IAMMember` (role, member),
    `...IAMBinding` (role, members), `...IAMPolicy` (policyData: bindings of role and members).
    Anything else grants nothing here. A policyData not known yet is one grant of unknowns."""
    kind = type_token.rsplit(":", 1)[-1].lower()
    if kind.endswith("iammember"):
        return [Grant("member", props.get("role"), props.get("member"))]
    if kind.endswith("iambinding"):
        members = props.get("members")
        if members is UNKNOWN_VALUE:
            return [Grant("members", props.get("role"), UNKNOWN_VALUE)]
        return [Grant(f"members[{i}]", props.get("role"), m) for i, m in enumerate(as_list(members))]
    if kind.endswith("iampolicy"):
        data = props.get("policyData")
        if data is UNKNOWN_VALUE:
            return [Grant("policyData", UNKNOWN_VALUE, UNKNOWN_VALUE)]
        parsed = document(data) or {}
        found = []
        for i, binding in enumerate(as_list(parsed.get("bindings"))):
            if not isinstance(binding, Mapping):
                continue
            for j, member in enumerate(as_list(binding.get("members"))):
                found.append(Grant(f"policyData.bindings[{i}].members[{j}]", binding.get("role"), member))
        return found
    return []


_DEFAULT_SERVICE_ACCOUNT = re.compile(
    r"^(serviceAccount:)?([0-9]+-compute@developer|[a-z0-9-]+@appspot)\.gserviceaccount\.com$"
)


def is_default_service_account(member: Any) -> bool:
    """The Compute Engine default service account (PROJECT_NUMBER-compute@developer.gserviceaccount.com)
    or the App Engine one (PROJECT_ID@appspot.gserviceaccount.com), with or without `serviceAccount:`."""
    return isinstance(member, str) and _DEFAULT_SERVICE_ACCOUNT.fullmatch(member) is not None
