"""A private S3 bucket: owner-enforced objects, every public access blocked, encrypted at rest.

The model store and the access-log buckets (S3 server access logs, ALB access logs) all start
from `private_bucket`; an access-log bucket (`access_log_bucket`) also expires its logs. Each
adds its own bucket policy (who may deliver logs differs). SSE-S3 (AES256) because ALB and S3
log delivery write only to SSE-S3 buckets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws


def private_bucket(
    resource_name: str,
    *,
    prefix: str,
    naming: Mapping[str, Any],
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    force_destroy: bool = False,
) -> aws.s3.Bucket:
    """The bucket `resource_name` and its controls, named `<prefix>-ownership|-public-access|-encryption`.

    `naming` is `{"bucket": name}` or `{"bucket_prefix": prefix}`.
    """
    bucket = aws.s3.Bucket(resource_name, force_destroy=force_destroy, tags=dict(tags), opts=opts, **naming)
    aws.s3.BucketOwnershipControls(
        f"{prefix}-ownership", bucket=bucket.id, rule={"object_ownership": "BucketOwnerEnforced"}, opts=opts
    )
    aws.s3.BucketPublicAccessBlock(
        f"{prefix}-public-access",
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
        opts=opts,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        f"{prefix}-encryption",
        bucket=bucket.id,
        rules=[{"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}],
        opts=opts,
    )
    return bucket


def access_log_bucket(
    resource_name: str,
    *,
    prefix: str,
    naming: Mapping[str, Any],
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    expire_days: int | None,
    force_destroy: bool = False,
) -> aws.s3.Bucket:
    """A `private_bucket` for access logs that deletes each log `expire_days` after it was written
    (`<prefix>-lifecycle`, rule `expire-access-logs`); None keeps logs until someone deletes them."""
    bucket = private_bucket(
        resource_name, prefix=prefix, naming=naming, tags=tags, opts=opts, force_destroy=force_destroy
    )
    if expire_days is not None:
        aws.s3.BucketLifecycleConfiguration(
            f"{prefix}-lifecycle",
            bucket=bucket.id,
            rules=[
                {
                    "id": "expire-access-logs",
                    "status": "Enabled",
                    "filter": {},
                    "expiration": {"days": expire_days},
                }
            ],
            opts=opts,
        )
    return bucket
