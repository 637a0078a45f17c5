"""iam-no-wildcard-access: no role trusted by everyone, no Action "*", no AdministratorAccess."""

from __future__ import annotations

import json

import pulumi_aws as aws

from inference_infra.policy.rules import iam_no_wildcard_access as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

ROLE = "aws:iam/role:Role"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ADMIN = "arn:aws:iam::aws:policy/AdministratorAccess"
EC2_TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
)


def _doc(**statement) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", **statement}]})


def test_iam_no_wildcard_access_passes_a_least_privilege_workload_role(check):
    read = _doc(Action=["s3:GetObject"], Resource="arn:aws:s3:::weights/*")
    role = {"assumeRolePolicy": EC2_TRUST, "inlinePolicies": [{"name": "read", "policy": read}]}
    assert check(rule, ROLE, role) == Outcome()
    org = _doc(
        Principal={"AWS": "*"},
        Action="sts:AssumeRole",
        Condition={"StringEquals": {"aws:PrincipalOrgID": "o-abc"}},
    )
    assert check(rule, ROLE, {"assumeRolePolicy": org}) == Outcome()
    ssm = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    assert check(rule, ATTACHMENT, {"role": "r", "policyArn": ssm}) == Outcome()
    assert check(rule, "aws:s3/bucket:Bucket", {}).not_applicable


def test_iam_no_wildcard_access_rejects_trust_of_everyone_and_every_action(check):
    trust = _doc(Principal={"AWS": "*"}, Action="sts:AssumeRole")
    everything = _doc(Action="*", Resource="*")
    role = {
        "assumeRolePolicy": trust,
        "inlinePolicies": [{"name": "all", "policy": everything}],
        "managedPolicyArns": [ADMIN],
    }
    assert check(rule, ROLE, role, name="workload").violations == (
        f'{ROLE} \'workload\': assumeRolePolicy Statement[0] lets everyone (Principal {{"AWS": "*"}}) '
        "assume the role with no condition that limits who; name the service, account or role that may "
        "assume it (or add aws:PrincipalOrgID).",
        f"{ROLE} 'workload': inlinePolicies[0].policy Statement[0] allows every action (Action \"*\"); "
        "allow only the actions the workload needs, on its own resources.",
        f"{ROLE} 'workload' attaches AdministratorAccess (managedPolicyArns {ADMIN}), which config "
        "forbiddenPolicies forbids; attach a policy with the actions the workload needs.",
    )
    not_action = _doc(NotAction="iam:*", Resource="*")
    assert (
        "allows every action (NotAction)"
        in check(rule, "aws:iam/policy:Policy", {"policy": not_action}).violations[0]
    )


def test_iam_no_wildcard_access_rejects_an_administrator_attachment(check):
    assert check(rule, ATTACHMENT, {"role": "r", "policyArn": ADMIN}, name="admin").violations == (
        f"{ATTACHMENT} 'admin' attaches AdministratorAccess (policyArn {ADMIN}), which config "
        "forbiddenPolicies forbids; attach a policy with the actions the workload needs.",
    )
    assert check(rule, ATTACHMENT, {"role": "r", "policyArn": ADMIN}, {"allowedNames": ["r"]}) == Outcome()


def test_iam_no_wildcard_access_does_not_judge_values_not_known_yet(check):
    assert check(rule, ROLE, {"assumeRolePolicy": UNKNOWN}) == Outcome(unknown=("assumeRolePolicy",))
    assert check(rule, ATTACHMENT, {"policyArn": UNKNOWN}) == Outcome(unknown=("policyArn",))


def test_iam_no_wildcard_access_on_captured_resources(plan_of, run_pack):
    role = aws.iam.Role("workload", assume_role_policy=_doc(Principal="*", Action="sts:AssumeRole"))
    aws.iam.RolePolicyAttachment("admin", role=role.name, policy_arn=ADMIN)
    aws.iam.Role("node", assume_role_policy=EC2_TRUST)
    report = run_pack(plan_of(), rule.NAME)
    assert sorted(v.message.split(":", 3)[2].split("'")[1] for v in report.violations) == [
        "admin",
        "workload",
    ]


def test_iam_no_wildcard_access_rejects_user_and_group_policies_with_every_action(check):
    everything = json.dumps({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
    not_action = json.dumps({"Statement": [{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]})
    for type_token in ("aws:iam/userPolicy:UserPolicy", "aws:iam/groupPolicy:GroupPolicy"):
        for policy in (everything, not_action):
            (violation,) = check(rule, type_token, {"policy": policy}, name="ci").violations
            assert "allows every action" in violation
    for type_token in (
        "aws:iam/userPolicyAttachment:UserPolicyAttachment",
        "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
    ):
        (violation,) = check(rule, type_token, {"policyArn": ADMIN}, name="ci").violations
        assert "attaches AdministratorAccess" in violation


def test_iam_no_wildcard_access_passes_a_narrow_user_policy(check):
    narrow = json.dumps(
        {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}]}
    )
    assert check(rule, "aws:iam/userPolicy:UserPolicy", {"policy": narrow}) == Outcome()
    assert check(rule, "aws:iam/userPolicy:UserPolicy", {"policy": UNKNOWN}).unknown == ("policy",)
