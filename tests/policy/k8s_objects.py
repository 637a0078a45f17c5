"""Kubernetes workloads for the policy tests: a hardened vLLM pod, and the kinds that template it."""

from __future__ import annotations

import copy
from typing import Any

DIGEST = "sha256:" + "0123456789abcdef" * 4
IMAGE = f"vllm/vllm-openai@{DIGEST}"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
REPLICA_SET = "kubernetes:apps/v1:ReplicaSet"
JOB = "kubernetes:batch/v1:Job"
CRON_JOB = "kubernetes:batch/v1:CronJob"
POD = "kubernetes:core/v1:Pod"
LWS = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
COST_LABELS = {"CostCenter": "ml-platform", "Environment": "dev", "Owner": "inference"}


def pod_spec(gpus: Any = 1, image: str = IMAGE, **extra: Any) -> dict[str, Any]:
    """A vLLM pod spec as the serving pool renders one: a verifier init container, the engine with
    its GPUs requested and limited, no host namespaces, no privilege."""
    return {
        "initContainers": [
            {
                "name": "verify-weights",
                "image": f"python@{DIGEST}",
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
        ],
        "containers": [
            {
                "name": "vllm",
                "image": image,
                "resources": {"requests": {"nvidia.com/gpu": gpus}, "limits": {"nvidia.com/gpu": gpus}},
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
        ],
        **extra,
    }


def template(spec: dict[str, Any], labels: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "vllm", **COST_LABELS, **(labels or {})}}, "spec": spec}


def deployment(spec: dict[str, Any] | None = None, labels: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "vllm"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "vllm"}},
            "template": template(spec or pod_spec(), labels),
        },
    }


def leader_worker_set(leader: dict[str, Any], worker: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm"},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": 2,
                "leaderTemplate": template(leader),
                "workerTemplate": template(worker),
            },
        },
    }


def cron_job(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "eval"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": template(spec)}}},
    }


def with_container(spec: dict[str, Any], index: int = 0, **changes: Any) -> dict[str, Any]:
    """A copy of a pod spec whose engine container (or init container with index=-1) has `changes`."""
    changed = copy.deepcopy(spec)
    container = changed["initContainers"][0] if index < 0 else changed["containers"][index]
    container.update(changes)
    return changed
