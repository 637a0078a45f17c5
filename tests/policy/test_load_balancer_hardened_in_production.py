"""load-balancer-hardened-in-production: deletion protection, retained and scoped access logs, GCP logging."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from inference_infra.policy.rules import load_balancer_hardened_in_production as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome, Resource, config_defaults

LB = "aws:lb/loadBalancer:LoadBalancer"
BACKEND = "gcp:compute/regionBackendService:RegionBackendService"
PROD = {"CostCenter": "ml", "Environment": "prod", "Owner": "me"}
ACCOUNT = "123456789012"


def _judge(resources: list[Resource], **config) -> list[tuple[str, tuple[str, ...]]]:
    settings = {**config_defaults(rule.CONFIG_SCHEMA), **config}
    return [(r.name, o.violations) for r, o in rule.judge(resources, settings) if o.violations]


def test_load_balancer_hardened_passes_a_protected_logged_production_alb(check):
    alb = {"tags": PROD, "enableDeletionProtection": True, "accessLogs": {"enabled": True, "bucket": "logs"}}
    assert check(rule, LB, alb) == Outcome()
    assert check(rule, BACKEND, {"logConfig": {"enable": True}}, {"environment": "prod"}) == Outcome()
    dev = {"tags": {**PROD, "Environment": "dev"}, "enableDeletionProtection": False}
    assert check(rule, LB, dev).not_applicable


def test_load_balancer_hardened_rejects_an_unprotected_unlogged_production_alb(check):
    assert check(rule, LB, {"tags": PROD, "enableDeletionProtection": False}, name="alb").violations == (
        f"{LB} 'alb' in production 'prod' has no deletion protection (enableDeletionProtection); set it to "
        "true so that a mistaken delete or replace cannot take the endpoint down.",
        f"{LB} 'alb' in production 'prod' keeps no access logs (accessLogs); enable them to a bucket with a "
        "retention rule.",
    )
    assert check(rule, BACKEND, {}, {"environment": "prod"}, name="b").violations == (
        f"{BACKEND} 'b' in production 'prod' logs no requests (logConfig.enable); enable request logging "
        "(sampleRate 1.0 keeps every request).",
    )
    assert check(
        rule,
        LB,
        {"tags": PROD, "enableDeletionProtection": UNKNOWN, "accessLogs": {"enabled": True, "bucket": "b"}},
    ) == Outcome(unknown=("enableDeletionProtection",))


def _bucket_policy(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def test_load_balancer_hardened_rejects_a_log_bucket_kept_forever_and_open_to_any_account():
    bucket = Resource("aws:s3/bucket:Bucket", "logs", {"bucket": "logs", "id": "logs"}, "urn:b")
    alb = Resource(
        LB,
        "alb",
        {"tags": PROD, "enableDeletionProtection": True, "accessLogs": {"enabled": True, "bucket": "logs"}},
        "urn:a",
    )
    service = {
        "Sid": "Elb",
        "Effect": "Allow",
        "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"},
        "Action": "s3:PutObject",
        "Resource": "arn:aws:s3:::logs/alb/AWSLogs/*",
    }
    account = {
        "Sid": "Old",
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::127311923021:root"},
        "Action": "s3:PutObject",
        "Resource": "arn:aws:s3:::logs/alb/AWSLogs/*",
    }
    policy = Resource(
        "aws:s3/bucketPolicy:BucketPolicy",
        "logs-policy",
        {"bucket": "logs", "policy": _bucket_policy(service, account)},
        "urn:p",
    )
    assert _judge([bucket, alb, policy]) == [
        (
            "logs",
            (
                "aws:s3/bucket:Bucket 'logs' keeps the access logs of aws:lb/loadBalancer:LoadBalancer "
                "'alb' forever: add a lifecycle rule that expires them (a BucketLifecycleConfiguration with "
                "expiration days).",
                "aws:s3/bucket:Bucket 'logs': aws:s3/bucketPolicy:BucketPolicy 'logs-policy' policy "
                "Statement[0] (Elb) lets logdelivery.elasticloadbalancing.amazonaws.com write logs for any "
                "account; add a condition on aws:SourceAccount (the account's id).",
                "aws:s3/bucket:Bucket 'logs': aws:s3/bucketPolicy:BucketPolicy 'logs-policy' policy "
                "Statement[1] (Old) lets arn:aws:iam::127311923021:root write anywhere in the bucket; limit "
                "its Resource to the AWSLogs/<account id>/ path.",
            ),
        )
    ]
    scoped = _bucket_policy(
        {
            **service,
            "Resource": f"arn:aws:s3:::logs/alb/AWSLogs/{ACCOUNT}/*",
            "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
        },
        {**account, "Resource": f"arn:aws:s3:::logs/alb/AWSLogs/{ACCOUNT}/*"},
    )
    lifecycle = Resource(
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "logs-lifecycle",
        {"bucket": "logs", "rules": [{"id": "expire", "status": "Enabled", "expiration": {"days": 365}}]},
        "urn:l",
    )
    hardened = Resource(policy.type, policy.name, {"bucket": "logs", "policy": scoped}, "urn:p")
    assert _judge([bucket, alb, hardened, lifecycle]) == []


def test_load_balancer_hardened_on_captured_resources(plan_of, run_pack):
    logs = aws.s3.Bucket("logs", tags=PROD)
    aws.lb.LoadBalancer(
        "alb",
        internal=True,
        subnets=["s-1", "s-2"],
        tags=PROD,
        access_logs={"bucket": logs.bucket, "enabled": True},
    )
    aws.s3.BucketLifecycleConfiguration(
        "logs-lifecycle",
        bucket=logs.id,
        rules=[{"id": "expire", "status": "Enabled", "filter": {}, "expiration": {"days": 30}}],
    )
    account = pulumi.Output.from_input(ACCOUNT)
    aws.s3.BucketPolicy(
        "logs-policy",
        bucket=logs.id,
        policy=pulumi.Output.all(logs.arn, account).apply(
            lambda a: _bucket_policy(
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"},
                    "Action": "s3:PutObject",
                    "Resource": f"{a[0]}/AWSLogs/{a[1]}/*",
                    "Condition": {"StringEquals": {"aws:SourceAccount": a[1]}},
                }
            )
        ),
    )
    gcp.compute.RegionBackendService("backend", region="us-central1", log_config={"enable": True})
    report = run_pack(plan_of(), rule.NAME, {"environment": "prod"})
    assert [v.message for v in report.violations] == [
        f"{LB} 'alb' in production 'prod' has no deletion protection (enableDeletionProtection); set it to "
        "true so that a mistaken delete or replace cannot take the endpoint down."
    ]
