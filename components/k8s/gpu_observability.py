"""GpuObservability: dcgm-exporter, Prometheus, Alertmanager and Grafana on a Kubernetes cluster.

Installs kube-prometheus-stack and NVIDIA's dcgm-exporter as pinned Helm
releases and wires them so nothing is silently lost:

- one selector label (`release: <kube-prometheus-stack release>`) that
  Prometheus requires of ServiceMonitors, PodMonitors and PrometheusRules, and
  that the dcgm-exporter ServiceMonitor, the GPU PrometheusRule and the
  neuron-monitor PodMonitor all carry (a ServiceMonitor Prometheus does not
  select is the most common silent failure of this setup);
- `honorLabels` on the dcgm-exporter scrape, so the exporter's own
  `namespace`/`pod`/`container` labels (the workload on the GPU) survive;
- the GPU alert and cost rules of `inference_infra.components.monitoring.rules` as a
  PrometheusRule, the Grafana dashboards as ConfigMaps the dashboard sidecar
  loads, a generated Grafana admin password in a Secret, Prometheus retention
  and storage from the inputs, Alertmanager receivers from secret inputs;
- optionally AWS's neuron-monitor as a DaemonSet on Inferentia/Trainium nodes.

Everything stays inside the cluster: the services are ClusterIP (reach them
with `kubectl port-forward`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.k8s.charts import DCGM_EXPORTER, KUBE_PROMETHEUS_STACK, NEURON_MONITOR
from inference_infra.components.k8s.observability_values import (
    DASHBOARD_LABEL,
    DASHBOARD_LABEL_VALUE,
    GRAFANA_PASSWORD_KEY,
    GRAFANA_USER_KEY,
    dcgm_exporter_values,
    kube_prometheus_stack_values,
    neuron_monitor_spec,
    node_relabelings,
)
from inference_infra.components.monitoring.absent import FleetTargets
from inference_infra.components.monitoring.alertmanager import (
    Receiver,
    ReceiverKind,
    render_alertmanager_yaml,
    validate_receivers,
)
from inference_infra.components.monitoring.dashboards import dashboards, to_json
from inference_infra.components.monitoring.rules import (
    DCGM_JOB,
    DEFAULT_RUNBOOK_URL,
    RuleSettings,
    rule_file,
    validate_rule_settings,
)
from inference_infra.components.monitoring.scrape import NEURON_JOB, ScrapeSettings, validate_scrape_settings
from inference_infra.components.monitoring.serving import ServingSettings
from inference_infra.components.monitoring.serving_cost import PoolCost
from inference_infra.components.monitoring.thresholds import Thresholds

_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_PINNED_IMAGE = re.compile(r"^[\w.\-/:]+:[\w.\-]+$|^[\w.\-/:]+@sha256:[0-9a-f]{64}$")
_MAX_NAME = 20  # "<name>-kps" stays within kube-prometheus-stack's 26-character fullname


@dataclass(frozen=True, kw_only=True)
class AlertReceiver:
    """Where alerts go. `secret` is the Slack webhook URL, PagerDuty routing key or webhook URL."""

    name: str
    kind: ReceiverKind
    secret: pulumi.Input[str]
    channel: str | None = None  # Slack only
    severities: Sequence[str] = ("critical", "warning")

    def receiver(self) -> Receiver:
        return Receiver(
            name=self.name, kind=self.kind, channel=self.channel, severities=tuple(self.severities)
        )


def _default_gpu_node_labels() -> tuple[str, ...]:
    # A node with any of these labels runs NVIDIA GPUs: GPU feature discovery
    # (the GPU operator) sets the first, GKE the second on GPU node pools. Nodes
    # of a catalog GPU instance type are matched by their instance type as well.
    return ("nvidia.com/gpu.present", "cloud.google.com/gke-accelerator")


@dataclass(frozen=True, kw_only=True)
class GpuObservabilityArgs:
    namespace: str = "monitoring"
    create_namespace: bool = True
    kubeconfig: pulumi.Input[str] | None = None  # None: the provider from opts, or the ambient kubeconfig
    kube_context: str | None = None
    retention_days: int = 15
    storage_size_gib: int = 50
    retention_size_gib: int | None = None  # None: 85% of storage_size_gib, so the volume never fills
    storage_class: str | None = None  # None: the cluster's default StorageClass
    thresholds: Thresholds = field(default_factory=Thresholds)
    runbook_url: str = DEFAULT_RUNBOOK_URL
    alert_receivers: Sequence[AlertReceiver] = ()
    gpu_node_labels: Sequence[str] = field(default_factory=_default_gpu_node_labels)
    neuron_monitor: bool = False
    kube_prometheus_stack_version: str = KUBE_PROMETHEUS_STACK.version
    dcgm_exporter_version: str = DCGM_EXPORTER.version
    neuron_monitor_image: str = NEURON_MONITOR.reference
    grafana_admin_user: str = "admin"
    aws_price_region: str | None = None  # prices for the cost rules; None: the catalog's reference region
    gcp_price_region: str | None = None
    # Serving SLOs, per-fleet missing-target alerts and per-pool cost (components/monitoring).
    serving: ServingSettings = field(default_factory=ServingSettings)
    fleets: Sequence[FleetTargets] = ()
    pool_costs: Sequence[PoolCost] = ()
    # The stack's own VM fleets, discovered by the stack's tags/labels (monitoring/scrape.py renders the
    # jobs, the same renderer as `monitoring scrape-config`). None: the cluster's ServiceMonitors only.
    fleet_discovery: ScrapeSettings | None = None
    # Prometheus's ServiceAccount annotations: the discovery identity, e.g. IRSA
    # {"eks.amazonaws.com/role-arn": ...} or Workload Identity {"iam.gke.io/gcp-service-account": ...},
    # a role that may only list instances (see monitoring/scrape.py discovery_policy()).
    prometheus_service_account_annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def retention_size(self) -> int:
        return (
            self.retention_size_gib
            if self.retention_size_gib is not None
            else self.storage_size_gib * 85 // 100
        )

    def rule_settings(self) -> RuleSettings:
        return RuleSettings(
            thresholds=self.thresholds,
            runbook_url=self.runbook_url,
            dcgm_job=DCGM_JOB,
            aws_price_region=self.aws_price_region,
            gcp_price_region=self.gcp_price_region,
            serving=self.serving,
            fleets=tuple(self.fleets),
            pool_costs=tuple(self.pool_costs),
            kubernetes_neuron=self.neuron_monitor,
        )


def validate_gpu_observability(name: str, args: GpuObservabilityArgs) -> list[Problem]:
    """Every problem with the inputs, before anything is registered."""
    p: list[Problem] = []
    if args.fleet_discovery is not None:
        p += [
            Problem(f"fleet_discovery.{q.input}", q.value, q.allowed)
            for q in validate_scrape_settings(args.fleet_discovery)
        ]
    if not _DNS_LABEL.match(name) or len(name) > _MAX_NAME:
        p.append(
            Problem("name", name, f"must be a DNS label of at most {_MAX_NAME} characters (a-z, 0-9, '-')")
        )
    if not _DNS_LABEL.match(args.namespace) or len(args.namespace) > 63:
        p.append(Problem("namespace", args.namespace, "must be a Kubernetes namespace name (a-z, 0-9, '-')"))
    if not _int_between(args.retention_days, 1, 3650):
        p.append(Problem("retention_days", args.retention_days, "must be a whole number of days, 1 to 3650"))
    if not _int_between(args.storage_size_gib, 5, 65536):
        p.append(Problem("storage_size_gib", args.storage_size_gib, "must be 5 to 65536 GiB"))
    elif args.retention_size_gib is not None and not _int_between(
        args.retention_size_gib, 1, args.storage_size_gib - 1
    ):
        p.append(
            Problem(
                "retention_size_gib",
                args.retention_size_gib,
                f"must be below storage_size_gib ({args.storage_size_gib}): the WAL needs room too",
            )
        )
    if args.storage_class is not None and not _DNS_SUBDOMAIN.match(args.storage_class):
        p.append(Problem("storage_class", args.storage_class, "must be a StorageClass name"))
    for key, version in (
        ("kube_prometheus_stack_version", args.kube_prometheus_stack_version),
        ("dcgm_exporter_version", args.dcgm_exporter_version),
    ):
        if not _EXACT_VERSION.match(str(version)):
            p.append(
                Problem(key, version, "must be an exact chart version like 1.2.3 (no ranges, no 'latest')")
            )
    if not _PINNED_IMAGE.match(args.neuron_monitor_image) or args.neuron_monitor_image.endswith(":latest"):
        p.append(
            Problem(
                "neuron_monitor_image",
                args.neuron_monitor_image,
                "must name a tag or digest other than latest",
            )
        )
    if not args.grafana_admin_user.strip():
        p.append(Problem("grafana_admin_user", args.grafana_admin_user, "must not be empty"))
    if not args.gpu_node_labels:
        p.append(Problem("gpu_node_labels", list(args.gpu_node_labels), "must name at least one node label"))
    p += validate_rule_settings(args.rule_settings(), where="rules")
    p += validate_receivers([r.receiver() for r in args.alert_receivers])
    return p


class GpuObservability(pulumi.ComponentResource):
    """Prometheus, Alertmanager, Grafana and dcgm-exporter for a cluster's GPU nodes."""

    def __init__(self, name: str, args: GpuObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(f"GpuObservability {name!r}", validate_gpu_observability(name, args))
        super().__init__("inference-infra:k8s:GpuObservability", name, None, opts)
        import pulumi_kubernetes as k8s
        import pulumi_random as random

        child = pulumi.ResourceOptions(parent=self)
        if args.kubeconfig is not None or args.kube_context is not None:
            self.provider: k8s.Provider | None = k8s.Provider(
                f"{name}-k8s",
                kubeconfig=pulumi.Output.secret(args.kubeconfig) if args.kubeconfig is not None else None,
                context=args.kube_context,
                opts=child,
            )
            child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        else:
            self.provider = None

        ns = args.namespace
        self.kps_release_name = f"{name}-kps"
        self.selector_labels = {"release": self.kps_release_name}
        settings = args.rule_settings()
        depends: list[pulumi.Resource] = []

        self.namespace: k8s.core.v1.Namespace | None
        if args.create_namespace:
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-ns",
                # node exporter and dcgm-exporter need host access (hostPath, hostNetwork, SYS_ADMIN).
                metadata={"name": ns, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}},
                opts=child,
            )
            depends.append(self.namespace)
        else:
            self.namespace = None
        in_ns = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(depends)))

        self.grafana_password = random.RandomPassword(
            f"{name}-grafana-admin", length=32, special=False, opts=pulumi.ResourceOptions(parent=self)
        )
        grafana_secret_name = f"{name}-grafana-admin"
        self.grafana_secret = k8s.core.v1.Secret(
            f"{name}-grafana-admin",
            metadata={"name": grafana_secret_name, "namespace": ns},
            type="Opaque",
            string_data={
                GRAFANA_USER_KEY: args.grafana_admin_user,
                GRAFANA_PASSWORD_KEY: pulumi.Output.secret(self.grafana_password.result),
            },
            opts=in_ns,
        )
        before_kps: list[pulumi.Resource] = [*depends, self.grafana_secret]

        self.alertmanager_secret: k8s.core.v1.Secret | None = None
        alertmanager_secret_name = f"{name}-alertmanager-config"
        if args.alert_receivers:
            receivers = [r.receiver() for r in args.alert_receivers]
            rendered = pulumi.Output.all(*(r.secret for r in args.alert_receivers)).apply(
                lambda secrets: render_alertmanager_yaml(receivers, [str(s) for s in secrets])
            )
            self.alertmanager_secret = k8s.core.v1.Secret(
                f"{name}-alertmanager-config",
                metadata={"name": alertmanager_secret_name, "namespace": ns},
                type="Opaque",
                string_data={"alertmanager.yaml": pulumi.Output.secret(rendered)},
                opts=in_ns,
            )
            before_kps.append(self.alertmanager_secret)

        self.kube_prometheus_stack = k8s.helm.v3.Release(
            f"{name}-kube-prometheus-stack",
            name=self.kps_release_name,
            chart=KUBE_PROMETHEUS_STACK.name,
            version=args.kube_prometheus_stack_version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=KUBE_PROMETHEUS_STACK.repo),
            namespace=ns,
            atomic=True,
            cleanup_on_fail=True,
            timeout=900,
            max_history=10,
            values=kube_prometheus_stack_values(
                args,
                release=self.kps_release_name,
                grafana_secret=grafana_secret_name,
                alertmanager_secret=alertmanager_secret_name if args.alert_receivers else None,
            ),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=before_kps)),
        )
        after_kps = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[self.kube_prometheus_stack])
        )

        self.dcgm_release_name = f"{name}-dcgm-exporter"
        self.dcgm_exporter = k8s.helm.v3.Release(
            f"{name}-dcgm-exporter",
            name=self.dcgm_release_name,
            chart=DCGM_EXPORTER.name,
            version=args.dcgm_exporter_version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=DCGM_EXPORTER.repo),
            namespace=ns,
            atomic=True,
            cleanup_on_fail=True,
            timeout=600,
            max_history=10,
            values=dcgm_exporter_values(args, selector_labels=self.selector_labels),
            opts=after_kps,
        )

        self.rules_name = f"{name}-gpu-rules"
        self.rules = k8s.apiextensions.CustomResource(
            f"{name}-gpu-rules",
            api_version="monitoring.coreos.com/v1",
            kind="PrometheusRule",
            metadata={"name": self.rules_name, "namespace": ns, "labels": dict(self.selector_labels)},
            spec=rule_file(settings),
            opts=after_kps,
        )

        self.dashboards: list[k8s.core.v1.ConfigMap] = []
        for file_name, model in dashboards(settings, neuron=args.neuron_monitor).items():
            stem = file_name.removesuffix(".json").removeprefix("inference-infra-")
            self.dashboards.append(
                k8s.core.v1.ConfigMap(
                    f"{name}-dashboard-{stem}",
                    metadata={
                        "name": f"{name}-dashboard-{stem}",
                        "namespace": ns,
                        "labels": {DASHBOARD_LABEL: DASHBOARD_LABEL_VALUE},
                    },
                    data={file_name: to_json(model)},
                    opts=in_ns,
                )
            )

        self.neuron_monitor: k8s.apps.v1.DaemonSet | None = None
        self.neuron_pod_monitor: k8s.apiextensions.CustomResource | None = None
        if args.neuron_monitor:
            self._neuron_monitor(name, args, in_ns, after_kps)

        self.grafana_admin_password = pulumi.Output.secret(self.grafana_password.result)
        self.prometheus_service = f"{self.kps_release_name}-prometheus"
        self.alertmanager_service = f"{self.kps_release_name}-alertmanager"
        self.grafana_service = f"{self.kps_release_name}-grafana"
        self.register_outputs(
            {
                "namespace": ns,
                "prometheus_service": self.prometheus_service,
                "alertmanager_service": self.alertmanager_service,
                "grafana_service": self.grafana_service,
                "grafana_admin_user": args.grafana_admin_user,
                "grafana_admin_password": self.grafana_admin_password,
                "kube_prometheus_stack_release": self.kube_prometheus_stack.status.name,
                "dcgm_exporter_release": self.dcgm_exporter.status.name,
                "prometheus_rule": self.rules_name,
                "selector_labels": self.selector_labels,
            }
        )

    def _neuron_monitor(
        self,
        name: str,
        args: GpuObservabilityArgs,
        in_ns: pulumi.ResourceOptions,
        after_kps: pulumi.ResourceOptions,
    ) -> None:
        import pulumi_kubernetes as k8s

        app = {"app.kubernetes.io/name": "neuron-monitor", "app.kubernetes.io/instance": name}
        self.neuron_monitor = k8s.apps.v1.DaemonSet(
            f"{name}-neuron-monitor",
            metadata={"name": f"{name}-neuron-monitor", "namespace": args.namespace, "labels": app},
            spec=neuron_monitor_spec(args, app),
            opts=in_ns,
        )
        self.neuron_pod_monitor = k8s.apiextensions.CustomResource(
            f"{name}-neuron-monitor",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={
                "name": f"{name}-neuron-monitor",
                "namespace": args.namespace,
                "labels": dict(self.selector_labels),
            },
            spec={
                "selector": {"matchLabels": app},
                "namespaceSelector": {"matchNames": [args.namespace]},
                "podMetricsEndpoints": [
                    {
                        "port": "metrics",
                        "path": "/metrics",
                        "interval": "30s",
                        "relabelings": node_relabelings(NEURON_JOB),
                    }
                ],
            },
            opts=after_kps,
        )


def _int_between(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
