"""GpuObservability's Helm values and manifests, as pure functions of its args.

Kept apart from the component so a reader can see, in one place, every value
the charts receive; the tests assert on the same dictionaries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference_infra.components.catalog import AcceleratorFamily, instance_types
from inference_infra.components.k8s import images
from inference_infra.components.k8s.images import PinnedImage
from inference_infra.components.k8s.observability_args import GpuObservabilityArgs
from inference_infra.components.k8s.scheduling import POOL_TAINT
from inference_infra.components.monitoring.rules import DCGM_JOB
from inference_infra.components.monitoring.scrape import NEURON_PORT

DASHBOARD_LABEL, DASHBOARD_LABEL_VALUE = "grafana_dashboard", "1"
GRAFANA_USER_KEY, GRAFANA_PASSWORD_KEY = "admin-user", "admin-password"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

# Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/).
POD_SECURITY_ENFORCE = "pod-security.kubernetes.io/enforce"
MONITORING_POD_SECURITY = "restricted"
# node-exporter shares the host's network and PID namespaces and mounts / read-only; dcgm-exporter
# needs CAP_SYS_ADMIN for DCGM's profiling metrics; neuron-monitor reads the Neuron devices as a
# privileged container. Baseline forbids all three, so they get a namespace of their own.
EXPORTERS_POD_SECURITY = "privileged"

RUNTIME_DEFAULT_SECCOMP = {"type": "RuntimeDefault"}
NOBODY = 65534


def pod_security_labels(level: str) -> dict[str, str]:
    """Enforce the level, and warn and audit at it too (kubectl and the audit log say what it refused)."""
    return {
        POD_SECURITY_ENFORCE: level,
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": level,
        "pod-security.kubernetes.io/audit": level,
    }


def restricted_pod(user: int = NOBODY, group: int | None = None) -> dict[str, Any]:
    """A pod-level securityContext that meets `restricted`: non-root, RuntimeDefault seccomp."""
    return {
        "runAsNonRoot": True,
        "runAsUser": user,
        "runAsGroup": group if group is not None else user,
        "fsGroup": group if group is not None else user,
        "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
    }


def restricted_container(*, read_only_root: bool = True) -> dict[str, Any]:
    """A container securityContext that meets `restricted`, read-only root unless the image writes to it."""
    return {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": read_only_root,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
    }


def _sha_hex(image: PinnedImage) -> dict[str, str]:
    # kube-prometheus-stack and Grafana write `<registry>/<repository>:<tag>@sha256:<sha>`.
    return {
        "registry": image.registry,
        "repository": image.repository,
        "tag": image.tag,
        "sha": image.digest_hex,
    }


def kube_prometheus_stack_values(
    args: GpuObservabilityArgs, *, release: str, grafana_secret: str, alertmanager_secret: str | None
) -> dict[str, Any]:
    exporters_namespace = args.exporters_namespace_name
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
    alertmanager["alertmanagerSpec"] = {
        "image": _sha_hex(images.ALERTMANAGER),
        "securityContext": restricted_pod(1000, 2000),  # the chart's own ids: existing volumes stay readable
    }
    if alertmanager_secret:
        alertmanager["alertmanagerSpec"] |= {"useExistingSecret": True, "configSecret": alertmanager_secret}
    return {
        "fullnameOverride": release,
        "prometheus": {
            "prometheusSpec": {
                "image": _sha_hex(images.PROMETHEUS),
                # Pod level; the operator gives its containers no privilege escalation, no
                # capabilities and a read-only root itself.
                "securityContext": restricted_pod(1000, 2000),
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
                **namespace_enforcement(args),
                **extra,
            },
            **(
                {"serviceAccount": {"annotations": dict(args.prometheus_service_account_annotations)}}
                if args.prometheus_service_account_annotations
                else {}
            ),
        },
        "alertmanager": alertmanager,
        "prometheusOperator": {
            "image": _sha_hex(images.PROMETHEUS_OPERATOR),
            "prometheusConfigReloader": {"image": _sha_hex(images.CONFIG_RELOADER)},
            "thanosImage": _sha_hex(images.THANOS),
            "securityContext": restricted_pod(),
            "containerSecurityContext": restricted_container(),
            "admissionWebhooks": {
                # The webhook runs inside the operator; its own Deployment (off by default) would
                # be one more unpinned image.
                "deployment": {"enabled": False},
                "patch": {
                    "image": _sha_hex(images.KUBE_WEBHOOK_CERTGEN),
                    "securityContext": restricted_pod(2000),
                },
                "createSecretJob": {"securityContext": restricted_container()},
                "patchWebhookJob": {"securityContext": restricted_container()},
            },
        },
        "grafana": {
            "enabled": True,
            "image": _sha_hex(images.GRAFANA),
            "securityContext": restricted_pod(472),
            # Not read-only: Grafana writes under /var/lib/grafana and unpacks plugins at start, and
            # this has not been run against a read-only root.
            "containerSecurityContext": restricted_container(read_only_root=False),
            # Root-only chown init container (only with persistence) and the chart's test pod (its
            # image has no digest value): neither may run in a restricted namespace.
            "initChownData": {"enabled": False},
            "testFramework": {"enabled": False},
            "admin": {
                "existingSecret": grafana_secret,
                "userKey": GRAFANA_USER_KEY,
                "passwordKey": GRAFANA_PASSWORD_KEY,
            },
            "sidecar": {
                "image": _sha_hex(images.K8S_SIDECAR),
                "securityContext": restricted_container(),
                "dashboards": {
                    "enabled": True,
                    "label": DASHBOARD_LABEL,
                    "labelValue": DASHBOARD_LABEL_VALUE,
                },
            },
            "service": {"type": "ClusterIP"},
        },
        # Node instance types as kube_node_labels, for the idle-cost rules' price join.
        "kube-state-metrics": {
            "metricLabelsAllowlist": [f"nodes=[{INSTANCE_TYPE_LABEL}]"],
            # This chart writes `<registry>/<repository>:<tag>@<sha>`: the sha carries its "sha256:".
            "image": {
                "registry": images.KUBE_STATE_METRICS.registry,
                "repository": images.KUBE_STATE_METRICS.repository,
                "tag": images.KUBE_STATE_METRICS.tag,
                "sha": images.KUBE_STATE_METRICS.digest,
            },
            "securityContext": {"enabled": True, **restricted_pod()},
            "containerSecurityContext": restricted_container(),
        },
        "prometheus-node-exporter": node_exporter_values(exporters_namespace),
    }


# The label the operator forces on what user monitors scrape and user rules compute, and in their rules'
# selectors; the label the serving pool's KEDA query and PodMonitor use (pool_manifests.load_query).
ENFORCED_NAMESPACE_LABEL = "namespace"
MONITOR_RESOURCES = ("servicemonitors", "podmonitors", "prometheusrules")


def namespace_enforcement(args: GpuObservabilityArgs) -> dict[str, Any]:
    """A series can only claim the namespace of the monitor that scraped it (issue #34).

    Prometheus Operator v0.93.0 (pkg/namespacelabeler/labeler.go, read 2026-12-02; the chart's values
    key is `prometheus.prometheusSpec.enforcedNamespaceLabel`) appends, last, a rule setting `namespace`
    to the monitor's own namespace to both the relabel_configs and the metric_relabel_configs of every
    ServiceMonitor, PodMonitor, Probe and ScrapeConfig it does not exclude; metric relabelling runs after
    honor_labels has merged the scraped labels, so no monitor's relabelling or exposed labels can name
    another namespace. Each of those PrometheusRules gets `namespace="<its namespace>"` in every selector
    and on every series and alert it makes.

    Excluded (no name: every such object of the namespace, `ObjectReference.name` in the operator's API):
    the stack's own namespace (the library's GPU, serving and $/Mtok rules and neuron-monitor's
    PodMonitor, the chart's kube-state-metrics, kubelet and other ServiceMonitors, which keep the
    namespace of the object they describe) and the exporters' namespace (dcgm-exporter's ServiceMonitor,
    which keeps the namespace of the workload on each GPU, and node-exporter's). Whoever may write
    monitors or rules in those two namespaces is trusted with every pool's load.
    """
    return {
        "enforcedNamespaceLabel": ENFORCED_NAMESPACE_LABEL,
        "excludedFromEnforcement": [
            {"group": "monitoring.coreos.com", "resource": resource, "namespace": namespace}
            for namespace in (args.namespace, args.exporters_namespace_name)
            for resource in MONITOR_RESOURCES
        ],
    }


def node_exporter_values(exporters_namespace: str) -> dict[str, Any]:
    """node-exporter in the privileged exporters namespace: host network and PID, / mounted read-only.

    Privileged by namespace, not by container: it still runs as nobody, with no capabilities, no
    privilege escalation, RuntimeDefault seccomp and a read-only root.
    """
    return {
        "namespaceOverride": exporters_namespace,
        # This chart takes `digest` (with its "sha256:") and refuses `sha`.
        "image": {
            "registry": images.NODE_EXPORTER.registry,
            "repository": images.NODE_EXPORTER.repository,
            "tag": images.NODE_EXPORTER.tag,
            "digest": images.NODE_EXPORTER.digest,
        },
        "securityContext": restricted_pod(),
        "containerSecurityContext": restricted_container(),
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
        # The serving pools' nodes carry their pool's taint too (scheduling.py): GPU metrics from every
        # pool's nodes, whichever pool.
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": POOL_TAINT, "operator": "Exists", "effect": "NoSchedule"},
        ],
        "affinity": _node_affinity(_gpu_node_terms(args)),
        # This chart has no digest value and writes `<repository>:<tag>`: the tag carries the digest.
        "image": {
            "repository": f"{images.DCGM_EXPORTER.registry}/{images.DCGM_EXPORTER.repository}",
            "tag": f"{images.DCGM_EXPORTER.tag}@{images.DCGM_EXPORTER.digest}",
        },
        "podSecurityContext": {"seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP)},
        # Root with CAP_SYS_ADMIN only: DCGM's profiling metrics (DCGM_FI_PROF_*) need it, and the
        # RuntimeDefault seccomp profile allows perf_event_open to a holder of CAP_SYS_ADMIN.
        "securityContext": {
            "runAsNonRoot": False,
            "runAsUser": 0,
            "privileged": False,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
            "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
        },
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
                # It reads devices and serves metrics; it never calls the Kubernetes API.
                "automountServiceAccountToken": False,
                "securityContext": {"seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP)},
                "affinity": _node_affinity([_in_types(neuron_types)]),
                "tolerations": [
                    {"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": POOL_TAINT, "operator": "Exists", "effect": "NoSchedule"},
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
                        # neuron-monitor reads the Neuron driver's devices (/dev/neuron*), which no
                        # device plugin hands to it; AWS's manifest runs it privileged. Hence the
                        # privileged exporters namespace. (A privileged container cannot also set
                        # allowPrivilegeEscalation: false; Kubernetes rejects the pair.)
                        "securityContext": {"privileged": True},
                    }
                ],
            },
        },
    }


def neuron_monitor_network_policy(args: GpuObservabilityArgs, app: Mapping[str, str]) -> dict[str, Any]:
    """Ingress to the metrics port from the monitoring namespace's Prometheus only; no egress."""
    prometheus = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": args.namespace}},
        # The operator labels every Prometheus pod so.
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
    }
    return {
        "podSelector": {"matchLabels": dict(app)},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [prometheus], "ports": [{"protocol": "TCP", "port": NEURON_PORT}]}],
        "egress": [],
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
