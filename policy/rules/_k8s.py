"""Kubernetes workloads as the rules read them: their pod templates, and which pods use accelerators.

A workload is any `kubernetes:*` object that holds pod templates: a Pod, a Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job or CronJob, a LeaderWorkerSet (a leader and a worker template), and
third-party kinds that embed pod specs the same way. Helm releases, `*Patch` objects (partial by
design) and lists are not read as workloads; a Helm release's values are read where a chart follows
the common conventions (`resources`, `nodeSelector`, `affinity`, `securityContext`, `image`). The
props are the object as pulumi-kubernetes sends it to the engine (camelCase, the manifest's own
shape), in `plan` and `pulumi preview` alike.

A pod uses accelerators when one of its containers requests or limits an accelerator resource (the
device plugins' names: nvidia.com/gpu, aws.amazon.com/neuron, google.com/tpu, ...), or when it is
pinned to accelerator nodes by a node selector or a required node affinity on an accelerator node
label. Tolerating an accelerator taint alone does not count: cluster daemons tolerate every taint.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from inference_infra.components.catalog import instance_types
from inference_infra.components.resources import is_accelerator_resource
from inference_infra.components.resources.types import K8S_HELM
from inference_infra.policy.rules._base import UNKNOWN, Outcome, Resource, not_applicable

# Node labels that only accelerator nodes carry (GKE, Karpenter, EKS Auto Mode, NVIDIA's GPU feature
# discovery, and this library's pools: components/k8s/scheduling.py FAMILY_LABEL, not importable here).
_ACCELERATOR_NODE_LABEL = re.compile(
    r"^(cloud\.google\.com/gke-(accelerator|tpu-accelerator|tpu-topology)"
    r"|(karpenter\.k8s\.aws|eks\.amazonaws\.com)/instance-(gpu|accelerator)-.+"
    r"|nvidia\.com/gpu\.(present|product|count)"
    r"|inference-infra\.dev/accelerator-family)$"
)
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
WORKLOAD_NOUNS = "Kubernetes workloads (pods and the objects that template them) that use accelerators"


@dataclass(frozen=True)
class PodTemplate:
    """One pod template of a workload: where it sits, its labels and its pod spec."""

    path: str  # of the pod spec, e.g. 'spec.template.spec'
    labels: Any  # the pods' labels (a mapping, UNKNOWN, or None when not set)
    labels_path: str
    spec: Mapping[str, Any]

    def containers(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(path, container) of every init, app and ephemeral container."""
        for key in CONTAINER_LISTS:
            found = self.spec.get(key)
            for i, container in enumerate(found if isinstance(found, list) else []):
                if isinstance(container, Mapping):
                    yield f"{self.path}.{key}[{i}]", container


def is_workload(resource: Resource) -> bool:
    """A `kubernetes:*` object that may hold pod templates (not a Helm release, patch or list)."""
    kind = resource.type.rsplit(":", 1)[-1]
    return (
        resource.type.startswith("kubernetes:")
        and resource.type not in K8S_HELM
        and not kind.endswith(("Patch", "List"))
        and not resource.type.startswith("kubernetes:yaml/")
    )


def pod_templates(resource: Resource) -> list[PodTemplate]:
    """Every pod template inside a workload's props."""
    if not is_workload(resource):
        return []
    return list(_templates(resource.props, ""))


def _templates(value: Any, path: str) -> Iterator[PodTemplate]:
    if isinstance(value, list):
        for i, child in enumerate(value):
            yield from _templates(child, f"{path}[{i}]")
        return
    if not isinstance(value, Mapping):
        return
    spec = value.get("spec")
    if isinstance(spec, Mapping) and isinstance(spec.get("containers"), list):
        metadata = value.get("metadata")
        labels = metadata.get("labels") if isinstance(metadata, Mapping) else metadata
        where = f"{path}." if path else ""
        yield PodTemplate(f"{where}spec", labels, f"{where}metadata.labels", spec)
        return
    if isinstance(value.get("containers"), list):  # a bare pod spec (e.g. a serving CRD's predictor)
        yield PodTemplate(path, None, "", value)
        return
    for key, child in value.items():
        if key in ("status", "metadata"):
            continue
        yield from _templates(child, f"{path}.{key}" if path else str(key))


def accelerator_resources(template: PodTemplate) -> list[str]:
    """The accelerator resources any container of the pod requests or limits, sorted."""
    found: set[str] = set()
    for _, container in template.containers():
        resources = container.get("resources")
        for section in ("requests", "limits"):
            amounts = resources.get(section) if isinstance(resources, Mapping) else None
            if isinstance(amounts, Mapping):
                found.update(k for k in amounts if is_accelerator_resource(k))
    return sorted(found)


@functools.cache
def _accelerator_types() -> frozenset[str]:
    """Every catalog accelerator machine type, AWS and GCP (a node's instance-type label)."""
    return frozenset(t.name for t in instance_types())


def _accelerator_selector(key: Any, values: Any) -> bool:
    if not isinstance(key, str):
        return False
    if _ACCELERATOR_NODE_LABEL.fullmatch(key):
        return True
    if key in _INSTANCE_TYPE_LABELS:
        wanted = values if isinstance(values, list) else [values]
        return any(isinstance(v, str) and v in _accelerator_types() for v in wanted)
    return False


def pinned_to_accelerator_nodes(template: PodTemplate) -> bool:
    """A node selector or required node affinity term that only accelerator nodes satisfy."""
    return selects_accelerator_nodes(template.spec.get("nodeSelector"), template.spec.get("affinity"))


def selects_accelerator_nodes(selector: Any, affinity: Any) -> bool:
    """A node selector, or a required node affinity term, that only accelerator nodes satisfy."""
    if isinstance(selector, Mapping) and any(_accelerator_selector(k, v) for k, v in selector.items()):
        return True
    required = (
        affinity.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(affinity, Mapping) and isinstance(affinity.get("nodeAffinity"), Mapping)
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    for term in terms if isinstance(terms, list) else []:
        expressions = term.get("matchExpressions") if isinstance(term, Mapping) else None
        for e in expressions if isinstance(expressions, list) else []:
            if not isinstance(e, Mapping):
                continue
            operator, key = e.get("operator"), e.get("key")
            if operator == "In" and _accelerator_selector(key, e.get("values")):
                return True
            if (
                operator in ("Exists", "Gt")
                and isinstance(key, str)
                and _ACCELERATOR_NODE_LABEL.fullmatch(key)
            ):
                return True
    return False


def uses_accelerators(template: PodTemplate) -> bool:
    return bool(accelerator_resources(template)) or pinned_to_accelerator_nodes(template)


def accelerator_templates(resource: Resource) -> list[PodTemplate]:
    """The pod templates of a workload whose pods use accelerators."""
    return [t for t in pod_templates(resource) if uses_accelerators(t)]


# -- Helm releases: their values, where a chart follows the common conventions -------------------


def helm_values(resource: Resource) -> Any:
    """A Helm release's (or chart's) values: a mapping, UNKNOWN, or None for any other resource."""
    if resource.type not in K8S_HELM:
        return None
    values = resource.props.get("values")
    return values if values is UNKNOWN or isinstance(values, Mapping) else {}


def mappings(value: Any, path: str = "values") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every mapping inside a value, with its path."""
    if isinstance(value, Mapping):
        yield path, value
        for key, child in value.items():
            yield from mappings(child, f"{path}.{key}")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from mappings(child, f"{path}[{i}]")


def accelerator_amounts(block: Mapping[str, Any]) -> bool:
    """A `resources`-shaped mapping whose requests or limits name an accelerator."""
    return any(
        isinstance(block.get(section), Mapping) and any(is_accelerator_resource(k) for k in block[section])
        for section in ("requests", "limits")
    )


def helm_uses_accelerators(values: Any) -> bool:
    """Values that request accelerators (a `resources` block) or place pods on accelerator nodes (a
    `nodeSelector`, or an `affinity` with a required node affinity): the charts' usual keys."""
    for _, block in mappings(values):
        if accelerator_amounts(block):
            return True
        if selects_accelerator_nodes(block.get("nodeSelector"), block.get("affinity")):
            return True
    return False


def helm_not_judged(values: Any) -> Outcome | None:
    """Why a Helm release's values are not judged yet (not known until deploy: the outcome says so),
    or not at all (they request no accelerator and select no accelerator node); None to judge them."""
    if values is UNKNOWN:
        return Outcome(unknown=("values",))
    if not helm_uses_accelerators(values):
        return not_applicable(
            "a Helm release whose values request no accelerator and select no accelerator node"
        )
    return None


def where(resource: Resource, template: PodTemplate) -> str:
    """'kubernetes:apps/v1:Deployment 'vllm'' or, for a second template, '... at spec.workerTemplate'."""
    holder = template.path.removesuffix("spec").rstrip(".") if template.labels_path else template.path
    simple = holder in ("", "spec.template", "spec.jobTemplate.spec.template")
    return resource.label if simple else f"{resource.label} (pod template at {holder})"


def known_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


__all__ = [
    "CONTAINER_LISTS",
    "UNKNOWN",
    "WORKLOAD_NOUNS",
    "PodTemplate",
    "accelerator_amounts",
    "accelerator_resources",
    "accelerator_templates",
    "helm_uses_accelerators",
    "helm_values",
    "is_workload",
    "known_mapping",
    "mappings",
    "pinned_to_accelerator_nodes",
    "pod_templates",
    "selects_accelerator_nodes",
    "uses_accelerators",
    "where",
]
