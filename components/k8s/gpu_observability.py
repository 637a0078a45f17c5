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
- optionally AWS's neuron-monitor as a DaemonSet on Inferentia/Trainium nodes;
- two namespaces: the monitoring one enforces Pod Security `restricted`; the
  exporters that need the host (node-exporter, dcgm-exporter, neuron-monitor)
  run apart in one labelled `privileged`. Every image runs by digest (images.py).

Everything stays inside the cluster: the services are ClusterIP (reach them
with `kubectl port-forward`).
"""

from __future__ import annotations

import pulumi

from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.k8s.charts import DCGM_EXPORTER, KUBE_PROMETHEUS_STACK
from inference_infra.components.k8s.observability_args import (  # re-exported: the public arg types
    AlertReceiver,
    GpuObservabilityArgs,
    validate_gpu_observability,
)
from inference_infra.components.k8s.observability_values import (
    DASHBOARD_LABEL,
    DASHBOARD_LABEL_VALUE,
    EXPORTERS_POD_SECURITY,
    GRAFANA_PASSWORD_KEY,
    GRAFANA_USER_KEY,
    MONITORING_POD_SECURITY,
    dcgm_exporter_values,
    kube_prometheus_stack_values,
    neuron_monitor_network_policy,
    neuron_monitor_spec,
    node_relabelings,
    pod_security_labels,
)
from inference_infra.components.monitoring.alertmanager import render_alertmanager_yaml
from inference_infra.components.monitoring.dashboards import dashboards, to_json
from inference_infra.components.monitoring.rules import rule_file
from inference_infra.components.monitoring.scrape import NEURON_JOB
from inference_infra.components.validation import check_types

__all__ = ["AlertReceiver", "GpuObservability", "GpuObservabilityArgs", "validate_gpu_observability"]


class GpuObservability(pulumi.ComponentResource):
    """Prometheus, Alertmanager, Grafana and dcgm-exporter for a cluster's GPU nodes."""

    def __init__(self, name: str, args: GpuObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(
            f"GpuObservability {name!r}", check_types(args) or validate_gpu_observability(name, args)
        )
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

        exporters_ns = args.exporters_namespace_name
        self.namespace: k8s.core.v1.Namespace | None
        self.exporters_namespace: k8s.core.v1.Namespace | None
        if args.create_namespace:
            # Prometheus, Alertmanager, Grafana, the operator and kube-state-metrics meet `restricted`.
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-ns",
                metadata={"name": ns, "labels": pod_security_labels(MONITORING_POD_SECURITY)},
                opts=child,
            )
            # Host network/PID and / (node-exporter), CAP_SYS_ADMIN (dcgm-exporter), a privileged
            # container (neuron-monitor): nothing else runs here.
            self.exporters_namespace = k8s.core.v1.Namespace(
                f"{name}-exporters-ns",
                metadata={"name": exporters_ns, "labels": pod_security_labels(EXPORTERS_POD_SECURITY)},
                opts=child,
            )
            depends += [self.namespace, self.exporters_namespace]
        else:
            self.namespace = None
            self.exporters_namespace = None
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
            namespace=exporters_ns,
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
        self.neuron_network_policy: k8s.networking.v1.NetworkPolicy | None = None
        if args.neuron_monitor:
            self._neuron_monitor(name, args, in_ns, after_kps)

        self.grafana_admin_password = pulumi.Output.secret(self.grafana_password.result)
        self.prometheus_service = f"{self.kps_release_name}-prometheus"
        self.alertmanager_service = f"{self.kps_release_name}-alertmanager"
        self.grafana_service = f"{self.kps_release_name}-grafana"
        self.register_outputs(
            {
                "namespace": ns,
                "exporters_namespace": exporters_ns,
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
            metadata={
                "name": f"{name}-neuron-monitor",
                "namespace": args.exporters_namespace_name,
                "labels": app,
            },
            spec=neuron_monitor_spec(args, app),
            opts=in_ns,
        )
        # Only Prometheus reaches its metrics port, and it calls nothing: no egress at all.
        self.neuron_network_policy = k8s.networking.v1.NetworkPolicy(
            f"{name}-neuron-monitor",
            metadata={
                "name": f"{name}-neuron-monitor",
                "namespace": args.exporters_namespace_name,
                "labels": app,
            },
            spec=neuron_monitor_network_policy(args, app),
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
                "namespaceSelector": {"matchNames": [args.exporters_namespace_name]},
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
