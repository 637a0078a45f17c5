"""accelerator-service-account-restricted: GPU and TPU VMs run as a dedicated account with narrow roles.

Google's advice for a VM's identity (Compute Engine docs, "Service accounts" best practices; see
/work/shared/UPSTREAM.md): a dedicated, user-managed service account per workload, the `cloud-platform`
scope, and access limited by IAM roles; the Compute Engine default account (shared by every VM of the
project, often holding Editor) is what to avoid. This stack policy judges that way, on accelerator VMs,
instance templates, GKE node pools (and a cluster's default pool) and TPU VMs:

- running as the default service account is refused, whatever the scopes: an
  `...-compute@developer.gserviceaccount.com` email, `default`, or a service account block without an
  email (a VM with no block at all has no account; a GKE node pool or TPU VM without one runs as the
  default); a queued TPU resource always does (pulumi-gcp's V2QueuedResource has no field for another
  account);
- a dedicated account is refused when the stack grants it a broad role on a project, folder or
  organization (`broadRoles`: the basic roles and every admin role, matched without case), found by
  its email (`serviceAccount:<email>`) or, while the email is not known before deploy, through the
  service account resource both the machine and the grant depend on;
- the `cloud-platform` scope on a dedicated account with narrow roles passes: IAM is the fence (the
  library's GCP fleets and TPU slices need it to read their engines' API key: Secret Manager accepts
  no narrower scope).

`allowedNames` exempts resources by name, e.g. a queued TPU slice accepted to run as the default.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import (
    GCP_GKE_CLUSTER,
    GCP_GKE_NODE_POOL,
    GCP_INSTANCE,
    GCP_INSTANCE_TEMPLATE,
    GCP_REGION_INSTANCE_TEMPLATE,
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
    StackIndex,
    get_path,
)
from inference_infra.components.resources.iam import gcp_grants, is_default_service_account
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    exempt_names,
    judged_stack_policy,
    not_applicable,
    passed,
    rule_metadata,
)
from inference_infra.policy.rules._machines import accelerator_machine, machine_label

NAME = "accelerator-service-account-restricted"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "GCP accelerator VMs, templates, node pools and TPU VMs run as a dedicated service account, not the "
    "Compute Engine default, holding no basic or admin role."
)
# Basic roles (owner, editor, viewer) and every admin role (roles/storage.admin,
# roles/iam.serviceAccountAdmin, roles/resourcemanager.projectIamAdmin, roles/compute.instanceAdmin.v1, ...),
# and the roles that act as another account (impersonation is a way around narrow roles).
BROAD_ROLES = [
    "roles/owner",
    "roles/editor",
    "roles/viewer",
    "roles/*admin*",
    "roles/iam.serviceAccountUser",
    "roles/iam.serviceAccountTokenCreator",
]
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "broadRoles": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": BROAD_ROLES,
            "description": "Roles (glob patterns, case ignored) an accelerator's dedicated account may not "
            "hold on a project, folder or organization.",
        },
        "allowedNames": exempt_names("a queued TPU slice on the default"),
    }
)

APPLIES_TO = "GCP accelerator VMs, instance templates, GKE node pools and TPU VMs"
_VMS = (GCP_INSTANCE, GCP_INSTANCE_TEMPLATE, GCP_REGION_INSTANCE_TEMPLATE)
_KINDS = frozenset({*_VMS, GCP_GKE_NODE_POOL, GCP_GKE_CLUSTER, GCP_TPU_VM, GCP_TPU_QUEUED_RESOURCE})
ACCOUNTS = frozenset({"gcp:serviceaccount/account:Account"})
IAM_TYPES = frozenset(
    f"gcp:{scope}/iAM{kind}:IAM{kind}"
    for scope in ("projects", "folder", "organizations")
    for kind in ("Member", "Binding", "Policy")
)
_DEFAULT_FIX = (
    "give it a dedicated service account with only the roles it needs (the library's GpuFleet and TpuVm "
    "make one when service_account_email is unset); the cloud-platform scope is fine on that account"
)


def check(resource: Resource, config: Mapping[str, Any], stack: StackIndex | None = None) -> Outcome:
    use = accelerator_machine(resource, _KINDS)
    if use is None:
        return not_applicable(f"applies to {APPLIES_TO}")
    if resource.name in config["allowedNames"]:
        return passed()
    runs = f"{resource.label} runs {machine_label(use)}"
    props, found = resource.props, Findings()
    if resource.type == GCP_TPU_QUEUED_RESOURCE:
        found.violation(
            f"{runs} as the Compute Engine default service account (a queued resource cannot name another); "
            "use a TPU VM with its own service account, or exempt it by name in config allowedNames."
        )
        return found.outcome()
    if resource.type in (GCP_GKE_NODE_POOL, GCP_GKE_CLUSTER):  # a node pool, or a cluster's default pool
        path_email, email = "nodeConfig.serviceAccount", get_path(props, "nodeConfig", "serviceAccount")
    else:
        account = props.get("serviceAccount")
        if account is None and resource.type in _VMS:
            return found.outcome()  # no account at all: the VM holds no credentials
        path_email, email = "serviceAccount.email", get_path(account, "email")
    if email in (None, "", "default") or is_default_service_account(email):
        shown = "unset" if email in (None, "") else repr(email)
        found.violation(
            f"{runs} as the Compute Engine default service account ({path_email} {shown}), shared by every "
            f"VM of the project; {_DEFAULT_FIX}."
        )
        return found.outcome()
    if stack is not None:
        _broad_grants(resource, runs, email, config, stack, found)
    elif email is UNKNOWN:
        found.not_known(path_email)
    return found.outcome()


def _broad_grants(
    resource: Resource, runs: str, email: Any, config: Mapping[str, Any], stack: StackIndex, found: Findings
) -> None:
    """The broad roles the stack grants the machine's account: by its email, or (not known before
    deploy) by the service account resource the machine and the grant both depend on."""
    patterns = [p.lower() for p in config["broadRoles"] if isinstance(p, str)]
    accounts = {a.urn for a in stack.dependencies(resource, ACCOUNTS)}
    member = f"serviceAccount:{email}" if isinstance(email, str) else None
    for holder in stack.of_type(*IAM_TYPES):
        shared = accounts.intersection(holder.dependencies)
        for grant in gcp_grants(holder.type, holder.props):
            ours = (member is not None and grant.member == member) or (
                bool(shared) and (grant.member is UNKNOWN or isinstance(grant.member, str))
            )
            if not ours or not isinstance(grant.role, str):
                continue
            if any(fnmatchcase(grant.role.lower(), p) for p in patterns):
                who = email if isinstance(email, str) else "its service account"
                found.violation(
                    f"{runs} as {who}, which {holder.label} grants {grant.role!r} ({grant.where}): a basic "
                    "or admin role hands the project to whatever runs on the accelerator; grant predefined "
                    "roles with only the permissions it needs (logging.logWriter, monitoring.metricWriter, "
                    "storage.objectViewer on its bucket, secretmanager.secretAccessor on its secret), or "
                    "change config broadRoles."
                )


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterator[tuple[Resource, Outcome]]:
    stack = StackIndex(resources)
    for resource in resources:
        yield resource, check(resource, config, stack)


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)
