"""GCP elastic pools: what a GPU fleet with `elastic` becomes, decided before anything is registered (pure).

A GPU fleet with `elastic` set is a regional managed instance group (MIG) built from an instance
template (the same boot script as the fixed VMs), scaled by a regional autoscaler:

- bounds: the fleet's `ScalingPlan` (components/fleet/elastic.py): min and max replicas;
- signal: the engines' own load when the Ops Agent runs (`ops_agent`, the default; with
  `internet_egress=False` the image must carry it): the agent's Prometheus receiver scrapes each
  engine's metrics-only port on the node and writes `vllm:num_requests_running` and
  `vllm:num_requests_waiting` to Cloud Monitoring as `prometheus.googleapis.com/<name>/gauge` on the
  `prometheus_target` resource, labelled with the pool; the autoscaler reads them as per-group metrics
  (a resource type other than `gce_instance` is per-group) with `singleInstanceAssignment` = the
  plan's in-flight requests per machine. Without the Ops Agent, the load balancer's utilisation:
  the backend's RATE balancing mode with a per-instance rate from the planner (capacity over the mean
  request's duration), and the autoscaler's `loadBalancingUtilization` target;
- initialization period (`cooldownPeriod`): the expected cold start (launch to serving), so a booting
  VM's empty queues do not count as spare capacity; autohealing's initial delay keeps the grace;
- scale in slowly: at most one VM per `scale_in_cooldown_seconds` (scaleInControl
  maxScaledInReplicas.fixed 1, over a window of the autoscaler's 600 s stabilisation plus the cooldown:
  the control holds the window's peak recommendation less one step, and a window no longer than the
  stabilisation would bind nothing; fleet.elastic.gcp_scale_in_window), or the plan's `scale_in_share`
  of the group per window
  (maxScaledInReplicas.percent, a whole percent; Google rounds a remainder up, so at least one VM),
  because a VM let go costs a whole cold start to get back;
- scale out on one datapoint: the autoscaler acts on each of its metric readings and sizes the group
  for the whole recommendation at once, so the AWS fast step (`ElasticArgs.fast_scale_out_ratio`, a
  StepScaling policy beside target tracking) has nothing to add here and is not rendered; nor could
  it be: pulumi-gcp 10.2.0's `RegionAutoscalerAutoscalingPolicy` (the Compute API's
  AutoscalingPolicy) has min/max replicas, cooldownPeriod, cpu/load-balancing/custom-metric
  utilisation, mode, scaleDownControl, scaleInControl, scalingSchedules and stabilizationPeriod, and
  no step or scale-out-rate control (read 2026-12-02 from the installed package's args). The replay
  (components/simulate/replay.py) replays GCP without the fast step;
- working hours (`schedule`): the autoscaler's minimum is `off_hours_size` (0: the pool scales to
  zero) and a scaling schedule raises it to the plan's minimum from `start_hour` for the working
  hours, in the schedule's time zone.

Upstream facts (read 2026-11-25):

- Ops Agent (GoogleCloudPlatform/ops-agent @588c4b96, confgenerator/prometheus.go): receiver
  `type: prometheus` with a Prometheus `config:`; static_configs only; scrape_interval at least 10 s;
  metric_relabel_configs may not rename `__name__` (so running and waiting stay two metrics, not one
  sum); its metrics go to Cloud Monitoring through the GMP exporter (dev-docs/otel-exporter-types.md:
  `prometheus.googleapis.com/{metric_name}/{metric_kind}`, resource `prometheus_target`), each target
  labelled with `namespace` = "<instance id>/<instance name>", `location` = the zone, `cluster` =
  `__gce__` (confgenerator/resourcedetector/gce_detector.go, PrometheusStyleMetadata); a static label
  of the scrape config stays a metric label.
- The metric name keeps its colon: prometheus/otlptranslator metric_namer.go (isValidCompliantMetricChar
  accepts ':'), and a gauge gets the `/gauge` suffix
  (GoogleCloudPlatform/opentelemetry-operations-go @d84f5e91,
  exporter/collector/googlemanagedprometheus/naming.go).
- The autoscaler's custom metric (Compute API AutoscalingPolicyCustomMetricUtilization; pulumi-gcp 10.2
  RegionAutoscalerAutoscalingPolicyMetric `name`, `filter`, `singleInstanceAssignment`): a filter joins
  `=` selectors with AND only; a resource type other than gce_instance is a per-group metric, whose
  matching time series the autoscaler sums.
- Scaling schedules (pulumi-gcp 10.2 RegionAutoscalerAutoscalingPolicyScalingSchedule): `schedule`
  (cron), `timeZone` (tz database name), `durationSec` (at least 300), `minRequiredReplicas`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from inference_infra.components.errors import Problem
from inference_infra.components.fleet import FleetServing, ServedModel
from inference_infra.components.fleet.elastic import (
    GCP_STABILISATION_SECONDS,
    ScalingPlan,
    ScheduleArgs,
    gcp_scale_in_window,
)
from inference_infra.components.gcp.names import zone_problems
from inference_infra.components.serving import EngineConfig
from inference_infra.components.serving.engines import METRICS_PORT_OFFSET

# The two vLLM gauges of a machine's load (names as the pinned vLLM exports them; see
# components/serving/engines.py and the monitoring rules), as Cloud Monitoring names them.
RUNNING_METRIC = "vllm:num_requests_running"
WAITING_METRIC = "vllm:num_requests_waiting"
ENGINE_METRICS = (RUNNING_METRIC, WAITING_METRIC)
# The label the node's scrape config adds to its engines' series: the managed instance group's name.
POOL_LABEL = "inference_infra_pool"
# The Ops Agent accepts no shorter interval (ops-agent confgenerator/prometheus.go minScrapeInterval);
# 15 s keeps two samples in each of the autoscaler's one-minute reads at a negligible ingestion cost
# (two series per engine).
SCRAPE_INTERVAL_SECONDS = 15
# The autoscaler's initialization period and scale-in window are kept within an hour here: the Compute
# API reference (AutoscalingPolicy coolDownPeriodSec, scaleInControl.timeWindowSec; read 2026-11-25)
# states no range we could find, so the cap is ours (an hour exceeds the slowest cold start we plan).
MAX_AUTOSCALER_SECONDS = 3600
# A VM marked unhealthy is recreated (a whole cold start): autohealing waits for 10 failed checks
# 30 s apart (5 minutes), where the load balancer stops sending after far fewer.
AUTOHEAL_INTERVAL_SECONDS = 30
AUTOHEAL_UNHEALTHY_THRESHOLD = 10
# Named port of the engine on every VM of the group: the backend service reaches it by this name.
ENGINE_PORT_NAME = "engine"


def metric_type(name: str) -> str:
    """The Cloud Monitoring metric type of a Prometheus gauge written by the Ops Agent."""
    return f"prometheus.googleapis.com/{name}/gauge"


class LoadSignal(StrEnum):
    """What the autoscaler follows."""

    ENGINE_LOAD = "engine-load"  # vLLM's running + waiting requests (Ops Agent -> Cloud Monitoring)
    LOAD_BALANCER = "load-balancer"  # the backend's request rate against a per-instance rate


@dataclass(frozen=True)
class GcpScaling:
    """Everything a GCP elastic pool's resources take, resolved from its ScalingPlan."""

    plan: ScalingPlan
    signal: LoadSignal
    zones: tuple[str, ...]
    initialization_seconds: int  # the cold start's grace: autohealing's initial delay, min_ready_sec
    scale_in_window_seconds: int
    rate_per_instance: float  # requests/s one VM sustains (the load-balancer signal's unit)
    mean_request_seconds: float
    notes: tuple[str, ...] = ()
    # The autoscaler's initialization period (cooldownPeriod): the EXPECTED launch-to-serving seconds
    # (ScalingPlan.expected_start_seconds), not the grace. The Compute API (AutoscalingPolicy
    # coolDownPeriodSec, read 2026-12-02 in google-cloud-compute's reference): "the number of seconds
    # that your application takes to initialize on a VM instance ... when scaling out, the autoscaler
    # ignores data from VMs that are still initializing"; pulumi-gcp 10.2.0's RegionAutoscaler
    # `cooldown_period`, read 2026-12-02 in the installed package: "the number of seconds that the
    # autoscaler should wait before it starts collecting information from a new instance ... We recommend
    # that you test how long an instance may take to initialize"; 0: the grace (a plan without it).
    autoscaler_initialization_seconds: int = 0

    @property
    def cooldown_period_seconds(self) -> int:
        return self.autoscaler_initialization_seconds or self.initialization_seconds

    @property
    def min_replicas(self) -> int:
        """The autoscaler's own minimum: the off-hours size with a schedule, else the plan's minimum."""
        schedule = self.plan.schedule
        if schedule is not None and schedule.off_hours_size < self.plan.min_size:
            return schedule.off_hours_size
        return self.plan.min_size

    @property
    def scale_in_step(self) -> str:
        """How many VMs one scale-in window may let go, in words."""
        percent = self.plan.scale_in_percent
        return f"{percent}% of the VMs (at least 1)" if percent else "1 VM"

    @property
    def scales_to_zero(self) -> bool:
        """The pool may stand at zero VMs (its endpoint then answers 503 with Retry-After)."""
        return self.min_replicas == 0

    def describe(self) -> str:
        signal = (
            f"{RUNNING_METRIC} + {WAITING_METRIC}, {self.plan.target_in_flight:g} per VM"
            if self.signal is LoadSignal.ENGINE_LOAD
            else f"load-balancer utilisation at {self.rate_per_instance:.2f} requests/s per VM"
        )
        hours = ""
        if self.plan.schedule is not None and self.min_replicas < self.plan.min_size:
            s = self.plan.schedule
            hours = (
                f"; {self.min_replicas} VMs outside {s.days} {s.start_hour:02d}:00-{s.end_hour:02d}:00 "
                f"{s.time_zone}"
            )
        return (
            f"managed instance group {self.min_replicas}..{self.plan.max_size} VMs in "
            f"{', '.join(self.zones)} on {signal}; initialization {self.cooldown_period_seconds} s, "
            f"scale-in at most {self.scale_in_step} below the peak recommendation of the last"
            f" {self.scale_in_window_seconds} s{hours}"
        )


def region_of(zone: str) -> str:
    """us-central1-a -> us-central1."""
    return zone.rsplit("-", 1)[0]


def elastic_gpu_problems(
    *,
    engines: EngineConfig | None,
    zone: str | None,
    zones: tuple[str, ...],
    network: object | None,
    serves: bool,
) -> list[Problem]:
    """What a GPU fleet needs to be a managed instance group, beyond the shared elastic checks."""
    problems = []
    if not serves:
        problems.append(
            Problem(
                "elastic",
                "set",
                "needs a served model (model and weights=GcsWeights(...)): an elastic pool scales on its "
                "engines' load and sits behind a load balancer",
            )
        )
    elif engines is not None and engines.engines > 1:
        problems.append(
            Problem(
                "elastic",
                "set",
                f"needs one engine per VM, and this machine runs {engines.engines} (ports "
                f"{engines.ports[0]}-{engines.ports[-1]}): a managed instance group is a load-balancer "
                "backend through one named port; choose a machine whose GPUs one tensor-parallel group "
                "fills, or keep the fleet fixed (fixed fleets reach each engine through a network "
                "endpoint group)",
            )
        )
    if network is None:
        problems.append(
            Problem(
                "network",
                None,
                "is required with elastic: the fleet admits Google's health-check probers to its engine "
                "port for autohealing with a firewall rule in that network",
            )
        )
    if zone is not None:
        region = region_of(zone)
        for i, extra in enumerate(zones):
            found = zone_problems(f"zones[{i}]", extra)
            if found:
                problems += found
            elif region_of(extra) != region:
                problems.append(
                    Problem(
                        f"zones[{i}]",
                        extra,
                        f"must be in the fleet's region {region} (zone {zone}): a regional managed "
                        "instance group spreads over one region's zones",
                    )
                )
    return problems


def reserved_zone_problems(zones: tuple[str, ...], zone: str | None) -> list[Problem]:
    """A reservation is zonal: a reserved elastic pool stays in the reservation's zone."""
    if zones and any(z != zone for z in zones):
        return [
            Problem(
                "zones",
                list(zones),
                f"must be empty for reserved VMs: they consume a reservation in {zone} only",
            )
        ]
    return []


def plan_gcp_scaling(
    plan: ScalingPlan,
    *,
    serving: FleetServing,
    model: ServedModel,
    machine: str,
    zone: str,
    zones: tuple[str, ...],
    ops_agent: bool,
) -> GcpScaling:
    """The GCP numbers of one pool from its ScalingPlan: signal, zones, initialization, scale-in window."""
    notes = list(plan.notes)
    all_zones = tuple(dict.fromkeys((zone, *zones)))
    initialization = plan.warmup_seconds
    if initialization > MAX_AUTOSCALER_SECONDS:
        notes.append(
            f"initialization period capped at {MAX_AUTOSCALER_SECONDS} s (the cold start is "
            f"~{initialization} s): the autoscaler may count a still-loading VM as idle capacity"
        )
        initialization = MAX_AUTOSCALER_SECONDS
    expected = min(plan.expected_start_seconds, MAX_AUTOSCALER_SECONDS)
    # the stabilisation period (600 s) plus the cooldown: a shorter window never binds
    # (fleet.elastic.gcp_scale_in_window)
    window = gcp_scale_in_window(plan.scale_in_cooldown_seconds)
    if window - GCP_STABILISATION_SECONDS != plan.scale_in_cooldown_seconds:
        notes.append(
            f"scale-in window {window} s: scale_in_cooldown_seconds {plan.scale_in_cooldown_seconds} after"
            f" the autoscaler's {GCP_STABILISATION_SECONDS} s stabilisation, within"
            f" 60..{MAX_AUTOSCALER_SECONDS} s"
        )
    mean_request = plan.mean_request_seconds(model.traffic().output)  # the plan's decode speed
    rate = (
        plan.in_flight_per_machine / mean_request if mean_request > 0 else float(plan.in_flight_per_machine)
    )
    signal = LoadSignal.ENGINE_LOAD if ops_agent else LoadSignal.LOAD_BALANCER
    if signal is LoadSignal.LOAD_BALANCER:
        notes.append(
            "ops_agent False: the autoscaler follows the load balancer's request rate against "
            f"{rate:.2f} requests/s per VM ({plan.in_flight_per_machine} sequences over a mean request of "
            f"~{mean_request:.0f} s); it scales only while the pool is behind a GcpInferenceEndpoint"
        )
    schedule = plan.schedule
    if schedule is not None and schedule.off_hours_size >= plan.min_size:
        notes.append(
            f"schedule: off_hours_size {schedule.off_hours_size} is not below the minimum {plan.min_size}, "
            "so the working hours change nothing"
        )
    return GcpScaling(
        plan=plan,
        signal=signal,
        zones=all_zones,
        initialization_seconds=initialization,
        autoscaler_initialization_seconds=expected,
        scale_in_window_seconds=window,
        rate_per_instance=round(rate, 3),
        mean_request_seconds=mean_request,
        notes=tuple(notes),
    )


def metric_filter(name: str, group: str) -> str:
    """The per-group selector of one engine gauge of one pool (only `=` joined by AND is allowed)."""
    return (
        f'metric.type = "{metric_type(name)}" AND resource.type = "prometheus_target" AND '
        f'metric.labels.{POOL_LABEL} = "{group}"'
    )


def max_scaled_in_replicas(plan: ScalingPlan) -> dict[str, int]:
    """scaleInControl.maxScaledInReplicas: one VM, or the plan's share as a whole percent.

    pulumi-gcp 10 RegionAutoscalerAutoscalingPolicyScaleInControlMaxScaledInReplicas takes `fixed` (a
    positive integer) or `percent` (0..100); the Compute API's FixedOrPercent computes a percent as
    percent/100 x the group's size, a remainder rounded up (fleet.elastic.scale_in_step, cloud "gcp").
    """
    percent = plan.scale_in_percent
    return {"percent": percent} if percent > 0 else {"fixed": 1}


def autoscaling_policy(scaling: GcpScaling, group: str) -> dict[str, Any]:
    """The RegionAutoscaler's autoscalingPolicy (pulumi-gcp input names).

    Engine load: both gauges summed over the pool's VMs (per-group metrics), each against the plan's
    in-flight requests per VM. The autoscaler takes the largest recommendation of its signals, so the
    pool gets running/target VMs while no request waits, and at least waiting/target VMs for a queue
    (which exists only once every engine's batch is full): the recommendation is at least half the sum
    of the two, and the autoscaler raises it again one minute later while a queue remains.
    """
    plan = scaling.plan
    policy: dict[str, Any] = {
        "min_replicas": scaling.min_replicas,
        "max_replicas": plan.max_size,
        "cooldown_period": scaling.cooldown_period_seconds,
        "mode": "ON",
        "scale_in_control": {
            "max_scaled_in_replicas": max_scaled_in_replicas(plan),
            "time_window_sec": scaling.scale_in_window_seconds,
        },
    }
    if scaling.signal is LoadSignal.ENGINE_LOAD:
        policy["metrics"] = [
            {
                "name": metric_type(name),
                "filter": metric_filter(name, group),
                "single_instance_assignment": plan.target_in_flight,
            }
            for name in ENGINE_METRICS
        ]
    else:
        target = round(plan.target_in_flight / plan.in_flight_per_machine, 3)
        policy["load_balancing_utilization"] = {"target": target}
    if plan.schedule is not None and scaling.min_replicas < plan.min_size:
        policy["scaling_schedules"] = [working_hours(plan.schedule, plan.min_size)]
    return policy


_CRON_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


def cron_days(days: str) -> str:
    """A day-of-week field with names for numbers (0 and 7: Sunday), as every cron reads it alike."""
    if days == "*":
        return days
    out = []
    for part in days.split(","):
        ends = [_CRON_DAYS[int(d)] if d.isdigit() else d for d in part.split("-")]
        out.append("-".join(ends))
    return ",".join(out)


def working_hours(schedule: ScheduleArgs, min_size: int) -> dict[str, Any]:
    """The scaling schedule that holds the pool at its minimum through the working hours."""
    return {
        "name": "working-hours",
        "description": (
            f"At least {min_size} VMs {schedule.days} "
            f"{schedule.start_hour:02d}:00-{schedule.end_hour:02d}:00 {schedule.time_zone}; "
            f"{schedule.off_hours_size} outside"
        ),
        "schedule": f"0 {schedule.start_hour} * * {cron_days(schedule.days)}",
        "time_zone": schedule.time_zone,
        "duration_sec": (schedule.end_hour - schedule.start_hour) * 3600,
        "min_required_replicas": min_size,
    }


def engine_scrape_targets(engines: EngineConfig) -> list[str]:
    """The node's own engines' metrics-only ports, as the Ops Agent scrapes them (loopback)."""
    return [f"localhost:{port + METRICS_PORT_OFFSET}" for port in engines.ports]


def ops_agent_prometheus(engines: EngineConfig, group: str) -> dict[str, Any]:
    """The Ops Agent receiver and pipeline that publish the engines' load for the autoscaler.

    Only the two gauges are kept (metric_relabel_configs `keep`): Cloud Monitoring bills Prometheus
    samples, and vLLM exports dozens of series per engine.
    """
    receiver = {
        "type": "prometheus",
        "config": {
            "scrape_configs": [
                {
                    "job_name": "vllm",
                    "scrape_interval": f"{SCRAPE_INTERVAL_SECONDS}s",
                    "metrics_path": "/metrics",
                    "static_configs": [
                        {"targets": engine_scrape_targets(engines), "labels": {POOL_LABEL: group}}
                    ],
                    "metric_relabel_configs": [
                        {
                            "source_labels": ["__name__"],
                            "regex": "|".join(ENGINE_METRICS),
                            "action": "keep",
                        }
                    ],
                }
            ]
        },
    }
    return {"receivers": {"vllm": receiver}, "pipelines": {"vllm": {"receivers": ["vllm"]}}}


def retry_after_seconds(scaling: GcpScaling) -> int | None:
    """Retry-After on a pool that may stand at zero: one cold start, rounded up to a minute."""
    if not scaling.scales_to_zero:
        return None
    return max(60, math.ceil(scaling.plan.warmup_seconds / 60) * 60)


__all__ = [
    "ENGINE_METRICS",
    "ENGINE_PORT_NAME",
    "POOL_LABEL",
    "RUNNING_METRIC",
    "WAITING_METRIC",
    "GcpScaling",
    "LoadSignal",
    "autoscaling_policy",
    "cron_days",
    "elastic_gpu_problems",
    "metric_filter",
    "metric_type",
    "ops_agent_prometheus",
    "plan_gcp_scaling",
    "retry_after_seconds",
    "working_hours",
]
