"""The Kubernetes rules on a program this library did not write, planned as a user runs `plan`.

A third-party Pulumi program (pulumi-kubernetes and pulumi-aws, none of this library's components)
deploys a vLLM Deployment, a LeaderWorkerSet (a CustomResource), a Karpenter NodePool and an EKS
node group the careless way; `inference-infra plan --cwd` must report each Kubernetes rule on the
object that breaks it, and exit 1.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT

PROGRAM = """
import pulumi_aws as aws
import pulumi_kubernetes as k8s

POD = {
    "host_ipc": True,
    "init_containers": [{"name": "fetch", "image": "amazon/aws-cli:2.22.0"}],
    "containers": [{
        "name": "vllm",
        "image": "vllm/vllm-openai@sha256:" + "a" * 63,
        "security_context": {"privileged": True},
        "resources": {"requests": {"nvidia.com/gpu": "1"}},
    }],
}
k8s.apps.v1.Deployment(
    "vllm",
    spec={
        "selector": {"match_labels": {"app": "vllm"}},
        "template": {"metadata": {"labels": {"app": "vllm"}}, "spec": POD},
    },
)
worker = {"metadata": {"labels": {"CostCenter": "ml", "Environment": "dev", "Owner": "me"}}, "spec": {
    "containers": [{
        "name": "w",
        "image": "vllm/vllm-openai@sha256:" + "b" * 64,
        "resources": {"limits": {"nvidia.com/gpu": 8}},
        "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}},
    }],
}}
k8s.apiextensions.CustomResource(
    "lws",
    api_version="leaderworkerset.x-k8s.io/v1",
    kind="LeaderWorkerSet",
    spec={"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": worker}},
)
k8s.apiextensions.CustomResource(
    "gpu-pool",
    api_version="karpenter.sh/v1",
    kind="NodePool",
    spec={
        "replicas": 2,
        "template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
            "requirements": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6e.xlarge"]},
            ],
        }},
    },
)
"""
DEPLOYMENT = "kubernetes:apps/v1:Deployment 'vllm'"
LWS = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet 'lws'"


def test_k8s_rules_reject_a_third_party_program_planned_offline(pulumi_project):
    project = pulumi_project(PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "inference_infra.components.cli",
            "plan",
            "--stack",
            "dev",
            "--json",
            "--cwd",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert run.returncode == 1, run.stderr
    found: dict[str, list[str]] = {}
    for v in json.loads(run.stdout)["policy"]["violations"]:
        found.setdefault(v["policy"], []).append(v["message"])
    assert sorted(m.split(" (")[0] for m in found["k8s-accelerator-pods-unprivileged"]) == [
        f"{DEPLOYMENT} runs container 'vllm' privileged",
        f"{DEPLOYMENT} shares the node's IPC namespace",
        LWS,
    ]
    assert "adds SYS_ADMIN to container 'w'" in " ".join(found["k8s-accelerator-pods-unprivileged"])
    assert [m.split(" on container")[0] for m in found["k8s-accelerator-requests-equal-limits"]] == [
        f"{DEPLOYMENT} requests nvidia.com/gpu: '1'"
    ]
    pinned = found["accelerator-images-pinned"]
    assert [m.split(" (")[0] for m in pinned] == [
        f"{DEPLOYMENT} runs the container image 'amazon/aws-cli:2.22.0' in container 'fetch'",
        f"{DEPLOYMENT} runs the container image 'vllm/vllm-openai@sha256:{'a' * 63}' in container 'vllm'",
    ]
    [tags] = found["required-cost-tags"]
    assert tags.startswith(f"{DEPLOYMENT} runs accelerator pods without the cost labels cost-center")
    [capacity] = found["nonprod-accelerators-spot-or-autoshutdown"]
    assert capacity.startswith(
        "kubernetes:karpenter.sh/v1:NodePool 'gpu-pool' may launch g6e.xlarge on on-demand"
    )
    assert "keeps 2 static nodes (spec.replicas)" in capacity
