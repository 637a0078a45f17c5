"""The plan on accelerator programs shaped like public ones the team did not write.

Each program is a trimmed sketch, in our own words, of a shape found in a public repository; the
test asserts what the program's owner would want the plan to report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inference_infra.components.offline_plan import ProgramError, plan

# The reference dev stack's policy config: a program of another project gets it only when asked.
DEV_POLICY_CONFIG = Path(__file__).resolve().parents[3] / "policy" / "config" / "dev.json"

# A self-hosted LLM program that also manages a Tailscale device: the provider package is listed in
# its requirements.txt but not installed where the plan runs.
MISSING_PROVIDER = """
import pulumi
import pulumi_kubernetes as k8s
import pulumi_tailnet_offline_absent as tailnet


k8s.core.v1.Namespace("llm")
"""


def test_plan_names_a_missing_provider_package_and_the_line_that_installs_it(pulumi_project):
    folder = pulumi_project(MISSING_PROVIDER)
    (folder / "requirements.txt").write_text("pulumi>=3\nPulumi-Tailnet_Offline-Absent>=0.17,<1  # vpn\n")
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert "/__main__.py:4: the program imports pulumi_tailnet_offline_absent," in message
    assert "requirements.txt lists Pulumi-Tailnet_Offline-Absent>=0.17,<1" in message
    assert "-m pip install 'Pulumi-Tailnet_Offline-Absent>=0.17,<1'" in message
    assert "ModuleNotFoundError" not in message


def test_plan_asks_for_a_pinned_requirements_line_when_none_lists_the_missing_package(pulumi_project):
    folder = pulumi_project("import pulumi\nimport pulumi_nowhere_offline\n")
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = " ".join(str(caught.value).split())
    assert "no requirements.txt beside the program lists it" in message
    assert f"Add it with a pinned version to {folder / 'requirements.txt'}" in message
    assert f"-m pip install -r {folder / 'requirements.txt'}" in message
    assert "pip install 'pulumi-nowhere-offline'" not in message  # never an unpinned package


def test_plan_names_the_extra_for_a_missing_provider_sdk_the_library_installs(pulumi_project, monkeypatch):
    """pulumi_gcp absent (as after `pip install 'inference-infra[aws]'`): the hint is the gcp extra."""
    import builtins

    real_import = builtins.__import__

    def without_gcp(name, *args, **kwargs):
        if name == "pulumi_gcp" or name.startswith("pulumi_gcp."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    folder = pulumi_project("import pulumi\nimport pulumi_gcp as gcp\n")
    monkeypatch.setattr(builtins, "__import__", without_gcp)
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = " ".join(str(caught.value).split())
    assert "the program imports pulumi_gcp, which is not installed" in message
    assert "-m pip install 'inference-infra[gcp]'" in message
    assert "pip install 'pulumi-gcp'" not in message


def test_plan_says_an_installed_package_lacks_the_module_rather_than_install_it(pulumi_project):
    folder = pulumi_project("import pulumi\nimport pulumi_aws.no_such_module_offline\n")
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = str(caught.value)
    assert "which the installed pulumi_aws" in message
    assert "pip install" not in message


# pulumi-eks GPU node groups declared from a dict, the way many public EKS programs do: the
# cluster and both managed node groups are multi-language components.
EKS_MANAGED_GPU = """
import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

pools = {
    "cpu": {"types": ["m6i.large"], "ami": "AL2_x86_64", "scaling": (1, 3, 2)},
    "gpu": {"types": ["g6.12xlarge"], "ami": "AL2_x86_64_GPU", "scaling": (0, 4, 2)},
}
role = aws.iam.Role("node-role", assume_role_policy="{}")
cluster = eks.Cluster("ml", skip_default_node_group=True, instance_roles=[role])
for name, pool in pools.items():
    low, high, want = pool["scaling"]
    eks.ManagedNodeGroup(f"ml-{name}", cluster=cluster, node_role=role, instance_types=pool["types"],
        ami_type=pool["ami"],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(min_size=low, max_size=high, desired_size=want))
eks.ManagedNodeGroup("defaults", cluster=cluster, node_role=role, instance_types=["g5.xlarge"],
                     capacity_type="SPOT")


class ImdsGroup(pulumi.ComponentResource):
    # pulumi-eks's TypeScript SDK takes enableIMDSv2; the Python SDK in use here does not.
    def __init__(self, name):
        props = {"instanceTypes": ["g5.xlarge"], "enableIMDSv2": True, "diskSize": 200,
                 "capacityType": "SPOT"}
        super().__init__("eks:index:ManagedNodeGroup", name, props, None, remote=True)


ImdsGroup("imds")
"""


def test_plan_prices_and_checks_the_node_group_a_remote_pulumi_eks_managed_node_group_creates(pulumi_project):
    result = plan(pulumi_project(EKS_MANAGED_GPU, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    groups = {r.name: r for r in result.capture.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert set(groups) == {"ml-cpu", "ml-gpu", "defaults", "imds"}
    for name, group in groups.items():
        assert group.inferred
        assert group.parent.endswith(f"eks:index:ManagedNodeGroup::{name}")
    costs = {i.urn.rsplit("::", 1)[-1]: i.basis for i in result.cost.items if i.category == "accelerator"}
    # a node group is a range between its bounds, priced at its maximum (issue #34 item 8)
    assert costs["ml-gpu"].startswith("4 x g6.12xlarge on-demand us-east-1; elastic 0..4 machines")
    assert "expected $9.20/h (its desired capacity, 2)" in costs["ml-gpu"]
    # pulumi-eks's default scaling when the program gives none: desired 2, min 1, max 2
    assert costs["defaults"].startswith("2 x g5.xlarge spot")
    violations = {(v.policy, (v.urn or "").rsplit("::", 1)[-1]) for v in result.policy.violations}
    assert ("allowed-accelerator-types", "ml-gpu") in violations
    assert ("accelerator-imdsv2-required", "ml-gpu") in violations  # no launch template
    assert ("accelerator-imdsv2-required", "imds") not in violations  # enableIMDSv2 -> template
    template = result.capture.one("aws:ec2/launchTemplate:LaunchTemplate")
    assert template.name == "imds-launchTemplate"
    assert template.inferred
    assert template.props["metadataOptions"]["httpTokens"] == "required"
    assert template.props["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 200
    assert groups["imds"].props["launchTemplate"]["id"] == template.id
    doc = result.as_json()
    assert next(r for r in doc["resources"] if r["name"] == "ml-gpu" and r["custom"])["inferred"] is True
    warnings = " ".join(result.warnings())
    assert "ManagedNodeGroup 'ml-gpu' is a multi-language (remote) component: the resources it" in warnings
    assert "eks:index:Cluster 'ml' is a multi-language (remote) component: its children are built" in warnings


# pulumi-eks's default node group on GPU instances (nodeGroupOptions), a shape of its own examples.
EKS_DEFAULT_GPU = """
import pulumi_eks as eks

eks.Cluster("gpu", node_group_options={"instance_type": "g5.2xlarge", "gpu": True, "desired_capacity": 3,
                                       "min_size": 1, "max_size": 5, "spot_price": "1.0"})
eks.Cluster("cpu")  # t2.medium default group: not an accelerator, nothing inferred
eks.Cluster("none", skip_default_node_group=True, instance_type="g5.2xlarge")
"""


def test_plan_infers_the_self_managed_gpu_group_of_a_pulumi_eks_cluster(pulumi_project):
    result = plan(pulumi_project(EKS_DEFAULT_GPU, {"dev": "config:\n  aws:region: us-west-2\n"}), "dev")
    group = result.capture.one("aws:autoscaling/group:Group")
    assert group.name == "gpu-nodeGroup"
    assert group.inferred
    assert result.capture.one("aws:ec2/launchTemplate:LaunchTemplate").props["instanceType"] == "g5.2xlarge"
    item = next(i for i in result.cost.items if i.urn == group.urn)
    assert item.basis.startswith("5 x g5.2xlarge spot")  # an Auto Scaling group: priced at its maximum
    assert "elastic 1..5 machines" in item.basis
    assert "expected $" in item.basis
    assert "(its desired capacity, 3)" in item.basis


# An AWS Batch GPU queue for transcription jobs, the shape of public Batch GPU stacks.
BATCH_GPU = """
import json
from pathlib import Path
import pulumi
import pulumi_aws as aws

cfg = pulumi.Config()
template = aws.ec2.LaunchTemplate("hardened", metadata_options={"http_tokens": "required"},
    network_interfaces=[{"associate_public_ip_address": "false"}])
aws.batch.ComputeEnvironment("gpu", type="MANAGED",
    compute_resources={"type": cfg.get("kind") or "SPOT", "min_vcpus": 0, "desired_vcpus": 8, "max_vcpus": 64,
        "instance_types": cfg.get_object("types") or ["g5.2xlarge"], "subnets": ["subnet-1"],
        "security_group_ids": ["sg-1"], "instance_role": "arn:aws:iam::1:instance-profile/ecs",
        "launch_template": {"launch_template_id": template.id} if cfg.get_bool("hardened") else None})
aws.batch.ComputeEnvironment("cpu", type="MANAGED",
    compute_resources={"type": "FARGATE", "max_vcpus": 16, "subnets": ["subnet-1"],
                       "security_group_ids": ["sg-1"]})
"""


def _batch_plan(pulumi_project, config: str):
    stack = f"config:\n  aws:region: us-east-1\n{config}"
    return plan(pulumi_project(BATCH_GPU, {"dev": stack}), "dev")


def test_plan_prices_a_batch_gpu_environment_at_its_desired_vcpus_with_bounds(pulumi_project):
    result = _batch_plan(pulumi_project, "")
    [item] = [i for i in result.cost.items if i.category == "accelerator"]
    assert item.urn.endswith("ComputeEnvironment::gpu")
    assert item.basis.startswith("1 x g5.2xlarge spot") or item.basis.startswith("g5.2xlarge spot")
    assert "desired 1 (min 0, max 8)" in item.basis  # 8 and 64 vCPUs of an 8-vCPU type
    violations = {(v.policy, (v.urn or "").rsplit("::", 1)[-1]) for v in result.policy.violations}
    assert ("accelerator-imdsv2-required", "gpu") in violations
    assert ("accelerator-no-public-ip", "gpu") in violations
    message = next(v.message for v in result.policy.violations if v.policy == "accelerator-imdsv2-required")
    assert "without a launch template" in message


def test_plan_judges_a_batch_environment_by_its_launch_template_and_types(pulumi_project):
    config = '  outside:hardened: "true"\n  outside:kind: EC2\n  outside:types: \'["p4d.24xlarge"]\'\n'
    result = _batch_plan(pulumi_project, config)
    violations = {(v.policy, (v.urn or "").rsplit("::", 1)[-1]) for v in result.policy.violations}
    assert ("accelerator-imdsv2-required", "gpu") not in violations
    assert ("accelerator-no-public-ip", "gpu") not in violations
    assert ("allowed-accelerator-types", "gpu") in violations
    assert ("nonprod-accelerators-spot-or-autoshutdown", "gpu") in violations


# Karpenter GPU pools created as custom resources (self-managed Karpenter and EKS Auto Mode), a
# KubeRay cluster, Helm releases of GPU charts and a GKE ComputeClass: nothing here is billed by
# itself, so the plan lists them in its notes.
ELASTIC = """
import pulumi_kubernetes as k8s

def pool(name, requirements, limits):
    k8s.apiextensions.CustomResource(name, api_version="karpenter.sh/v1", kind="NodePool",
        metadata={"name": name}, spec={"template": {"spec": {"requirements": requirements,
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"}}},
            "limits": limits})

TYPES = ["g5.xlarge", "g5.12xlarge"]
pool("gpu", [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": TYPES},
             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
     {"cpu": "192", "nvidia.com/gpu": "8"})
pool("any-gpu", [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g", "p"]}],
     {"cpu": "1000"})
pool("cpu", [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]}],
     {"cpu": "64"})
k8s.apiextensions.CustomResource("ray", api_version="ray.io/v1", kind="RayCluster", spec={
    "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray"}]}}},
    "workerGroupSpecs": [{"groupName": "gpu", "replicas": 2, "minReplicas": 0, "maxReplicas": 4,
        "template": {"spec": {"containers": [{"name": "w", "image": "ray",
            "resources": {"limits": {"amd.com/gpu": 1}}}]}}}]})
k8s.helm.v3.Release("serving", chart="vllm-stack", repository_opts={"repo": "https://example.invalid"},
    values={"servingEngineSpec": {"modelSpec": [{"requestGPU": 1, "gpuMemoryUtilization": 0.9}]}})
k8s.helm.v3.Release("operator", chart="gpu-operator", values={"driver": {"enabled": False}})
k8s.apiextensions.CustomResource("l4-first", api_version="cloud.google.com/v1", kind="ComputeClass", spec={
    "priorities": [{"machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}, "spot": True},
                   {"machineFamily": "n2"}]})
"""


def test_plan_notes_what_karpenter_pools_helm_releases_and_custom_workloads_may_run(pulumi_project):
    result = plan(pulumi_project(ELASTIC, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    notes = {n.split("'")[1]: n for n in result.notes()}
    assert set(notes) == {"gpu", "any-gpu", "ray", "serving", "l4-first"}
    gpu = notes["gpu"]
    assert "may launch these accelerator types: g5.xlarge, g5.12xlarge (spot)" in gpu
    assert "limits: cpu 192, nvidia.com/gpu 8" in gpu
    # g5.12xlarge (4 GPUs, 48 vCPUs) fills the 8-GPU limit with 2 nodes: the dearest fill
    assert "up to its limits, the dearest fill with one type is $" in gpu
    assert "(2 x g5.12xlarge spot" in gpu
    assert "may launch accelerator types among them" in notes["any-gpu"]
    assert "no limit bounds how many accelerator nodes it may launch" in notes["any-gpu"]
    assert "amd.com/gpu: 1 per pod x 2 replicas (min 0, max 4) at spec.workerGroupSpecs[0]" in notes["ray"]
    assert "(values.servingEngineSpec.modelSpec[0].requestGPU: 1)" in notes["serving"]
    assert "1 x nvidia-l4 on g2-standard-8 spot" in notes["l4-first"]
    # the pool its limits bound is priced from 0 nodes up to them (issue #34 item 8); the rest is listed
    [karpenter] = result.cost.items
    assert karpenter.urn.endswith("NodePool::gpu")
    assert (karpenter.range.minimum, karpenter.range.max_size) == (0.0, 2)
    assert "Priced as a range from 0 nodes" in gpu


# A pulumi-eks cluster whose default node group runs GPUs, plus the NVIDIA GPU operator installed
# from a Helm v3 Chart (rendered in the program's process by `helm template`).
EKS_HELM = """
import pulumi_eks as eks
from pulumi_kubernetes.helm.v3 import Chart, ChartOpts

cluster = eks.Cluster("voice", tags={"Owner": "ml"}, node_group_options={"instance_type": "g5.xlarge",
    "desired_capacity": 3, "min_size": 1, "max_size": 5, "auto_scaling_group_tags": {"CostCenter": "42"}})
Chart("gpu-operator", ChartOpts(chart="gpu-operator", namespace="gpu-operator",
      fetch_opts={"repo": "https://helm.ngc.nvidia.com/nvidia"},
      values={"devicePlugin": {"resources": {"limits": {"nvidia.com/gpu": 1}}}}))
"""


def test_plan_says_a_helm_v3_chart_renders_nothing_offline_and_prices_the_gpu_default_group(pulumi_project):
    result = plan(pulumi_project(EKS_HELM, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    warnings = result.warnings()
    [chart] = [w for w in warnings if "helm.sh/v3:Chart" in w]
    assert "'gpu-operator' (chart gpu-operator) is rendered by `helm template`, which does not run" in chart
    assert "values.devicePlugin.resources.limits.nvidia.com/gpu: 1" in chart
    assert not any("no offline answer for data source kubernetes:helm:template" in w for w in warnings)
    group = result.capture.one("aws:autoscaling/group:Group")
    assert {t["key"]: t["value"] for t in group.props["tags"]} == {"Owner": "ml", "CostCenter": "42"}
    template = result.capture.one("aws:ec2/launchTemplate:LaunchTemplate")
    assert template.props["blockDeviceMappings"][0]["ebs"] == {
        "volumeSize": 20,
        "volumeType": "gp2",
        "encrypted": "false",
        "deleteOnTermination": "true",
    }
    basis = next(i.basis for i in result.cost.items if i.urn == group.urn)
    assert "5 x g5.xlarge on-demand" in basis  # priced at its maximum, expected at its desired 3
    assert "(its desired capacity, 3)" in basis
    assert not result.cost.unsized  # the root volume's size is pulumi-eks's default, not the AMI's


# Manifests applied with pulumi-kubernetes yaml/v2 (a remote component): a Karpenter pool from a
# file beside the program and a vLLM Deployment inline.
YAML_V2 = '''
import pulumi_kubernetes as k8s

k8s.yaml.v2.ConfigFile("pools", file="nodepool.yaml")
k8s.yaml.v2.ConfigGroup("serving", yaml="""
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: llm}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - {name: vllm, image: vllm/vllm-openai, resources: {limits: {nvidia.com/gpu: 1}}}
---
apiVersion: v1
kind: Namespace
metadata: {name: llm}
""")
'''

NODE_POOL_YAML = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}
  limits: {nvidia.com/gpu: 4}
"""


def test_plan_reads_the_objects_of_yaml_v2_config_groups_and_files(pulumi_project):
    folder = pulumi_project(YAML_V2, {"dev": "config:\n  aws:region: us-east-1\n"})
    (folder / "nodepool.yaml").write_text(NODE_POOL_YAML)
    result = plan(folder, "dev")
    inferred = {(r.type, r.name) for r in result.capture.resources if r.inferred}
    assert inferred == {
        ("kubernetes:karpenter.sh/v1:NodePool", "pools:gpu"),
        ("kubernetes:apps/v1:Deployment", "serving:llm/vllm"),
        ("kubernetes:core/v1:Namespace", "serving:llm"),
    }
    notes = " ".join(result.notes())
    assert "NodePool 'pools:gpu' may launch these accelerator types: g6e.xlarge" in notes
    assert "up to its limits, the dearest fill with one type is $" in notes
    assert "Deployment 'serving:llm/vllm' requests nvidia.com/gpu: 1 per pod x 2 replicas" in notes


DEPRECATED = """
import warnings
import pulumi
import pulumi_aws as aws

region = aws.get_region()
pulumi.export("image", f"763104351884.dkr.ecr.{region.name}.amazonaws.com/tgi:2")
warnings.warn("this program's own notice")
"""


def test_plan_turns_python_warnings_into_one_plan_warning_naming_the_program_line(pulumi_project, capsys):
    result = plan(pulumi_project(DEPRECATED, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    warnings = [w for w in result.warnings() if "deprecated" in w or "notice" in w]
    assert len(warnings) == 2
    assert warnings[0].endswith("__main__.py:7: UserWarning: name is deprecated. Use region instead.")
    assert warnings[1].endswith("__main__.py:8: UserWarning: this program's own notice")
    assert "UserWarning" not in capsys.readouterr().err  # not printed raw by Python


# A node group whose instanceTypes list a small GPU first and a large one after it: EKS may launch
# either, so the allowed-types policy must judge both, and pricing takes the dearest and names the range.
MIXED_TYPES = """
import pulumi_aws as aws

aws.eks.NodeGroup("gpu", cluster_name="ml", node_role_arn="arn:aws:iam::1:role/n", subnet_ids=["subnet-1"],
    instance_types=["g5.xlarge", "p5.48xlarge"], capacity_type="SPOT",
    scaling_config={"desired_size": 1, "min_size": 0, "max_size": 2})
aws.batch.ComputeEnvironment("batch", type="MANAGED", compute_resources={"type": "SPOT", "max_vcpus": 96,
    "instance_types": ["g5.xlarge", "p4d.24xlarge"], "subnets": ["subnet-1"], "security_group_ids": ["sg-1"]})
"""


def test_plan_judges_every_instance_type_a_group_may_launch(pulumi_project):
    result = plan(
        pulumi_project(MIXED_TYPES, {"dev": "config:\n  aws:region: us-east-1\n"}),
        "dev",
        policy_config=DEV_POLICY_CONFIG,  # environment dev: its allowed types
    )
    refused = {
        (v.urn or "").rsplit("::", 1)[-1]: v.message
        for v in result.policy.violations
        if v.policy == "allowed-accelerator-types"
    }
    assert "uses p5.48xlarge, which environment" in refused["gpu"]
    assert "uses p4d.24xlarge, which environment" in refused["batch"]
    basis = {i.urn.rsplit("::", 1)[-1]: i.basis for i in result.cost.items if i.category == "accelerator"}
    assert basis["gpu"].startswith("2 x p5.48xlarge spot $")  # its maximum, 2 (a range, issue #34)
    assert "the dearest of the 2 types it may launch (g5.xlarge $" in basis["gpu"]
    # no vCPUs desired: the dearest per vCPU named (p4d's spot, $8.19/h for 96 vCPUs, is the cheaper)
    assert basis["batch"].startswith("0 x g5.xlarge")
    assert "(p4d.24xlarge $0.08533/vCPU-hour to g5.xlarge $" in basis["batch"]


# A workloads stack that reads its cluster from the infrastructure stack and an existing VPC.
READS = """
import pulumi
import pulumi_aws as aws

infra = pulumi.StackReference("acme/eks-gpu-infra/dev")
pulumi.export("kubeconfig", infra.require_output("kubeconfig"))
vpc = aws.ec2.Vpc.get("shared", "vpc-0123")
pulumi.export("vpc", vpc.id)
"""


def test_plan_warns_that_stack_references_and_existing_resources_are_not_known_offline(pulumi_project):
    result = plan(pulumi_project(READS, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    assert result.as_json()["outputs"]["kubeconfig"] == "[unknown]"
    warnings = " ".join(result.warnings())
    assert "StackReference 'acme/eks-gpu-infra/dev' reads another stack's outputs at deploy time" in warnings
    assert "aws:ec2/vpc:Vpc 'shared' reads an existing resource (id 'vpc-0123')" in warnings
    assert all(r.type != "pulumi:pulumi:StackReference" for r in result.capture.resources)


@pytest.mark.parametrize(
    ("main", "helper", "where"),
    [
        ("import pulumi\nx = (1,\n", "", "/__main__.py:2: "),
        ("import helpers\n", "def make(:\n", "/helpers.py:1: "),
    ],
)
def test_plan_names_the_file_and_line_of_a_syntax_error(pulumi_project, main, helper, where):
    folder = pulumi_project(main)
    (folder / "helpers.py").write_text(helper)
    with pytest.raises(ProgramError) as caught:
        plan(folder, "dev")
    message = str(caught.value)
    assert where + "SyntaxError: " in message
    assert message.endswith("the program does not compile.")


AUTOPILOT = """
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

gcp.container.Cluster("auto", location="us-central1", enable_autopilot=True, deletion_protection=False)
k8s.apps.v1.Deployment("vllm", spec={"replicas": 1, "selector": {"match_labels": {"app": "v"}},
    "template": {"metadata": {"labels": {"app": "v"}}, "spec": {
        "node_selector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        "containers": [{"name": "v", "image": "vllm", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}})
"""


def test_plan_says_gpu_pods_on_an_autopilot_cluster_are_billed_per_pod(pulumi_project):
    result = plan(
        pulumi_project(AUTOPILOT, {"dev": "config:\n  gcp:project: p\n  gcp:region: us-central1\n"}), "dev"
    )
    [note] = result.notes()
    assert "requests nvidia.com/gpu: 1 per pod x 1 replica" in note
    assert "on the stack's GKE Autopilot cluster its accelerators are billed per pod" in note


def test_a_gpu_limit_does_not_bound_neuron_types_in_a_karpenter_pool(pulumi_project):
    program = """
import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource("mixed", api_version="karpenter.sh/v1", kind="NodePool", spec={
    "template": {"spec": {"requirements": [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "inf2"]}]}},
    "limits": {"nvidia.com/gpu": "8"}})
"""
    [note] = plan(pulumi_project(program, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev").notes()
    assert "g5.xlarge" in note
    assert "and 4 more" in note  # the inf2 types, which the GPU limit does not bound
    assert note.endswith("no limit bounds how many accelerator nodes it may launch")


UNKNOWNS = """
import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

cluster = aws.eks.Cluster("c", role_arn="arn:aws:iam::1:role/c", vpc_config={"subnet_ids": ["subnet-1"]})
later = cluster.endpoint  # known only once the cluster exists: unknown in a preview
k8s.apiextensions.CustomResource("pool", api_version="karpenter.sh/v1", kind="NodePool", spec={
    "template": {"spec": {"requirements": later.apply(lambda _: [])}}, "limits": {"cpu": later}})
k8s.apiextensions.CustomResource("cc", api_version="cloud.google.com/v1", kind="ComputeClass", spec={
    "priorities": [{"machineType": later, "gpu": {"type": "nvidia-l4", "count": 1}}]})
k8s.apps.v1.Deployment("d", spec={"replicas": 1, "selector": {"match_labels": {"a": "b"}},
    "template": {"spec": {"containers": later.apply(lambda _: [])}}})
"""


def test_plan_notes_survive_values_not_known_until_deploy_time(pulumi_project):
    result = plan(pulumi_project(UNKNOWNS, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    assert result.notes() == [
        "kubernetes:cloud.google.com/v1:ComputeClass 'cc' may launch nodes with 1 x nvidia-l4 on any machine "
        "(in priority order). Not priced: GKE creates such nodes only for pods that select the class"
    ]


# Accelerated EC2 families the catalog does not price (older GPUs, Graviton GPUs, AMD GPUs):
# the gate must still judge them, and the plan must say they are not priced.
UNCATALOGUED = """
import pulumi_aws as aws

aws.ec2.Instance("v100s", ami="ami-1", instance_type="p3.16xlarge", tags={"Environment": "dev"})
aws.ec2.Instance("arm", ami="ami-1", instance_type="g5g.xlarge")
"""


def test_plan_judges_and_flags_accelerator_types_the_catalog_does_not_price(pulumi_project):
    result = plan(pulumi_project(UNCATALOGUED, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    refused = {
        (v.urn or "").rsplit("::", 1)[-1]
        for v in result.policy.violations
        if v.policy == "allowed-accelerator-types"
    }
    assert refused == {"v100s", "arm"}
    unpriced = " ".join(result.warnings())
    assert "Instance::v100s: aws machine type 'p3.16xlarge' is not in the catalog" in unpriced
    assert result.exit_code == 1


def test_plan_says_a_gke_pool_of_an_uncatalogued_bundled_gpu_type_is_not_priced(pulumi_project):
    program = """
import pulumi_gcp as gcp
gcp.container.NodePool("h200", cluster="c", location="us-central1-a", node_count=1, node_config={
    "machine_type": "a3-ultragpu-8g", "guest_accelerators": [{"type": "nvidia-h200-141gb", "count": 8}]})
"""
    result = plan(
        pulumi_project(program, {"dev": "config:\n  gcp:project: p\n  gcp:region: us-central1\n"}), "dev"
    )
    assert any(
        w.endswith("gcp machine type 'a3-ultragpu-8g' is not in the catalog") for w in result.warnings()
    )
    assert not any("N1" in w for w in result.warnings())


# The NVIDIA device plugin applied from its release URL (yaml v1 and v2), and manifests applied from
# a local file and inline text with yaml v1, as many GPU cluster programs do.
MANIFESTS = '''
import pulumi_kubernetes as k8s

URL = "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.17.1/deployments/static/nvidia-device-plugin.yml"
k8s.yaml.ConfigFile("device-plugin", file=URL)
k8s.yaml.v2.ConfigFile("device-plugin-v2", file=URL)
k8s.yaml.ConfigFile("pools", file="nodepool.yaml")
k8s.kustomize.Directory("kuberay-crds", directory="https://github.com/ray-project/kuberay/ray-operator/config/crd")
k8s.yaml.ConfigGroup("serving", yaml=["""
apiVersion: apps/v1
kind: Deployment
metadata: {name: tgi}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: tgi, image: tgi, resources: {limits: {nvidia.com/gpu: 2}}}]
"""])
'''


def test_plan_never_downloads_manifests_and_reads_local_yaml_v1(pulumi_project, monkeypatch):
    import requests

    def no_network(*args, **kwargs):
        raise AssertionError("the offline plan went to the network")

    monkeypatch.setattr(requests, "get", no_network)
    folder = pulumi_project(MANIFESTS, {"dev": "config:\n  aws:region: us-east-1\n"})
    (folder / "nodepool.yaml").write_text(NODE_POOL_YAML)
    result = plan(folder, "dev")
    warnings = result.warnings()
    url = "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.17.1/deployments/static/"
    [fetch] = [w for w in warnings if url in w]  # one warning for the URL, v1 and v2 alike
    assert "which the offline plan does not download" in fetch
    assert not any("kubernetes:yaml:decode" in w or "kustomize:directory" in w for w in warnings)
    assert any(
        "applies kustomize directory https://github.com/ray-project/kuberay/ray-operator/config/crd, which "
        "the offline plan does not build" in w
        for w in warnings
    )
    notes = " ".join(result.notes())
    assert "NodePool 'gpu' may launch these accelerator types: g6e.xlarge" in notes
    assert "Deployment 'tgi' requests nvidia.com/gpu: 2 per pod x 3 replicas" in notes
