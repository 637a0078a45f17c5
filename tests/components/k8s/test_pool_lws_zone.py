"""A LeaderWorkerSet group keeps to one zone: its pods prefer their own group's zone (matchLabelKeys on
LWS's group key), the pool's zone spread counts leaders only (it spreads groups, never a worker away from
its leader), and one-host pools keep their plain spread."""

from __future__ import annotations

import kubernetes_validate
import pytest

from inference_infra.components.k8s import pool_lws
from inference_infra.components.k8s.pool_manifests import pool_objects, selector_labels
from inference_infra.components.k8s.pool_profile import plan_pool
from tests.components.k8s.lws_cases import LWS_EKS
from tests.components.k8s.pool_cases import GKE_TPU

NAME = "big"
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def templates():
    plan = plan_pool(NAME, LWS_EKS)
    assert plan.problems == ()
    (lws,) = [o for o in pool_objects(NAME, LWS_EKS, plan, identity="x") if o["kind"] == "LeaderWorkerSet"]
    group = lws["spec"]["leaderWorkerTemplate"]
    return {"leader": group["leaderTemplate"]["spec"], "worker": group["workerTemplate"]["spec"]}


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_pool_lws_pods_prefer_their_own_groups_zone(templates, role):
    terms = templates[role]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [
        {
            "weight": 100,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": f"{NAME}-group"}},
                "matchLabelKeys": ["leaderworkerset.sigs.k8s.io/group-key"],
                "topologyKey": ZONE,
            },
        }
    ]
    # preferred only: a required term would leave a worker pending where a node group cannot grow a zone
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in templates[role]["affinity"]["podAffinity"]


def test_pool_lws_zone_spread_counts_leaders_and_workers_spread_over_hosts_only(templates):
    leader = {c["topologyKey"]: c for c in templates["leader"]["topologySpreadConstraints"]}
    worker = {c["topologyKey"]: c for c in templates["worker"]["topologySpreadConstraints"]}
    assert leader[ZONE]["labelSelector"] == {
        "matchLabels": {**selector_labels(NAME), "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    }
    assert leader[ZONE]["whenUnsatisfiable"] == "ScheduleAnyway"
    assert set(worker) == {HOST}
    for spec in (leader, worker):
        assert spec[HOST]["labelSelector"] == {"matchLabels": selector_labels(NAME)}


@pytest.mark.parametrize("version", ["1.31.0", "1.37.0"])
def test_pool_lws_affinity_matches_the_pod_schema(templates, version):
    for spec in templates.values():
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
        kubernetes_validate.validate(pod, version, strict=True)


def test_pool_lws_group_key_is_lws_v0_10_0s_label():
    # api/leaderworkerset/v1/leaderworkerset_types.go at v0.10.0: GroupUniqueHashLabelKey
    assert pool_lws.GROUP_KEY_LABEL == "leaderworkerset.sigs.k8s.io/group-key"
    assert pool_lws.LWS_VERSION == "v0.10.0"


def test_one_host_pools_keep_their_plain_spread_and_no_affinity():
    plan = plan_pool("tpu", GKE_TPU)
    (deployment,) = [o for o in pool_objects("tpu", GKE_TPU, plan, identity="x") if o["kind"] == "Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    assert "affinity" not in spec
    assert {c["topologyKey"] for c in spec["topologySpreadConstraints"]} == {ZONE, HOST}
    assert all(
        c["labelSelector"] == {"matchLabels": selector_labels("tpu")}
        for c in spec["topologySpreadConstraints"]
    )
