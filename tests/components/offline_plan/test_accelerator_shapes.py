"""Accelerators in every shape a program may use: priced, and seen by the policy pack."""

from __future__ import annotations

from inference_infra.components.offline_plan import plan

SHAPES = """
import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

tags = {"Environment": "dev", "CostCenter": "ml", "Owner": "team", "Project": "demo"}
aws.eks.NodeGroup("gpu-nodes", cluster_name="c", node_role_arn="arn:aws:iam::1:role/n", subnet_ids=["s"],
                  instance_types=["g5.12xlarge"], tags=tags,
                  scaling_config={"desired_size": 2, "min_size": 1, "max_size": 4})
lt = aws.ec2.LaunchTemplate("asg-lt", image_id="ami-1")
aws.autoscaling.Group("asg", min_size=0, max_size=6, desired_capacity=3,
    mixed_instances_policy={
        "launch_template": {"launch_template_specification": {"launch_template_id": lt.id},
                            "overrides": [{"instance_type": "g5.xlarge"}]},
        "instances_distribution": {"on_demand_base_capacity": 0,
                                   "on_demand_percentage_above_base_capacity": 0}})
aws.sagemaker.EndpointConfiguration("llm", production_variants=[{
    "variant_name": "all", "model_name": "m", "instance_type": "ml.g5.2xlarge", "initial_instance_count": 2}])
gcp.container.NodePool("l4-pool", cluster="c", location="us-central1", node_count=2,
    node_config={"machine_type": "g2-standard-24", "resource_labels": {"environment": "dev"}})
gcp.container.Cluster("tpu", location="us-central1", initial_node_count=1,
    node_config={"machine_type": "ct5lp-hightpu-4t", "spot": True})
"""


def test_plan_prices_node_groups_pools_groups_and_lists_endpoints(pulumi_project):
    result = plan(
        pulumi_project(SHAPES, {"dev": "config:\n  aws:region: us-east-1\n  gcp:region: us-central1\n"}),
        "dev",
    )
    cost = {i.urn.rsplit("::", 1)[-1]: i for i in result.cost.items if i.category == "accelerator"}
    # an EKS node group is a range between its bounds, priced at its maximum (issue #34 item 8)
    assert cost["gpu-nodes"].hourly_usd == 4 * 5.672
    assert cost["gpu-nodes"].range.expected == 2 * 5.672
    assert "elastic 1..4 machines" in cost["gpu-nodes"].basis
    assert cost["asg"].hourly_usd > 0
    assert "spot" in cost["asg"].basis
    assert "elastic 0..6 machines" in cost["asg"].basis  # an elastic pool: priced at its maximum
    assert cost["asg"].range is not None
    # SageMaker's own rate (FMBench's pinned pricing.yml, components/catalog/sagemaker.py), per instance
    assert cost["llm"].hourly_usd == 2 * 1.515
    assert "2 x ml.g5.2xlarge SageMaker on-demand $1.515/h" in cost["llm"].basis
    assert round(cost["l4-pool"].hourly_usd, 4) == round(2 * 2.00084472, 4)
    assert cost["tpu"].hourly_usd > 0
    assert "v5litepod-4" in cost["tpu"].basis
    assert "asg-lt" not in cost


def test_policies_see_node_groups_pools_and_endpoints(pulumi_project):
    result = plan(pulumi_project(SHAPES), "dev")
    violations = {(v.policy, (v.urn or "").rsplit("::", 1)[-1]) for v in result.policy.violations}
    # Outside production, on-demand accelerator groups need spot or AutoShutdown.
    assert ("nonprod-accelerators-spot-or-autoshutdown", "gpu-nodes") in violations
    assert ("nonprod-accelerators-spot-or-autoshutdown", "l4-pool") in violations
    assert ("nonprod-accelerators-spot-or-autoshutdown", "asg") not in violations
    assert ("nonprod-accelerators-spot-or-autoshutdown", "tpu") not in violations
    budget = [v for v in result.policy.violations if v.policy == "accelerator-spend-budget"]
    assert all("no accelerators" not in v.message for v in budget)


K8S = """
import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment("vllm", spec={
    "replicas": 2,
    "selector": {"match_labels": {"app": "vllm"}},
    "template": {"metadata": {"labels": {"app": "vllm"}}, "spec": {"containers": [{
        "name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
        "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}})
"""


def test_plan_notes_kubernetes_workloads_that_request_accelerators(pulumi_project):
    result = plan(pulumi_project(K8S), "dev")
    assert any("'vllm' requests nvidia.com/gpu: 1 per pod x 2 replicas" in n for n in result.notes())
