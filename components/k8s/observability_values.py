"""GpuObservability's Helm values and manifests, as pure functions of its args.

Kept apart from the component so a reader can see, in one place, every value
the charts receive; the tests assert on the same dictionaries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference_infra.components.catalog import AcceleratorFamily, instance_types
from inference_infra.components.k8s.observability_args import GpuObservabilityArgs
from inference_infra.components.monitoring.rules import DCGM_JOB
from inference_infra.components.monitoring.scrape import NEURON_PORT

DASHBOARD_LABEL, DASHBOARD_LABEL_VALUE = "grafana_dashboard", "1"
GRAFANA_USER_KEY, GRAFANA_PASSWORD_KEY = "admin-user", "admin-password"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def kube_prometheus_stack_values(
    args: GpuObservabilityArgs, *, release: str, grafana_secret: str, alertmanager_secret: str | None
) -> dict[str, Any]:
    selector = {"matchLabels": {"release": release}}
    volume: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": f"{args.storage_size_gib}Gi"}},
    }
    if args.storage_class:
        volume["storageClassName"] = args.storage_class
    alertmanager: dict[str, Any] = {"enabled": True}
    extra: dict[str, Any] = {}
    if args.fleet_discovery is not None:
        from inference_infra.components.monitoring.scrape import scrape_config

        # The stack's VM fleets: the same jobs `inference-infra monitoring scrape-config` prints.
        extra["additionalScrapeConfigs"] = scrape_config(args.fleet_discovery)["scrape_configs"]
    if alertmanager_secret:
        alertmanager["alertmanagerSpec"] = {"useExistingSecret": True, "configSecret": alertmanager_secret}
    return {
        "fullnameOverride": release,
        "prometheus": {
            "prometheusSpec": {
                "retention": f"{args.retention_days}d",
                "retentionSize": f"{args.retention_size}GB",  # Prometheus's GB are GiB (base 2)
                "storageSpec": {"volumeClaimTemplate": {"spec": volume}},
                # Explicit selectors instead of the chart's implicit release label, so the
                # label our monitors and rules carry is written down in one place.
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "serviceMonitorSelector": selector,
                "serviceMonitorNamespaceSelector": {},
                "podMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelector": selector,
                "podMonitorNamespaceSelector": {},
                "ruleSelectorNilUsesHelmValues": False,
                "ruleSelector": selector,
                "ruleNamespaceSelector": {},
                **extra,
            },
            **(
                {"serviceAccount": {"annotations": dict(args.prometheus_service_account_annotations)}}
                if args.prometheus_service_account_annotations
                else {}
            ),
        },
        "alertmanager": alertmanager,
        "grafana": {
            "enabled": True,
            "admin": {
                "existingSecret": grafana_secret,
                "userKey": GRAFANA_USER_KEY,
                "passwordKey": GRAFANA_PASSWORD_KEY,
            },
            "sidecar": {
                "dashboards": {"enabled": True, "label": DASHBOARD_LABEL, "labelValue": DASHBOARD_LABEL_VALUE}
            },
            "service": {"type": "ClusterIP"},
        },
        # Node instance types as kube_node_labels, for the idle-cost rules' price join.
        "kube-state-metrics": {"metricLabelsAllowlist": [f"nodes=[{INSTANCE_TYPE_LABEL}]"]},
    }


def dcgm_exporter_values(args: GpuObservabilityArgs, *, selector_labels: Mapping[str, str]) -> dict[str, Any]:
    return {
        "serviceMonitor": {
            "enabled": True,
            "interval": "15s",
            "honorLabels": True,
            "additionalLabels": dict(selector_labels),
            "relabelings": node_relabelings(DCGM_JOB),
        },
        # Which GPU workload uses each GPU, as namespace/pod/container labels.
        "kubernetes": {"enablePodLabels": True},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": _node_affinity(_gpu_node_terms(args)),
    }


NEURON_MONITOR_CONFIG = "/opt/aws/neuron/bin/neuron-monitor.conf"
NEURON_MONITOR_MEMORY_LIMIT = "256Mi"
NEURON_MONITOR_GOMEMLIMIT = "160MiB"


def neuron_monitor_spec(args: GpuObservabilityArgs, app: Mapping[str, str]) -> dict[str, Any]:
    neuron_types = [i.name for i in instance_types("aws", AcceleratorFamily.AWS_NEURON)]
    return {
        "selector": {"matchLabels": dict(app)},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": dict(app)},
            "spec": {
                "affinity": _node_affinity([_in_types(neuron_types)]),
                "tolerations": [
                    {"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}
                ],
                "containers": [
                    {
                        "name": "neuron-monitor",
                        "image": args.neuron_monitor_image,
                        "command": ["/opt/bin/entrypoint.sh"],
                        # As AWS's manifest (aws-neuron-sdk src/k8/k8s-neuron-monitor-daemonset.yml):
                        # the image's own monitor config, a 256Mi limit and GOMEMLIMIT under it so the
                        # exporter's Go runtime collects garbage before the kernel kills it.
                        "args": [
                            "--port",
                            str(NEURON_PORT),
                            "--neuron-monitor-config",
                            NEURON_MONITOR_CONFIG,
                        ],
                        "env": [{"name": "GOMEMLIMIT", "value": NEURON_MONITOR_GOMEMLIMIT}],
                        "ports": [{"name": "metrics", "containerPort": NEURON_PORT}],
                        "resources": {
                            "requests": {"cpu": "256m", "memory": "128Mi"},
                            "limits": {"cpu": "500m", "memory": NEURON_MONITOR_MEMORY_LIMIT},
                        },
                        # neuron-monitor reads the Neuron driver's devices; AWS's manifest runs it privileged.
                        "securityContext": {"privileged": True},
                    }
                ],
            },
        },
    }


def _gpu_node_terms(args: GpuObservabilityArgs) -> list[dict[str, Any]]:
    gpu_types = [i.name for i in instance_types(family=AcceleratorFamily.NVIDIA_GPU)]
    terms = [_in_types(gpu_types)]
    terms += [{"matchExpressions": [{"key": key, "operator": "Exists"}]} for key in args.gpu_node_labels]
    return terms


def _in_types(types: Sequence[str]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": sorted(types)}]}


def _node_affinity(terms: list[dict[str, Any]]) -> dict[str, Any]:
    # nodeSelectorTerms are ORed: a node matching any term qualifies.
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def node_relabelings(job: str) -> list[dict[str, Any]]:
    """The `node` label every GPU rule and dashboard groups by, and a stable job name."""
    return [
        {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"},
        {"targetLabel": "job", "replacement": job, "action": "replace"},
    ]
