"""checkov's Kubernetes checks on a pool's objects (every target), but for the choices listed with why.

checkov runs from its own virtualenv (`make tools`), as in test_rendered_objects.py; the test fails,
never skips, when it is missing.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.k8s.pool_manifests import pool_objects
from inference_infra.components.k8s.pool_profile import plan_pool
from tests.components.k8s.pool_cases import EKS, EKS_ELASTIC, GKE_TPU
from tests.components.k8s.test_rendered_objects import run_checkov

CASES = {
    "eks-gpu": EKS_ELASTIC,
    "eks-inferentia": replace(EKS, accelerator=AcceleratorFamily.AWS_NEURON),
    "gke-tpu": GKE_TPU,
}
# checkov checks the pool fails on purpose, each with why. Keyed by (kind, check id).
DELIBERATE = {
    # The engine requests its share of the node's CPU and memory (pool_manifests.engine_requests) but
    # has no CPU or memory limit: a limit below what vLLM takes while loading would kill it mid-load.
    # Its accelerators are requested and limited.
    ("Deployment", "CKV_K8S_11"): "no CPU limit on the engine",
    ("Deployment", "CKV_K8S_13"): "no memory limit on the engine",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_checkov_passes_the_pools_objects_but_for_deliberate_choices(case, tmp_path):
    args = CASES[case]
    objects = json.loads(json.dumps(pool_objects("pool", args, plan_pool("pool", args), identity="x")))
    failed = run_checkov(objects, tmp_path)
    kinds = {(c["resource"].split(".")[0], c["check_id"]) for c in failed}
    unexpected = sorted(
        f"{c['check_id']} {c['resource']}: {c['check_name']}"
        for c in failed
        if (c["resource"].split(".")[0], c["check_id"]) not in DELIBERATE
    )
    assert unexpected == []
    assert kinds == set(DELIBERATE)  # every deliberate exception is still needed


def test_checkov_flags_a_pool_pod_made_privileged(tmp_path):
    objects = pool_objects("pool", EKS, plan_pool("pool", EKS), identity="x")
    deployment = json.loads(json.dumps(next(o for o in objects if o["kind"] == "Deployment")))
    engine = deployment["spec"]["template"]["spec"]["containers"][0]
    engine["securityContext"]["privileged"] = True
    engine["securityContext"]["allowPrivilegeEscalation"] = True
    deployment["spec"]["template"]["spec"]["hostNetwork"] = True
    failed = {c["check_id"] for c in run_checkov([deployment], tmp_path)}
    assert {"CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_19"} <= failed  # privileged, escalation, host network
