"""A pool whose replica spans GPU hosts: a LeaderWorkerSet, under Pulumi's mock runtime and as manifests.

What was read for it (components/k8s/pool_lws.py says where each piece comes from): LWS v0.10.0's CRD
(vendored, tests/k8s_schemas/SOURCES) and Go types (labels, environment, restart and startup policies);
vLLM 0.28.0's wheel (no Ray; the multiprocessing executor across nodes, its flags in the pinned option
table components/serving/data/vllm-options-nvidia-vllm.json).
"""

from __future__ import annotations

import copy
import subprocess
from dataclasses import replace
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.k8s import pool_lws
from inference_infra.components.k8s.pool_manifests import container_security, pool_objects
from inference_infra.components.k8s.pool_nodes import pool_node_args
from inference_infra.components.k8s.pool_profile import plan_pool
from inference_infra.components.k8s.serving_pool import KubernetesServingPool
from inference_infra.components.serving.engines import EngineFamily
from inference_infra.components.serving.flags import engine_args, option_table
from tests.components.k8s.lws_cases import LWS_EKS, LWS_ELASTIC
from tests.components.k8s.manifests import SCHEMAS, validate
from tests.components.k8s.pool_cases import GKE_TPU
from tests.components.k8s.test_serving_pool_nodes import EKS_NODES, GKE_NODES, KARPENTER

LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
NAME = "big"


@pytest.fixture(scope="module")
def plan():
    found = plan_pool(NAME, LWS_EKS)
    assert found.problems == ()
    return found


@pytest.fixture(scope="module")
def objects(plan):
    return {o["kind"]: o for o in pool_objects(NAME, LWS_EKS, plan, identity="identity-placeholder")}


def _templates(lws):
    group = lws["spec"]["leaderWorkerTemplate"]
    return group["leaderTemplate"], group["workerTemplate"]


def _container(template, name):
    spec = template["spec"]
    return next(c for c in spec["containers"] + spec["initContainers"] if c["name"] == name)


def test_pool_lws_plan_shows_hosts_and_the_engine_flags(plan):
    assert plan.machine == "p5.48xlarge"
    assert plan.hosts_per_replica == 2
    assert plan.engines.tensor_parallel == 8
    assert plan.engines.pipeline_parallel == 2
    flags = engine_args(plan.engines, 0, "/models/model")
    assert flags[flags.index("--tensor-parallel-size") + 1] == "8"
    assert flags[flags.index("--pipeline-parallel-size") + 1] == "2"
    assert any("LeaderWorkerSet group of 2 pods on 2 p5.48xlarge nodes" in n for n in plan.notes)
    assert any("2 replica(s) = 4 nodes" in n for n in plan.notes)


def test_pool_lws_replaces_the_deployment_and_matches_the_pinned_crd(objects):
    assert "Deployment" not in objects
    lws = objects["LeaderWorkerSet"]
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    for manifest in objects.values():
        assert validate(manifest) == [], manifest["kind"]
    broken = copy.deepcopy(lws)
    broken["spec"]["leaderWorkerTemplate"]["unknownField"] = 1
    assert validate(broken) != []


@pytest.mark.parametrize("version", ["1.30.0", "1.37.0"])
def test_pool_lws_pod_templates_match_the_kubernetes_pod_schema(objects, version):
    for template in _templates(objects["LeaderWorkerSet"]):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": template["metadata"], "spec": template["spec"]}
        kubernetes_validate.validate(pod, version, strict=True)


def test_pool_lws_groups_are_the_plans_hosts_recreated_together(objects):
    spec = objects["LeaderWorkerSet"]["spec"]
    assert spec["replicas"] == 2  # the counts are replicas: on_demand=2 groups
    group = spec["leaderWorkerTemplate"]
    assert group["size"] == 2
    assert group["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert spec["startupPolicy"] == "LeaderCreated"  # LeaderReady would wait on a leader that waits
    assert spec["rolloutStrategy"]["rollingUpdateConfiguration"] == {"maxUnavailable": 0, "maxSurge": 1}


def test_pool_lws_every_pod_is_hardened_and_owns_one_hosts_gpus(objects):
    for template in _templates(objects["LeaderWorkerSet"]):
        spec = template["spec"]
        assert spec["hostNetwork"] is False
        assert spec["hostIPC"] is False
        assert spec["automountServiceAccountToken"] is False
        assert spec["priorityClassName"].startswith("inference-")
        # every pod spreads over hosts; groups over zones (test_pool_lws_zone.py)
        assert "kubernetes.io/hostname" in {c["topologyKey"] for c in spec["topologySpreadConstraints"]}
        engine = _container(template, "engine")
        assert engine["securityContext"] == container_security()
        assert engine["resources"]["limits"] == {"nvidia.com/gpu": "8"}
        assert engine["resources"]["requests"]["nvidia.com/gpu"] == "8"
        assert {"name": "dshm", "mountPath": "/dev/shm"} in engine["volumeMounts"]
        dshm = next(v for v in spec["volumes"] if v["name"] == "dshm")
        assert dshm["emptyDir"]["medium"] == "Memory"
        # every host fetches and verifies the whole folder before its engine starts
        assert [c["name"] for c in spec["initContainers"]] == ["fetch-weights", "verify-weights"]
        verify = _container(template, "verify-weights")
        assert verify["command"][verify["command"].index("--expect-sha256") + 1] == "a" * 64
        for container in spec["containers"] + spec["initContainers"]:
            assert container["securityContext"] == container_security()


def test_pool_lws_only_the_leader_has_the_key_the_api_and_the_probes(objects, plan):
    leader, worker = _templates(objects["LeaderWorkerSet"])
    lead = _container(leader, "engine")
    assert [v["name"] for v in leader["spec"]["volumes"] if "csi" in v] == ["api-key"]
    assert lead["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert lead["command"][:3] == ["/bin/sh", "-c", pool_lws.LEADER_SCRIPT]
    assert lead["command"][3:] == ["engine", "vllm", "serve"]
    wait = pool_lws.join_seconds(plan.cold_start)
    assert lead["args"][-10:] == pool_lws.multi_node_args(2, leader=True, timeout_seconds=wait)
    assert lead["args"][-10:] == [
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--master-addr",
        "$(LWS_LEADER_ADDRESS)",
        "--master-port",
        "29501",
        "--distributed-timeout-seconds",
        str(wait),
    ]
    # the startup probe covers the workers' join on top of the engine's own start
    assert lead["startupProbe"]["failureThreshold"] * 10 >= wait + 300
    assert [c["name"] for c in leader["spec"]["containers"]] == ["engine", "metrics"]
    work = _container(worker, "engine")
    assert work["command"] == ["vllm", "serve"]  # no shell, no key
    assert work["args"][:-11] == engine_args(plan.engines, 0, "/models/model")
    assert work["args"][-11:] == [
        "--nnodes",
        "2",
        "--node-rank",
        "$(LWS_WORKER_INDEX)",
        "--master-addr",
        "$(LWS_LEADER_ADDRESS)",
        "--master-port",
        "29501",
        "--distributed-timeout-seconds",
        str(wait),
        "--headless",
    ]
    assert {"ports", "startupProbe", "readinessProbe", "livenessProbe"}.isdisjoint(work)
    assert all(v["name"] != "api-key" for v in worker["spec"]["volumes"])
    assert all(m["name"] != "api-key" for m in work["volumeMounts"])
    assert [c["name"] for c in worker["spec"]["containers"]] == ["engine"]
    assert join_is_at_least_pytorchs_default(wait)


def join_is_at_least_pytorchs_default(wait: int) -> bool:
    return wait >= pool_lws.MIN_JOIN_SECONDS and wait % 60 == 0


def test_pool_lws_multi_node_flags_are_options_of_the_pinned_vllm():
    table = option_table(EngineFamily.NVIDIA_VLLM)
    assert table is not None
    for flag in pool_lws.multi_node_args(2, leader=False, timeout_seconds=600):
        if flag.startswith("--"):
            assert flag in table.options, flag
    assert "--pipeline-parallel-size" in table.options


def test_pool_lws_leader_script_passes_shellcheck(tmp_path):
    script = tmp_path / "leader.sh"
    script.write_text("#!/bin/sh\n" + pool_lws.LEADER_SCRIPT + "\n")
    result = subprocess.run(
        ["shellcheck", "-s", "sh", str(script)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout


def test_pool_lws_leader_script_logs_its_wait_and_never_starts_without_a_key(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "INFERENCE_GROUP_HOSTS": "2", "INFERENCE_GROUP_JOIN_SECONDS": "1500"}
    env["INFERENCE_GROUP_PORT"] = "29501"
    run = subprocess.run(
        ["/bin/sh", "-c", pool_lws.LEADER_SCRIPT, "engine", "/bin/echo", "served"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (
        "leader of a group of 2 hosts; vllm serve waits up to 1500s for its workers at port 29501"
        in run.stderr
    )
    assert run.returncode != 0  # /run/secrets/vllm-api-key is absent here: the engine never starts
    assert "served" not in run.stdout


def test_pool_lws_service_route_and_monitor_select_leaders_only(objects):
    leaders = {"leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert objects["Service"]["spec"]["selector"].items() >= leaders.items()
    assert objects["PodMonitor"]["spec"]["selector"]["matchLabels"].items() >= leaders.items()
    (backend,) = objects["HTTPRoute"]["spec"]["rules"][0]["backendRefs"]
    assert backend["name"] == objects["Service"]["metadata"]["name"]
    # the PDB covers every pod of the pool: at most one pod (so one group) disrupted at a time
    assert objects["PodDisruptionBudget"]["spec"] == {
        "maxUnavailable": 1,
        "selector": {
            "matchLabels": {
                k: v for k, v in objects["Service"]["spec"]["selector"].items() if k not in leaders
            }
        },
    }


def test_pool_lws_network_policy_adds_the_group_ports_and_nothing_else(objects):
    one_host = replace(LWS_EKS, model=replace(LWS_EKS.model, name="llama-3.1-8b"), hosts_per_replica=1)
    single = {o["kind"]: o for o in pool_objects(NAME, one_host, plan_pool(NAME, one_host))}["NetworkPolicy"]
    policy = objects["NetworkPolicy"]["spec"]
    peer = {"podSelector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": f"{NAME}-group"}}}
    ports = [
        {"protocol": "TCP", "port": 29501},
        {"protocol": "TCP", "port": 32768, "endPort": 60999},
    ]
    added_in = [r for r in policy["ingress"] if r not in single["spec"]["ingress"]]
    added_out = [r for r in policy["egress"] if r not in single["spec"]["egress"]]
    assert added_in == [{"from": [peer], "ports": ports}]
    assert added_out == [{"to": [peer], "ports": ports}]
    assert len(policy["ingress"]) == len(single["spec"]["ingress"]) + 1


def test_pool_lws_scaler_targets_the_leaderworkerset_scale_subresource():
    plan = plan_pool(NAME, LWS_ELASTIC)
    assert plan.problems == ()
    objects = {o["kind"]: o for o in pool_objects(NAME, LWS_ELASTIC, plan)}
    scaled = objects["ScaledObject"]["spec"]
    assert scaled["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": f"{NAME}-group",  # the set's own name (pool_lws.set_name)
    }
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (1, 2)  # groups
    assert "replicas" not in objects["LeaderWorkerSet"]["spec"]  # the HPA owns the count
    assert validate(objects["ScaledObject"]) == []
    # the CRD has the scale subresource KEDA's HPA drives (vendored LWS v0.10.0)
    crd = yaml.safe_load((SCHEMAS / "leaderworkerset.x-k8s.io_leaderworkersets.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    assert version["subresources"]["scale"]["specReplicasPath"] == ".spec.replicas"


def test_pool_lws_node_capacity_counts_hosts_times_replicas(plan):
    ((_, eks),) = pool_node_args(NAME, EKS_NODES, plan)
    assert (eks.instance_type, eks.on_demand, eks.spot, eks.reserved) == ("p5.48xlarge", 4, 0, 0)
    ((_, karpenter),) = pool_node_args(NAME, KARPENTER, plan)
    assert karpenter.max_nodes == 4
    elastic = plan_pool(NAME, replace(LWS_ELASTIC, on_demand=2))
    ((_, groups),) = pool_node_args(NAME, EKS_NODES, elastic)
    assert (groups.on_demand, groups.min_nodes) == (4, 2)  # peak 2 groups, floor 1 group: in nodes


def test_serving_pool_registers_a_leaderworkerset_as_the_engine_receives_it(plan_of):
    pool = KubernetesServingPool(NAME, LWS_EKS)
    capture = plan_of()
    assert capture.of_type("kubernetes:apps/v1:Deployment") == []
    lws = capture.one(LWS_TYPE, f"{NAME}-engine").props
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert lws["kind"] == "LeaderWorkerSet"
    leader, worker = _templates(lws)
    fetch = _container(worker, "fetch-weights")
    assert fetch["command"][fetch["command"].index("--source") + 1] == "s3://acme-models/llama-3.1-405b"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == pool.plan.hosts_per_replica == 2
    assert _container(leader, "engine")["args"][
        : len(engine_args(pool.plan.engines, 0, "/models/model"))
    ] == (engine_args(pool.plan.engines, 0, "/models/model"))
    service = capture.one("kubernetes:core/v1:Service").props
    assert service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"


def test_serving_pool_scaler_waits_for_the_leaderworkerset(plan_of):
    KubernetesServingPool(NAME, LWS_ELASTIC)
    capture = plan_of()
    scaler = capture.one("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert scaler.props["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"
    assert capture.one(LWS_TYPE).urn in scaler.dependencies


def test_pool_lws_crd_file_is_the_vendored_one():
    assert (SCHEMAS / "leaderworkerset.x-k8s.io_leaderworkersets.yaml").exists()
    assert "kubernetes-sigs/lws v0.10.0" in (Path(SCHEMAS) / "SOURCES").read_text()
    assert pool_lws.LWS_VERSION == "v0.10.0"


def test_pool_lws_on_gke_gpus_makes_hosts_times_replicas_nodes():
    gke = replace(
        GKE_TPU,
        accelerator=AcceleratorFamily.NVIDIA_GPU,
        model=LWS_EKS.model,
        machine="a3-highgpu-8g",  # 8 x H100 80 GB
        hosts_per_replica=2,
        spot=1,
    )
    plan = plan_pool(NAME, gke)
    assert plan.problems == ()
    assert plan.hosts_per_replica == 2
    ((_, pool),) = pool_node_args(NAME, GKE_NODES, plan)
    assert (pool.machine_type, pool.spot, pool.max_nodes, pool.min_nodes) == ("a3-highgpu-8g", True, 2, 2)
    objects = {o["kind"]: o for o in pool_objects(NAME, gke, plan)}
    assert objects["LeaderWorkerSet"]["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert validate(objects["LeaderWorkerSet"]) == []


def test_pool_lws_on_its_own_fixed_nodes_rolls_one_group_down_at_a_time(plan_of):
    # 2 groups of 2 hosts on a node group capped at 4 nodes: LWS v0.10.0 rolls at replicas + maxSurge
    # groups, and with maxUnavailable 0 its partition moves only once the surge group is ready, which
    # would never be scheduled: one group is taken down and replaced on its own nodes instead.
    KubernetesServingPool(NAME, replace(LWS_EKS, nodes=replace(EKS_NODES, root_volume_gib=894)))
    capture = plan_of()
    (group,) = capture.of_type("aws:eks/nodeGroup:NodeGroup")
    lws = capture.one(LWS_TYPE, f"{NAME}-engine").props["spec"]
    nodes = lws["replicas"] * lws["leaderWorkerTemplate"]["size"]
    assert group.props["scalingConfig"]["maxSize"] == nodes == 4  # no room for a 3rd group
    assert lws["rolloutStrategy"]["rollingUpdateConfiguration"] == {"maxUnavailable": 1, "maxSurge": 0}


def test_pool_lws_set_is_not_named_like_any_service_of_the_pool(objects):
    # LWS v0.10.0 names the set's headless Service after the set (subdomainPolicy Shared) and makes it
    # only when no Service of that name exists (pkg/utils/controller/controller_utils.go): a set named
    # like the pool's ClusterIP Service left LWS_LEADER_ADDRESS (<set>-<group>.<set>.<namespace>,
    # pkg/utils/pod/pod_utils.go) without a DNS record, so no worker ever found its leader.
    lws = objects["LeaderWorkerSet"]
    assert lws["metadata"]["name"] == pool_lws.set_name(NAME) == f"{NAME}-group"
    services = [o["metadata"]["name"] for o in objects.values() if o["kind"] == "Service"]
    assert services == [NAME]
    assert lws["metadata"]["name"] not in services
    assert lws["spec"].get("networkConfig") is None  # Shared: the headless Service is the set's name
    # the set's own label (which LWS sets to the set's name) is what the peers and the affinity select
    peer = pool_lws.group_peer(NAME)["podSelector"]["matchLabels"]
    assert peer == {pool_lws.SET_NAME_LABEL: lws["metadata"]["name"]}
    # the longest pool name: the set's StatefulSets <set>-<group> stay within 52 characters (their
    # controller-revision-hash label, <name>-<10-character hash>, within a label value's 63)
    assert len(pool_lws.set_name("a" * 40)) + len("-999") <= 52
