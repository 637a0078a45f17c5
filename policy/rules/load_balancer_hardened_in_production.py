"""load-balancer-hardened-in-production: production load balancers survive a mistake and leave a record.

In production the endpoint in front of the fleets is what users reach: deleting it by accident
takes the service down, and without request logs nobody can say who sent what. This stack policy,
in the environments listed in `production` (the policy config's `environment`, else each
resource's Environment tag), asks:

- of an AWS load balancer: deletion protection (`enableDeletionProtection: true`) and access logs
  (`accessLogs.enabled` with a bucket);
- of its access-log bucket, when the stack makes it: retention (an enabled lifecycle rule that
  expires objects) and delivery scoped to the account: every Allow of `s3:PutObject` to a service
  principal carries an `aws:SourceAccount` (or `aws:SourceArn`) condition, and one to an account
  principal (ELB's log account in older regions) is limited to the `AWSLogs/<account id>/` path;
- of a GCP backend service: request logging (`logConfig.enable: true`).

The bucket's findings are reported on the bucket.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, Severity

from inference_infra.components.resources import StackIndex, get_path
from inference_infra.components.resources.iam import as_list, is_policy_text, statements
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    judged_stack_policy,
    not_applicable,
    rule_metadata,
)
from inference_infra.policy.rules._tags import not_production, production_environment, production_schema

NAME = "load-balancer-hardened-in-production"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "In production, load balancers have deletion protection and access logs kept for a set time and "
    "delivered by the account only; GCP backend services log requests."
)
CONFIG_SCHEMA = production_schema()

AWS_LOAD_BALANCERS = frozenset({"aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer"})
BUCKETS = frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"})
LIFECYCLES = frozenset(
    {
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2",
    }
)
BUCKET_POLICIES = frozenset({"aws:s3/bucketPolicy:BucketPolicy"})
GCP_BACKEND_SERVICES = frozenset(
    {"gcp:compute/regionBackendService:RegionBackendService", "gcp:compute/backendService:BackendService"}
)
APPLIES_TO = "production AWS load balancers (and their access-log buckets) and GCP backend services"
_SCOPING_KEYS = ("aws:sourceaccount", "aws:sourcearn")
_ACCOUNT_PATH = re.compile(r"/AWSLogs/[0-9]{12}/")


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterator[tuple[Resource, Outcome]]:
    stack = StackIndex(resources, names={t: ("bucket",) for t in BUCKETS})
    bucket_findings: dict[str, tuple[Resource, Findings]] = {}
    outcomes: list[tuple[Resource, Outcome | None]] = []
    for resource in resources:
        if resource.type in AWS_LOAD_BALANCERS:
            outcomes.append((resource, _load_balancer(resource, config, stack, bucket_findings)))
        elif resource.type in GCP_BACKEND_SERVICES:
            outcomes.append((resource, _backend_service(resource, config)))
        else:
            outcomes.append((resource, None))
    for resource, outcome in outcomes:
        if outcome is not None:
            yield resource, outcome
        elif resource.urn in bucket_findings:
            yield resource, bucket_findings[resource.urn][1].outcome()
        else:
            yield resource, not_applicable(f"applies to {APPLIES_TO}")


def _load_balancer(
    resource: Resource,
    config: Mapping[str, Any],
    stack: StackIndex,
    bucket_findings: dict[str, tuple[Resource, Findings]],
) -> Outcome:
    environment = production_environment(resource, config)
    if environment is None:
        return not_production(resource, config)
    props, found = resource.props, Findings()
    protection = props.get("enableDeletionProtection")
    if protection is UNKNOWN:
        found.not_known("enableDeletionProtection")
    elif protection is not True:
        found.violation(
            f"{resource.label} in production {environment!r} has no deletion protection "
            "(enableDeletionProtection); set it to true so that a mistaken delete or replace cannot take the "
            "endpoint down."
        )
    logs = props.get("accessLogs")
    enabled, bucket = get_path(logs, "enabled"), get_path(logs, "bucket")
    if UNKNOWN in (logs, enabled):
        found.not_known("accessLogs")
    elif enabled is not True or not bucket:
        found.violation(
            f"{resource.label} in production {environment!r} keeps no access logs (accessLogs); enable them "
            "to a bucket with a retention rule."
        )
    target = stack.find(bucket, BUCKETS, holder=resource) if bucket else None
    if target is not None and target.urn not in bucket_findings:  # judged once, for its first load balancer
        bucket_findings[target.urn] = (target, Findings())
        _log_bucket(target, resource, stack, bucket_findings[target.urn][1])
    return found.outcome()


def _log_bucket(bucket: Resource, lb: Resource, stack: StackIndex, found: Findings) -> None:
    lifecycles = [r for r in stack.of_type(*LIFECYCLES) if _of(r, stack) is bucket]
    if not any(_expires(r.props.get("rules")) for r in lifecycles) and not _expires(
        bucket.props.get("lifecycleRules"), legacy=True
    ):
        found.violation(
            f"{bucket.label} keeps the access logs of {lb.label} forever: add a lifecycle rule that expires "
            "them (a BucketLifecycleConfiguration with expiration days)."
        )
    policies = [r for r in stack.of_type(*BUCKET_POLICIES) if _of(r, stack) is bucket]
    documents = [("policy", p.props.get("policy"), p) for p in policies]
    if bucket.props.get("policy") is not None:
        documents.append(("policy", bucket.props.get("policy"), bucket))
    for where, policy, owner in documents:
        if policy is UNKNOWN:
            found.not_known(where)
            continue
        for statement in statements(policy) if is_policy_text(policy) else ():
            if not statement.allows or not _puts(statement.actions()):
                continue
            principal = statement.body.get("Principal")
            services = as_list(principal.get("Service")) if isinstance(principal, Mapping) else []
            accounts = as_list(principal.get("AWS")) if isinstance(principal, Mapping) else []
            resources_ = [r for r in as_list(statement.body.get("Resource")) if isinstance(r, str)]
            if services and not _scoped(statement.body.get("Condition")):
                found.violation(
                    f"{bucket.label}: {owner.label} {where} {statement.where} lets {', '.join(services)} "
                    "write logs for any account; add a condition on aws:SourceAccount (the account's id)."
                )
            elif accounts and not all(_ACCOUNT_PATH.search(r) for r in resources_):
                found.violation(
                    f"{bucket.label}: {owner.label} {where} {statement.where} lets "
                    f"{', '.join(map(str, accounts))} write anywhere in the bucket; limit its Resource to "
                    "the AWSLogs/<account id>/ path."
                )


def _of(resource: Any, stack: StackIndex) -> Any:
    """The bucket a lifecycle configuration or bucket policy belongs to."""
    return stack.find(resource.props.get("bucket"), BUCKETS, holder=resource)


def _puts(actions: list[str]) -> bool:
    return any(a in ("*", "s3:*", "s3:PutObject") for a in actions)


def _scoped(condition: Any) -> bool:
    if not isinstance(condition, Mapping):
        return False
    for tests in condition.values():
        if isinstance(tests, Mapping):
            for key, values in tests.items():
                if str(key).lower() in _SCOPING_KEYS and all(v not in ("*", "") for v in as_list(values)):
                    return True
    return False


def _expires(rules: Any, legacy: bool = False) -> bool:
    for rule in rules if isinstance(rules, list) else []:
        active = get_path(rule, "enabled") is True if legacy else get_path(rule, "status") == "Enabled"
        expiration = get_path(rule, "expiration")
        if isinstance(expiration, list):  # the legacy bucket's lifecycle rules list it
            expiration = expiration[0] if expiration else None
        if active and (get_path(expiration, "days") or get_path(expiration, "date")):
            return True
    return False


def _backend_service(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    environment = production_environment(resource, config)
    if environment is None:
        return not_production(resource, config)
    enabled = get_path(resource.props, "logConfig", "enable")
    found = Findings()
    if enabled is UNKNOWN:
        found.not_known("logConfig.enable")
    elif enabled is not True:
        found.violation(
            f"{resource.label} in production {environment!r} logs no requests (logConfig.enable); enable "
            "request logging (sampleRate 1.0 keeps every request)."
        )
    return found.outcome()


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    """The resource judged on its own (a stack of one)."""
    return next(outcome for _, outcome in judge([resource], config))
