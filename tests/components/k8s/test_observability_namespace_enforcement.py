"""GpuObservability's Prometheus enforces the `namespace` label (issue #34): a monitor in another
namespace cannot feed a serving pool's KEDA query.

What the operator does with the settings is read in prometheus-operator v0.93.0 (the newest release in
the snapshot read 2026-12-02; the stack pins kube-prometheus-stack 91.4.1, whose operator is v0.94.0,
and the chart snapshot holds 88.5.3, whose values.yaml and templates/prometheus/prometheus.yaml pass
`prometheusSpec.enforcedNamespaceLabel` and `excludedFromEnforcement` through unchanged):

- pkg/namespacelabeler/labeler.go `GetRelabelingConfigs`: unless the monitor is excluded, one rule
  `{targetLabel: <enforced label>, replacement: <the monitor's namespace>}` is appended, last, to the
  monitor's relabelings; pkg/prometheus/promcfg.go applies the same call to its metricRelabelings, for
  ServiceMonitors, PodMonitors, Probes and ScrapeConfigs alike;
- `IsExcluded`: an exclusion matches on namespace and kind, and an empty name matches every object of
  that kind in that namespace (`ObjectReference.name`: "When not set, all resources in the namespace are
  matched", pkg/apis/monitoring/v1/types.go);
- `EnforceNamespaceLabel`: a PrometheusRule not excluded gets `namespace="<its namespace>"` on every
  selector of its expressions and as a label of every rule.

Prometheus applies relabel_configs to a target's labels, merges the scraped sample labels into them
(honor_labels: the scraped label wins; otherwise the scraped one is renamed `exported_<name>`), then
applies metric_relabel_configs to each sample (scrape/scrape.go `mutateSampleLabels`). The model below
does the same for the `replace` action, the only one the monitors here use.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from inference_infra.components.k8s.gpu_observability import GpuObservability
from inference_infra.components.k8s.observability_args import GpuObservabilityArgs
from inference_infra.components.k8s.observability_values import (
    ENFORCED_NAMESPACE_LABEL,
    kube_prometheus_stack_values,
)
from inference_infra.components.k8s.pool_manifests import ENGINE_JOB, load_query, pod_monitor
from inference_infra.components.k8s.pool_profile import plan_pool
from tests.components.k8s.pool_cases import EKS, EKS_ELASTIC

RELEASE = "kubernetes:helm.sh/v3:Release"
# The operator's ObjectReference.resource enum (pkg/apis/monitoring/v1/types.go at v0.93.0).
RESOURCES = {"prometheusrules", "servicemonitors", "podmonitors", "probes", "scrapeconfigs"}
KIND = {"servicemonitors": "ServiceMonitor", "podmonitors": "PodMonitor", "prometheusrules": "PrometheusRule"}


def _spec(args: GpuObservabilityArgs) -> dict[str, Any]:
    values = kube_prometheus_stack_values(
        args, release="gpu-obs-kps", grafana_secret="g", alertmanager_secret=None
    )
    return values["prometheus"]["prometheusSpec"]


def _excluded(spec: dict[str, Any], kind: str, namespace: str, name: str) -> bool:
    """labeler.go IsExcluded: namespace and kind match, and the name is empty or equal."""
    if not spec.get("enforcedNamespaceLabel"):
        return True
    return any(
        KIND.get(ref["resource"]) == kind
        and ref.get("group", "monitoring.coreos.com") == "monitoring.coreos.com"
        and ref["namespace"] == namespace
        and ref.get("name", "") in ("", name)
        for ref in spec.get("excludedFromEnforcement", [])
    )


def _with_enforcement(spec, kind, namespace, name, rules):
    """labeler.go GetRelabelingConfigs: the enforcement rule appended last unless excluded."""
    if _excluded(spec, kind, namespace, name):
        return list(rules)
    return [*rules, {"targetLabel": spec["enforcedNamespaceLabel"], "replacement": namespace}]


def _relabel(labels: dict[str, str], rules: list[dict[str, Any]]) -> dict[str, str]:
    """Prometheus's `replace` action: source values joined by `;`, a fully anchored regex ((.*) by
    default), the target set to the expanded replacement ($1 by default), removed if that is empty."""
    out = dict(labels)
    for rule in rules:
        assert rule.get("action", "replace") == "replace", rule  # the model knows no other action
        value = rule.get("separator", ";").join(out.get(s, "") for s in rule.get("sourceLabels", []))
        match = re.fullmatch(rule.get("regex", "(.*)"), value)
        if match is None:
            continue
        result = match.expand(rule.get("replacement", "$1").replace("$", "\\"))
        if result:
            out[rule["targetLabel"]] = result
        else:
            out.pop(rule["targetLabel"], None)
    return out


def _sample(spec, *, kind, monitor_ns, monitor_name, target, scraped, relabelings, metric_relabelings, honor):
    """A scraped sample's final labels, as Prometheus stores them under the operator's config."""
    target_labels = _relabel(target, _with_enforcement(spec, kind, monitor_ns, monitor_name, relabelings))
    target_labels = {k: v for k, v in target_labels.items() if not k.startswith("__")}
    merged = dict(scraped)
    for key, value in target_labels.items():
        if honor and key in merged:
            continue
        if key in merged:
            merged["exported_" + key] = merged.pop(key)
        merged[key] = value
    return _relabel(merged, _with_enforcement(spec, kind, monitor_ns, monitor_name, metric_relabelings))


def _query_matchers(query: str) -> dict[str, dict[str, str]]:
    """Each selector of the KEDA query: metric name -> its equality matchers."""
    selectors = re.findall(r"(vllm:\w+)\{([^}]*)\}", query)
    assert selectors, query
    return {metric: dict(re.findall(r'(\w+)="([^"]*)"', body)) for metric, body in selectors}


def _matches(labels: dict[str, str], metric: str, matchers: dict[str, str]) -> bool:
    return labels.get("__name__") == metric and all(labels.get(k) == v for k, v in matchers.items())


def test_prometheus_enforces_the_namespace_label_and_excludes_only_the_stacks_own_namespaces(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    values = capture.one(RELEASE, "gpu-obs-kube-prometheus-stack").props["values"]
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["enforcedNamespaceLabel"] == "namespace"
    refs = spec["excludedFromEnforcement"]
    assert {(r["namespace"], r["resource"]) for r in refs} == {
        (ns, resource)
        for ns in ("monitoring", "monitoring-exporters")
        for resource in ("servicemonitors", "podmonitors", "prometheusrules")
    }
    for ref in refs:  # valid ObjectReferences: the enum, a namespace, the only group allowed
        assert ref["resource"] in RESOURCES
        assert ref["group"] == "monitoring.coreos.com"
        assert ref["namespace"]
        assert "name" not in ref  # every such object of the stack's namespaces
    # honor_labels stays per monitor: dcgm-exporter's (and kube-state-metrics') keep the namespace of the
    # workload they describe; the operator's overrideHonorLabels would rename it exported_namespace.
    assert "overrideHonorLabels" not in spec
    assert spec["podMonitorNamespaceSelector"] == {}  # every namespace's monitors still selected


def test_exclusions_follow_the_namespaces_given():
    spec = _spec(GpuObservabilityArgs(namespace="obs", exporters_namespace="obs-host"))
    assert {r["namespace"] for r in spec["excludedFromEnforcement"]} == {"obs", "obs-host"}
    assert not _excluded(spec, "PodMonitor", "monitoring", "x")


@pytest.mark.parametrize("honor", [True, False])
@pytest.mark.parametrize("kind", ["PodMonitor", "ServiceMonitor"])
def test_a_monitor_in_another_namespace_cannot_feed_the_pools_keda_query(honor, kind):
    spec = _spec(GpuObservabilityArgs())
    matchers = _query_matchers(load_query("llama", EKS_ELASTIC))
    pool_ns = EKS_ELASTIC.cluster.namespace
    forged = {"job": ENGINE_JOB, "namespace": pool_ns, "pool": "llama"}
    relabel_to_pool = [{"targetLabel": k, "replacement": v, "action": "replace"} for k, v in forged.items()]
    for metric, wanted in matchers.items():
        assert wanted["namespace"] == pool_ns  # the query pins the pool's namespace
        for attacker_ns in ("team-b", "default", "kube-system"):
            sample = _sample(
                spec,
                kind=kind,
                monitor_ns=attacker_ns,
                monitor_name="inflate",
                # The operator's own first relabelings give the target's namespace; the attacker's
                # relabelings and metric relabelings rewrite every label the query matches on, and the
                # exporter itself exposes the pool's labels too.
                target={"namespace": attacker_ns, "job": f"{attacker_ns}/inflate"},
                scraped={"__name__": metric, **forged},
                relabelings=relabel_to_pool,
                metric_relabelings=relabel_to_pool,
                honor=honor,
            )
            assert sample["namespace"] == attacker_ns
            assert not _matches(sample, metric, wanted)
            # Without enforcement the same monitor would have fed the pool's query: the model is live.
            bare = _sample(
                {},
                kind=kind,
                monitor_ns=attacker_ns,
                monitor_name="inflate",
                target={"namespace": attacker_ns, "job": f"{attacker_ns}/inflate"},
                scraped={"__name__": metric, **forged},
                relabelings=relabel_to_pool,
                metric_relabelings=relabel_to_pool,
                honor=honor,
            )
            assert _matches(bare, metric, wanted)


def test_the_pools_own_pod_monitor_still_feeds_its_keda_query():
    spec = _spec(GpuObservabilityArgs())
    plan = plan_pool("llama", EKS_ELASTIC)
    monitor = pod_monitor("llama", EKS_ELASTIC, plan)
    ns, monitor_name = monitor["metadata"]["namespace"], monitor["metadata"]["name"]
    assert ns == EKS_ELASTIC.cluster.namespace
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [ns]}  # it scrapes only its own namespace
    assert not _excluded(spec, "PodMonitor", ns, monitor_name)  # enforced too, to its own namespace
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    target = {
        "namespace": ns,
        "job": f"{ns}/{monitor_name}",
        "__meta_kubernetes_pod_name": "llama-0",
        "__meta_kubernetes_pod_label_inference_infra_dev_pool": "llama",
    }
    for metric, wanted in _query_matchers(load_query("llama", EKS_ELASTIC)).items():
        sample = _sample(
            spec,
            kind="PodMonitor",
            monitor_ns=ns,
            monitor_name=monitor_name,
            target=target,
            scraped={"__name__": metric, "model_name": "llama-3.1-8b"},
            relabelings=endpoint["relabelings"],
            metric_relabelings=endpoint.get("metricRelabelings", []),
            honor=bool(endpoint.get("honorLabels")),
        )
        assert _matches(sample, metric, wanted), sample


def test_the_librarys_rules_and_exporters_are_left_as_they_are():
    spec = _spec(GpuObservabilityArgs())
    # The GPU, serving and $/Mtok rules and neuron-monitor's PodMonitor live in the stack's namespace.
    assert _excluded(spec, "PrometheusRule", "monitoring", "gpu-obs-gpu-rules")
    assert _excluded(spec, "PodMonitor", "monitoring", "gpu-obs-neuron-monitor")
    # dcgm-exporter's ServiceMonitor in the exporters' namespace keeps each GPU's workload namespace.
    dcgm_ns = "monitoring-exporters"
    sample = _sample(
        spec,
        kind="ServiceMonitor",
        monitor_ns=dcgm_ns,
        monitor_name="gpu-obs-dcgm-exporter",
        target={"namespace": dcgm_ns, "job": "dcgm"},
        scraped={"__name__": "DCGM_FI_DEV_GPU_UTIL", "namespace": "inference", "pod": "llama-0"},
        relabelings=[],
        metric_relabelings=[],
        honor=True,
    )
    assert sample["namespace"] == "inference"
    # A user's rule in its namespace is enforced; the serving pool's namespace is not excluded.
    assert not _excluded(spec, "PrometheusRule", EKS.cluster.namespace, "mine")
    assert ENFORCED_NAMESPACE_LABEL == "namespace"
