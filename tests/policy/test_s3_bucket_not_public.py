"""s3-bucket-not-public: public access blocks on, no public ACL, no anonymous bucket policy."""

from __future__ import annotations

import json

import pulumi_aws as aws

from inference_infra.policy.rules import s3_bucket_not_public as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

BUCKET = "aws:s3/bucket:Bucket"
BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
ACL = "aws:s3/bucketAcl:BucketAcl"
POLICY = "aws:s3/bucketPolicy:BucketPolicy"
ALL_ON = dict.fromkeys(rule.BLOCK_SETTINGS, True)


def _document(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


WRITE_FOR_ALL = {
    "Sid": "Upload",
    "Effect": "Allow",
    "Principal": "*",
    "Action": "s3:PutObject",
    "Resource": "*",
}


def test_s3_bucket_not_public_passes_private_buckets_and_limited_policies(check):
    assert check(rule, BLOCK, ALL_ON) == Outcome()
    assert check(rule, ACL, {"acl": "private"}) == Outcome()
    deny = {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*"}
    service = {
        "Effect": "Allow",
        "Principal": {"Service": "logging.s3.amazonaws.com"},
        "Action": "s3:PutObject",
    }
    in_account = {**WRITE_FOR_ALL, "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}}}
    office = {**WRITE_FOR_ALL, "Condition": {"IpAddress": {"aws:SourceIp": ["203.0.113.0/24"]}}}
    for statement in (deny, service, in_account, office):
        assert check(rule, POLICY, {"policy": _document(statement)}) == Outcome()
    assert check(rule, "aws:ec2/instance:Instance", {}).not_applicable


def test_s3_bucket_not_public_rejects_a_public_access_block_turned_off(check):
    assert check(
        rule, BLOCK, {**ALL_ON, "blockPublicPolicy": False, "ignorePublicAcls": None}, name="pab"
    ).violations == (
        f"{BLOCK} 'pab' leaves blockPublicPolicy, ignorePublicAcls off (unset is off); set all four to true, "
        "so that no ACL or bucket policy can make the bucket public.",
    )


def test_s3_bucket_not_public_rejects_public_acls_and_grants(check):
    assert check(rule, ACL, {"acl": "public-read-write"}, name="acl").violations == (
        f"{ACL} 'acl' sets the canned ACL 'public-read-write' (acl), which opens it to everyone; use "
        "'private' (or no ACL, with object ownership BucketOwnerEnforced) and grant access by IAM.",
    )
    grants = {
        "accessControlPolicy": {
            "grants": [
                {
                    "grantee": {
                        "type": "Group",
                        "uri": "http://acs.amazonaws.com/groups/global/AuthenticatedUsers",
                    },
                    "permission": "READ",
                }
            ]
        }
    }
    assert check(rule, ACL, grants, name="g").violations == (
        f"{ACL} 'g' grants READ to AuthenticatedUsers (any AWS account) (accessControlPolicy.grants[0]); "
        "remove the grant and give access to named principals by IAM.",
    )


def test_s3_bucket_not_public_rejects_anonymous_policy_statements(check):
    wide_ip = {**WRITE_FOR_ALL, "Condition": {"IpAddress": {"aws:SourceIp": "0.0.0.0/1"}}}
    outcome = check(rule, POLICY, {"policy": _document(WRITE_FOR_ALL, wide_ip)}, name="p")
    assert outcome.violations == tuple(
        f"{POLICY} 'p': policy Statement[{i}] (Upload) allows everyone (Principal \"*\") s3:PutObject with "
        "no condition that limits who; name the principals, or add a condition on aws:SourceAccount, "
        "aws:SourceVpce or aws:PrincipalOrgID."
        for i in (0, 1)
    )
    inline = check(
        rule, BUCKET, {"policy": _document({**WRITE_FOR_ALL, "Principal": {"AWS": "*"}})}, name="b"
    )
    assert 'allows everyone (Principal {"AWS": "*"})' in inline.violations[0]


def test_s3_bucket_not_public_does_not_judge_values_not_known_yet(check):
    assert check(rule, POLICY, {"policy": UNKNOWN}) == Outcome(unknown=("policy",))
    assert check(rule, BLOCK, {**ALL_ON, "blockPublicAcls": UNKNOWN}) == Outcome(unknown=("blockPublicAcls",))
    assert check(rule, BLOCK, {"blockPublicAcls": False}, {"allowedNames": ["r"]}) == Outcome()


def test_s3_bucket_not_public_on_captured_resources(plan_of, run_pack):
    bucket = aws.s3.Bucket("weights")
    aws.s3.BucketPublicAccessBlock("weights-pab", bucket=bucket.id)  # every setting left off
    aws.s3.BucketAcl("weights-acl", bucket=bucket.id, acl="public-read")
    aws.s3.BucketPolicy(
        "weights-policy",
        bucket=bucket.id,
        policy=bucket.arn.apply(lambda arn: _document({**WRITE_FOR_ALL, "Resource": f"{arn}/*"})),
    )
    report = run_pack(plan_of(), rule.NAME)
    assert sorted(v.message.split(" ", 2)[1] for v in report.violations) == [
        "'weights-acl'",
        "'weights-pab'",
        "'weights-policy':",
    ]
