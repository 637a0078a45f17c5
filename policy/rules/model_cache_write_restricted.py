"""model-cache-write-restricted: shared weight caches are not writable by anyone who reaches them.

A model cache that every serving host can rewrite lets root on any one host replace the weights all
the others serve. EFS file-system policies must not Allow an anonymous principal (`*`); Filestore
shares must squash root on every export except a named writer's, which must be a single host or a
small range (at most `maxWriterAddresses` addresses). An export with no options exports read-write
without root squash to every client, and fails.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from ipaddress import ip_network
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import get_path
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    rule_metadata,
    show,
)

NAME = "model-cache-write-restricted"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Shared model caches are read-only to anonymous principals and export only with root squash."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "maxWriterAddresses": {
            "type": "integer",
            "minimum": 1,
            "default": 16,
            "description": "Largest range (in addresses) a Filestore export without root squash may name.",
        },
    }
)

EFS_POLICY = "aws:efs/fileSystemPolicy:FileSystemPolicy"
FILESTORE = "gcp:filestore/instance:Instance"


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    found = Findings()
    if resource.type == EFS_POLICY:
        _efs(resource, resource.props.get("policy"), found)
    elif resource.type == FILESTORE:
        _filestore(resource, config["maxWriterAddresses"], found)
    else:
        return not_applicable("applies to EFS file-system policies and Filestore instances")
    return found.outcome()


def _anonymous(principal: Any) -> bool:
    if principal == "*":
        return True
    aws = principal.get("AWS") if isinstance(principal, Mapping) else None
    return aws == "*" or (isinstance(aws, list) and "*" in aws)


def _efs(resource: Resource, policy: Any, found: Findings) -> None:
    if policy is UNKNOWN:
        found.not_known("policy")
        return
    try:
        document = json.loads(policy) if isinstance(policy, str) else policy
    except ValueError:
        found.violation(f"{resource.label}: policy is not JSON.")
        return
    statements = get_path(document, "Statement")
    statements = [statements] if isinstance(statements, Mapping) else statements or []
    for i, statement in enumerate(statements):
        if get_path(statement, "Effect") == "Allow" and _anonymous(get_path(statement, "Principal")):
            found.violation(
                f"{resource.label}: Statement[{i}] ({get_path(statement, 'Sid') or 'no Sid'}) allows an "
                "anonymous principal; name the account or the roles, and the access point, that may mount it."
            )


def _filestore(resource: Resource, max_writer: int, found: Findings) -> None:
    shares = resource.props.get("fileShares")
    options = get_path(shares, "nfsExportOptions")
    if shares is UNKNOWN or options is UNKNOWN:
        found.not_known("fileShares.nfsExportOptions")
        return
    if not options:
        found.violation(
            f"{resource.label}: fileShares has no nfsExportOptions, so every client may mount it read-write "
            "without root squash; export READ_ONLY with ROOT_SQUASH to the serving ranges."
        )
        return
    for i, option in enumerate(options):
        squash = get_path(option, "squashMode") or "NO_ROOT_SQUASH"
        access = get_path(option, "accessMode") or "READ_WRITE"
        if squash == "ROOT_SQUASH" or access == "READ_ONLY":
            continue
        for cidr in get_path(option, "ipRanges") or ["0.0.0.0/0"]:
            try:
                size = ip_network(str(cidr), strict=False).num_addresses
            except ValueError:
                size = max_writer + 1
            if size > max_writer:
                found.violation(
                    f"{resource.label}: nfsExportOptions[{i}] exports {access} with {squash} to "
                    f"{show(cidr)} ({size} addresses); root there can rewrite the weights. Export READ_ONLY "
                    f"with ROOT_SQUASH to serving hosts; only a named writer (at most {max_writer} "
                    "addresses) may have a read-write export without root squash."
                )


POLICY = resource_policy(**rule_metadata(__name__), check=check)
