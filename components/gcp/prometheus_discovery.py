"""PrometheusDiscoveryAccount: the service account Prometheus runs as (GKE Workload Identity)
to discover Compute Engine fleets.

Prometheus's GCE service discovery lists instances per zone; this account holds one
custom role with `compute.instances.list` and nothing else (the permissions are
`monitoring.scrape.discovery_policy("gcp")`, narrower than roles/compute.viewer). Only
one Kubernetes service account may act as it: `roles/iam.workloadIdentityUser` is
granted to `serviceAccount:<workload pool>[<namespace>/<service account>]` alone. No key
is ever created.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.gcp.service_account import account_id
from inference_infra.components.monitoring.scrape import discovery_policy, discovery_subject_problems
from inference_infra.components.validation import input_problems

_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_POOL = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]\.svc\.id\.goog$")
_ROLE_ID = re.compile(r"^[a-zA-Z0-9_.]{3,64}$")
WORKLOAD_IDENTITY_ANNOTATION = "iam.gke.io/gcp-service-account"


@dataclass(frozen=True, kw_only=True)
class PrometheusDiscoveryAccountArgs:
    project: str  # the project whose instances are listed (and where the account lives)
    namespace: str  # Prometheus's namespace
    service_account: str  # Prometheus's Kubernetes service account
    workload_pool: str | None = None  # the GKE cluster's pool; default "<project>.svc.id.goog"


def validate_prometheus_discovery_account(args: PrometheusDiscoveryAccountArgs) -> list[Problem]:
    problems: list[Problem] = []
    if not _PROJECT.fullmatch(args.project):
        problems.append(Problem("project", args.project, "must be a GCP project id (6-30 of a-z, 0-9, -)"))
    if args.workload_pool is not None and not _POOL.fullmatch(args.workload_pool):
        problems.append(
            Problem("workload_pool", args.workload_pool, "must be a GKE workload pool: <project>.svc.id.goog")
        )
    problems += discovery_subject_problems(args.namespace, args.service_account)
    return problems


def role_id(name: str) -> str:
    """A custom role id from the component name ('prom-discovery' -> 'promDiscoveryGceList')."""
    words = [w for w in re.split(r"[^a-zA-Z0-9]+", name) if w]
    camel = words[0].lower() + "".join(w.capitalize() for w in words[1:]) if words else "prometheus"
    candidate = f"{camel}GceList"
    return candidate if _ROLE_ID.fullmatch(candidate) else f"{camel[:56]}GceList"


class PrometheusDiscoveryAccount(pulumi.ComponentResource):
    email: pulumi.Output[str]
    service_account_annotations: dict[str, pulumi.Output[str]]

    def __init__(
        self, name: str, args: PrometheusDiscoveryAccountArgs, opts: pulumi.ResourceOptions | None = None
    ):
        raise_if_invalid(
            f"PrometheusDiscoveryAccount {name!r}",
            input_problems(args, validate_prometheus_discovery_account),
        )
        super().__init__("inference-infra:gcp:PrometheusDiscoveryAccount", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        account = gcp.serviceaccount.Account(
            f"{name}-sa",
            account_id=account_id(name),
            project=args.project,
            display_name="Prometheus GCE discovery (Workload Identity): list instances, nothing else",
            opts=child,
        )
        permissions = discovery_policy("gcp")
        role = gcp.projects.IAMCustomRole(
            f"{name}-role",
            role_id=role_id(name),
            project=args.project,
            title=permissions["title"],
            permissions=list(permissions["includedPermissions"]),
            stage="GA",
            opts=child,
        )
        gcp.projects.IAMMember(
            f"{name}-list-instances",
            project=args.project,
            role=role.name,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        pool = args.workload_pool or f"{args.project}.svc.id.goog"
        gcp.serviceaccount.IAMMember(
            f"{name}-workload-identity",
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            member=f"serviceAccount:{pool}[{args.namespace}/{args.service_account}]",
            opts=child,
        )
        self.email = account.email
        self.service_account_annotations = {WORKLOAD_IDENTITY_ANNOTATION: account.email}
        self.register_outputs({"email": self.email})
