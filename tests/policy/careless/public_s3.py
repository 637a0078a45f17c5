"""A weights bucket with the public access block off, a public-read-write ACL and a Principal "*" write."""

import json

import pulumi_aws as aws
from _common import TAGS

bucket = aws.s3.Bucket("weights", tags=TAGS)
aws.s3.BucketPublicAccessBlock(
    "weights-public-access",
    bucket=bucket.id,
    block_public_acls=False,
    block_public_policy=False,
    ignore_public_acls=False,
    restrict_public_buckets=False,
)
aws.s3.BucketAcl("weights-acl", bucket=bucket.id, acl="public-read-write")
aws.s3.BucketPolicy(
    "weights-policy",
    bucket=bucket.id,
    policy=bucket.arn.apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": f"{arn}/*"}
                ],
            }
        )
    ),
)
