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

from typing import TYPE_CHECKING

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
from inference_infra.components.monitoring.rules import RuleSettings, rule_file
from inference_infra.components.monitoring.scrape import NEURON_JOB
from inference_infra.components.validation import input_problems

if TYPE_CHECKING:  # the SDKs load when a component is built, not when this module is imported
    import pulumi_kubernetes as k8s

__all__ = ["AlertReceiver", "GpuObservability", "GpuObservabilityArgs", "validate_gpu_observability"]


class GpuObservability(pulumi.ComponentResource):
    """Prometheus, Alertmanager, Grafana and dcgm-exporter for a cluster's GPU nodes."""

    def __init__(self, name: str, args: GpuObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(
            f"GpuObservability {name!r}", input_problems(args, lambda a: validate_gpu_observability(name, a))
        )
        super().__init__("inference-infra:k8s:GpuObservability", name, None, opts)
        self.kps_release_name = f"{name}-kps"
        self.selector_labels = {"release": self.kps_release_name}
        settings = args.rule_settings()

        child = self._cluster_provider(name, args)
        namespaces = self._namespaces(name, args, child)
        in_ns = _after(child, namespaces)
        secrets = [self._grafana_admin(name, args, in_ns), *self._alertmanager_config(name, args, in_ns)]
        self.kube_prometheus_stack = self._kube_prometheus_stack(
            name, args, _after(child, [*namespaces, *secrets])
        )
        # The operator's CRDs (PrometheusRule, PodMonitor) and the selector arrive with the release.
        after_kps = _after(child, [self.kube_prometheus_stack])
        self.dcgm_exporter = self._dcgm_exporter(name, args, after_kps)
        self.rules = self._gpu_rules(name, args, settings, after_kps)
        self.dashboards = self._dashboards(name, args, settings, in_ns)
        self.neuron_monitor: k8s.apps.v1.DaemonSet | None = None
        self.neuron_pod_monitor: k8s.apiextensions.CustomResource | None = None
        self.neuron_network_policy: k8s.networking.v1.NetworkPolicy | None = None
        if args.neuron_monitor:
            self._neuron_monitor(name, args, in_ns, after_kps)
        self._register(args)

    def _cluster_provider(self, name: str, args: GpuObservabilityArgs) -> pulumi.ResourceOptions:
        """The children's options: a provider of their own when a kubeconfig or context is given."""
        import pulumi_kubernetes as k8s

        self.provider: k8s.Provider | None = None
        if args.kubeconfig is None and args.kube_context is None:
            return pulumi.ResourceOptions(parent=self)
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=pulumi.Output.secret(args.kubeconfig) if args.kubeconfig is not None else None,
            context=args.kube_context,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return pulumi.ResourceOptions(parent=self, provider=self.provider)

    def _namespaces(
        self, name: str, args: GpuObservabilityArgs, child: pulumi.ResourceOptions
    ) -> list[pulumi.Resource]:
        """The monitoring namespace and the exporters' one, when the component creates them."""
        import pulumi_kubernetes as k8s

        self.namespace: k8s.core.v1.Namespace | None = None
        self.exporters_namespace: k8s.core.v1.Namespace | None = None
        if not args.create_namespace:
            return []
        # Prometheus, Alertmanager, Grafana, the operator and kube-state-metrics meet `restricted`.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": args.namespace, "labels": pod_security_labels(MONITORING_POD_SECURITY)},
            opts=child,
        )
        # Host network/PID and / (node-exporter), CAP_SYS_ADMIN (dcgm-exporter), a privileged
        # container (neuron-monitor): nothing else runs here.
        self.exporters_namespace = k8s.core.v1.Namespace(
            f"{name}-exporters-ns",
            metadata={
                "name": args.exporters_namespace_name,
                "labels": pod_security_labels(EXPORTERS_POD_SECURITY),
            },
            opts=child,
        )
        return [self.namespace, self.exporters_namespace]

    def _grafana_admin(
        self, name: str, args: GpuObservabilityArgs, in_ns: pulumi.ResourceOptions
    ) -> k8s.core.v1.Secret:
        """A generated Grafana admin password (a Pulumi secret) and the Secret Grafana reads it from."""
        import pulumi_kubernetes as k8s
        import pulumi_random as random

        self.grafana_password = random.RandomPassword(
            f"{name}-grafana-admin", length=32, special=False, opts=pulumi.ResourceOptions(parent=self)
        )
        self.grafana_secret = k8s.core.v1.Secret(
            f"{name}-grafana-admin",
            metadata={"name": _grafana_secret_name(name), "namespace": args.namespace},
            type="Opaque",
            string_data={
                GRAFANA_USER_KEY: args.grafana_admin_user,
                GRAFANA_PASSWORD_KEY: pulumi.Output.secret(self.grafana_password.result),
            },
            opts=in_ns,
        )
        return self.grafana_secret

    def _alertmanager_config(
        self, name: str, args: GpuObservabilityArgs, in_ns: pulumi.ResourceOptions
    ) -> list[pulumi.Resource]:
        """Alertmanager's configuration as a Secret, rendered from the receivers' secret inputs."""
        import pulumi_kubernetes as k8s

        self.alertmanager_secret: k8s.core.v1.Secret | None = None
        if not args.alert_receivers:
            return []
        receivers = [r.receiver() for r in args.alert_receivers]
        rendered = pulumi.Output.all(*(r.secret for r in args.alert_receivers)).apply(
            # Checked at deploy only: a preview's secrets may be stand-ins (the offline plan's are).
            lambda secrets: render_alertmanager_yaml(
                receivers, [str(s) for s in secrets], check_secrets=not pulumi.runtime.is_dry_run()
            )
        )
        self.alertmanager_secret = k8s.core.v1.Secret(
            f"{name}-alertmanager-config",
            metadata={"name": _alertmanager_secret_name(name), "namespace": args.namespace},
            type="Opaque",
            string_data={"alertmanager.yaml": pulumi.Output.secret(rendered)},
            opts=in_ns,
        )
        return [self.alertmanager_secret]

    def _kube_prometheus_stack(
        self, name: str, args: GpuObservabilityArgs, opts: pulumi.ResourceOptions
    ) -> k8s.helm.v3.Release:
        """Prometheus, Alertmanager, Grafana, the operator and kube-state-metrics: one pinned release."""
        import pulumi_kubernetes as k8s

        return k8s.helm.v3.Release(
            f"{name}-kube-prometheus-stack",
            name=self.kps_release_name,
            chart=KUBE_PROMETHEUS_STACK.name,
            version=args.kube_prometheus_stack_version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=KUBE_PROMETHEUS_STACK.repo),
            namespace=args.namespace,
            atomic=True,
            cleanup_on_fail=True,
            timeout=900,
            max_history=10,
            values=kube_prometheus_stack_values(
                args,
                release=self.kps_release_name,
                grafana_secret=_grafana_secret_name(name),
                alertmanager_secret=_alertmanager_secret_name(name) if args.alert_receivers else None,
            ),
            opts=opts,
        )

    def _dcgm_exporter(
        self, name: str, args: GpuObservabilityArgs, after_kps: pulumi.ResourceOptions
    ) -> k8s.helm.v3.Release:
        """NVIDIA's dcgm-exporter, pinned, its ServiceMonitor carrying the label Prometheus selects on."""
        import pulumi_kubernetes as k8s

        self.dcgm_release_name = f"{name}-dcgm-exporter"
        return k8s.helm.v3.Release(
            f"{name}-dcgm-exporter",
            name=self.dcgm_release_name,
            chart=DCGM_EXPORTER.name,
            version=args.dcgm_exporter_version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=DCGM_EXPORTER.repo),
            namespace=args.exporters_namespace_name,
            atomic=True,
            cleanup_on_fail=True,
            timeout=600,
            max_history=10,
            values=dcgm_exporter_values(args, selector_labels=self.selector_labels),
            opts=after_kps,
        )

    def _gpu_rules(
        self,
        name: str,
        args: GpuObservabilityArgs,
        settings: RuleSettings,
        after_kps: pulumi.ResourceOptions,
    ) -> k8s.apiextensions.CustomResource:
        """The alert and cost rules (monitoring/rules.py) as a PrometheusRule Prometheus selects."""
        import pulumi_kubernetes as k8s

        self.rules_name = f"{name}-gpu-rules"
        return k8s.apiextensions.CustomResource(
            f"{name}-gpu-rules",
            api_version="monitoring.coreos.com/v1",
            kind="PrometheusRule",
            metadata={
                "name": self.rules_name,
                "namespace": args.namespace,
                "labels": dict(self.selector_labels),
            },
            spec=rule_file(settings),
            opts=after_kps,
        )

    def _dashboards(
        self,
        name: str,
        args: GpuObservabilityArgs,
        settings: RuleSettings,
        in_ns: pulumi.ResourceOptions,
    ) -> list[k8s.core.v1.ConfigMap]:
        """One ConfigMap per Grafana dashboard, labelled for Grafana's dashboard sidecar."""
        import pulumi_kubernetes as k8s

        maps: list[k8s.core.v1.ConfigMap] = []
        for file_name, model in dashboards(settings, neuron=args.neuron_monitor).items():
            stem = file_name.removesuffix(".json").removeprefix("inference-infra-")
            maps.append(
                k8s.core.v1.ConfigMap(
                    f"{name}-dashboard-{stem}",
                    metadata={
                        "name": f"{name}-dashboard-{stem}",
                        "namespace": args.namespace,
                        "labels": {DASHBOARD_LABEL: DASHBOARD_LABEL_VALUE},
                    },
                    data={file_name: to_json(model)},
                    opts=in_ns,
                )
            )
        return maps

    def _register(self, args: GpuObservabilityArgs) -> None:
        self.grafana_admin_password = pulumi.Output.secret(self.grafana_password.result)
        self.prometheus_service = f"{self.kps_release_name}-prometheus"
        self.alertmanager_service = f"{self.kps_release_name}-alertmanager"
        self.grafana_service = f"{self.kps_release_name}-grafana"
        self.register_outputs(
            {
                "namespace": args.namespace,
                "exporters_namespace": args.exporters_namespace_name,
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


def _after(child: pulumi.ResourceOptions, resources: list[pulumi.Resource]) -> pulumi.ResourceOptions:
    """The children's options, waiting for these resources first."""
    return pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(resources)))


def _grafana_secret_name(name: str) -> str:
    return f"{name}-grafana-admin"


def _alertmanager_secret_name(name: str) -> str:
    return f"{name}-alertmanager-config"
