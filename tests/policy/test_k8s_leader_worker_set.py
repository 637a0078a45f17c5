"""The Kubernetes rules on a LeaderWorkerSet: each judges the leader and the worker template, on a
third-party set (hand-written, one broken template at a time) and on the library's own multi-host pool
(captured from KubernetesServingPool, which every rule passes)."""

from __future__ import annotations

import copy

import pytest

from inference_infra.components.k8s.serving_pool import KubernetesServingPool
from inference_infra.policy.rules import (
    accelerator_images_pinned,
    k8s_accelerator_pods_unprivileged,
    k8s_accelerator_requests_equal_limits,
    required_cost_tags,
)
from inference_infra.policy.rules._base import Outcome
from tests.components.k8s.lws_cases import LWS_EKS
from tests.policy.k8s_objects import LWS, leader_worker_set, pod_spec, with_container

RULES = (
    accelerator_images_pinned,
    k8s_accelerator_pods_unprivileged,
    k8s_accelerator_requests_equal_limits,
    required_cost_tags,
)
TEMPLATES = {"leader": "leaderTemplate", "worker": "workerTemplate"}
COST_CONFIG = {"requiredTags": ["CostCenter", "Environment", "Owner"]}


def _broken(rule, spec):
    """A pod spec that breaks `rule`, and the words its message says."""
    if rule is accelerator_images_pinned:
        return with_container(spec, image="vllm/vllm-openai:v0.28.0"), "vllm/vllm-openai:v0.28.0"
    if rule is k8s_accelerator_pods_unprivileged:
        return with_container(spec, securityContext={"privileged": True}), "privileged"
    if rule is k8s_accelerator_requests_equal_limits:
        resources = {"requests": {"nvidia.com/gpu": 4}, "limits": {"nvidia.com/gpu": 8}}
        return with_container(spec, resources=resources), "nvidia.com/gpu"
    return spec, "cost labels"


@pytest.mark.parametrize("role", sorted(TEMPLATES))
@pytest.mark.parametrize("rule", RULES, ids=[r.NAME for r in RULES])
def test_k8s_rules_reject_a_third_party_leader_worker_set_template(check, rule, role):
    spec, said = _broken(rule, pod_spec(gpus=8))
    sound = pod_spec(gpus=8)
    lws = leader_worker_set(spec if role == "leader" else sound, spec if role == "worker" else sound)
    if rule is required_cost_tags:
        lws["spec"]["leaderWorkerTemplate"][TEMPLATES[role]]["metadata"]["labels"] = {"app": "vllm"}
    config = COST_CONFIG if rule is required_cost_tags else None
    violations = check(rule, LWS, lws, config, name="vllm").violations
    assert len(violations) == 1, violations
    (message,) = violations
    assert message.startswith(f"{LWS} 'vllm' (pod template at spec.leaderWorkerTemplate.{TEMPLATES[role]})")
    assert said in message


@pytest.mark.parametrize("rule", RULES, ids=[r.NAME for r in RULES])
def test_k8s_rules_pass_a_sound_third_party_leader_worker_set(check, rule):
    config = COST_CONFIG if rule is required_cost_tags else None
    lws = leader_worker_set(pod_spec(gpus=8), pod_spec(gpus=8))
    assert check(rule, LWS, copy.deepcopy(lws), config) == Outcome()


def test_k8s_rules_pass_the_librarys_multi_host_pool(plan_of, run_pack, tagged):
    KubernetesServingPool("big", LWS_EKS)
    capture = plan_of()
    assert capture.one(LWS)
    for rule in RULES:
        report = run_pack(capture, rule.NAME)
        assert report.violations == [], rule.NAME
        assert rule.NAME not in {n.policy for n in report.not_applicable}, rule.NAME


def test_k8s_rules_judge_both_templates_of_the_librarys_pool(plan_of, check, tagged):
    KubernetesServingPool("big", LWS_EKS)
    props = copy.deepcopy(plan_of().one(LWS).props)
    worker = props["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    worker["containers"][0]["securityContext"]["privileged"] = True
    (message,) = check(k8s_accelerator_pods_unprivileged, LWS, props, name="big").violations
    assert (
        "(pod template at spec.leaderWorkerTemplate.workerTemplate) runs container 'engine' privileged"
        in (message)
    )
    assert Outcome() == check(k8s_accelerator_requests_equal_limits, LWS, props)
