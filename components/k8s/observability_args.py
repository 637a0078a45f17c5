"""GpuObservability's arguments and their validation (pure: no Pulumi resources, no Kubernetes SDK).

Apart from the component so that the Helm values (observability_values.py)
and the component (gpu_observability.py) both import them without a cycle.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem
from inference_infra.components.k8s.charts import DCGM_EXPORTER, KUBE_PROMETHEUS_STACK, NEURON_MONITOR
from inference_infra.components.k8s.images import PINNED_REFERENCE
from inference_infra.components.k8s.serving_pool_args import label_problems
from inference_infra.components.monitoring.absent import FleetTargets
from inference_infra.components.monitoring.alertmanager import (
    Receiver,
    ReceiverKind,
    secret_problems,
    validate_receivers,
)
from inference_infra.components.monitoring.rules import (
    DCGM_JOB,
    DEFAULT_RUNBOOK_URL,
    RuleSettings,
    validate_rule_settings,
)
from inference_infra.components.monitoring.scrape import ScrapeSettings, validate_scrape_settings
from inference_infra.components.monitoring.serving import ServingSettings
from inference_infra.components.monitoring.serving_cost import PoolCost
from inference_infra.components.monitoring.thresholds import Thresholds

_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_MAX_NAME = 20  # "<name>-kps" stays within kube-prometheus-stack's 26-character fullname


@dataclass(frozen=True, kw_only=True)
class AlertReceiver:
    """Where alerts go. `secret` is the Slack webhook URL, PagerDuty routing key or webhook URL."""

    name: str = arg(doc="The receiver's name in Alertmanager.")
    kind: ReceiverKind = arg(doc="slack, pagerduty or webhook.")
    secret: pulumi.Input[str] = arg(
        doc="The Slack webhook URL, PagerDuty routing key or webhook URL (keep it a Pulumi secret); an "
        "http(s) URL or a key without spaces or newlines, checked before its Secret registers."
    )
    channel: str | None = arg(None, "Slack only: the channel ('#name').")
    severities: Sequence[str] = arg(("critical", "warning"), "The alert severities sent here.")

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
    """GpuObservability on an existing Kubernetes cluster."""

    namespace: str = arg(
        "monitoring",
        "Namespace of Prometheus, Alertmanager, Grafana and the operator (Pod Security 'restricted').",
    )
    exporters_namespace: str | None = arg(
        None,
        "Namespace of dcgm-exporter, node exporter and neuron-monitor, which need host access (Pod Security "
        "'privileged'); default: '<namespace>-exporters'.",
    )
    create_namespace: bool = arg(True, "Create both namespaces, labelled with their Pod Security level.")
    kubeconfig: pulumi.Input[str] | None = arg(
        None, "A kubeconfig (keep it secret); default: the provider in opts, or the ambient kubeconfig."
    )
    kube_context: str | None = arg(None, "kubeconfig context to deploy to (default: the current context).")
    retention_days: int = arg(15, "Prometheus retention in days.", ge=1, le=3650)
    storage_size_gib: int = arg(50, "Prometheus volume size in GiB.", ge=5, le=65536)
    retention_size_gib: int | None = arg(
        None,
        "Prometheus retention by size in GiB, below the volume's; default: 85% of storageSizeGib.",
        ge=1,
        le=65536,
    )
    storage_class: str | None = arg(
        None, "StorageClass of the Prometheus volume; default: the cluster's default StorageClass."
    )
    thresholds: Thresholds = arg(
        factory=Thresholds, doc="Alert thresholds; each unset key keeps its default."
    )
    runbook_url: str = arg(
        DEFAULT_RUNBOOK_URL,
        "Runbook the alerts link to (anchors appended): an http(s) URL without a fragment, spaces, quotes, "
        "braces, '<', '>' or '|'.",
    )
    alert_receivers: Sequence[AlertReceiver] = arg((), "Where alerts go (Alertmanager receivers).")
    gpu_node_labels: Sequence[str] = arg(
        factory=_default_gpu_node_labels,
        doc="Node label keys that mark NVIDIA GPU nodes (nodes of a catalog GPU instance type match too).",
    )
    neuron_monitor: bool = arg(
        False, "Run neuron-monitor on Inferentia/Trainium nodes (needs neuronMonitorImage)."
    )
    kube_prometheus_stack_version: str = arg(
        KUBE_PROMETHEUS_STACK.version, "The kube-prometheus-stack chart's exact version."
    )
    dcgm_exporter_version: str = arg(DCGM_EXPORTER.version, "The dcgm-exporter chart's exact version.")
    # No public digest of AWS's image is recorded (components/images.py), and nothing runs in the
    # cluster by tag.
    neuron_monitor_image: str | None = arg(
        None,
        "The neuron-monitor image pinned by digest (registry/repository[:tag]@sha256:<64 hex>); required "
        "with neuronMonitor: no public digest of AWS's image is recorded.",
    )
    grafana_admin_user: str = arg(
        "admin", "Grafana's admin user: 1-64 ASCII letters, digits and . _ @ + - (its password is generated)."
    )
    aws_price_region: str | None = arg(
        None, "Region of the AWS prices in the cost rules; default: the catalog's reference region."
    )
    gcp_price_region: str | None = arg(
        None, "Region of the GCP prices in the cost rules; default: the catalog's reference region."
    )
    # What the rules know of the fleets: serving SLOs, per-fleet missing-target alerts, per-pool cost
    # (components/monitoring); a stack derives them from its fleets.
    serving: ServingSettings = arg(
        factory=ServingSettings, doc="Serving SLOs per pool (latency class).", stack=False
    )
    fleets: Sequence[FleetTargets] = arg((), "Fleets whose targets must be up (absent alerts).", stack=False)
    pool_costs: Sequence[PoolCost] = arg((), "Each pool's hourly price for the cost rules.", stack=False)
    fleet_discovery: ScrapeSettings | None = arg(
        None,
        "The stack's own VM fleets, discovered by their tags/labels (monitoring/scrape.py renders the jobs, "
        "as `monitoring scrape-config` does); default: the cluster's ServiceMonitors only.",
        stack=False,
    )
    prometheus_service_account_annotations: Mapping[str, pulumi.Input[str]] = arg(
        factory=dict,
        doc="Prometheus's ServiceAccount annotations naming its discovery identity, e.g. IRSA "
        "{eks.amazonaws.com/role-arn: ...} or Workload Identity {iam.gke.io/gcp-service-account: ...}: a "
        "role that may only list instances (monitoring/scrape.py discovery_policy()).",
        stack=False,
    )

    @property
    def exporters_namespace_name(self) -> str:
        return (
            self.exporters_namespace
            if self.exporters_namespace is not None
            else f"{self.namespace}-exporters"
        )

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
    if not _DNS_LABEL.fullmatch(name) or len(name) > _MAX_NAME:
        p.append(
            Problem("name", name, f"must be a DNS label of at most {_MAX_NAME} characters (a-z, 0-9, '-')")
        )
    if not _DNS_LABEL.fullmatch(args.namespace) or len(args.namespace) > 63:
        p.append(Problem("namespace", args.namespace, "must be a Kubernetes namespace name (a-z, 0-9, '-')"))
    # retention_days and storage_size_gib are within their arg() bounds: check_types saw to that.
    if args.retention_size_gib is not None and not _int_between(
        args.retention_size_gib, 1, args.storage_size_gib - 1
    ):
        p.append(
            Problem(
                "retention_size_gib",
                args.retention_size_gib,
                f"must be below storage_size_gib ({args.storage_size_gib}): the WAL needs room too",
            )
        )
    if args.storage_class is not None and not _DNS_SUBDOMAIN.fullmatch(args.storage_class):
        p.append(Problem("storage_class", args.storage_class, "must be a StorageClass name"))
    for key, version in (
        ("kube_prometheus_stack_version", args.kube_prometheus_stack_version),
        ("dcgm_exporter_version", args.dcgm_exporter_version),
    ):
        if not _EXACT_VERSION.fullmatch(str(version)):
            p.append(
                Problem(key, version, "must be an exact chart version like 1.2.3 (no ranges, no 'latest')")
            )
    exporters = args.exporters_namespace_name
    if not _DNS_LABEL.fullmatch(exporters) or len(exporters) > 63:
        p.append(
            Problem("exporters_namespace", exporters, "must be a Kubernetes namespace name (a-z, 0-9, '-')")
        )
    elif exporters == args.namespace:
        p.append(
            Problem(
                "exporters_namespace",
                exporters,
                f"must differ from namespace ({args.namespace!r}): the exporters need Pod Security "
                "'privileged', the monitoring namespace enforces 'restricted'",
            )
        )
    if args.neuron_monitor_image is None:
        if args.neuron_monitor:
            p.append(
                Problem(
                    "neuron_monitor_image",
                    None,
                    "must be given with neuron_monitor, pinned by digest (registry/repository[:tag]@sha256:"
                    f"<64 hex>): no public digest of {NEURON_MONITOR.reference} is recorded; resolve one "
                    f"(e.g. `crane digest {NEURON_MONITOR.reference}`) and pass it",
                )
            )
    elif not PINNED_REFERENCE.match(args.neuron_monitor_image):
        p.append(
            Problem(
                "neuron_monitor_image",
                args.neuron_monitor_image,
                "must be pinned by digest: registry/repository[:tag]@sha256:<64 hex>",
            )
        )
    # The same rule as KubernetesCluster.kube_context: a context name, never a line break.
    if args.kube_context is not None and not re.fullmatch(r"[\w.:@/-]{1,253}", args.kube_context):
        p.append(Problem("kube_context", args.kube_context, "must be a kubeconfig context name"))
    if not args.grafana_admin_user.strip():
        p.append(Problem("grafana_admin_user", args.grafana_admin_user, "must not be empty"))
    elif not re.fullmatch(r"[A-Za-z0-9_.@+-]{1,64}", args.grafana_admin_user):
        # the login Grafana's chart sets from the admin Secret: a line break or a space makes a user no
        # one can type at the login page
        p.append(
            Problem(
                "grafana_admin_user",
                args.grafana_admin_user,
                "must be 1-64 ASCII letters, digits and . _ @ + - (a login name, no spaces or line breaks)",
            )
        )
    if not args.gpu_node_labels:
        p.append(Problem("gpu_node_labels", list(args.gpu_node_labels), "must name at least one node label"))
    # Each is a matchExpressions key of dcgm-exporter's node affinity: a key the API server refuses fails
    # the DaemonSet, and the Helm release with it, at deploy.
    p += label_problems("gpu_node_labels", {key: "" for key in args.gpu_node_labels})
    p += validate_rule_settings(args.rule_settings(), where="rules")
    receivers = [r.receiver() for r in args.alert_receivers]
    receiver_problems = validate_receivers(receivers)
    p += receiver_problems
    if not receiver_problems:  # the kinds are known good: check the secrets given as plain strings
        # A blank one stands for a secret given at deploy (the reference stack validates with blanks);
        # the deploy checks it when its value arrives (render_alertmanager_yaml).
        given = [None if r.secret == "" else r.secret for r in args.alert_receivers]
        p += secret_problems(receivers, given)
    return p


def _int_between(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
