"""A role trusted by {"AWS": "*"}, allowed Action "*", with AdministratorAccess attached."""

import json

import pulumi_aws as aws
from _common import TAGS

role = aws.iam.Role(
    "workload",
    tags=TAGS,
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
        }
    ),
    inline_policies=[
        {
            "name": "everything",
            "policy": json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
            ),
        }
    ],
)
aws.iam.RolePolicyAttachment(
    "admin", role=role.name, policy_arn="arn:aws:iam::aws:policy/AdministratorAccess"
)
