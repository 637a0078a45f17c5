"""The chart value keys GpuObservability sets, as read in the charts' own values.yaml; a test checks them.

A misspelt Helm value is silently ignored: the chart renders its default and
the hardening or the pin it was meant to set is simply not there. Every key
path the component passes (observability_values.py) must be listed here, and
every entry here was read in the chart's values.yaml (or, where marked, in the
template that reads it). A path ends where the value is free-form (a
Kubernetes securityContext, an affinity, a selector, a list), whose contents
the Kubernetes schema checks instead (tests/components/k8s/test_rendered_objects.py).

Read 2026-11-24 from the newest chart versions in the stored snapshots of the
chart repositories: the pinned kube-prometheus-stack 91.4.1 and dcgm-exporter
4.8.3 were not in them (their newest: 88.5.3 and 4.8.2). Re-read these keys at
the pinned versions before relying on them: `helm show values
prometheus-community/kube-prometheus-stack --version 91.4.1`, and the same for
dcgm-exporter 4.8.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, kw_only=True)
class ChartKeys:
    chart: str
    pinned_version: str  # the version the component installs (charts.py)
    read_versions: str  # the chart (and subchart) versions whose values.yaml was read
    source: str
    as_of: date
    keys: frozenset[str]  # dotted value paths


KUBE_PROMETHEUS_STACK_KEYS = ChartKeys(
    chart="kube-prometheus-stack",
    pinned_version="91.4.1",
    read_versions="kube-prometheus-stack 88.5.3 with its subcharts grafana 12.11.1 (grafana-community), "
    "kube-state-metrics 8.4.0, prometheus-node-exporter 4.56.1",
    source="https://github.com/prometheus-community/helm-charts (tags kube-prometheus-stack-88.5.3, "
    "kube-state-metrics-8.4.0, prometheus-node-exporter-4.56.1) and "
    "https://github.com/grafana-community/helm-charts (tag grafana-12.11.1), values.yaml of each; "
    "alertmanager.alertmanagerSpec.configSecret is commented out in values.yaml and read by "
    "templates/alertmanager/alertmanager.yaml",
    as_of=date(2026, 11, 24),
    keys=frozenset(
        {
            "alertmanager.alertmanagerSpec.configSecret",
            "alertmanager.alertmanagerSpec.image.registry",
            "alertmanager.alertmanagerSpec.image.repository",
            "alertmanager.alertmanagerSpec.image.sha",
            "alertmanager.alertmanagerSpec.image.tag",
            "alertmanager.alertmanagerSpec.securityContext",
            "alertmanager.alertmanagerSpec.useExistingSecret",
            "alertmanager.enabled",
            "fullnameOverride",
            "grafana.admin.existingSecret",
            "grafana.admin.passwordKey",
            "grafana.admin.userKey",
            "grafana.containerSecurityContext",
            "grafana.enabled",
            "grafana.image.registry",
            "grafana.image.repository",
            "grafana.image.sha",
            "grafana.image.tag",
            "grafana.initChownData.enabled",
            "grafana.securityContext",
            "grafana.service.type",
            "grafana.sidecar.dashboards.enabled",
            "grafana.sidecar.dashboards.label",
            "grafana.sidecar.dashboards.labelValue",
            "grafana.sidecar.image.registry",
            "grafana.sidecar.image.repository",
            "grafana.sidecar.image.sha",
            "grafana.sidecar.image.tag",
            "grafana.sidecar.securityContext",
            "grafana.testFramework.enabled",
            "kube-state-metrics.containerSecurityContext",
            "kube-state-metrics.image.registry",
            "kube-state-metrics.image.repository",
            "kube-state-metrics.image.sha",
            "kube-state-metrics.image.tag",
            "kube-state-metrics.metricLabelsAllowlist",
            "kube-state-metrics.securityContext",
            "prometheus-node-exporter.containerSecurityContext",
            "prometheus-node-exporter.image.digest",
            "prometheus-node-exporter.image.registry",
            "prometheus-node-exporter.image.repository",
            "prometheus-node-exporter.image.tag",
            "prometheus-node-exporter.namespaceOverride",
            "prometheus-node-exporter.securityContext",
            "prometheus.prometheusSpec.additionalScrapeConfigs",
            # These two read 2026-12-02 in 88.5.3's values.yaml and templates/prometheus/prometheus.yaml
            # (passed to the Prometheus resource as they are; the template adds its own default rules to
            # excludedFromEnforcement).
            "prometheus.prometheusSpec.enforcedNamespaceLabel",
            "prometheus.prometheusSpec.excludedFromEnforcement",
            "prometheus.prometheusSpec.image.registry",
            "prometheus.prometheusSpec.image.repository",
            "prometheus.prometheusSpec.image.sha",
            "prometheus.prometheusSpec.image.tag",
            "prometheus.prometheusSpec.podMonitorNamespaceSelector",
            "prometheus.prometheusSpec.podMonitorSelector",
            "prometheus.prometheusSpec.podMonitorSelectorNilUsesHelmValues",
            "prometheus.prometheusSpec.retention",
            "prometheus.prometheusSpec.retentionSize",
            "prometheus.prometheusSpec.ruleNamespaceSelector",
            "prometheus.prometheusSpec.ruleSelector",
            "prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues",
            "prometheus.prometheusSpec.securityContext",
            "prometheus.prometheusSpec.serviceMonitorNamespaceSelector",
            "prometheus.prometheusSpec.serviceMonitorSelector",
            "prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues",
            "prometheus.prometheusSpec.storageSpec",
            "prometheus.serviceAccount.annotations",
            "prometheusOperator.admissionWebhooks.createSecretJob.securityContext",
            "prometheusOperator.admissionWebhooks.deployment.enabled",
            "prometheusOperator.admissionWebhooks.patch.image.registry",
            "prometheusOperator.admissionWebhooks.patch.image.repository",
            "prometheusOperator.admissionWebhooks.patch.image.sha",
            "prometheusOperator.admissionWebhooks.patch.image.tag",
            "prometheusOperator.admissionWebhooks.patch.securityContext",
            "prometheusOperator.admissionWebhooks.patchWebhookJob.securityContext",
            "prometheusOperator.containerSecurityContext",
            "prometheusOperator.image.registry",
            "prometheusOperator.image.repository",
            "prometheusOperator.image.sha",
            "prometheusOperator.image.tag",
            "prometheusOperator.prometheusConfigReloader.image.registry",
            "prometheusOperator.prometheusConfigReloader.image.repository",
            "prometheusOperator.prometheusConfigReloader.image.sha",
            "prometheusOperator.prometheusConfigReloader.image.tag",
            "prometheusOperator.securityContext",
            "prometheusOperator.thanosImage.registry",
            "prometheusOperator.thanosImage.repository",
            "prometheusOperator.thanosImage.sha",
            "prometheusOperator.thanosImage.tag",
        }
    ),
)

DCGM_EXPORTER_KEYS = ChartKeys(
    chart="dcgm-exporter",
    pinned_version="4.8.3",
    read_versions="dcgm-exporter 4.8.2",
    source="https://github.com/NVIDIA/dcgm-exporter (tag 4.5.3-4.8.2), deployment/values.yaml; the chart "
    "has no digest value and renders image as <image.repository>:<image.tag> (deployment/templates/"
    "daemonset.yaml)",
    as_of=date(2026, 11, 24),
    keys=frozenset(
        {
            "affinity",
            "image.repository",
            "image.tag",
            "kubernetes.enablePodLabels",
            "podSecurityContext",
            "securityContext",
            "serviceMonitor.additionalLabels",
            "serviceMonitor.enabled",
            "serviceMonitor.honorLabels",
            "serviceMonitor.interval",
            "serviceMonitor.relabelings",
            "tolerations",
        }
    ),
)
