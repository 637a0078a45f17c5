"""k8s-accelerator-pods-unprivileged: pods that use accelerators get no host privileges.

A privileged container sees every device of its node (every GPU, not only the ones it was given),
can load kernel modules and leave the container; the host's network, PID or IPC namespace lets a
pod reach the node's other pods and daemons (and, on EKS, the instance's credentials when the
metadata hop limit allows it); CAP_SYS_ADMIN is most of root. An inference engine needs none of
them: the device plugin hands it its accelerators. So on every pod of a Kubernetes workload that
uses accelerators (see policy/rules/_k8s.py: it requests an accelerator resource or is pinned to
accelerator nodes), this judges every container, init and ephemeral ones included:
`securityContext.privileged`, `securityContext.capabilities.add` (SYS_ADMIN, CAP_SYS_ADMIN or ALL,
in any case), and the pod's `hostNetwork`, `hostPID` and `hostIPC`. Cluster daemons that need such
rights (a DCGM exporter's profiling metrics, a device plugin) are named in `allowedNames`, or
the component that renders them in `allowedComponents` (matched on the resource's URN, whose type
chain names its parents): by default the library's GpuObservability, whose neuron-monitor DaemonSet
runs privileged on Neuron nodes as AWS's own manifest does (it reads /dev/neuron* with no device
plugin to hand them over; see tests/components/k8s/test_rendered_objects.py).

A Helm release (`kubernetes:helm.sh/v3:Release`) renders its pods at deploy time; where its values
follow the common chart conventions, a release whose values request accelerators or select
accelerator nodes is judged on them: any `privileged: true`, `hostNetwork`/`hostPID`/`hostIPC: true`
or `capabilities.add` with SYS_ADMIN anywhere in its values. A chart with other keys is not seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
)
from inference_infra.policy.rules._k8s import (
    WORKLOAD_NOUNS,
    accelerator_templates,
    helm_uses_accelerators,
    helm_values,
    is_workload,
    mappings,
    where,
)

NAME = "k8s-accelerator-pods-unprivileged"
GPU_OBSERVABILITY = "inference-infra:k8s:GpuObservability"  # components/k8s/gpu_observability.py
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Kubernetes pods that use accelerators are not privileged, add no SYS_ADMIN and share no host "
    "network, PID or IPC namespace."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "allowedNames": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [],
            "description": "Workloads (by resource name) allowed host privileges, e.g. a device plugin "
            "or a DCGM exporter that reads profiling counters.",
        },
        "allowedComponents": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [GPU_OBSERVABILITY],
            "description": "Component types whose workloads may hold host privileges (the library's "
            "GpuObservability runs AWS's neuron-monitor privileged, as AWS's manifest does).",
        },
    }
)


def parent_types(urn: str) -> list[str]:
    """The component types above a resource, from its URN ('...::parent$child::name')."""
    parts = urn.split("::")
    return parts[2].split("$")[:-1] if len(parts) >= 4 else []


_HOST_NAMESPACES = {"hostNetwork": "network", "hostPID": "PID", "hostIPC": "IPC"}
_FORBIDDEN_CAPABILITIES = frozenset({"SYS_ADMIN", "ALL"})


def _capability(name: Any) -> str:
    text = str(name).strip().upper()
    return text[4:] if text.startswith("CAP_") else text


def _exempt(resource: Resource, config: Mapping[str, Any]) -> Outcome | None:
    if resource.name in config["allowedNames"]:
        return not_applicable(f"{resource.name!r} is in allowedNames")
    if allowed := [t for t in parent_types(resource.urn) if t in config["allowedComponents"]]:
        return not_applicable(f"rendered by {allowed[0]}, in allowedComponents")
    return None


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    values = helm_values(resource)
    if values is not None:
        return _check_helm(resource, values, config)
    if not is_workload(resource):
        return not_applicable(
            f"applies to {WORKLOAD_NOUNS}, and Helm releases that place pods on accelerators"
        )
    templates = accelerator_templates(resource)
    if not templates:
        return not_applicable("its pods use no accelerator")
    if (exempt := _exempt(resource, config)) is not None:
        return exempt
    found = Findings()
    for template in templates:
        label = where(resource, template)
        for key, namespace in _HOST_NAMESPACES.items():
            value = template.spec.get(key)
            if value is UNKNOWN:
                found.not_known(f"{template.path}.{key}")
            elif value is True:
                found.violation(
                    f"{label} shares the node's {namespace} namespace ({template.path}.{key}: true) on "
                    "accelerator pods; remove it (the engine needs none of the host's namespaces)."
                )
        for path, container in template.containers():
            _judge_container(label, path, container, found)
    return found.outcome()


def _judge_container(label: str, path: str, container: Mapping[str, Any], found: Findings) -> None:
    context = container.get("securityContext")
    if context is UNKNOWN:
        found.not_known(f"{path}.securityContext")
        return
    if not isinstance(context, Mapping):
        return
    name = container.get("name") if isinstance(container.get("name"), str) else path
    privileged = context.get("privileged")
    if privileged is UNKNOWN:
        found.not_known(f"{path}.securityContext.privileged")
    elif privileged is True:
        found.violation(
            f"{label} runs container {name!r} privileged ({path}.securityContext.privileged: true), "
            "which sees every device of the node; request the accelerators as resources instead."
        )
    capabilities = context.get("capabilities")
    added = capabilities.get("add") if isinstance(capabilities, Mapping) else None
    if added is UNKNOWN:
        found.not_known(f"{path}.securityContext.capabilities.add")
        return
    granted = sorted(
        {str(c) for c in added if _capability(c) in _FORBIDDEN_CAPABILITIES}
        if isinstance(added, list)
        else set()
    )
    if granted:
        found.violation(
            f"{label} adds {', '.join(granted)} to container {name!r} ({path}.securityContext.capabilities."
            "add); drop it (SYS_ADMIN is most of root on the node)."
        )


def _check_helm(resource: Resource, values: Any, config: Mapping[str, Any]) -> Outcome:
    """A Helm release whose values place pods on accelerators: the usual keys anywhere in its values."""
    if values is UNKNOWN:
        return Outcome(unknown=("values",))
    if not helm_uses_accelerators(values):
        return not_applicable(
            "a Helm release whose values request no accelerator and select no accelerator node"
        )
    if (exempt := _exempt(resource, config)) is not None:
        return exempt
    found = Findings()
    for path, block in mappings(values):
        for key, namespace in _HOST_NAMESPACES.items():
            if block.get(key) is True:
                found.violation(
                    f"{resource.label} sets {path}.{key}: true in values that place pods on accelerators "
                    f"(the node's {namespace} namespace); remove it or name the release in allowedNames."
                )
        if block.get("privileged") is True:
            found.violation(
                f"{resource.label} sets {path}.privileged: true in values that place pods on accelerators; "
                "remove it, or name the release in allowedNames."
            )
        capabilities = block.get("capabilities")
        added = capabilities.get("add") if isinstance(capabilities, Mapping) else None
        granted = sorted(
            {str(c) for c in added if _capability(c) in _FORBIDDEN_CAPABILITIES}
            if isinstance(added, list)
            else set()
        )
        if granted:
            found.violation(
                f"{resource.label} adds {', '.join(granted)} at {path}.capabilities.add in values that place "
                "pods on accelerators; drop it, or name the release in allowedNames."
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
