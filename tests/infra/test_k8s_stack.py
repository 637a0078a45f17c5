"""The stack's Kubernetes part (infra/k8s_stack.py): prod serves one pool on its EKS cluster.

- planned once (`k8s_stack.pool_plans`), the same plan built and read by the observability part;
- its nodes: EKS managed node groups of the planner's pick in awsNetwork's subnets, priced by `plan`;
- its pods tolerate exactly its nodes' taints and select their labels;
- scraped by the stack's GpuObservability Prometheus (PodMonitor release label), its $/Mtok rule priced;
- every Kubernetes object of the prod plan passes tests/components/k8s/manifests.py's `validate`;
- the prod policy pack passes; bad section inputs are refused by their config keys.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.k8s.node_capacity_args import EKS_TAINT_EFFECTS
from inference_infra.components.offline_plan import plan
from tests.components.k8s.manifests import objects_of, validate

REPO = Path(__file__).resolve().parents[2]
POOL = "llama-8b-eks"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def test_prod_serves_one_pool_on_its_eks_cluster_with_its_own_node_groups(plan_stack):
    result = plan_stack("prod")
    capture = result.capture
    pool = capture.one("inference-infra:k8s:KubernetesServingPool", POOL)
    provider = capture.one("pulumi:providers:kubernetes", f"{POOL}-k8s")
    assert provider.props["context"] == "inference-prod"
    groups = {
        g.props["capacityType"]: g for g in capture.of_type(NODE_GROUP) if g.name.startswith(f"{POOL}-nodes")
    }
    assert set(groups) == {"ON_DEMAND", "SPOT"}  # one on-demand node, one spot
    for group in groups.values():
        assert group.props["scalingConfig"] == {"minSize": 1, "desiredSize": 1, "maxSize": 1}
        assert group.props["clusterName"] == "inference-prod"
        assert sorted(group.props["subnetIds"]) == sorted(
            ["subnet-0a1c0ffee0000001a", "subnet-0b2c0ffee0000002b", "subnet-0c3c0ffee0000003c"]
        )
    template = capture.one("aws:ec2/launchTemplate:LaunchTemplate", f"{POOL}-nodes-ondemand-lt")
    assert pool.outputs["machine"] == template.props["instanceType"] == "g6e.xlarge"
    # the spot group: the pick and its catalog stand-ins (the same L40S on larger hosts)
    assert groups["SPOT"].props["instanceTypes"] == ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"]
    item = next(i for i in result.cost.items if i.urn == groups["ON_DEMAND"].urn)
    assert item.basis.startswith("g6e.xlarge on-demand")
    spot = next(i for i in result.cost.items if i.urn == groups["SPOT"].urn and i.category == "accelerator")
    assert "the dearest of the 3 types it may launch" in spot.basis


def test_prod_pool_pods_tolerate_exactly_their_nodes_taints(plan_stack):
    capture = plan_stack("prod").capture
    pod = capture.one("kubernetes:apps/v1:Deployment", f"{POOL}-engine").props["spec"]["template"]["spec"]
    effects = {v: k for k, v in EKS_TAINT_EFFECTS.items()}
    for group in [g for g in capture.of_type(NODE_GROUP) if g.name.startswith(f"{POOL}-nodes")]:
        node_taints = sorted((t["key"], t["value"], effects[t["effect"]]) for t in group.props["taints"])
        assert sorted((t["key"], t["value"], t["effect"]) for t in pod["tolerations"]) == node_taints
        assert all(group.props["labels"][k] == v for k, v in pod["nodeSelector"].items())


def test_prod_pool_is_scraped_and_priced_by_the_stacks_prometheus(plan_stack):
    capture = plan_stack("prod").capture
    monitor = capture.one("kubernetes:monitoring.coreos.com/v1:PodMonitor", f"{POOL}-monitor").props
    assert monitor["metadata"]["labels"]["release"] == "gpu-obs-kps"
    spec = capture.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule").props["spec"]
    records = {
        r["record"]: r["expr"]
        for g in spec["groups"]
        for r in g["rules"]
        if "record" in r and r.get("labels", {}).get("pool") == POOL
    }
    # its latency budget, its engines' --max-num-seqs and its price: 2 x g6e.xlarge on-demand
    assert records["inference_infra:serving_ttft_budget_seconds"] == "vector(2)"
    assert records["inference_infra:serving_max_num_seqs"] == "vector(16)"
    assert records["inference_infra:pool_price_usd_per_hour"] == "vector(3.722)"
    assert "inference_infra:pool_planned_usd_per_million_tokens" in records
    # its engines' image comes through the stack's Docker Hub mirror, by the engine's digest
    engine = next(
        c
        for c in capture.one("kubernetes:apps/v1:Deployment", f"{POOL}-engine").props["spec"]["template"][
            "spec"
        ]["containers"]
        if c["name"] == "engine"
    )
    assert engine["image"].startswith("123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub/vllm/")
    assert "@sha256:" in engine["image"]
    # and the stack creates that mirror's repository (no node may create one)
    repository = engine["image"].split("/", 1)[1].split("@")[0].split(":")[0]
    assert repository in {r.props["name"] for r in capture.of_type("aws:ecr/repository:Repository")}


def test_every_kubernetes_object_of_the_prod_plan_passes_validation(plan_stack):
    objects = objects_of(plan_stack("prod").capture)
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "HTTPRoute", "PodMonitor", "SecretProviderClass", "PrometheusRule"} <= kinds
    assert [e for o in objects for e in validate(o)] == []


def test_prod_policy_pack_passes_with_the_pool(plan_stack):
    result = plan_stack("prod")
    assert result.policy.evaluated
    assert result.policy.violations == []
    names = {n.policy for n in result.policy.not_applicable}
    assert "k8s-accelerator-requests-equal-limits" not in names  # it now applies (to the pool)


_BASE = """\
config:
  aws:region: us-east-1
  inference-infra:costCenter: ml-platform
  inference-infra:owner: ml@example.com
  inference-infra:modelStore:
    bucketName: acme-models
    publishers: [arn:aws:iam::123456789012:role/model-publisher]
  inference-infra:observability:
    kubeContext: inference-dev
  inference-infra:kubernetesPools:
    - name: chat
      model: {name: llama-3.1-8b, contextTokens: 8192, concurrency: 16}
      spot: 2
      kubeContext: inference-dev
      eksOidcProviderArn: arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABCDEF01
      modelPrefix: llama
      manifestSha256: %s
      apiKeySecret: arn:aws:secretsmanager:us-east-1:123456789012:secret:chat-AbCdEf
""" % ("a" * 64)


def _plan_error(tmp_path: Path, extra: str) -> str:
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {REPO / 'infra'}\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(_BASE + textwrap.indent(textwrap.dedent(extra), "      "))
    with pytest.raises(InputError) as caught:
        plan(tmp_path, "dev")
    return " ".join(str(caught.value).split())


def test_node_groups_without_the_stacks_subnets_are_refused_by_key(tmp_path):
    message = _plan_error(
        tmp_path, "eksNodeGroups: {clusterName: dev, securityGroupIds: [sg-0e1d2c3b4a5f60718]}\n"
    )
    assert "kubernetesPools[0].eksNodeGroups" in message
    assert "awsNetwork.subnets" in message


def test_node_inputs_are_refused_by_their_config_keys(tmp_path):
    message = _plan_error(
        tmp_path,
        "karpenter: {nodeRole: 'bad role', subnetTags: {a: '*'}, securityGroupTags: {k: v}}\n",
    )
    assert "kubernetesPools[0].karpenter.nodeRole" in message
    assert "kubernetesPools[0].karpenter.subnetTags" in message


def test_a_karpenter_alternative_that_cannot_stand_in_is_refused_by_its_config_key(tmp_path):
    message = _plan_error(
        tmp_path,
        "karpenter: {nodeRole: nodes, subnetTags: {a: b}, securityGroupTags: {k: v}, "
        "alternativeInstanceTypes: [inf2.xlarge]}\n",
    )
    assert "kubernetesPools[0].karpenter.alternativeInstanceTypes[0]" in message
    assert "'inf2.xlarge' has 1 x inferentia2; the pick" in message
