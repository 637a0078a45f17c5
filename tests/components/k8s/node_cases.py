"""Shared inputs of the node capacity tests: one EKS node group, Karpenter NodePool and GKE node pool each
test file starts from (its own counts and picks passed over these)."""

from __future__ import annotations

from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity_args import (
    EksNodeGroupsArgs,
    GkeNodePoolArgs,
    KarpenterNodesArgs,
    NodeSubnet,
)

SUBNETS = [NodeSubnet(id="subnet-0a", availability_zone="us-east-1a")]
SECURITY_GROUP = "sg-0123456789abcdef0"
DISCOVERY = {"karpenter.sh/discovery": "inference"}


def eks_args(**kw) -> EksNodeGroupsArgs:
    base = dict(
        cluster_name="inference",
        pool="chat",
        instance_type="g6e.xlarge",
        subnets=SUBNETS,
        security_group_ids=[SECURITY_GROUP],
    )
    return EksNodeGroupsArgs(**{**base, **kw})


def karpenter_args(**kw) -> KarpenterNodesArgs:
    base = dict(
        pool="chat",
        instance_type="g6e.xlarge",
        capacity_types=[CapacityMode.ON_DEMAND],
        max_nodes=2,
        node_role="nodes",
        subnet_tags=DISCOVERY,
        security_group_tags=DISCOVERY,
    )
    return KarpenterNodesArgs(**{**base, **kw})


def gke_args(**kw) -> GkeNodePoolArgs:
    base = dict(
        cluster="inference", location="us-central1", pool="chat", machine_type="g2-standard-8", max_nodes=3
    )
    return GkeNodePoolArgs(**{**base, **kw})
