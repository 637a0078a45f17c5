"""What the replay assumes of a pool's autoscaler, and the ONE place it reads them from a pool's plan.

`scaler_settings(plan, cloud=...)` is the only function that turns a pool's resolved scaling plan
into the replay's `Autoscaler`. The fleet plan (issue #32's `ScalingPlan`) is to carry the scaler's
period, its datapoints, the metric lag and the scale-in behaviour; until it does, the fields it lacks
take the defaults below, which describe what the stacks deploy at this commit. Point this function at
the new fields when they land; nothing else in the replay reads them.

Defaults and where they come from (read 2026-12-02):
- period: the node publishes one in-flight datapoint a minute (components/aws/elastic_group.py
  METRIC_PERIOD_SECONDS; GCP's autoscaler reads one-minute per-group metrics, components/gcp/elastic.py).
- metric lag: a datapoint describes the minute before it is published and the alarm (AWS) or the
  autoscaler (GCP) reads it on its next one-minute evaluation: a decision at t sees the load of
  [t - 120 s, t - 60 s). 60 s is our estimate of publish + evaluation, not a documented figure.
- AWS scale-out: the target-tracking high alarm needs 3 datapoints of 3 on a one-minute metric (the
  alarm target tracking creates; observed, not a documented contract).
- AWS scale-in: the pool's simple policy, raised when the load would stay under 0.8 x the target
  without the machines removed (elastic_group.SCALE_IN_HEADROOM) for scale_in_cooldown_seconds.
  `scale_in_share`: the plan's `ScalingPlan.scale_in_share`, which both clouds render (AWS:
  PercentChangeInCapacity with MinAdjustmentMagnitude 1; GCP: scaleInControl maxScaledInReplicas
  percent); one scale-in removes `fleet.elastic.scale_in_step` machines (0: one machine).
- AWS fast scale-out: the plan's `fast_scale_out_steps` (a StepScaling policy and an alarm on one
  one-minute datapoint, components/aws/elastic_group.py), replayed from the plan's own numbers.
- GCP: the autoscaler acts on every datapoint, and by default sizes the group for the peak load it
  observed over its stabilisation period, so it scales in only to the largest size it recommended
  over that period (docs.cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions,
  "How autoscalers calculate recommended size"), 600 s by default (Compute API AutoscalingPolicy
  `stabilizationPeriodSec`: "The default stabilization period is 600 seconds"; both read 2026-12-02
  through the googleapis reference), and never below the scale-in control's window peak less its
  machines (fleet.elastic.gcp_scale_in_window). Its
  recommendation is the LARGER of its two signals' (running, waiting; each over the target per VM),
  not their sum (replay.py).
- AWS instance warm-up: a machine counts as capacity and blocks every dynamic scale-in until its
  warm-up ends: the plan's `policy_warmup_seconds` after InService, replayed as
  `warmup_beyond_serving_seconds` after it serves. A scale-in's cooldown starts when the activity
  completes: the machines drained, then their termination hook's timeout.
- Kubernetes (`cloud="kubernetes"`, a pool replayed with `--kubernetes`): KEDA's HPA as
  components/k8s/pool_manifests.py renders it: the HPA syncs every 15 s
  (--horizontal-pod-autoscaler-sync-period, default 15 s); the load it reads is Prometheus's, scraped
  every 30 s (the pool's PodMonitor interval), so the lag is 30 s; it acts on one reading within its
  10% tolerance; scale-up by the larger of one machine's pods per scale_out_cooldown_seconds and
  100% of the pods per sync (the rendered scaleUp policies, fleet.elastic.K8S_SCALE_UP_PERCENT);
  scale-down to the largest recommendation of the rendered stabilisation window
  (`scale_in_cooldown_seconds`), at most one machine's pods a minute, or with the deficit sizing the
  larger of that and K8S_SCALE_DOWN_PERCENT of the pods a minute (fleet.elastic) (Kubernetes docs,
  "Horizontal Pod Autoscaling", configurable scaling behavior, read 2026-12-02). KEDA's
  pollingInterval (15 s) and cooldownPeriod act only between 0 and 1 replica (KEDA docs, ScaledObject
  spec, read 2026-12-02).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from inference_infra.components.fleet.elastic import K8S_SCALE_DOWN_PERCENT, K8S_SCALE_UP_PERCENT

HPA_SYNC_SECONDS = 15  # kube-controller-manager --horizontal-pod-autoscaler-sync-period's default
K8S_SCRAPE_SECONDS = 30  # the pool's PodMonitor interval (components/k8s/pool_manifests.py)


@dataclass(frozen=True, kw_only=True)
class Autoscaler:
    """The autoscaler the replay runs (module doc for each default's source)."""

    cloud: str = "aws"  # aws: target tracking + the scale-in alarm; gcp: the regional autoscaler;
    # kubernetes: KEDA's HPA
    period_seconds: int = 60
    metric_lag_seconds: int = 60
    scale_out_periods: int = 3  # AWS: datapoints in a row above the target (GCP acts on one)
    scale_in_headroom: float = 0.8
    scale_in_share: float = 0.0  # the plan's share of the group one scale-in removes (0: one machine)
    stabilisation_seconds: int = 600  # GCP
    # AWS: the plan's fast step (a StepScaling policy on one datapoint) replayed beside target tracking;
    # False replays target tracking alone (what the stacks rendered before it).
    fast_scale_out: bool = True
    # Kubernetes: the rendered Percent scaleUp policy, N% of the replicas per sync period beside one
    # machine's pods per scale-out cooldown, the larger limit winning (selectPolicy Max); 0 replays the
    # one-machine policy alone (what the pool rendered before; benchmarks/simulate_scaler_truth.py).
    hpa_scale_up_percent: int = 0
    # Kubernetes with the deficit sizing: the rendered Percent scaleDown policy, N% of the replicas a
    # minute beside one machine's pods a minute, the larger change winning; 0: the one-machine policy.
    hpa_scale_down_percent: int = 0
    # Machines serving when the trace starts: None is the pool's minimum (its desired size).
    start_size: int | None = None
    # Spot interruptions per machine-hour (0: none); drained requests are re-queued.
    interruptions_per_machine_hour: float = 0.0
    interruption_basis: str = ""  # where the rate comes from (the catalog's band, a flag), for --json
    seed: int = 0  # the interruptions' random draws

    @classmethod
    def of(cls, plan: Any, *, cloud: str = "aws") -> Autoscaler:
        """The pool's own scaler, as its ScalingPlan states it (`scaler_settings` without overrides)."""
        return scaler_settings(plan, cloud=cloud)

    @property
    def lag_periods(self) -> int:
        return -(-self.metric_lag_seconds // self.period_seconds)


def scaler_settings(plan: Any, *, cloud: str = "aws", **overrides: Any) -> Autoscaler:
    """The replay's autoscaler for a pool's plan: the plan's own fields where it has them, else the
    module's defaults; `overrides` (a flag given on the command line) win. The fleet plan's field
    names are read here and only here."""
    base = Autoscaler(cloud=cloud)
    if cloud == "kubernetes":
        base = replace(
            base,
            period_seconds=HPA_SYNC_SECONDS,
            metric_lag_seconds=K8S_SCRAPE_SECONDS,
            scale_out_periods=1,
            stabilisation_seconds=getattr(plan, "scale_in_cooldown_seconds", base.stabilisation_seconds),
            fast_scale_out=False,
            hpa_scale_up_percent=K8S_SCALE_UP_PERCENT,
            hpa_scale_down_percent=(
                K8S_SCALE_DOWN_PERCENT if getattr(plan, "scale_in_sizing", "share") == "deficit" else 0
            ),
        )
        chosen = {k: v for k, v in overrides.items() if v is not None}
        return replace(base, **chosen)
    from_plan = {
        "period_seconds": getattr(plan, "period_seconds", None),
        "metric_lag_seconds": getattr(plan, "metric_lag_seconds", None),
        "scale_out_periods": getattr(plan, "scale_out_datapoints", None),
        "scale_in_headroom": getattr(plan, "scale_in_headroom", None),
        "scale_in_share": getattr(plan, "scale_in_share", None),
        "stabilisation_seconds": getattr(plan, "stabilisation_seconds", None),
    }
    chosen = {k: v for k, v in from_plan.items() if v is not None}
    chosen.update({k: v for k, v in overrides.items() if v is not None})
    return replace(base, **chosen)
