"""A production ALB without deletion protection whose log bucket keeps logs forever and admits any
account's delivery; a production VPC without flow logs."""

import json

import pulumi_aws as aws
from _common import TAGS

PROD = {**TAGS, "Environment": "prod"}
vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16", tags=PROD)
logs = aws.s3.Bucket("alb-logs", tags=PROD)
aws.s3.BucketPublicAccessBlock(
    "alb-logs-public-access",
    bucket=logs.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
aws.s3.BucketPolicy(
    "alb-logs-policy",
    bucket=logs.id,
    policy=logs.arn.apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"},
                        "Action": "s3:PutObject",
                        "Resource": f"{arn}/AWSLogs/*",
                    }
                ],
            }
        )
    ),
)
aws.lb.LoadBalancer(
    "alb",
    internal=True,
    subnets=["subnet-0a", "subnet-0b"],
    drop_invalid_header_fields=True,
    access_logs={"bucket": logs.bucket, "enabled": True},
    tags=PROD,
)
