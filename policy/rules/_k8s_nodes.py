"""Kubernetes accelerator node capacity that empties itself, for nonprod-accelerators-spot-or-autoshutdown.

Outside production a node pool passes that runs spot or scales to zero when its pods are gone:

- an EKS managed node group whose `scalingConfig.minSize` is 0 (the cluster autoscaler or Karpenter
  can take it to nothing; EKS allows a minimum of 0: docs.aws.amazon.com/eks/latest/APIReference/
  API_NodegroupScalingConfig.html, read 2026-12-02);
- a GKE node pool whose `autoscaling` has `minNodeCount` or `totalMinNodeCount` 0 (the cluster
  autoscaler scales a pool to zero: cloud.google.com/kubernetes-engine/docs/concepts/cluster-
  autoscaler, read 2026-12-02);
- a Karpenter NodePool (v1, v1beta1) that may launch accelerator types passes when its
  `karpenter.sh/capacity-type` requirement allows only `spot`, or when it launches nodes only for
  pending pods and removes them once empty: no static `spec.replicas` (Karpenter 1.14's static
  capacity ignores consolidation) and `spec.disruption.consolidateAfter` not `Never` (the CRD's
  default is 0s: tests/k8s_schemas/karpenter.sh_nodepools.yaml, aws/karpenter-provider-aws v1.14.1).
  With no capacity-type requirement Karpenter launches on-demand nodes (karpenter.sh docs,
  concepts/nodepools, read 2026-12-02).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inference_infra.components.resources import (
    AWS_EKS_NODE_GROUP,
    GCP_GKE_NODE_POOL,
    get_path,
    node_pool_types,
)
from inference_infra.components.resources.types import K8S_NODE_POOLS
from inference_infra.components.tagging import ENVIRONMENT, gcp_label_key
from inference_infra.policy.rules._base import UNKNOWN, Outcome, Resource, not_applicable, passed, show

_CAPACITY_KEY = "karpenter.sh/capacity-type"
_CAPACITY_TYPES = ("spot", "on-demand", "reserved")


def scales_to_zero(resource: Resource) -> bool | None:
    """A node group or node pool whose autoscaling minimum is 0 (None: not known yet)."""
    if resource.type == AWS_EKS_NODE_GROUP:
        low = get_path(resource.props, "scalingConfig", "minSize")
        return None if low is UNKNOWN else low == 0
    if resource.type == GCP_GKE_NODE_POOL:
        autoscaling = resource.props.get("autoscaling")
        if autoscaling is UNKNOWN:
            return None
        if not isinstance(autoscaling, Mapping):
            return False
        lows = [autoscaling.get("minNodeCount"), autoscaling.get("totalMinNodeCount")]
        if any(low is UNKNOWN for low in lows):
            return None
        return any(low == 0 for low in lows)
    return False


NODE_POOL_FIX = {
    AWS_EKS_NODE_GROUP: "outside production set capacityType SPOT, or scalingConfig.minSize 0 so the "
    "cluster autoscaler (or Karpenter) empties the group when its pods are gone",
    GCP_GKE_NODE_POOL: "outside production set nodeConfig.spot, or autoscaling with a minimum of 0 "
    "(minNodeCount or totalMinNodeCount) so the cluster autoscaler empties the pool",
}


def is_karpenter_pool(resource: Resource) -> bool:
    return resource.type in K8S_NODE_POOLS


def capacity_types(props: Mapping[str, Any]) -> list[str] | Any:
    """The capacity types a Karpenter pool's requirements allow (on-demand when none restricts them)."""
    requirements = get_path(props, "spec", "template", "spec", "requirements")
    if requirements is UNKNOWN:
        return UNKNOWN
    allowed = ["on-demand"]
    for q in requirements if isinstance(requirements, list) else []:
        if not isinstance(q, Mapping) or q.get("key") != _CAPACITY_KEY:
            continue
        values = q.get("values")
        if values is UNKNOWN:
            return UNKNOWN
        listed = [str(v) for v in values] if isinstance(values, list) else []
        if q.get("operator") == "In":
            allowed = listed
        elif q.get("operator") == "NotIn":
            allowed = [c for c in _CAPACITY_TYPES if c not in listed]
        elif q.get("operator") == "Exists":
            allowed = list(_CAPACITY_TYPES)
    return allowed


def pool_environment(resource: Resource, config: Mapping[str, Any]) -> str | None:
    """The config's environment, else the Environment label of the nodes the pool launches."""
    configured = config.get("environment")
    if isinstance(configured, str) and configured:
        return configured
    labels = get_path(resource.props, "spec", "template", "metadata", "labels")
    for key in (ENVIRONMENT, gcp_label_key(ENVIRONMENT)):
        value = labels.get(key) if isinstance(labels, Mapping) else None
        if isinstance(value, str) and value:
            return value
    return None


def check_karpenter_pool(resource: Resource, environment: str | None, production: bool) -> Outcome:
    types = node_pool_types(resource.type, resource.props)
    if not types:
        return not_applicable("a Karpenter NodePool whose requirements name no accelerator type")
    if production:
        return not_applicable(f"environment {environment!r} is production")
    allowed = capacity_types(resource.props)
    if allowed is UNKNOWN:
        return Outcome(unknown=("spec.template.spec.requirements",))
    if allowed and all(c == "spot" for c in allowed):
        return passed()
    replicas = get_path(resource.props, "spec", "replicas")
    after = get_path(resource.props, "spec", "disruption", "consolidateAfter")
    if replicas is UNKNOWN or after is UNKNOWN:
        return Outcome(
            unknown=("spec.replicas" if replicas is UNKNOWN else "spec.disruption.consolidateAfter",)
        )
    shown = ", ".join(types[:4]) + (f" and {len(types) - 4} more" if len(types) > 4 else "")
    where = f"environment {environment!r}" if environment else "an environment with no Environment label"
    # Numbers reach a policy as floats from the engine (2.0): any positive count is static capacity.
    static = isinstance(replicas, (int, float)) and not isinstance(replicas, bool) and replicas > 0
    if not static and after != "Never":
        return passed()
    why = (
        f"keeps {show(replicas)} static node{'s' if replicas != 1 else ''} (spec.replicas)"
        if static
        else "never removes empty nodes (spec.disruption.consolidateAfter: Never)"
    )
    return Outcome(
        violations=(
            f"{resource.label} may launch {shown} on {'/'.join(allowed)} capacity in {where} and {why}; "
            f"outside production restrict {_CAPACITY_KEY} to spot, or let Karpenter remove empty nodes "
            "(no replicas, consolidateAfter a duration) so the pool empties with its pods.",
        )
    )
