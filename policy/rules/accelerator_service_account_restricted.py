"""accelerator-service-account-restricted: GPU and TPU VMs run as their own account, with narrow scopes.

Compute Engine's default service account is shared by every VM of the project and often holds
Editor; the `cloud-platform` OAuth scope lets a VM's token call every Google API its account may.
Together they hand the project to whatever runs on a GPU node. This policy refuses, on accelerator
VMs, instance templates, GKE node pools (and a cluster's default pool) and TPU VMs:

- running as the default service account: an `...-compute@developer.gserviceaccount.com` email,
  `default`, or a service account block without an email (a VM with no block at all has no
  account; a GKE node pool or TPU VM without one runs as the default); a queued TPU resource
  always does (pulumi-gcp's V2QueuedResource has no field for another account);
- the scope `https://www.googleapis.com/auth/cloud-platform` (or `cloud-platform`), unless
  `allowCloudPlatformScope` (grant IAM roles to a dedicated account and narrow the scopes). Secret
  Manager accepts no narrower scope, so a node that reads a secret (the library's GCP fleets and TPU
  slices read their engines' API key) needs it: the prod reference config sets `allowCloudPlatformScope`,
  and IAM (one secretAccessor grant on that one secret) is then the fence.

`allowedNames` exempts resources by name, e.g. a queued TPU slice accepted to run as the default.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    get_path,
)
from inference_infra.components.resources.iam import as_list, is_default_service_account
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    passed,
    resource_policy,
)
from inference_infra.policy.rules._machines import accelerator_machine, machine_label

NAME = "accelerator-service-account-restricted"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "GCP accelerator VMs, templates, node pools and TPU VMs run as their own service account, without "
    "the cloud-platform scope."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "allowCloudPlatformScope": {
            "type": "boolean",
            "default": False,
            "description": "Accept the cloud-platform scope (on a dedicated, least-privilege account).",
        },
        "allowedNames": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "description": "Resource names exempt from this policy (a queued TPU slice on the default).",
        },
    }
)

CLOUD_PLATFORM = ("https://www.googleapis.com/auth/cloud-platform", "cloud-platform")
APPLIES_TO = "GCP accelerator VMs, instance templates, GKE node pools and TPU VMs"
_VMS = (GCP_INSTANCE, GCP_INSTANCE_TEMPLATE, GCP_REGION_INSTANCE_TEMPLATE)


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    kinds = frozenset({*_VMS, GCP_GKE_NODE_POOL, GCP_GKE_CLUSTER, GCP_TPU_VM, GCP_TPU_QUEUED_RESOURCE})
    use = accelerator_machine(resource, kinds)
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
        path_email, path_scopes = "nodeConfig.serviceAccount", "nodeConfig.oauthScopes"
        email, scopes = (
            get_path(props, "nodeConfig", "serviceAccount"),
            get_path(props, "nodeConfig", "oauthScopes"),
        )
    else:
        account = props.get("serviceAccount")
        if account is None and resource.type in _VMS:
            return found.outcome()  # no account at all: the VM holds no credentials
        path_email, path_scopes = "serviceAccount.email", "serviceAccount.scopes"
        email, scopes = get_path(account, "email"), get_path(account, "scopes")
    if email is UNKNOWN:
        found.not_known(path_email)
    elif email in (None, "", "default") or is_default_service_account(email):
        shown = "unset" if email in (None, "") else repr(email)
        found.violation(
            f"{runs} as the Compute Engine default service account ({path_email} {shown}); give it a "
            "dedicated service account with only the roles it needs."
        )
    if scopes is UNKNOWN:
        found.not_known(path_scopes)
    elif any(s in CLOUD_PLATFORM for s in as_list(scopes)) and not config["allowCloudPlatformScope"]:
        found.violation(
            f"{runs} with the cloud-platform scope ({path_scopes}), so its token reaches every Google API "
            "its account may call; narrow the scopes (devstorage.read_only, logging.write, monitoring.write)."
        )
    return found.outcome()


POLICY = resource_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
