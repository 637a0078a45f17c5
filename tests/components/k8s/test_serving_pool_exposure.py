"""What reaches a Kubernetes pool, what scales it and what scrapes it, checked against the VM pools' rules.

- the HTTPRoute forwards what the VM load balancers forward and nothing else: every hostile path of
  tests/components/endpoints (`HOSTILE_PATHS`) is answered by the gateway or lands on a path the
  engine's key guards, every API path reaches the pool; matching as the Gateway API spec defines it
  (kubernetes-sigs/gateway-api apis/v1/httproute_types.go, read 2026-12-02: PathPrefix by '/'-separated
  elements with a trailing '/' ignored, case-sensitive; an Exact match outranks any prefix; a rule
  without backendRefs forwards nothing);
- the KEDA ScaledObject reads the engines' running + waiting requests at ScalingPlan's target per pod;
- the PodMonitor gives the series the labels the VM scrape jobs give (monitoring/scrape.py), so the
  serving alerts and the $/Mtok rules select them unchanged.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from inference_infra.components.k8s.pool_manifests import relabelings
from inference_infra.components.k8s.serving_pool import KubernetesServingPool
from inference_infra.components.k8s.serving_pool_args import CanaryBackend
from inference_infra.components.monitoring import scrape
from inference_infra.components.monitoring.serving import (
    VLLM_METRIC_TABLES,
    Latency,
    ServingSettings,
    serving_rule_group,
)
from inference_infra.components.monitoring.serving_cost import PoolCost, serving_cost_rules
from tests.components.endpoints.lb_routing import API_PATHS, HOSTILE_PATHS, engine_guards
from tests.components.k8s.pool_cases import EKS, EKS_ELASTIC, GKE_TPU

ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"


def _prefix_matches(prefix: str, path: str) -> bool:
    """Gateway API PathPrefix: element-wise, a trailing '/' ignored (/abc matches /abc, /abc/, /abc/def)."""
    bare = prefix.rstrip("/")
    return path == bare or path.startswith(bare + "/") if bare else path.startswith("/")


def gateway_forwards(spec: dict, path: str) -> bool:
    """Whether a request for `path` reaches a backend of the route (else the gateway answers it)."""
    best: tuple[tuple[int, int], dict] | None = None
    for rule in spec["rules"]:
        for match in rule["matches"]:
            kind, value = match["path"]["type"], match["path"]["value"]
            if kind == "Exact" and path == value:
                score = (2, len(value))
            elif kind == "PathPrefix" and _prefix_matches(value, path):
                score = (1, len(value.rstrip("/")))
            else:
                continue
            if best is None or score > best[0]:
                best = (score, rule)
    return best is not None and bool(best[1].get("backendRefs"))


@pytest.fixture
def route(plan_of):
    KubernetesServingPool("llama", EKS)
    return plan_of().one(ROUTE).props["spec"]


def test_route_matching_model_follows_the_spec_examples():
    spec = {"rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/abc"}}], "backendRefs": [{}]}]}
    assert [gateway_forwards(spec, p) for p in ("/abc", "/abc/", "/abc/def", "/abcd", "/ABC")] == [
        True,
        True,
        True,
        False,
        False,
    ]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_route_never_forwards_a_path_the_key_does_not_guard(route, path):
    assert not gateway_forwards(route, path) or engine_guards(path)


def test_route_answers_the_bare_prefix_itself(route):
    assert not gateway_forwards(route, "/v1")  # as the VM load balancers do


@pytest.mark.parametrize("path", API_PATHS)
def test_route_forwards_the_api(route, path):
    assert gateway_forwards(route, path)


def test_route_weights_canaries_between_pools(plan_of):
    canaries = (CanaryBackend(service="llama-next", weight=5),)
    KubernetesServingPool("llama", replace(EKS, route_weight=95, canaries=canaries))
    spec = plan_of().one(ROUTE).props["spec"]
    assert spec["parentRefs"] == [{"name": "inference", "namespace": "gateway"}]
    assert spec["rules"][0]["backendRefs"] == [
        {"name": "llama", "port": 8000, "weight": 95},
        {"name": "llama-next", "port": 8000, "weight": 5},
    ]


def test_scaled_object_tracks_the_engines_load_at_the_plans_target(plan_of):
    pool = KubernetesServingPool("llama", EKS_ELASTIC)
    capture = plan_of()
    spec = capture.one("kubernetes:keda.sh/v1alpha1:ScaledObject").props["spec"]
    scaling, pods = pool.plan.scaling, pool.plan.engines.engines
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama"}
    prometheus, cron = spec["triggers"]
    assert prometheus["type"] == "prometheus"
    assert prometheus["metricType"] == "AverageValue"
    assert float(prometheus["metadata"]["threshold"]) == pytest.approx(
        scaling.target_in_flight / pods, abs=0.01
    )
    assert prometheus["metadata"]["serverAddress"] == "http://gpu-obs-kps-prometheus.monitoring.svc:9090"
    query = prometheus["metadata"]["query"]
    names = set(re.findall(r"(vllm:\w+)\{", query))
    assert names == {"vllm:num_requests_running", "vllm:num_requests_waiting"}
    exported = {m.name for m in VLLM_METRIC_TABLES["0.28.0"]}  # the NVIDIA engine pin
    assert names <= exported
    assert 'pool="llama"' in query
    # dev pool with working hours: zero replicas outside them, the plan's minimum inside
    assert spec["minReplicaCount"] == 0
    assert cron["metadata"]["desiredReplicas"] == str(scaling.min_size * pods)
    assert cron["metadata"]["timezone"] == "Europe/Berlin"
    assert spec["maxReplicaCount"] == scaling.max_size * pods
    assert spec["cooldownPeriod"] == scaling.scale_in_cooldown_seconds
    down = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    assert down["stabilizationWindowSeconds"] == scaling.scale_in_cooldown_seconds
    # the Deployment leaves the count to KEDA's HPA
    assert "replicas" not in capture.one("kubernetes:apps/v1:Deployment").props["spec"]


def test_scaled_object_keeps_a_production_floor(plan_of):
    elastic = replace(EKS_ELASTIC.elastic, schedule=None, min_size=1)
    KubernetesServingPool("llama", replace(EKS_ELASTIC, elastic=elastic, environment="prod"))
    spec = plan_of().one("kubernetes:keda.sh/v1alpha1:ScaledObject").props["spec"]
    assert spec["minReplicaCount"] >= 1
    assert [t["type"] for t in spec["triggers"]] == ["prometheus"]


def _targets(rules: list[dict]) -> dict[str, str | None]:
    """target label -> fixed value (None: copied from a source label)."""
    found: dict[str, str | None] = {}
    for rule in rules:
        target = rule.get("targetLabel", rule.get("target_label"))
        fixed = rule.get("replacement") if not rule.get("sourceLabels", rule.get("source_labels")) else None
        found[target] = fixed
    return found


def test_pod_monitor_gives_the_vm_engine_targets_labels():
    vm = _targets(
        scrape._aws_job("vllm", [8000], ["g5"], scrape.AwsDiscovery(regions=["us-east-1"]))["relabel_configs"]
    )
    pod = _targets(relabelings("llama", EKS))
    assert pod["job"] == "vllm"
    assert pod["cloud"] == "aws"
    # every label a VM engine target carries but the EC2 instance id, which a pod has not
    assert set(vm) - {"instance_id"} <= set(pod)


def _selectors(expr: str) -> set[tuple[str, str]]:
    return set(re.findall(r'(\w+)="([^"]*)"', " ".join(re.findall(r"\{([^}]*)\}", expr))))


def _grouping(expr: str) -> set[str]:
    labels = set()
    for group in re.findall(r"\b(?:by|on)\s*\(([^)]*)\)", expr):
        labels |= {label.strip() for label in group.split(",") if label.strip()}
    return labels


@pytest.mark.parametrize("args", [EKS, GKE_TPU], ids=["eks", "gke-tpu"])
def test_serving_alerts_and_cost_rules_select_the_pools_series(plan_of, args):
    KubernetesServingPool("pool", args)
    monitor = plan_of().one("kubernetes:monitoring.coreos.com/v1:PodMonitor").props
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    produced = _targets(endpoint["relabelings"])
    settings = ServingSettings(pools={"pool": Latency.INTERACTIVE}, max_num_seqs={"pool": 8})
    rules = serving_rule_group(settings, "https://runbook.example/")["rules"]
    rules += serving_cost_rules([PoolCost(pool="pool", usd_per_hour=2.0)])
    engine_exprs = [r["expr"] for r in rules if "vllm:" in r["expr"] or 'job="vllm"' in r["expr"]]
    grouped = set().union(*(_grouping(e) for e in engine_exprs))
    assert {"pool", "node"} <= grouped  # the rules do join engine series on these
    for expr in engine_exprs:
        for label, value in _selectors(expr):
            if label == "job" and value == "vllm":
                assert produced["job"] == "vllm"
        # what the rules group and join engine series on: produced for every pod (le is the histogram's)
        assert _grouping(expr) - {"le"} <= set(produced), expr
    assert monitor["metadata"]["labels"]["release"] == "gpu-obs-kps"
    assert endpoint["port"] == "metrics"


def test_scaled_object_working_hours_until_midnight_end_the_same_day(plan_of):
    schedule = replace(EKS_ELASTIC.elastic.schedule, end_hour=24)
    elastic = replace(EKS_ELASTIC.elastic, schedule=schedule)
    KubernetesServingPool("llama", replace(EKS_ELASTIC, elastic=elastic))
    spec = plan_of().one("kubernetes:keda.sh/v1alpha1:ScaledObject").props["spec"]
    cron = spec["triggers"][1]["metadata"]
    assert (cron["start"], cron["end"]) == ("0 8 * * MON-FRI", "59 23 * * MON-FRI")
