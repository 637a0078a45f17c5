"""Kubernetes objects that use or may launch accelerators: the Kubernetes capacity reader.

None of these is billed by itself: a workload runs on nodes priced elsewhere; a Karpenter NodePool
or GKE ComputeClass launches nodes only for pods that are pending; a Helm release renders its
workloads at deploy time. So they are listed in the notes, not in the totals: what a workload
requests, which accelerator types a node pool may launch and on what capacity, and, when the
pool's `limits` bound it, what filling them with its dearest single type would cost per hour
(priced by the caller's `price`, so this reader needs no pricing). A NodePool whose limits bound it
(`node_pool_bound`) is also priced, as a range from 0 nodes to its limits (pricing/karpenter.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inference_infra.components.catalog import (
    CatalogError,
    Cloud,
    InstanceType,
    accelerator,
    instance_types,
)
from inference_infra.components.catalog.types import AcceleratorFamily
from inference_infra.components.resources.types import (
    GCP_GKE_CLUSTER,
    K8S_COMPUTE_CLASS,
    K8S_HELM,
    K8S_NODE_POOLS,
    K8S_PROVISIONER,
)
from inference_infra.components.resources.use import AcceleratorUse, Purchase

# Extended resources that schedule accelerators (device plugins' names).
_ACCELERATOR_RESOURCE = re.compile(
    r"^(nvidia\.com/(gpu|mig-.+)|amd\.com/gpu|aws\.amazon\.com/neuron(core|device)?|google\.com/tpu"
    r"|habana\.ai/gaudi|gpu\.intel\.com/.+)$"
)


# Karpenter (self-managed and EKS Auto Mode) well-known labels that pick instance types.
_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_FAMILY_KEYS = ("karpenter.k8s.aws/instance-family", "eks.amazonaws.com/instance-family")
_CATEGORY_KEYS = ("karpenter.k8s.aws/instance-category", "eks.amazonaws.com/instance-category")
_GPU_KEYS = (
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "eks.amazonaws.com/instance-gpu-count",
    "eks.amazonaws.com/instance-gpu-name",
    "eks.amazonaws.com/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-accelerator-name",
)
_CAPACITY_KEY = "karpenter.sh/capacity-type"
_LIMIT_KEYS = {
    "nvidia.com/gpu": (AcceleratorFamily.NVIDIA_GPU,),
    "aws.amazon.com/neuron": (AcceleratorFamily.AWS_NEURON,),
}


def _list(value: Any) -> list[Any]:
    """A list input, or [] when absent or not known until deploy time (never tested for truth)."""
    return value if isinstance(value, list) else []


def is_accelerator_resource(name: Any) -> bool:
    return isinstance(name, str) and _ACCELERATOR_RESOURCE.fullmatch(name) is not None


class Named(Protocol):
    """What the reader reads of a resource: a captured resource, or a policy's view of one."""

    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def props(self) -> Mapping[str, Any]: ...


# Hourly USD and basis of one use; raises CatalogError for a type without a price (pricing.price_use).
PriceUse = Callable[[AcceleratorUse], tuple[float, str]]


def notes(resources: Sequence[Named], price: PriceUse) -> list[str]:
    """One note per Kubernetes object that requests or may launch accelerators; `price` prices a
    Karpenter pool's fill up to its limits."""
    found: list[str] = []
    autopilot = any(r.type == GCP_GKE_CLUSTER and r.props.get("enableAutopilot") is True for r in resources)
    for r in resources:
        if r.type in K8S_NODE_POOLS or r.type == K8S_PROVISIONER:
            found.extend(_node_pool_note(r, price))
        elif K8S_COMPUTE_CLASS.fullmatch(r.type):
            found.extend(_compute_class_note(r))
        elif r.type in K8S_HELM:
            found.extend(_helm_note(r))
        elif r.type.startswith("kubernetes:"):
            found.extend(_workload_note(r))
    if autopilot:  # Autopilot bills the pods' requests, not nodes the stack declares
        found = [n.replace(_ON_NODES, _ON_AUTOPILOT) for n in found]
    return found


_ON_NODES = "(priced with the nodes that run it)"
_ON_AUTOPILOT = (
    "(priced with the nodes that run it; on the stack's GKE Autopilot cluster its accelerators are "
    "billed per pod, which the plan does not price)"
)


# -- workloads --------------------------------------------------------------------------------


def _pod_specs(value: Any, path: str = "", scale: str = "") -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """Every pod spec (a mapping with a `containers` list) inside an object, with its path and the
    replica count of the nearest object above it that has one (' x 2 replicas (min 0, max 4)')."""
    if isinstance(value, Mapping):
        if isinstance(value.get("containers"), list):
            yield path, value, scale
            return
        scale = _replicas(value) or scale
        for key, child in value.items():
            here = scale
            if key == "workerTemplate" and isinstance(value.get("size"), int) and value["size"] > 1:
                # A LeaderWorkerSet group: one leader and size - 1 workers per replica.
                workers = value["size"] - 1
                here = f"{scale} x {workers} worker{'' if workers == 1 else 's'} per group"
            yield from _pod_specs(child, f"{path}.{key}" if path else str(key), here)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _pod_specs(child, f"{path}[{i}]", scale)


def _replicas(obj: Mapping[str, Any]) -> str:
    n = obj.get("replicas")
    if not isinstance(n, int) or isinstance(n, bool):
        return ""
    low, high = obj.get("minReplicas"), obj.get("maxReplicas")
    bounds = f" (min {low}, max {high})" if isinstance(low, int) and isinstance(high, int) else ""
    return f" x {n} replica{'' if n == 1 else 's'}{bounds}"


def _requests(pod: Mapping[str, Any]) -> dict[str, Any]:
    wanted: dict[str, Any] = {}
    for container in [*_list(pod.get("containers")), *_list(pod.get("initContainers"))]:
        resources = container.get("resources") if isinstance(container, Mapping) else None
        for kind in ("limits", "requests"):
            section = resources.get(kind) if isinstance(resources, Mapping) else None
            for name, value in (section or {}).items() if isinstance(section, Mapping) else ():
                if is_accelerator_resource(name):
                    wanted.setdefault(name, value)
    return wanted


def _workload_note(r: Named) -> list[str]:
    """'kubernetes:apps/v1:Deployment 'vllm' requests nvidia.com/gpu: 1 per pod x 2 replicas'."""
    spec = r.props.get("spec") if isinstance(r.props.get("spec"), Mapping) else {}
    pods = [(path, w, times) for path, pod, times in _pod_specs(spec, "spec") if (w := _requests(pod))]
    if not pods:
        return []

    def each(wanted: Mapping[str, Any]) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(wanted.items()))

    if len(pods) == 1 and pods[0][0] in ("spec.template.spec", "spec.jobTemplate.spec.template.spec"):
        _, wanted, times = pods[0]
        parts = f"{each(wanted)} per pod{times}"
    else:
        parts = "; ".join(f"{each(w)} per pod{times} at {path}" for path, w, times in pods)
    return [f"{r.type} {r.name!r} requests {parts} {_ON_NODES}"]


# -- Helm -------------------------------------------------------------------------------------


def _accelerator_mentions(value: Any, path: str = "values") -> list[str]:
    """Paths in Helm values that set an accelerator resource (e.g. resources.limits.nvidia.com/gpu)."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, child in value.items():
            where = f"{path}.{key}"
            scalar = not isinstance(child, (Mapping, list))
            if scalar and (is_accelerator_resource(key) or _device_count(key, child)):
                found.append(f"{where}: {child}")
            else:
                found.extend(_accelerator_mentions(child, where))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found.extend(_accelerator_mentions(child, f"{path}[{i}]"))
    return found


def _device_count(key: Any, value: Any) -> bool:
    """A chart's own device-count setting, e.g. requestGPU: 1, numGpus: 2, tpuCount: 4."""
    return (
        isinstance(key, str)
        and re.search(r"gpu|tpu|neuron", key, re.IGNORECASE) is not None
        and isinstance(value, int)
        and not isinstance(value, bool)
        and value > 0
    )


def _helm_note(r: Named) -> list[str]:
    props = r.props
    mentions = _accelerator_mentions(props.get("values"))
    if not mentions:
        return []
    chart = props.get("chart") if isinstance(props.get("chart"), str) else "?"
    shown = ", ".join(mentions[:4]) + (f" and {len(mentions) - 4} more" if len(mentions) > 4 else "")
    return [
        f"{r.type} {r.name!r} (chart {chart}) sets accelerator requests in its values ({shown}); the "
        "chart renders its workloads at deploy time, so they are not visible offline (priced with the "
        "nodes that run them)"
    ]


def helm_chart_warnings(helm_templates: Sequence[Mapping[str, Any]]) -> list[str]:
    """A v3 `Chart` renders through `helm template`, which the offline plan cannot run: one warning
    per chart, given the options each was called with."""
    found = []
    for opts in helm_templates:
        name = opts.get("release_name") or "?"
        chart = opts.get("chart") or opts.get("path") or "?"
        mentions = _accelerator_mentions(opts.get("values"))
        asks = f"; its values request accelerators ({', '.join(mentions[:4])})" if mentions else ""
        found.append(
            f"kubernetes:helm.sh/v3:Chart {name!r} (chart {chart}) is rendered by `helm template`, which "
            "does not run offline: none of its objects are planned, priced or checked by policy"
            f"{asks}; `pulumi preview` shows them"
        )
    return found


# -- node pools -------------------------------------------------------------------------------


def _requirements(type_token: str, props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = props.get("spec") if isinstance(props.get("spec"), Mapping) else {}
    template = spec.get("template") if isinstance(spec.get("template"), Mapping) else {}
    inner = template.get("spec") if isinstance(template.get("spec"), Mapping) else {}
    found = inner.get("requirements") if type_token != K8S_PROVISIONER else spec.get("requirements")
    return [q for q in _list(found) if isinstance(q, Mapping)]


def _values(requirements: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> list[str] | None:
    """The `In` values of the first requirement on one of keys; None when none restricts them."""
    for q in requirements:
        if q.get("key") in keys and q.get("operator") == "In" and isinstance(q.get("values"), list):
            return [str(v) for v in q["values"]]
    return None


def _family(name: str) -> str:
    return name.split(".")[0]


def _candidates(requirements: Sequence[Mapping[str, Any]]) -> tuple[list[InstanceType], bool]:
    """Catalog accelerator types the requirements allow, and whether they are the only ones
    (an explicit type or family list) rather than some of many (categories, GPU labels)."""
    catalog = instance_types(Cloud.AWS)
    if (types := _values(requirements, _TYPE_KEYS)) is not None:
        return [t for t in catalog if t.name in types], True
    if (families := _values(requirements, _FAMILY_KEYS)) is not None:
        return [t for t in catalog if _family(t.name) in families], True
    if (categories := _values(requirements, _CATEGORY_KEYS)) is not None:
        allowed = [t for t in catalog if re.match(r"[a-z]+", t.name)[0] in categories]  # type: ignore[index]
        return allowed, False
    if any(q.get("key") in _GPU_KEYS for q in requirements):
        return list(catalog), False
    return [], False


def node_pool_types(type_token: str, props: Mapping[str, Any]) -> list[str]:
    """The catalog accelerator types a Karpenter NodePool (or v1alpha5 Provisioner) may launch: [] for
    any other resource and for a pool whose requirements name no accelerator type or GPU label."""
    if type_token not in K8S_NODE_POOLS and type_token != K8S_PROVISIONER:
        return []
    return [t.name for t in _candidates(_requirements(type_token, props))[0]]


def _quantity(value: Any) -> float | None:
    """A Kubernetes quantity ('1000', '64Gi', '500m') in base units (GiB for memory)."""
    text = str(value).strip() if isinstance(value, (str, int, float)) else ""
    m = re.fullmatch(r"([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?", text)
    if not m:
        return None
    scale = {
        None: 1,
        "m": 1e-3,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
        "T": 1e12,
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
    }[m.group(2)]
    return float(m.group(1)) * scale


def _most_nodes(t: InstanceType, limits: Mapping[str, Any]) -> int | None:
    """How many nodes of type t the pool's limits allow at most (Karpenter stops launching once a
    limit is reached, so the last node may overshoot it): None when no limit bounds t."""
    bounds: list[int] = []
    family = accelerator(t.accelerator).family
    for key, value in limits.items():
        amount = _quantity(value)
        if amount is None:
            continue
        if key == "cpu":
            per_node: float = t.vcpus
        elif key == "memory":
            amount, per_node = amount / 2**30, t.memory_gib
        elif key in _LIMIT_KEYS and family in _LIMIT_KEYS[key]:
            per_node = t.accelerator_count
        else:  # another resource (a GPU limit on a Neuron type): the node adds none of it
            continue
        bounds.append(math.ceil(amount / per_node) if per_node else 0)
    return min(bounds) if bounds else None


@dataclass(frozen=True)
class NodePoolBound:
    """How far a Karpenter pool's limits let it grow: the most nodes of each type it may launch."""

    fills: tuple[tuple[str, int], ...]  # (instance type, the most nodes of it the limits allow)
    purchase: Purchase
    limits: str  # the limits as written, e.g. 'nvidia.com/gpu 8'


def _limits(type_token: str, props: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = props.get("spec") if isinstance(props.get("spec"), Mapping) else {}
    limits = spec.get("limits") if isinstance(spec.get("limits"), Mapping) else {}
    if type_token == K8S_PROVISIONER and isinstance(limits.get("resources"), Mapping):
        limits = limits["resources"]
    return limits


def node_pool_bound(type_token: str, props: Mapping[str, Any]) -> NodePoolBound | None:
    """The most a Karpenter NodePool (or v1alpha5 Provisioner) may launch, when its requirements list
    its accelerator types (or families) and its limits bound every one of them; else None."""
    if type_token not in K8S_NODE_POOLS and type_token != K8S_PROVISIONER:
        return None
    requirements = _requirements(type_token, props)
    candidates, exclusive = _candidates(requirements)
    limits = _limits(type_token, props)
    bounds = [(t.name, n) for t in candidates if (n := _most_nodes(t, limits)) is not None]
    if not candidates or not exclusive or len(bounds) != len(candidates):
        return None
    capacity = _values(requirements, (_CAPACITY_KEY,)) or ["on-demand"]
    # spot only when nothing else is allowed; reserved capacity bills at the on-demand rate
    purchase = Purchase.SPOT if set(capacity) == {"spot"} else Purchase.ON_DEMAND
    shown = ", ".join(f"{k} {v}" for k, v in sorted(limits.items()))
    return NodePoolBound(tuple(bounds), purchase, shown)


def _node_pool_note(r: Named, price: PriceUse) -> list[str]:
    requirements = _requirements(r.type, r.props)
    candidates, exclusive = _candidates(requirements)
    if not candidates:
        return []
    capacity = _values(requirements, (_CAPACITY_KEY,)) or ["on-demand"]
    limits = _limits(r.type, r.props)
    names = [t.name for t in candidates]
    listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    kinds = "these accelerator types" if exclusive else "accelerator types among them"
    shown_limits = ", ".join(f"{k} {v}" for k, v in sorted(limits.items())) or "none"
    note = (
        f"{r.type} {r.name!r} may launch {kinds}: {listed} ({'/'.join(capacity)}); limits: {shown_limits}. "
    )
    bound = node_pool_bound(r.type, r.props)
    if bound is not None:
        prices = []
        for name, n in bound.fills:
            try:
                prices.append(price(AcceleratorUse(Cloud.AWS, name, n, bound.purchase)))
            except CatalogError:  # no price for the type (Capacity Blocks only): not in the bound
                continue
        worst = max(prices, default=(0.0, ""))
        note += (
            "Priced as a range from 0 nodes (Karpenter launches nodes only for pending pods) to its "
            f"limits; up to its limits, the dearest fill with one type is ${worst[0]:,.2f}/hour ({worst[1]})"
            if worst[0]
            else "Not priced: its limits leave no room for any of them"
        )
    else:
        note += (
            "Not priced: Karpenter launches nodes only for pending pods; no limit bounds how many "
            "accelerator nodes it may launch"
        )
    return [note]


def _compute_class_note(r: Named) -> list[str]:
    """A GKE ComputeClass: its priority rules that name GPUs or TPUs."""
    spec = r.props.get("spec") if isinstance(r.props.get("spec"), Mapping) else {}
    rules = []
    for rule in _list(spec.get("priorities")):
        if not isinstance(rule, Mapping):
            continue
        for kind in ("gpu", "tpu"):
            device = rule.get(kind)
            if isinstance(device, Mapping):
                machine = next(
                    (m for m in (rule.get("machineType"), rule.get("machineFamily")) if isinstance(m, str)),
                    "any machine",
                )
                spot = " spot" if rule.get("spot") is True else ""
                rules.append(f"{device.get('count', '?')} x {device.get('type', '?')} on {machine}{spot}")
    if not rules:
        return []
    return [
        f"{r.type} {r.name!r} may launch nodes with {'; '.join(rules)} (in priority order). Not priced: "
        "GKE creates such nodes only for pods that select the class"
    ]
