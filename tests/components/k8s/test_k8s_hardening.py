"""GpuObservability's Pod Security: namespaces, security contexts, digest pins, chart value keys."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from inference_infra.components.aws import bootstrap
from inference_infra.components.k8s import images
from inference_infra.components.k8s.chart_keys import DCGM_EXPORTER_KEYS, KUBE_PROMETHEUS_STACK_KEYS
from inference_infra.components.k8s.charts import DCGM_EXPORTER, KUBE_PROMETHEUS_STACK
from inference_infra.components.k8s.gpu_observability import (
    AlertReceiver,
    GpuObservability,
    GpuObservabilityArgs,
    validate_gpu_observability,
)
from inference_infra.components.monitoring.alertmanager import ReceiverKind
from inference_infra.components.monitoring.scrape import AwsDiscovery, ScrapeSettings

RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
ENFORCE = "pod-security.kubernetes.io/enforce"
NEURON_IMAGE = "registry.example.com/neuron/neuron-monitor:1.3.0@sha256:" + "c" * 64  # a test input
FULL = GpuObservabilityArgs(
    neuron_monitor=True,
    neuron_monitor_image=NEURON_IMAGE,
    alert_receivers=(AlertReceiver(name="oncall", kind=ReceiverKind.PAGERDUTY, secret="k"),),
    fleet_discovery=ScrapeSettings(
        discovery=AwsDiscovery(regions=["us-east-1"], tags={"Environment": "prod"})
    ),
    prometheus_service_account_annotations={"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/r"},
    storage_class="gp3",
)


def _values(capture, name: str) -> dict[str, Any]:
    return capture.one(RELEASE, name).props["values"]


def meets_restricted(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[str]:
    """What keeps a pod from Pod Security `restricted` (pod- and container-level contexts as merged)."""
    problems = []
    if container.get("runAsNonRoot", pod.get("runAsNonRoot")) is not True:
        problems.append("runAsNonRoot")
    if container.get("runAsUser", pod.get("runAsUser")) == 0:
        problems.append("runAsUser 0")
    seccomp = container.get("seccompProfile", pod.get("seccompProfile")) or {}
    if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
        problems.append("seccompProfile")
    if container.get("allowPrivilegeEscalation") is not False:
        problems.append("allowPrivilegeEscalation")
    if container.get("privileged"):
        problems.append("privileged")
    caps = container.get("capabilities") or {}
    if "ALL" not in (caps.get("drop") or []) or set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
        problems.append("capabilities")
    return problems


def test_gpu_observability_namespaces_carry_their_pod_security_level(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", FULL))
    namespaces = {
        ns.props["metadata"]["name"]: ns.props["metadata"]["labels"] for ns in capture.of_type(NAMESPACE)
    }
    assert set(namespaces) == {"monitoring", "monitoring-exporters"}
    for name, level in (("monitoring", "restricted"), ("monitoring-exporters", "privileged")):
        labels = namespaces[name]
        assert labels[ENFORCE] == level
        assert labels["pod-security.kubernetes.io/warn"] == level
        assert labels["pod-security.kubernetes.io/audit"] == level


def test_gpu_observability_runs_only_the_exporters_in_the_privileged_namespace(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", FULL))
    kps, dcgm = (
        capture.one(RELEASE, "gpu-obs-kube-prometheus-stack"),
        capture.one(RELEASE, "gpu-obs-dcgm-exporter"),
    )
    assert kps.props["namespace"] == "monitoring"
    assert dcgm.props["namespace"] == "monitoring-exporters"
    assert kps.props["values"]["prometheus-node-exporter"]["namespaceOverride"] == "monitoring-exporters"
    neuron = capture.one(DAEMON_SET, "gpu-obs-neuron-monitor").props
    assert neuron["metadata"]["namespace"] == "monitoring-exporters"
    pod_monitor = capture.one("kubernetes:monitoring.coreos.com/v1:PodMonitor").props
    assert pod_monitor["spec"]["namespaceSelector"] == {"matchNames": ["monitoring-exporters"]}
    # Everything else the component creates stays in the restricted namespace.
    others = [
        r.props["metadata"]["namespace"]
        for r in capture.custom
        if r.type.startswith("kubernetes:")
        and r.type not in (NAMESPACE, RELEASE, DAEMON_SET, "kubernetes:networking.k8s.io/v1:NetworkPolicy")
    ]
    assert others
    assert set(others) == {"monitoring"}


def test_gpu_observability_names_the_exporters_namespace(plan_of):
    args = GpuObservabilityArgs(namespace="obs", exporters_namespace="gpu-exporters")
    capture = plan_of(GpuObservability("gpu-obs", args))
    assert {ns.props["metadata"]["name"] for ns in capture.of_type(NAMESPACE)} == {"obs", "gpu-exporters"}
    assert capture.one(RELEASE, "gpu-obs-dcgm-exporter").props["namespace"] == "gpu-exporters"


def test_gpu_observability_leaves_existing_namespaces_alone(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs(create_namespace=False)))
    assert capture.of_type(NAMESPACE) == []


@pytest.mark.parametrize(
    ("pod_path", "container_path"),
    [
        ("prometheus.prometheusSpec.securityContext", None),
        ("alertmanager.alertmanagerSpec.securityContext", None),
        ("prometheusOperator.securityContext", "prometheusOperator.containerSecurityContext"),
        (
            "prometheusOperator.admissionWebhooks.patch.securityContext",
            "prometheusOperator.admissionWebhooks.createSecretJob.securityContext",
        ),
        (
            "prometheusOperator.admissionWebhooks.patch.securityContext",
            "prometheusOperator.admissionWebhooks.patchWebhookJob.securityContext",
        ),
        ("grafana.securityContext", "grafana.containerSecurityContext"),
        ("grafana.securityContext", "grafana.sidecar.securityContext"),
        ("kube-state-metrics.securityContext", "kube-state-metrics.containerSecurityContext"),
        # Privileged namespace, but it needs no privilege of its own.
        ("prometheus-node-exporter.securityContext", "prometheus-node-exporter.containerSecurityContext"),
    ],
)
def test_gpu_observability_monitoring_pods_meet_restricted(plan_of, pod_path, container_path):
    values = _values(plan_of(GpuObservability("gpu-obs", FULL)), "gpu-obs-kube-prometheus-stack")
    pod = _at(values, pod_path)
    # Prometheus and Alertmanager: the operator sets their containers' contexts (no escalation, no
    # capabilities, read-only root); the chart only takes the pod's.
    container = _at(values, container_path) if container_path else _OPERATOR_CONTAINER
    assert meets_restricted(pod, container) == []
    if container_path:
        assert container["readOnlyRootFilesystem"] is (container_path != "grafana.containerSecurityContext")


_OPERATOR_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_gpu_observability_turns_off_what_cannot_run_restricted_or_pinned(plan_of):
    values = _values(
        plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs())), "gpu-obs-kube-prometheus-stack"
    )
    assert values["grafana"]["initChownData"] == {"enabled": False}  # runs as root with CHOWN
    assert values["grafana"]["testFramework"] == {"enabled": False}  # its image has no digest value
    assert values["prometheusOperator"]["admissionWebhooks"]["deployment"] == {"enabled": False}


def test_gpu_observability_dcgm_exporter_keeps_only_sys_admin(plan_of):
    values = _values(plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs())), "gpu-obs-dcgm-exporter")
    container = values["securityContext"]
    assert meets_restricted(values["podSecurityContext"], container) == [
        "runAsNonRoot",
        "runAsUser 0",
        "capabilities",
    ]
    assert container["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
    assert container["allowPrivilegeEscalation"] is False
    assert container["privileged"] is False
    assert container["seccompProfile"] == {"type": "RuntimeDefault"}


def test_gpu_observability_neuron_monitor_is_the_one_privileged_container(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", FULL))
    pod = capture.one(DAEMON_SET).props["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    (container,) = pod["containers"]
    assert container["securityContext"] == {"privileged": True}
    assert container["image"] == NEURON_IMAGE


def test_gpu_observability_neuron_monitor_admits_only_prometheus(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", FULL))
    policy = capture.one("kubernetes:networking.k8s.io/v1:NetworkPolicy").props
    pod = capture.one(DAEMON_SET).props["spec"]["template"]
    assert policy["metadata"]["namespace"] == "monitoring-exporters"
    assert policy["spec"]["podSelector"]["matchLabels"] == pod["metadata"]["labels"]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["egress"] == []
    (rule,) = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}]
    (source,) = rule["from"]
    assert source["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}


def test_gpu_observability_passes_every_cluster_image_by_digest(plan_of):
    capture = plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs()))
    kps = _values(capture, "gpu-obs-kube-prometheus-stack")
    dcgm = _values(capture, "gpu-obs-dcgm-exporter")
    hex_pins = {
        "prometheus.prometheusSpec.image": images.PROMETHEUS,
        "alertmanager.alertmanagerSpec.image": images.ALERTMANAGER,
        "prometheusOperator.image": images.PROMETHEUS_OPERATOR,
        "prometheusOperator.prometheusConfigReloader.image": images.CONFIG_RELOADER,
        "prometheusOperator.thanosImage": images.THANOS,
        "prometheusOperator.admissionWebhooks.patch.image": images.KUBE_WEBHOOK_CERTGEN,
        "grafana.image": images.GRAFANA,
        "grafana.sidecar.image": images.K8S_SIDECAR,
    }
    for path, image in hex_pins.items():
        block = _at(kps, path)
        assert (block["registry"], block["repository"], block["tag"]) == (
            image.registry,
            image.repository,
            image.tag,
        )
        assert block["sha"] == image.digest_hex  # these charts write "@sha256:<sha>"
    assert _at(kps, "kube-state-metrics.image")["sha"] == images.KUBE_STATE_METRICS.digest  # "@<sha>"
    assert _at(kps, "prometheus-node-exporter.image")["digest"] == images.NODE_EXPORTER.digest
    assert "sha" not in _at(kps, "prometheus-node-exporter.image")  # that chart fails on image.sha
    assert f"{dcgm['image']['repository']}:{dcgm['image']['tag']}" == images.DCGM_EXPORTER.reference
    pinned = set(hex_pins.values()) | {images.KUBE_STATE_METRICS, images.NODE_EXPORTER, images.DCGM_EXPORTER}
    assert pinned == set(images.CLUSTER_IMAGES)


def test_cluster_images_table_is_pinned_and_sourced():
    for image in images.CLUSTER_IMAGES:
        assert images.DIGEST.match(image.digest), image
        assert images.PINNED_REFERENCE.match(image.reference), image
        assert image.tag
        assert image.tag != "latest"
        assert image.source
        assert image.as_of.year >= 2026
    assert len({i.reference for i in images.CLUSTER_IMAGES}) == len(images.CLUSTER_IMAGES)
    # The cluster runs the same exporter builds as the VM hosts.
    assert images.NODE_EXPORTER.reference == bootstrap.NODE_EXPORTER_IMAGE
    assert images.DCGM_EXPORTER.reference == bootstrap.DCGM_EXPORTER_IMAGE


def value_paths(values: Mapping[str, Any], keys: frozenset[str], prefix: str = "") -> Iterator[str]:
    """Every key path in `values` that `keys` does not list (a listed path may hold any value)."""
    for key, item in values.items():
        path = f"{prefix}{key}"
        if path in keys:
            continue
        if isinstance(item, Mapping) and item:
            yield from value_paths(item, keys, f"{path}.")
        else:
            yield path


@pytest.mark.parametrize("args", [GpuObservabilityArgs(), FULL], ids=["defaults", "everything"])
def test_gpu_observability_sets_only_keys_the_charts_read(plan_of, args):
    capture = plan_of(GpuObservability("gpu-obs", args))
    kps = _values(capture, "gpu-obs-kube-prometheus-stack")
    dcgm = _values(capture, "gpu-obs-dcgm-exporter")
    assert list(value_paths(kps, KUBE_PROMETHEUS_STACK_KEYS.keys)) == []
    assert list(value_paths(dcgm, DCGM_EXPORTER_KEYS.keys)) == []


def test_chart_keys_catch_a_misspelt_value():
    values = {
        "prometheusOperator": {"image": {"sha": "x"}, "containerSecurityContex": {"runAsNonRoot": True}}
    }
    assert list(value_paths(values, KUBE_PROMETHEUS_STACK_KEYS.keys)) == [
        "prometheusOperator.containerSecurityContex.runAsNonRoot"
    ]


def test_chart_keys_table_names_the_pinned_versions():
    assert KUBE_PROMETHEUS_STACK_KEYS.pinned_version == KUBE_PROMETHEUS_STACK.version
    assert DCGM_EXPORTER_KEYS.pinned_version == DCGM_EXPORTER.version
    for table in (KUBE_PROMETHEUS_STACK_KEYS, DCGM_EXPORTER_KEYS):
        assert table.source
        assert table.read_versions
        assert table.keys


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            GpuObservabilityArgs(exporters_namespace="monitoring"),
            "exporters_namespace 'monitoring' must differ from namespace ('monitoring')",
        ),
        (
            GpuObservabilityArgs(exporters_namespace="GPU"),
            "exporters_namespace 'GPU' must be a Kubernetes namespace",
        ),
        (
            GpuObservabilityArgs(neuron_monitor=True),
            "neuron_monitor_image (unset) must be given with neuron_monitor, pinned by digest",
        ),
        (
            GpuObservabilityArgs(
                neuron_monitor=True, neuron_monitor_image="public.ecr.aws/neuron/neuron-monitor:1.3.0"
            ),
            "neuron_monitor_image 'public.ecr.aws/neuron/neuron-monitor:1.3.0' must be pinned by digest",
        ),
        (
            GpuObservabilityArgs(neuron_monitor_image="neuron-monitor@sha256:" + "c" * 64),
            "neuron_monitor_image 'neuron-monitor@sha256:",
        ),
    ],
)
def test_gpu_observability_rejects_unsafe_placement_and_unpinned_images(args, message):
    problems = [str(p) for p in validate_gpu_observability("gpu-obs", args)]
    assert len(problems) == 1
    assert problems[0].startswith(message)


def test_gpu_observability_rejects_before_registering_anything(plan_of):
    with pytest.raises(ValueError, match="exporters_namespace 'monitoring' must differ"):
        GpuObservability("gpu-obs", GpuObservabilityArgs(exporters_namespace="monitoring"))
    assert plan_of().of_type(NAMESPACE) == []


def _at(values: Mapping[str, Any], path: str) -> Any:
    for key in path.split("."):
        values = values[key]
    return values
