"""A LeaderWorkerSet group on GKE: its pods reach one another without `endPort`.

GKE Dataplane V2 is Cilium, which before 1.16 dropped a NetworkPolicy port's `endPort` (enforcing
`port` alone) and in 1.15 refused such a policy; GKE does not say which Cilium a cluster carries
(components/k8s/pool_lws.py, GKE_GROUP_PORTS, for the sources read 2026-12-02). The range would block a
group's NCCL and vLLM connections there, so on GKE the group's rule opens every TCP port, between the
pool's own set only; EKS keeps the rendezvous port and the ephemeral range.
"""

from __future__ import annotations

from dataclasses import replace

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.k8s.pool_manifests import pool_objects
from inference_infra.components.k8s.pool_profile import plan_pool
from tests.components.k8s.lws_cases import LWS_EKS
from tests.components.k8s.manifests import validate
from tests.components.k8s.pool_cases import GKE_TPU

NAME = "big"
PEER = {"podSelector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": f"{NAME}-group"}}}

GKE_GROUP = replace(
    GKE_TPU,
    accelerator=AcceleratorFamily.NVIDIA_GPU,
    model=LWS_EKS.model,
    machine="a3-highgpu-8g",
    hosts_per_replica=2,
    spot=1,
)


def _policy(args):
    plan = plan_pool(NAME, args)
    assert plan.problems == ()
    assert plan.hosts_per_replica == 2
    return {o["kind"]: o for o in pool_objects(NAME, args, plan)}["NetworkPolicy"]


def _group_rules(policy):
    spec = policy["spec"]
    ingress = [r for r in spec["ingress"] if r.get("from") == [PEER]]
    egress = [r for r in spec["egress"] if r.get("to") == [PEER]]
    return ingress, egress


def test_pool_lws_gke_group_rule_has_no_end_port_and_opens_tcp_between_the_set_only():
    policy = _policy(GKE_GROUP)
    ingress, egress = _group_rules(policy)
    assert ingress == [{"from": [PEER], "ports": [{"protocol": "TCP"}]}]
    assert egress == [{"to": [PEER], "ports": [{"protocol": "TCP"}]}]
    assert "endPort" not in str(policy)
    assert validate(policy) == []  # a port left out is valid: every port of the protocol


def test_pool_lws_eks_group_rule_keeps_the_rendezvous_and_the_ephemeral_range():
    ingress, egress = _group_rules(_policy(LWS_EKS))
    ports = [{"protocol": "TCP", "port": 29501}, {"protocol": "TCP", "port": 32768, "endPort": 60999}]
    assert ingress == [{"from": [PEER], "ports": ports}]
    assert egress == [{"to": [PEER], "ports": ports}]


def test_pool_lws_gke_group_rule_opens_nothing_to_other_peers():
    """Every other rule of the GKE policy is the one-host pool's: the group rule is the only addition."""
    one_host = replace(GKE_GROUP, model=replace(GKE_GROUP.model, name="llama-3.1-8b"), hosts_per_replica=1)
    plan = plan_pool(NAME, one_host)
    assert plan.problems == ()
    single = {o["kind"]: o for o in pool_objects(NAME, one_host, plan)}["NetworkPolicy"]["spec"]
    spec = _policy(GKE_GROUP)["spec"]
    assert [r for r in spec["ingress"] if r not in single["ingress"]] == [
        {"from": [PEER], "ports": [{"protocol": "TCP"}]}
    ]
    assert [r for r in spec["egress"] if r not in single["egress"]] == [
        {"to": [PEER], "ports": [{"protocol": "TCP"}]}
    ]
