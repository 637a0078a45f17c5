"""The node capacity passes the library's own policy pack as a user program builds it: cost tags on every
node group, launch template, instance and node pool (GKE's through nodeConfig.resourceLabels), IMDSv2
hop limit 1 and no public IP on the EKS nodes, a dedicated GKE service account."""

from __future__ import annotations

from inference_infra.components.offline_plan import plan
from inference_infra.components.tagging import CostTags, tagged_props

PROGRAM = """
from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s import (
    DevicePlugins, DevicePluginsArgs, EksNodeGroups, EksNodeGroupsArgs, GkeNodePool, GkeNodePoolArgs,
    KarpenterNodes, KarpenterNodesArgs, NodeSubnet,
)
from inference_infra.components.tagging import CostTags, register_cost_tags

# spot everywhere, so no AutoShutdown (which would also ask for an idle watchdog in the stack)
register_cost_tags(CostTags(cost_center="ml", environment="dev", owner="ml@example.com", auto_shutdown=False))
EksNodeGroups("eks", EksNodeGroupsArgs(
    cluster_name="inference", pool="chat", instance_type="g6e.xlarge", spot=2, min_nodes=0, max_nodes=3,
    subnets=[NodeSubnet(id="subnet-0a1b2c3d4e5f60718", availability_zone="us-east-1a")],
    security_group_ids=["sg-0123456789abcdef0"]))
KarpenterNodes("karp", KarpenterNodesArgs(
    pool="burst", instance_type="g6e.2xlarge", capacity_types=[CapacityMode.SPOT], max_nodes=2,
    node_role="nodes", subnet_tags={"karpenter.sh/discovery": "inference"},
    security_group_tags={"karpenter.sh/discovery": "inference"}))
GkeNodePool("gke", GkeNodePoolArgs(
    cluster="inference", location="us-central1", pool="l4", machine_type="g2-standard-8", spot=True,
    min_nodes=0, max_nodes=2))
GkeNodePool("tpu", GkeNodePoolArgs(
    cluster="inference", location="us-central1", pool="tpu", machine_type="ct5lp-hightpu-1t",
    node_locations=["us-central1-a"], spot=True, max_nodes=1))
DevicePlugins("plugins", DevicePluginsArgs(families=[AcceleratorFamily.NVIDIA_GPU]))
"""
STACK = {"dev": "config:\n  aws:region: us-east-1\n  gcp:project: acme\n  gcp:region: us-central1\n"}


def test_node_capacity_passes_the_policy_pack(pulumi_project):
    result = plan(pulumi_project(PROGRAM, STACK), "dev")
    mandatory = [
        f"{v.policy}: {v.message}"
        for v in result.policy.violations
        if v.enforcement == "mandatory" and "spend-budget" not in v.policy
    ]
    assert mandatory == []
    assert result.cost.hourly_usd > 0  # every pool priced (Karpenter's up to its limits)


def test_gke_node_pool_cost_labels_go_on_its_nodes_resource_labels():
    tags = CostTags(cost_center="ml", environment="dev", owner="ml@example.com", auto_shutdown=True)
    props = {"nodeConfig": {"machineType": "g2-standard-8", "resourceLabels": {"team": "a"}}}
    out = tagged_props("gcp:container/nodePool:NodePool", props, tags)
    assert out["nodeConfig"]["resourceLabels"] == {
        "cost-center": "ml",
        "environment": "dev",
        "owner": "ml_example_com",
        "auto-shutdown": "true",
        "team": "a",
    }
    assert out["nodeConfig"]["machineType"] == "g2-standard-8"
    cpu = tagged_props(
        "gcp:container/nodePool:NodePool", {"nodeConfig": {"machineType": "e2-standard-4"}}, tags
    )
    assert "auto-shutdown" not in cpu["nodeConfig"]["resourceLabels"]
