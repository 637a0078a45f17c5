"""GPU monitoring as pure code: alert thresholds, Prometheus rules, scrape configs, dashboards.

Nothing here needs Pulumi: `inference_infra.components.k8s.GpuObservability` deploys what these
modules render, and `inference-infra monitoring rules|scrape-config` prints it
for Prometheus servers outside Kubernetes.
"""
