"""Missing-target alerts: one absent() rule per fleet and exporter, so vanished targets page someone.

`DcgmExporterDown` (`up == 0`) cannot fire for a target Prometheus never
discovered or has lost altogether (a discovery filter that matches nothing, a
security group that was never opened, a pod the scheduler rejected): there is
no `up` series to be 0. These rules name every target the stack expects, by
fleet (`pool` label: the fleet name, from the instances' `Pool` tag / `pool`
label), and fire when Prometheus has no `up` series for it at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inference_infra.components.errors import Problem
from inference_infra.components.monitoring.alerts import Alert, Category, Severity, render

ABSENT_GROUP = "inference-infra-absent-targets"
ABSENT_ALERT_NAMES = ("GpuExporterAbsent", "NodeExporterAbsent", "ServingEngineAbsent", "NeuronMetricsAbsent")
KINDS = ("nvidia", "neuron", "tpu")


@dataclass(frozen=True, kw_only=True)
class FleetTargets:
    """What one fleet should expose to Prometheus."""

    pool: str  # the fleet's name: its instances' `Pool` tag (AWS) / `pool` label (GCP)
    kind: str  # nvidia, neuron or tpu
    engine: bool = False  # a fleet with a model runs vLLM, scraped as job `vllm`
    node_exporter: bool = True
    # Neuron fleets: whether Prometheus scrapes neuron-monitor on them. The VM fleets send Neuron
    # metrics to CloudWatch (components/aws/node/neuron_utilization.py), so no absent() rule there.
    neuron_monitor: bool = False


def validate_fleet_targets(fleets: Sequence[FleetTargets], where: str = "fleets") -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for f in fleets:
        if not f.pool or '"' in f.pool or "\\" in f.pool:
            problems.append(Problem(f"{where}.pool", f.pool, "must be a fleet name without quotes"))
        if f.pool in seen:
            problems.append(Problem(f"{where}.pool", f.pool, "is listed twice"))
        seen.add(f.pool)
        if f.kind not in KINDS:
            problems.append(Problem(f"{where}[{f.pool}].kind", f.kind, f"must be one of {', '.join(KINDS)}"))
    return problems


# (job, what it is, which fleets have it): the "fires when" of each missing-target alert
_WHAT = {
    "GpuExporterAbsent": ("dcgm-exporter", "an NVIDIA fleet"),
    "NeuronMetricsAbsent": ("neuron-monitor", "a Neuron fleet"),
    "NodeExporterAbsent": ("node exporter", "a fleet"),
    "ServingEngineAbsent": ("vLLM engine", "a fleet with a model"),
}


def _alert(name: str, job: str, pool: str, minutes: int) -> Alert:
    what, which = _WHAT[name]
    return Alert(
        name=name,
        group=ABSENT_GROUP,
        severity=Severity.WARNING,
        category=Category.HEALTH,
        expr=f'absent(up{{job="{job}",pool="{pool}"}})',
        for_minutes=minutes,
        labels={"pool": pool, "job": job},
        summary=f"No {what} target for fleet {pool}",
        description=(
            f"Prometheus has had no {job} target for fleet {pool} for {minutes} minutes: not down, "
            f"gone. Every alert on {what} metrics is blind for this fleet. Check discovery (the "
            "instances' tags, the discovery identity), the fleet's security group or firewall, and "
            "whether the fleet has running instances at all."
        ),
        when=f"no `{job}` target of {which} for {minutes} minutes",
    )


def absent_alerts(
    fleets: Sequence[FleetTargets],
    *,
    dcgm_job: str = "dcgm-exporter",
    node_job: str = "node-exporter",
    engine_job: str = "vllm",
    neuron_job: str = "neuron-monitor",
    minutes: int = 10,
) -> list[Alert]:
    """Per fleet, one alert per target it must expose."""
    alerts = []
    for f in fleets:
        if f.kind == "nvidia":
            alerts.append(_alert("GpuExporterAbsent", dcgm_job, f.pool, minutes))
        if f.kind == "neuron" and f.neuron_monitor:
            alerts.append(_alert("NeuronMetricsAbsent", neuron_job, f.pool, minutes))
        if f.node_exporter:
            alerts.append(_alert("NodeExporterAbsent", node_job, f.pool, minutes))
        if f.engine:
            alerts.append(_alert("ServingEngineAbsent", engine_job, f.pool, minutes))
    return alerts


def absent_rules(fleets: Sequence[FleetTargets], runbook_url: str, **jobs: Any) -> list[dict[str, Any]]:
    """The missing-target alerts as rule-file entries (`jobs`: see `absent_alerts`)."""
    return render(absent_alerts(fleets, **jobs), runbook_url)


def kubernetes_neuron_alert(neuron_job: str = "neuron-monitor", minutes: int = 10) -> Alert:
    """Inferentia/Trainium Kubernetes nodes with no neuron-monitor reporting (the DaemonSet's pod missing,
    pending or failing): per node, from kube-state-metrics' node labels."""
    neuron_nodes = (
        'max by (node) (kube_node_labels{label_node_kubernetes_io_instance_type=~"(inf|trn)[0-9].*"})'
    )
    return Alert(
        name="NeuronMetricsAbsent",
        group=ABSENT_GROUP,
        severity=Severity.WARNING,
        category=Category.HEALTH,
        expr=f'{neuron_nodes}\nunless on (node)\nmax by (node) (up{{job="{neuron_job}"}} == 1)',
        for_minutes=minutes,
        labels={"job": neuron_job},
        summary="No Neuron metrics from {{ $labels.node }}",
        description=(
            "The Inferentia/Trainium node {{ $labels.node }} has had no neuron-monitor target up for "
            f"{minutes} minutes: its NeuronCore utilization is invisible, so neither the dashboards nor "
            "the cost figures see it."
        ),
        when=f"a Kubernetes Inferentia/Trainium node with no `{neuron_job}` target up for {minutes} minutes",
    )


def kubernetes_neuron_rule(runbook_url: str, neuron_job: str = "neuron-monitor", minutes: int = 10) -> dict:
    """`kubernetes_neuron_alert` as a rule-file entry."""
    return kubernetes_neuron_alert(neuron_job, minutes).rule(runbook_url)
