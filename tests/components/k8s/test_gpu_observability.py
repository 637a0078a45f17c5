from __future__ import annotations

import json

import pulumi
import pytest
import yaml

from inference_infra.components.catalog import AcceleratorFamily, instance_types
from inference_infra.components.errors import InputError
from inference_infra.components.k8s.charts import DCGM_EXPORTER, KUBE_PROMETHEUS_STACK
from inference_infra.components.k8s.gpu_observability import (
    AlertReceiver,
    GpuObservability,
    GpuObservabilityArgs,
    validate_gpu_observability,
)
from inference_infra.components.monitoring.alertmanager import ReceiverKind
from inference_infra.components.monitoring.rules import render_rules_yaml
from inference_infra.components.monitoring.thresholds import Thresholds
from inference_infra.components.offline_plan.model import is_secret

RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
COMPONENT = "inference-infra:k8s:GpuObservability"
# A test input in the shape the component requires (not a real image: no public digest of AWS's
# neuron-monitor is recorded, see components/k8s/images.py).
NEURON_IMAGE = "registry.example.com/neuron/neuron-monitor:1.3.0@sha256:" + "a" * 64
WITH_NEURON = {"neuron_monitor": True, "neuron_monitor_image": NEURON_IMAGE}

RECEIVERS = (
    AlertReceiver(name="oncall", kind=ReceiverKind.PAGERDUTY, secret="pd-key-123", severities=("critical",)),
    AlertReceiver(
        name="ml-slack", kind=ReceiverKind.SLACK, secret="https://hooks.slack.com/services/x", channel="#ml"
    ),
)


def _kps(capture):
    return capture.one(RELEASE, "gpu-obs-kube-prometheus-stack")


def _dcgm(capture):
    return capture.one(RELEASE, "gpu-obs-dcgm-exporter")


def test_gpu_observability_pins_both_charts_to_exact_versions(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    kps, dcgm = _kps(capture).props, _dcgm(capture).props
    assert (kps["chart"], kps["version"]) == ("kube-prometheus-stack", KUBE_PROMETHEUS_STACK.version)
    assert kps["repositoryOpts"]["repo"] == "https://prometheus-community.github.io/helm-charts"
    assert (dcgm["chart"], dcgm["version"]) == ("dcgm-exporter", DCGM_EXPORTER.version)
    assert dcgm["repositoryOpts"]["repo"] == "https://nvidia.github.io/dcgm-exporter/helm-charts"
    for release in (kps, dcgm):
        assert release["atomic"] is True
    assert kps["namespace"] == "monitoring"
    assert dcgm["namespace"] == "monitoring-exporters"  # host access: the privileged namespace


def test_gpu_observability_prometheus_selects_the_dcgm_service_monitor(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    spec = _kps(capture).props["values"]["prometheus"]["prometheusSpec"]
    monitor = _dcgm(capture).props["values"]["serviceMonitor"]
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False
    wanted = spec["serviceMonitorSelector"]["matchLabels"]
    assert wanted == {"release": "gpu-obs-kps"}
    assert _kps(capture).props["name"] == "gpu-obs-kps"  # the label names the release it must match
    assert monitor["enabled"] is True
    assert wanted.items() <= monitor["additionalLabels"].items()
    assert spec["serviceMonitorNamespaceSelector"] == {}  # any namespace
    assert monitor["honorLabels"] is True


def test_gpu_observability_prometheus_selects_the_rule_and_the_pod_monitor(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs(**WITH_NEURON)))
    spec = _kps(capture).props["values"]["prometheus"]["prometheusSpec"]
    rule = capture.one(RULE).props
    pod_monitor = capture.one(POD_MONITOR).props
    assert spec["ruleSelectorNilUsesHelmValues"] is False
    assert spec["ruleSelector"]["matchLabels"].items() <= rule["metadata"]["labels"].items()
    assert spec["podMonitorSelectorNilUsesHelmValues"] is False
    assert spec["podMonitorSelector"]["matchLabels"].items() <= pod_monitor["metadata"]["labels"].items()


def test_gpu_observability_rule_carries_what_the_cli_renders(plan_of):
    args = GpuObservabilityArgs(thresholds=Thresholds(idle_minutes=45), aws_price_region="us-west-2")
    capture = plan_of(GpuObservability("gpu-obs", args))
    rule = capture.one(RULE).props
    assert rule["kind"] == "PrometheusRule"
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["spec"] == yaml.safe_load(render_rules_yaml(args.rule_settings()))
    idle = next(r for r in rule["spec"]["groups"][0]["rules"] if r.get("alert") == "GpuIdle")
    assert idle["for"] == "45m"


def test_gpu_observability_dcgm_scrape_gets_node_and_job_labels(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    relabelings = _dcgm(capture).props["values"]["serviceMonitor"]["relabelings"]
    assert {
        "sourceLabels": ["__meta_kubernetes_pod_node_name"],
        "targetLabel": "node",
        "action": "replace",
    } in (relabelings)
    assert {"targetLabel": "job", "replacement": "dcgm-exporter", "action": "replace"} in relabelings


def test_gpu_observability_dcgm_runs_on_gpu_nodes_only(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    values = _dcgm(capture).props["values"]
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    by_type = terms[0]["matchExpressions"][0]
    assert by_type["key"] == "node.kubernetes.io/instance-type"
    assert set(by_type["values"]) == {i.name for i in instance_types(family=AcceleratorFamily.NVIDIA_GPU)}
    assert {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "Exists"}]} in terms
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["tolerations"]
    # and every serving pool's own taint (scheduling.py), so a pool's GPU nodes are watched too
    assert {"key": "inference-infra.dev/pool", "operator": "Exists", "effect": "NoSchedule"} in values[
        "tolerations"
    ]


def test_gpu_observability_grafana_password_is_generated_and_secret(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    password = capture.one("random:index/randomPassword:RandomPassword").props
    assert password["length"] >= 24
    secret = capture.one(SECRET, "gpu-obs-grafana-admin")
    assert is_secret(secret.wire_props["stringData"])
    assert secret.props["stringData"]["admin-user"] == "admin"
    assert secret.props["stringData"]["admin-password"].startswith("offline")  # the mock's generated value
    grafana = _kps(capture).props["values"]["grafana"]
    assert grafana["admin"] == {
        "existingSecret": secret.props["metadata"]["name"],
        "userKey": "admin-user",
        "passwordKey": "admin-password",
    }
    assert "adminPassword" not in grafana
    outputs = capture.one(COMPONENT).outputs
    assert is_secret(outputs["grafana_admin_password"])


def test_gpu_observability_dashboards_are_configmaps_the_sidecar_loads(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    sidecar = _kps(capture).props["values"]["grafana"]["sidecar"]["dashboards"]
    maps = capture.of_type(CONFIG_MAP)
    assert {m.name for m in maps} == {
        "gpu-obs-dashboard-gpu-fleet",
        "gpu-obs-dashboard-idle-cost",
        "gpu-obs-dashboard-serving-cost",
    }
    for m in maps:
        assert m.props["metadata"]["labels"][sidecar["label"]] == sidecar["labelValue"]
        (file_name, text), *_ = m.props["data"].items()
        assert file_name.endswith(".json")
        assert json.loads(text)["uid"] == file_name.removesuffix(".json")


def test_gpu_observability_sizes_retention_and_storage_from_input(plan_of):
    args = GpuObservabilityArgs(retention_days=30, storage_size_gib=200, storage_class="gp3")
    capture = plan_of(GpuObservability("gpu-obs", args))
    spec = _kps(capture).props["values"]["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "30d"
    assert spec["retentionSize"] == "170GB"  # 85% of the volume: the WAL and compaction need room
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == "200Gi"
    assert claim["storageClassName"] == "gp3"
    assert claim["accessModes"] == ["ReadWriteOnce"]


def test_gpu_observability_alertmanager_receivers_come_from_a_secret(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs(alert_receivers=RECEIVERS)))
    secret = capture.one(SECRET, "gpu-obs-alertmanager-config")
    assert is_secret(secret.wire_props["stringData"])
    config = yaml.safe_load(secret.props["stringData"]["alertmanager.yaml"])
    receivers = {r["name"]: r for r in config["receivers"]}
    assert receivers["oncall"]["pagerduty_configs"][0]["routing_key"] == "pd-key-123"
    assert receivers["ml-slack"]["slack_configs"][0]["api_url"] == "https://hooks.slack.com/services/x"
    spec = _kps(capture).props["values"]["alertmanager"]["alertmanagerSpec"]
    assert spec["useExistingSecret"] is True
    assert spec["configSecret"] == secret.props["metadata"]["name"]
    assert "pd-key-123" not in json.dumps(_kps(capture).props)  # never in the Helm values


def test_gpu_observability_without_receivers_keeps_the_charts_alertmanager_config(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    assert [s.name for s in capture.of_type(SECRET)] == ["gpu-obs-grafana-admin"]
    spec = _kps(capture).props["values"]["alertmanager"]["alertmanagerSpec"]
    assert "useExistingSecret" not in spec
    assert "configSecret" not in spec


def test_gpu_observability_neuron_monitor_runs_on_neuron_nodes_and_is_scraped(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs(**WITH_NEURON)))
    pod = capture.one(DAEMON_SET, "gpu-obs-neuron-monitor").props["spec"]["template"]
    expression = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchExpressions"][0]
    assert set(expression["values"]) == {i.name for i in instance_types("aws", AcceleratorFamily.AWS_NEURON)}
    container = pod["spec"]["containers"][0]
    assert container["image"] == NEURON_IMAGE
    assert container["ports"] == [{"name": "metrics", "containerPort": 8000}]
    monitor = capture.one(POD_MONITOR).props["spec"]
    assert monitor["selector"]["matchLabels"] == pod["metadata"]["labels"]
    assert monitor["podMetricsEndpoints"][0]["port"] == "metrics"


def test_gpu_observability_without_neuron_monitor_adds_no_daemonset(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    assert capture.of_type(DAEMON_SET) == []
    assert capture.of_type(POD_MONITOR) == []


def test_gpu_observability_kubeconfig_makes_a_provider_with_a_secret_kubeconfig(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs(kubeconfig="apiVersion: v1\n")))
    provider = capture.one("pulumi:providers:kubernetes", "gpu-obs-k8s")
    assert is_secret(provider.wire_props["kubeconfig"])
    assert all(r.provider and "gpu-obs-k8s" in r.provider for r in capture.of_type(RELEASE))


def test_gpu_observability_children_are_parented_and_named_after_the_instance(plan_of):
    GpuObservability("team-a", GpuObservabilityArgs(namespace="monitoring-a"))
    capture = plan_of(GpuObservability("team-b", GpuObservabilityArgs(namespace="monitoring-b")))
    for name in ("team-a", "team-b"):
        component = capture.one(COMPONENT, name)
        children = capture.children(component)
        assert len(children) >= 8
        assert all(c.name.startswith(f"{name}-") for c in children)
        assert capture.one(RELEASE, f"{name}-kube-prometheus-stack").props["name"] == f"{name}-kps"


def test_gpu_observability_rejects_bad_input_before_registering_anything(plan_of):
    args = GpuObservabilityArgs(
        kube_prometheus_stack_version="^91.0",
        retention_size_gib=60,
        storage_size_gib=50,
        neuron_monitor_image="public.ecr.aws/neuron/neuron-monitor:1.3.0",
        thresholds=Thresholds(idle_utilization_percent=99),
        alert_receivers=(AlertReceiver(name="null", kind=ReceiverKind.WEBHOOK, secret="x"),),
    )
    with pytest.raises(InputError) as caught:
        GpuObservability("GPU_obs", args)
    message = str(caught.value)
    assert message.startswith("GpuObservability 'GPU_obs': 6 problems:")
    for expected in (
        "name 'GPU_obs' must be a DNS label of at most 20 characters",
        "retention_size_gib 60 must be below storage_size_gib (50)",
        "kube_prometheus_stack_version '^91.0' must be an exact chart version like 1.2.3",
        "neuron_monitor_image 'public.ecr.aws/neuron/neuron-monitor:1.3.0' must be pinned by digest",
        "rules.thresholds.idle_utilization_percent 99 must be below saturated_utilization_percent",
        "alert_receivers[0].name 'null'",
    ):
        assert expected in message
    assert plan_of().of_type(COMPONENT) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            GpuObservabilityArgs(namespace="Monitoring", exporters_namespace="exporters"),
            "namespace 'Monitoring' must be a Kubernetes namespace name",
        ),
        (
            GpuObservabilityArgs(dcgm_exporter_version="latest"),
            "dcgm_exporter_version 'latest' must be an exact",
        ),
        (GpuObservabilityArgs(storage_class="GP3!"), "storage_class 'GP3!' must be a StorageClass name"),
        (GpuObservabilityArgs(gpu_node_labels=()), "gpu_node_labels [] must name at least one node label"),
        (GpuObservabilityArgs(runbook_url="wiki/gpu"), "rules.runbook_url 'wiki/gpu' must be an http(s) URL"),
    ],
)
def test_gpu_observability_rejects_each_bad_input(args, message):
    problems = [str(p) for p in validate_gpu_observability("gpu-obs", args)]
    assert len(problems) == 1
    assert problems[0].startswith(message)


def test_gpu_observability_accepts_an_output_as_receiver_secret(plan_of):
    receiver = AlertReceiver(
        name="hook", kind=ReceiverKind.WEBHOOK, secret=pulumi.Output.from_input("https://x/y")
    )
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs(alert_receivers=(receiver,))))
    config = yaml.safe_load(
        capture.one(SECRET, "gpu-obs-alertmanager-config").props["stringData"]["alertmanager.yaml"]
    )
    assert config["receivers"][1]["webhook_configs"][0]["url"] == "https://x/y"


def test_observability_values_imports_without_the_component():
    import subprocess
    import sys

    code = (
        "import sys, inference_infra.components.k8s.observability_values as v; "
        "assert 'inference_infra.components.k8s.gpu_observability' not in sys.modules; "
        "assert v.GpuObservabilityArgs.__module__.endswith('observability_args')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
