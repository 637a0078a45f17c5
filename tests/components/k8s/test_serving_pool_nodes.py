"""A KubernetesServingPool with its own node capacity (`nodes=`), under Pulumi's mock runtime.

- the planner's pick is the node group's / NodePool's instance type and the GKE node pool's machine type
  (a TPU slice mapped to GKE's machine type and topology by the catalog);
- the counts per capacity mode reach the capacity types (EKS ON_DEMAND/SPOT groups, Karpenter's
  capacity-type requirement, a GKE spot pool), an elastic pool's floor the groups' minimum;
- the pool's pods tolerate exactly its nodes' taints and select exactly their labels, as rendered;
- a node input the node capacity refuses is refused by the pool, keyed `nodes.`, before any resource.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.errors import InputError
from inference_infra.components.k8s.node_capacity_args import EKS_TAINT_EFFECTS, NodeSubnet
from inference_infra.components.k8s.pool_nodes import (
    PoolEksNodeGroups,
    PoolGkeNodePools,
    PoolKarpenterNodes,
    gke_tpu_machine,
)
from inference_infra.components.k8s.serving_pool import KubernetesServingPool, validate_serving_pool
from tests.components.k8s.manifests import objects_of, validate
from tests.components.k8s.pool_cases import EKS, EKS_ELASTIC, GKE_TPU

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODES = PoolEksNodeGroups(
    cluster_name="inference-prod",
    subnets=[
        NodeSubnet(id="subnet-0a1b2c3d4e5f60718", availability_zone="us-east-1a"),
        NodeSubnet(id="subnet-0b1c2d3e4f5a60719", availability_zone="us-east-1b"),
    ],
    security_group_ids=["sg-0c1d2e3f4a5b60718"],
)
KARPENTER = PoolKarpenterNodes(
    node_role="KarpenterNodeRole-inference",
    subnet_tags={"karpenter.sh/discovery": "inference"},
    security_group_tags={"karpenter.sh/discovery": "inference"},
)
GKE_NODES = PoolGkeNodePools(cluster="inference", location="us-west4", node_locations=["us-west4-a"])


def _pod_spec(capture, name="llama"):
    return capture.one(DEPLOYMENT, f"{name}-engine").props["spec"]["template"]["spec"]


def _as_pod_taint(taint):
    """An EKS node group taint (NO_SCHEDULE) as the Node carries it (NoSchedule)."""
    effect = {v: k for k, v in EKS_TAINT_EFFECTS.items()}[taint["effect"]]
    return {"key": taint["key"], "value": taint["value"], "effect": effect}


def _tolerated(tolerations):
    return sorted((t["key"], t["value"], t["effect"]) for t in tolerations)


def test_eks_pool_makes_node_groups_of_its_pick_and_counts(plan_of):
    pool = KubernetesServingPool("llama", replace(EKS, on_demand=1, spot=2, nodes=EKS_NODES))
    capture = plan_of()
    groups = {g.props["capacityType"]: g.props for g in capture.of_type(NODE_GROUP)}
    assert set(groups) == {"ON_DEMAND", "SPOT"}
    assert groups["ON_DEMAND"]["scalingConfig"] == {"minSize": 1, "desiredSize": 1, "maxSize": 1}
    assert groups["SPOT"]["scalingConfig"] == {"minSize": 2, "desiredSize": 2, "maxSize": 2}
    templates = capture.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    # the on-demand group's template names the pick; the spot group runs the pick first among its
    # stand-ins, on the node group (node_capacity_spot), with none in its template
    assert [t.props.get("instanceType") for t in templates].count(pool.plan.machine) == 1
    assert groups["SPOT"]["instanceTypes"][0] == pool.plan.machine
    pod = _pod_spec(capture)
    for group in groups.values():
        node_taints = [_as_pod_taint(t) for t in group["taints"]]
        assert _tolerated(pod["tolerations"]) == _tolerated(node_taints)
        assert all(group["labels"][k] == v for k, v in pod["nodeSelector"].items())


def test_elastic_eks_pool_groups_scale_down_to_the_plans_floor(plan_of, monkeypatch):
    import pulumi_aws as aws

    seen = []
    real = aws.eks.NodeGroup

    def spy(name, *args, opts=None, **kwargs):  # the options the engine gets with the group
        seen.append(opts)
        return real(name, *args, opts=opts, **kwargs)

    monkeypatch.setattr(aws.eks, "NodeGroup", spy)
    pool = KubernetesServingPool("llama", replace(EKS_ELASTIC, nodes=EKS_NODES))
    capture = plan_of()
    (group,) = capture.of_type(NODE_GROUP)
    floor = min(pool.plan.scaling.min_size, pool.plan.scaling.schedule.off_hours_size)
    assert floor == 0  # a dev pool with a schedule sleeps outside working hours
    assert group.props["scalingConfig"] == {"minSize": 0, "desiredSize": 2, "maxSize": 2}
    # the cluster's autoscaler owns the desired size after creation: `pulumi up` leaves it alone
    (opts,) = seen
    assert opts.ignore_changes == ["scalingConfig.desiredSize"]


def test_karpenter_pool_nodepool_has_its_pick_capacity_types_and_limit(plan_of):
    pool = KubernetesServingPool("llama", replace(EKS, on_demand=1, spot=3, nodes=KARPENTER))
    capture = plan_of()
    objects = {o["kind"]: o for o in objects_of(capture)}
    requirements = {
        r["key"]: r["values"] for r in objects["NodePool"]["spec"]["template"]["spec"]["requirements"]
    }
    assert requirements["node.kubernetes.io/instance-type"] == [pool.plan.machine]
    assert requirements["karpenter.sh/capacity-type"] == ["spot", "on-demand"]
    gpus = find_instance_type(pool.plan.machine, Cloud.AWS).accelerator_count
    assert objects["NodePool"]["spec"]["limits"] == {"nvidia.com/gpu": str(4 * gpus)}
    pod = _pod_spec(capture)
    node_spec = objects["NodePool"]["spec"]["template"]
    assert _tolerated(pod["tolerations"]) == _tolerated(node_spec["spec"]["taints"])
    assert node_spec["metadata"]["labels"] == pod["nodeSelector"]


def test_gke_tpu_pool_maps_its_planned_slice_to_gkes_machine_type_and_topology(plan_of):
    pool = KubernetesServingPool("tpu", replace(GKE_TPU, nodes=GKE_NODES))
    capture = plan_of()
    (node_pool,) = capture.of_type(GKE_POOL)
    machine_type, topology = gke_tpu_machine(pool.plan.machine)
    config = node_pool.props["nodeConfig"]
    assert config["machineType"] == machine_type
    assert config["spot"] is True
    # A one-host slice is a plain TPU node pool: no pod-slice placement topology (GKE's plan-tpus page;
    # the API's PlacementPolicy.tpu_topology is the "TPU placement topology for pod slice node pool").
    assert topology == "2x2"
    assert "placementPolicy" not in node_pool.props
    # GKE adds the accelerator's own taint itself; the pool's taint is set on the node pool.
    pod = _pod_spec(capture, "tpu")
    node_taints = [{**t, "effect": "NoSchedule"} for t in config["taints"]]
    node_taints.append({"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"})
    assert _tolerated(pod["tolerations"]) == _tolerated(node_taints)
    assert config["labels"] == pod["nodeSelector"]


@pytest.mark.parametrize(
    ("tpu_slice", "expected"),
    [
        ("v5litepod-4", ("ct5lp-hightpu-4t", "2x2")),
        ("v5litepod-8", ("ct5lp-hightpu-8t", "2x4")),
        ("v6e-4", ("ct6e-standard-4t", "2x2")),
        ("v5p-8", ("ct5p-hightpu-4t", "2x2x1")),  # v5p names slices by TensorCores: 8 = 4 chips
        ("v4-8", ("ct4p-hightpu-4t", "2x2x1")),
        ("v5litepod-16", None),  # four hosts: not a one-host machine
    ],
)
def test_gke_tpu_machine_reads_the_catalog(tpu_slice, expected):
    assert gke_tpu_machine(tpu_slice) == expected


def test_gke_gpu_pool_with_spot_and_on_demand_gets_a_node_pool_each(plan_of):
    args = replace(GKE_TPU, accelerator=GKE_TPU.accelerator.NVIDIA_GPU, spot=2, on_demand=1, nodes=GKE_NODES)
    pool = KubernetesServingPool("gpu", args)
    capture = plan_of()
    pools = {p.props["nodeConfig"]["spot"]: p.props for p in capture.of_type(GKE_POOL)}
    assert pools[True]["autoscaling"]["totalMaxNodeCount"] == 2
    assert pools[False]["autoscaling"]["totalMaxNodeCount"] == 1
    assert {p["nodeConfig"]["machineType"] for p in pools.values()} == {pool.plan.machine}


def test_node_objects_of_a_karpenter_pool_pass_their_crds(plan_of):
    KubernetesServingPool("llama", replace(EKS_ELASTIC, nodes=KARPENTER))
    objects = objects_of(plan_of())
    assert {"NodePool", "EC2NodeClass", "Deployment", "ScaledObject"} <= {o["kind"] for o in objects}
    assert [e for o in objects for e in validate(o)] == []


def test_node_inputs_are_checked_by_the_pool_before_any_resource():
    bad = replace(EKS_NODES, security_group_ids=[], subnets=[])
    problems = {p.input for p in validate_serving_pool("llama", replace(EKS, nodes=bad))}
    assert {"nodes.security_group_ids", "nodes.subnets"} <= problems
    with pytest.raises(InputError, match=r"nodes\.security_group_ids"):
        KubernetesServingPool("llama", replace(EKS, nodes=bad))


def test_node_capacity_of_the_other_cloud_is_refused():
    problems = validate_serving_pool("llama", replace(EKS, nodes=GKE_NODES))
    assert [(p.input, p.value) for p in problems] == [("nodes", "PoolGkeNodePools")]


VALIDATED = {
    "eks-gpu-node-groups": replace(EKS, on_demand=1, spot=1, nodes=EKS_NODES),
    "eks-gpu-elastic-karpenter": replace(EKS_ELASTIC, nodes=KARPENTER),
    "eks-inferentia-karpenter": replace(EKS, accelerator=EKS.accelerator.AWS_NEURON, nodes=KARPENTER),
    "eks-inferentia-node-groups": replace(EKS, accelerator=EKS.accelerator.AWS_NEURON, nodes=EKS_NODES),
    "gke-tpu": replace(GKE_TPU, nodes=GKE_NODES),
    "gke-gpu": replace(GKE_TPU, accelerator=GKE_TPU.accelerator.NVIDIA_GPU, nodes=GKE_NODES),
}


@pytest.mark.parametrize("case", sorted(VALIDATED))
def test_every_kubernetes_object_of_a_pool_and_its_nodes_passes_validation(plan_of, case):
    """As the engine receives them (mock runtime): built-in kinds by kubernetes-validate (strict), custom
    resources by their vendored CRDs (tests/components/k8s/manifests.py)."""
    KubernetesServingPool("pool", VALIDATED[case])
    objects = objects_of(plan_of())
    assert {"Deployment", "Service", "NetworkPolicy", "PodMonitor", "SecretProviderClass"} <= {
        o["kind"] for o in objects
    }
    if "karpenter" in case:
        assert {"NodePool", "EC2NodeClass"} <= {o["kind"] for o in objects}
    assert [e for o in objects for e in validate(o)] == []


@pytest.mark.parametrize("nodes", [EKS_NODES, KARPENTER], ids=["eks", "karpenter"])
def test_fixed_pool_on_its_own_nodes_rolls_one_pod_down_at_a_time(plan_of, nodes):
    # Its nodes are capped at its size (EKS maxSize, Karpenter's limit): a surge pod would stay
    # Pending, and with maxUnavailable 0 no old pod would go, so the rollout would never end.
    KubernetesServingPool("llama", replace(EKS, on_demand=1, spot=1, nodes=nodes))
    capture = plan_of()
    objects = {o["kind"]: o for o in objects_of(capture)}
    if nodes is EKS_NODES:
        groups = [g.props["scalingConfig"] for g in capture.of_type(NODE_GROUP)]
        assert all(g["maxSize"] == g["desiredSize"] for g in groups)  # no room for a surge pod
    rolling = objects["Deployment"]["spec"]["strategy"]["rollingUpdate"]
    assert rolling == {"maxUnavailable": 1, "maxSurge": 0}
    assert validate(objects["Deployment"]) == []


def test_elastic_pool_or_the_clusters_nodes_surge_one_pod(plan_of):
    # Below its peak an elastic pool's groups have room; the cluster's own nodes are not ours to judge.
    KubernetesServingPool("llama", replace(EKS_ELASTIC, nodes=EKS_NODES))
    KubernetesServingPool("other", EKS)
    deployments = [o for o in objects_of(plan_of()) if o["kind"] == "Deployment"]
    assert len(deployments) == 2
    for deployment in deployments:
        assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}
