"""Prometheus rules for GPU fleets, rendered from typed thresholds.

Two rule groups, the same on Kubernetes (the PrometheusRule of
`inference_infra.components.k8s.GpuObservability`) and on VM fleets (`inference-infra
monitoring rules` feeding a plain Prometheus):

- `inference-infra-gpu-alerts`: the GPU alerts (docs/reference.md), on dcgm-exporter's
  metrics, each with a severity, a summary, a description and a runbook link.
- `inference-infra-gpu-cost`: the per-GPU on-demand price of every NVIDIA
  instance type in the catalog, and what each GPU (and each idle GPU) costs per
  hour. VM targets carry an `instance_type` label (see `scrape.py`); on
  Kubernetes the type comes from the node's `node.kubernetes.io/instance-type`
  label through kube-state-metrics' `kube_node_labels`, joined on `node`.

Alerts read the raw dcgm-exporter series, never the cost rules, so a missing
price or node label can hide a dollar figure but never an alert.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from inference_infra.components.errors import Problem
from inference_infra.components.monitoring.absent import (
    ABSENT_GROUP,
    FleetTargets,
    absent_alerts,
    kubernetes_neuron_alert,
    validate_fleet_targets,
)
from inference_infra.components.monitoring.alerts import Alert, Category, Severity, alert_table, render
from inference_infra.components.monitoring.prices import gpu_prices
from inference_infra.components.monitoring.promql import num
from inference_infra.components.monitoring.serving import (
    Latency,
    ServingSettings,
    serving_alerts,
    serving_rule_group,
    validate_serving_settings,
)
from inference_infra.components.monitoring.serving_cost import (
    COST_GROUP as SERVING_COST_GROUP,
)
from inference_infra.components.monitoring.serving_cost import (
    PoolCost,
    serving_cost_rules,
    validate_pool_costs,
)
from inference_infra.components.monitoring.thresholds import Thresholds, validate_thresholds
from inference_infra.components.monitoring.weights import weights_alerts, weights_rule_group

ALERT_NAMES = (
    "GpuIdle",
    "GpuSaturated",
    "GpuMemoryPressure",
    "GpuHighTemperature",
    "GpuXidErrors",
    "DcgmExporterDown",
)
DCGM_JOB = "dcgm-exporter"
ALERT_GROUP = "inference-infra-gpu-alerts"
COST_GROUP = "inference-infra-gpu-cost"
DEFAULT_RUNBOOK_URL = (
    "https://github.com/inference-infra/inference-infra/blob/main/components/monitoring/RUNBOOK.md"
)

# Recorded series (level:metric:operations, as Prometheus's naming guide has it).
PRICE_SERIES = "inference_infra:gpu_price_usd_per_hour"
NODE_TYPE_SERIES = "inference_infra:node_instance_type:info"
GPU_IDLE_SERIES = "inference_infra:gpu_idle:bool"
GPU_COST_SERIES = "inference_infra:gpu_cost_usd_per_hour"
GPU_IDLE_COST_SERIES = "inference_infra:gpu_idle_cost_usd_per_hour"

# Where a GPU lives: the `node` label (set by our scrape configs and the
# Kubernetes ServiceMonitor), else the exporter's own Hostname label.
_WHERE = "{{ with $labels.node }}{{ . }}{{ else }}{{ $labels.Hostname }}{{ end }}"
_GPU = "GPU {{ $labels.gpu }} ({{ $labels.modelName }}) on " + _WHERE


# Every annotation of a rule is a Go text/template that Prometheus expands when the alert fires, and a
# rule file whose template does not parse is refused whole (promtool check rules: "template: ...:
# unexpected {{end}}"), so a runbook URL carrying '{{' would drop every alert of the file. The URL is
# RFC 3986's characters without braces, spaces, quotes, '<', '>', '|' (Slack's link syntax in
# alertmanager.py's message) or a fragment (each alert appends '#<its name>').
_RUNBOOK_URL_RE = re.compile(
    r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~!$&()*+,;=:@%/-]*)?(\?[A-Za-z0-9._~!$&()*+,;=:@%/?-]*)?"
)
RUNBOOK_URL_RULE = (
    "must be an http(s) URL of at most 500 characters without a fragment, spaces, quotes, braces, "
    "'<', '>' or '|' (every alert appends '#<its name>', and Prometheus reads '{{' as a template)"
)


def runbook_url_ok(url: object) -> bool:
    return isinstance(url, str) and len(url) <= 500 and _RUNBOOK_URL_RE.fullmatch(url) is not None


@dataclass(frozen=True, kw_only=True)
class RuleSettings:
    """What the rule file depends on besides the thresholds."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    runbook_url: str = DEFAULT_RUNBOOK_URL  # anchors '#gpuidle' etc. are appended
    dcgm_job: str = DCGM_JOB  # the `job` label of the dcgm-exporter targets
    aws_price_region: str | None = None  # None: the catalog's reference region
    gcp_price_region: str | None = None
    serving: ServingSettings = field(default_factory=ServingSettings)  # engine SLOs (serving.py)
    fleets: tuple[FleetTargets, ...] = ()  # the targets each fleet must expose (absent.py)
    pool_costs: tuple[PoolCost, ...] = ()  # each pool's catalog price (serving_cost.py)
    kubernetes_neuron: bool = False  # Kubernetes with neuron-monitor: alert on Neuron nodes without it


def validate_rule_settings(settings: RuleSettings, where: str = "rules") -> list[Problem]:
    problems = validate_thresholds(settings.thresholds, f"{where}.thresholds")
    problems += validate_serving_settings(settings.serving, f"{where}.serving")
    problems += validate_fleet_targets(settings.fleets, f"{where}.fleets")
    problems += validate_pool_costs(settings.pool_costs, f"{where}.pool_costs")
    if not runbook_url_ok(settings.runbook_url):
        problems.append(Problem(f"{where}.runbook_url", settings.runbook_url, RUNBOOK_URL_RULE))
    if not settings.dcgm_job or '"' in settings.dcgm_job or "\\" in settings.dcgm_job:
        problems.append(Problem(f"{where}.dcgm_job", settings.dcgm_job, "must be a job name without quotes"))
    return problems


def gpu_alerts(s: RuleSettings) -> list[Alert]:
    """The GPU alerts on dcgm-exporter's metrics (group `inference-infra-gpu-alerts`)."""
    t = s.thresholds
    smoothed = f"avg_over_time(DCGM_FI_DEV_GPU_UTIL[{t.smoothing_minutes}m])"
    fb_used_percent = "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)"
    gpu = functools.partial(Alert, group=ALERT_GROUP)
    return [
        gpu(
            name="GpuIdle",
            severity=Severity.WARNING,
            category=Category.COST,
            expr=f"{smoothed} < {num(t.idle_utilization_percent)}",
            for_minutes=t.idle_minutes,
            summary=f"GPU idle for {t.idle_minutes} minutes on " + _WHERE,
            description=f'{_GPU} has averaged {{{{ $value | printf "%.0f" }}}}% utilization for '
            f"{t.idle_minutes} minutes, below the {num(t.idle_utilization_percent)}% idle threshold. An idle "
            "accelerator costs as much per hour as a busy one: consolidate, scale in or stop it.",
            when=f"{t.smoothing_minutes}-minute average of `DCGM_FI_DEV_GPU_UTIL` below "
            f"{num(t.idle_utilization_percent)}% for {t.idle_minutes} minutes",
        ),
        gpu(
            name="GpuSaturated",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr=f"{smoothed} > {num(t.saturated_utilization_percent)}",
            for_minutes=t.saturated_minutes,
            summary=f"GPU saturated for {t.saturated_minutes} minutes on " + _WHERE,
            description=f'{_GPU} has averaged {{{{ $value | printf "%.0f" }}}}% utilization for '
            f"{t.saturated_minutes} minutes, above {num(t.saturated_utilization_percent)}%. Requests "
            "queue and latency grows: add capacity or shed load.",
            when=f"{t.smoothing_minutes}-minute average above {num(t.saturated_utilization_percent)}% "
            f"for {t.saturated_minutes} minutes",
        ),
        gpu(
            name="GpuMemoryPressure",
            severity=Severity.WARNING,
            category=Category.CAPACITY,
            expr=f"{fb_used_percent} > {num(t.memory_used_percent)}",
            for_minutes=t.memory_minutes,
            summary="GPU framebuffer almost full on " + _WHERE,
            description=f'{_GPU} has {{{{ $value | printf "%.1f" }}}}% of its framebuffer in use (threshold '
            f"{num(t.memory_used_percent)}%) for {t.memory_minutes} minutes. One more request or a longer "
            "context can end in a CUDA out-of-memory error that kills the inference server.",
            when=f"framebuffer more than {num(t.memory_used_percent)}% used for {t.memory_minutes} minutes",
        ),
        gpu(
            name="GpuHighTemperature",
            severity=Severity.WARNING,
            category=Category.HEALTH,
            expr=f"DCGM_FI_DEV_GPU_TEMP > {num(t.temperature_celsius)}",
            for_minutes=t.temperature_minutes,
            summary="GPU running hot on " + _WHERE,
            description=f"{_GPU} has been above {num(t.temperature_celsius)} °C for {t.temperature_minutes} "
            "minutes ({{ $value }} °C now). Thermal throttling lowers clocks and throughput.",
            when=f"`DCGM_FI_DEV_GPU_TEMP` above {num(t.temperature_celsius)} °C for "
            f"{t.temperature_minutes} minutes",
        ),
        gpu(
            name="GpuXidErrors",
            severity=Severity.CRITICAL,
            category=Category.HEALTH,
            expr="DCGM_FI_DEV_XID_ERRORS > 0",
            for_minutes=0,
            summary="GPU reported XID error {{ $value }} on " + _WHERE,
            description=f"{_GPU} reported XID {{{{ $value }}}}. XIDs are driver-reported GPU faults; some "
            "(48, 79, 94/95, 119/120) mean the GPU needs a reset or replacement. The runbook lists what "
            "each means.",
            when="any XID error reported",
        ),
        gpu(
            name="DcgmExporterDown",
            severity=Severity.WARNING,
            category=Category.HEALTH,
            expr=f'up{{job="{s.dcgm_job}"}} == 0',
            for_minutes=t.exporter_down_minutes,
            summary="dcgm-exporter down on {{ $labels.instance }}",
            description=f"The dcgm-exporter target {{{{ $labels.instance }}}} (job {s.dcgm_job}) has failed "
            f"its scrapes for {t.exporter_down_minutes} minutes. While it is down no other GPU alert can "
            "fire for that machine, idle ones included.",
            when=f"a `{s.dcgm_job}` target down for {t.exporter_down_minutes} minutes",
        ),
    ]


def alert_rules(settings: RuleSettings) -> list[dict[str, Any]]:
    """The GPU alert rules, as Prometheus rule-file (and PrometheusRule) entries."""
    return render(gpu_alerts(settings), settings.runbook_url)


def cost_rules(settings: RuleSettings) -> list[dict[str, Any]]:
    """Recording rules: the catalog's per-GPU prices, and per-GPU cost and idle cost per hour."""
    t = settings.thresholds
    prices = gpu_prices(aws_region=settings.aws_price_region, gcp_region=settings.gcp_price_region)
    rules: list[dict[str, Any]] = [
        {
            "record": PRICE_SERIES,
            "expr": f"vector({num(p.usd_per_gpu_hour)})",
            "labels": {
                "cloud": p.cloud.value,
                "instance_type": p.instance_type,
                "accelerator": p.accelerator,
            },
        }
        for p in prices
    ]
    rules.append(
        {
            "record": NODE_TYPE_SERIES,
            "expr": (
                "max by (node, instance_type) (label_replace(kube_node_labels{"
                'label_node_kubernetes_io_instance_type!=""}, "instance_type", "$1", '
                '"label_node_kubernetes_io_instance_type", "(.+)"))'
            ),
        }
    )
    rules.append(
        {
            "record": GPU_IDLE_SERIES,
            "expr": (
                f"avg_over_time(DCGM_FI_DEV_GPU_UTIL[{t.smoothing_minutes}m]) "
                f"< bool {num(t.idle_utilization_percent)}"
            ),
        }
    )
    # Every GPU counts once in the cost (idle or not); idle ones also in the idle cost.
    rules.append(
        {"record": GPU_COST_SERIES, "expr": _priced(lambda sel: f"({GPU_IDLE_SERIES}{sel} >= bool 0)")}
    )
    rules.append({"record": GPU_IDLE_COST_SERIES, "expr": _priced(lambda sel: f"{GPU_IDLE_SERIES}{sel}")})
    return rules


def _priced(per_gpu: Callable[[str], str]) -> str:
    """A 0/1 series per GPU times that GPU's price; per_gpu(selector) writes the series.

    VM targets carry `instance_type` themselves; Kubernetes GPUs get it from
    their node. Either branch is empty where the other applies.
    """
    typed = per_gpu('{instance_type!=""}')
    untyped = per_gpu("")
    return (
        f"(\n  {typed}\n  * on (instance_type) group_left () {PRICE_SERIES}\n)\nor\n"
        f"(\n  ({untyped} * on (node) group_left (instance_type) {NODE_TYPE_SERIES})\n"
        f"  * on (instance_type) group_left () {PRICE_SERIES}\n)\n"
    )


def rule_groups(settings: RuleSettings | None = None) -> list[dict[str, Any]]:
    settings = settings or RuleSettings()
    return (
        [
            {"name": ALERT_GROUP, "rules": alert_rules(settings)},
            {"name": COST_GROUP, "rules": cost_rules(settings)},
            serving_rule_group(settings.serving, settings.runbook_url),
            {
                "name": SERVING_COST_GROUP,
                "rules": serving_cost_rules(settings.pool_costs, settings.serving.engine_job),
            },
        ]
        + (
            [{"name": ABSENT_GROUP, "rules": _absent(settings)}]
            if settings.fleets or settings.kubernetes_neuron
            else []
        )
        + [weights_rule_group(settings.runbook_url)]
    )


def _absent(settings: RuleSettings) -> list[dict[str, Any]]:
    return render(_absent_alerts(settings), settings.runbook_url)


def _absent_alerts(settings: RuleSettings) -> list[Alert]:
    k8s = [kubernetes_neuron_alert()] if settings.kubernetes_neuron else []
    return k8s + absent_alerts(
        settings.fleets,
        dcgm_job=settings.dcgm_job,
        node_job=settings.serving.node_job,
        engine_job=settings.serving.engine_job,
    )


def all_alerts(settings: RuleSettings | None = None) -> list[Alert]:
    """Every alert of the rule file, group by group, in the order the file lists them."""
    settings = settings or RuleSettings()
    return (
        gpu_alerts(settings) + serving_alerts(settings.serving) + _absent_alerts(settings) + weights_alerts()
    )


# What the reference's alert table is rendered from: the default thresholds and serving settings, and
# one fleet of each kind, so every alert the rule file can carry appears once.
REFERENCE_SETTINGS = RuleSettings(
    fleets=(
        FleetTargets(pool="gpu", kind="nvidia", engine=True),
        FleetTargets(pool="inf", kind="neuron", engine=True, neuron_monitor=True),
    ),
    serving=ServingSettings(pools={"gpu": Latency.INTERACTIVE, "inf": Latency.BATCH}),
    kubernetes_neuron=True,
)


def alert_reference() -> str:
    """The alert table of docs/reference.md: every alert with its group, severity, category and when it
    fires at the defaults (docs/generate.py writes it)."""
    fleets = absent_alerts(REFERENCE_SETTINGS.fleets)
    return alert_table(
        gpu_alerts(REFERENCE_SETTINGS)
        + serving_alerts(REFERENCE_SETTINGS.serving)
        + fleets
        + [kubernetes_neuron_alert()]
        + weights_alerts()
    )


def rule_file(settings: RuleSettings | None = None) -> dict[str, Any]:
    """A Prometheus rule file; also the `spec` of the PrometheusRule resource."""
    return {"groups": rule_groups(settings)}


def render_rules_yaml(settings: RuleSettings | None = None) -> str:
    return dump_yaml(rule_file(settings))


def dump_yaml(data: Any) -> str:
    """YAML for people: keys in the order written, multi-line strings as literal blocks."""
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120, allow_unicode=True
    )


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # no &id001 anchors: a config people read
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
