"""Replay a request trace against an elastic pool, and judge it against the two references (pure).

The pool (one `ScalingPlan`, one machine's `ServiceModel`, a price per machine-hour) and its
autoscaler (`settings.Autoscaler`, read from the plan by `settings.scaler_settings`):

- **Start**: the pool serves `start_size` machines when the trace begins, by default its minimum (the
  group's desired size). Nothing is read from the trace: a pool that needs more scales out, and pays
  for it in time to first token.
- **Serving**: one first-come-first-served queue in front of every serving machine's slots (a perfect
  balancer). A request admitted at t takes a slot and the engine prefill that frees first: its first
  token comes when its prompt has been through that prefill (`references.Engines`: an engine prefills
  one token budget a step, so prompts arriving together wait for each other), its slot frees
  (output - 1) x TPOT later. Its time to first token is its wait for a slot, for the prefill, and
  the prefill. A request longer than `--max-model-len` is refused by the engine (`refused`).
- **Autoscaler, AWS** (components/aws/elastic_group.py): one datapoint of in-flight requests (running
  + waiting) per machine and period, seen `metric_lag_seconds` late. Scale-out is target tracking:
  its alarm is in ALARM after `scale_out_periods` datapoints in a row whose Average per machine
  serving is over the target, and each minute it stays there the policy launches what its target
  wants (ceil(in-flight / target_in_flight), up to max) over the pool's capacity (machines starting
  count as the pool's); no cooldown holds it (cooldowns are simple policies' only). Scale-in is the rendered
  simple policy and its alarm: it removes the step `fleet.elastic.scale_in_step` gives for the group
  (share 0: one machine; else floor(share x machines), at least one, as PercentChangeInCapacity with
  MinAdjustmentMagnitude 1 rounds), never below the minimum, when for scale_in_cooldown_seconds (in
  whole periods) the load would have stayed under `scale_in_headroom` x the target on the machines
  left after the whole step (the last machine only with nothing in flight). The step is all or
  nothing, as the alarm is: a large share does not fire while the machines left would be too few.
  As EC2 Auto Scaling documents them (User Guide, "Set the default instance warmup" and "Scaling
  cooldowns", read 2026-12-02): no dynamic scale-in while a machine starts or is in its instance
  warm-up, which begins at InService (when its engines answer: the node completes the launch hook
  then) and lasts the plan's `policy_warmup_seconds` (the replay: `warmup_beyond_serving_seconds`
  after it serves); the scale-in's cooldown starts when its activity completes: the machines let go
  drained, then their termination hook's timeout (fleet.elastic.TERMINATION_HOOK_SECONDS), so the
  next scale-in is at least drain + 120 s + the cooldown after the last. The Average of the custom
  metric is over the machines serving: a node publishes only while its target lifecycle state is
  InService (aws/node/serving_load.py), so a machine draining or in its termination hook, or a
  warm-pool machine being prepared, is not in it, as it is not in GroupInServiceInstances; a machine
  in its warm-up is (AWS cannot leave it out of a metric the node publishes itself). Both scale-out
  policies read the same datapoint, the larger capacity winning (the "Multiple dynamic scaling
  policies" rule).
- **Autoscaler, GCP** (components/gcp/elastic.py): each datapoint recommends the larger of its two
  signals' sizes, ceil(running / target) and ceil(waiting / target) (the autoscaler takes the largest
  recommendation of a policy's signals, not their sum); the group grows to it at once and shrinks only
  to the largest recommendation of the stabilisation period, and never below the peak
  recommendation of the scale-in control's window (the stabilisation plus scale_in_cooldown_seconds,
  fleet.elastic.gcp_scale_in_window) less the scale-in step (share 0: one VM; else the share of the
  group, a remainder rounded up, as maxScaledInReplicas.percent computes it).
- **Autoscaler, Kubernetes** (`cloud="kubernetes"`, a pool with `nodes`): KEDA's HPA as
  components/k8s/pool_manifests.py renders it: a reading every 15 s (HPA sync) of the load Prometheus
  scraped (30 s lag), no change within the HPA's 10% tolerance, scale-up by at most one machine's
  pods per scale_out_cooldown_seconds, scale-down to the largest recommendation of the stabilisation
  window (scale_in_cooldown_seconds) by at most one machine's pods a minute (with the deficit sizing,
  the larger of that and the rendered Percent policy's share a minute).
- A schedule sets the minimum to `off_hours_size` outside working hours (as the scheduled actions do).
- **Starts**: a new machine serves after a warm start when the warm pool has a stopped machine (then
  replaced: a new machine initialises for a cold start, billed, then stops), else after the pool's
  cold start. A machine let go stops taking requests at once and is billed until the requests it
  holds finish.
- **Kubernetes** (`Pool.nodes`, k8s_nodes.py): a machine is a pod; it serves after a pod start on a
  node with room, else after a node start; the bill is the nodes, an empty one kept for the node
  autoscaler's scale-down delay.
- **Spot**: at `interruptions_per_machine_hour`, a serving machine is reclaimed at a period's end
  (seeded draws): its share of the running requests is re-queued at the front (their first token
  stands; they are served again from the start) and a replacement is launched cold.
- **Billing** is per second from launch (boot and weights load included) to release; stopped
  warm-pool machines cost their disks only, which the replay leaves out.
- **Counting**: every request of the trace is in the denominator. Late: first token after the target;
  unserved when the replay ends counts as late; refused (too long) counts as a miss. More than 1% of
  misses and the pool does not meet its SLO: the replay says so first and its cost ratio is marked.

The references (references.py): the lower bound (machine-seconds of the work itself) and the
SLO-aware oracle (the fewest whole machines per minute with perfect foresight and no cold start that
keep every request on time, queueing allowed). The static fleet runs the oracle's busiest minute all
along.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from inference_infra.components.fleet.elastic import (
    TERMINATION_HOOK_SECONDS,
    ScalingPlan,
    ScheduleArgs,
    gcp_scale_in_window,
    scale_in_step,
    with_scale_in,
)
from inference_infra.components.simulate.k8s_nodes import KubernetesNodes, NodeState
from inference_infra.components.simulate.references import (
    Engines,
    OracleRun,
    lower_bound_machine_seconds,
    slo_oracle,
)
from inference_infra.components.simulate.service import ServiceModel
from inference_infra.components.simulate.settings import Autoscaler, scaler_settings
from inference_infra.components.simulate.trace import Trace
from inference_infra.components.simulate.workload import Workload, workload

MINUTE = 60.0
# The HPA's tolerance: no scaling while the ratio of the metric to its target is within 10% of 1
# (kube-controller-manager --horizontal-pod-autoscaler-tolerance, default 0.1; Kubernetes docs,
# "Horizontal Pod Autoscaling", algorithm details, read 2026-12-02).
HPA_TOLERANCE = 0.1
SLO_MISS_SHARE = 0.01  # at most 1% of requests may miss the time-to-first-token target
_DAYS = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}


@dataclass(frozen=True)
class Pool:
    """One pool as the replay sees it."""

    name: str
    plan: ScalingPlan
    service: ServiceModel
    usd_per_hour: float  # one machine
    price_basis: str
    ttft_target_seconds: float
    latency: str  # the pool's serving SLO class (interactive | batch)
    cold_start_seconds: float  # boot to serving of a new machine (the cold-start estimate)
    cold_start_range: tuple[float, float] | None = None  # (fastest, slowest) of the estimate
    warm_start_range: tuple[float, float] | None = None  # (fastest, slowest) of a warm-pool restart
    nodes: KubernetesNodes | None = None  # a Kubernetes pool: pod start vs node start (k8s_nodes.py)
    region: str | None = None  # where the pool runs (--region, else the stack's): its spot band and prices

    @property
    def slots(self) -> int:
        return self.plan.in_flight_per_machine


@dataclass(frozen=True)
class Launch:
    decided_s: float
    ready_s: float
    warm: bool

    @property
    def seconds(self) -> float:
        return self.ready_s - self.decided_s


@dataclass
class Minute:
    """One minute of the replay (the timeline of --json and the plot)."""

    start_s: float
    arrivals: int = 0
    in_flight_s: float = 0.0  # integral of running + waiting requests over the minute
    queue_max: int = 0
    serving_machine_s: float = 0.0
    billed_machine_s: float = 0.0
    oracle_machines: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "minute": int(self.start_s // MINUTE),
            "arrivals": self.arrivals,
            "in_flight_mean": round(self.in_flight_s / MINUTE, 3),
            "queue_max": self.queue_max,
            "machines_serving": round(self.serving_machine_s / MINUTE, 3),
            "machines_billed": round(self.billed_machine_s / MINUTE, 3),
            "oracle_machines": self.oracle_machines,
        }


@dataclass
class Result:
    pool: Pool
    trace: Trace
    autoscaler: Autoscaler
    work: Workload
    ttft_seconds: list[float]  # per admitted request, in arrival order; inf: never served
    launches: list[Launch]
    scale_outs: int
    scale_ins: int
    fast_scale_outs: int  # scale-outs the fast step sized (it gave more than target tracking)
    capped_periods: int  # periods that wanted more machines than max_size
    interruptions: int
    requeued: int
    elastic_machine_s: float
    window_s: float
    oracle: OracleRun
    lower_bound_machine_s: float
    timeline: list[Minute]
    max_machines: int
    min_machines: int
    start_machines: int
    notes: list[str] = field(default_factory=list)
    kubernetes: dict[str, Any] | None = None  # a Kubernetes pool's pod and node starts (k8s_nodes.py)

    # --- figures --------------------------------------------------------------------------------

    @property
    def requests(self) -> int:
        return self.work.requests

    @property
    def refused(self) -> int:
        return self.work.refused

    @property
    def served(self) -> int:
        return sum(1 for t in self.ttft_seconds if t != math.inf)

    @property
    def unserved(self) -> int:
        return len(self.ttft_seconds) - self.served

    @property
    def static_machines(self) -> int:
        return max(self.oracle.machines, default=0)

    def cost(self) -> dict[str, float]:
        price = self.pool.usd_per_hour
        return {
            "elastic_usd": self.elastic_machine_s / 3600 * price,
            "static_usd": self.static_machines * self.window_s / 3600 * price,
            "oracle_usd": self.oracle.machine_minutes / 60 * price,
            "lower_bound_usd": self.lower_bound_machine_s / 3600 * price,
        }

    def over_target(self) -> int:
        """Served after the target, or never served."""
        target = self.pool.ttft_target_seconds
        return sum(1 for t in self.ttft_seconds if t > target)

    def misses(self) -> int:
        """Requests that did not get a first token within the target: late, unserved or refused."""
        return self.over_target() + self.refused

    def miss_share(self) -> float:
        return self.misses() / self.requests if self.requests else 0.0

    def meets_slo(self) -> bool:
        return self.miss_share() <= SLO_MISS_SHARE

    def over_target_from_waiting(self) -> int:
        """Late only because they waited: their prefill alone is within the target."""
        target = self.pool.ttft_target_seconds
        first = self.work.first_token
        return sum(1 for t, p in zip(self.ttft_seconds, first, strict=True) if t > target >= p)

    def as_json(self) -> dict[str, Any]:
        cost = self.cost()
        served = [t for t in self.ttft_seconds if t != math.inf]
        ttft = sorted(served)
        waits = sorted(
            t - p for t, p in zip(self.ttft_seconds, self.work.first_token, strict=True) if t != math.inf
        )
        warm = [x.seconds for x in self.launches if x.warm]
        cold = [x.seconds for x in self.launches if not x.warm]
        every = sorted(x.seconds for x in self.launches)
        plan, scaler, service = self.pool.plan, self.autoscaler, self.pool.service
        queue = [m.queue_max for m in self.timeline]
        target = self.pool.ttft_target_seconds
        met = self.meets_slo()
        total = max(1, self.requests)
        oracle_late = self.oracle.late(target)
        low, high = self.pool.cold_start_range or (self.pool.cold_start_seconds,) * 2
        warm_low, warm_high = self.pool.warm_start_range or (float(plan.warm_start_seconds),) * 2
        return {
            "pool": self.pool.name,
            "model": service.spec.name,
            "machine": service.machine,
            "latency": self.pool.latency,
            "slo": {
                "ttft_target_seconds": target,
                "allowed_miss_share": SLO_MISS_SHARE,
                "misses": self.misses(),
                "miss_share": round(self.miss_share(), 6),
                "met": met,
            },
            "trace": {
                "source": self.trace.source,
                "start": self.trace.start.isoformat() if self.trace.start else None,
                "requests": self.requests,
                "duration_s": round(self.trace.duration_s, 3),
                "refused": self.refused,
            },
            "scaling": {
                "min_size": plan.min_size,
                "max_size": plan.max_size,
                "start_size": self.start_machines,
                "in_flight_per_machine": plan.in_flight_per_machine,
                "target_in_flight": plan.target_in_flight,
                "scale_out_cooldown_seconds": plan.scale_out_cooldown_seconds,
                "scale_in_cooldown_seconds": plan.scale_in_cooldown_seconds,
                "cold_start_seconds": round(self.pool.cold_start_seconds, 1),
                "cold_start_range_seconds": [round(low, 1), round(high, 1)],
                "warm_start_seconds": plan.warm_start_seconds,
                "warm_start_range_seconds": [round(warm_low, 1), round(warm_high, 1)],
                "warm_pool_size": plan.warm_pool_size,
                # AWS: the rendered instance warm-up, and how long after serving it blocks scale-in
                "instance_warmup_seconds": plan.policy_warmup_seconds,
                "warmup_beyond_serving_seconds": plan.warmup_beyond_serving_seconds,
                "cloud": scaler.cloud,
                "period_seconds": scaler.period_seconds,
                "metric_lag_seconds": scaler.metric_lag_seconds,
                "scale_out_periods": scaler.scale_out_periods,
                "scale_in_headroom": scaler.scale_in_headroom,
                "scale_in_share": scaler.scale_in_share,
                "fast_scale_out": self._fast_json(),
                "scale_in": self._scale_in_json(),
                "stabilisation_seconds": scaler.stabilisation_seconds,
                "interruptions_per_machine_hour": scaler.interruptions_per_machine_hour,
                "interruption_basis": scaler.interruption_basis,
            },
            "service": {
                "hosts_per_machine": getattr(service, "hosts", 1),
                "slots_per_machine": self.work.slots,
                "engines_per_machine": self.work.engines,
                "tpot_seconds": round(service.tpot_seconds, 6),
                "prefill_tokens_per_s": _round(getattr(service, "prefill_tokens_per_s", None), 1),
                "step_budget_tokens": getattr(service, "step_budget_tokens", None),
                "mean_context_tokens": round(service.mean_context_tokens, 1),
            },
            "cost": {
                "usd_per_machine_hour": self.pool.usd_per_hour,
                "basis": self.pool.price_basis,
                "window_s": round(self.window_s, 3),
                "elastic_usd": round(cost["elastic_usd"], 4),
                "oracle_usd": round(cost["oracle_usd"], 4),
                "lower_bound_usd": round(cost["lower_bound_usd"], 4),
                "static_usd": round(cost["static_usd"], 4),
                "static_machines": self.static_machines,
                "elastic_over_oracle": _ratio(cost["elastic_usd"], cost["oracle_usd"]),
                "elastic_over_oracle_meets_slo": met,
                "static_over_oracle": _ratio(cost["static_usd"], cost["oracle_usd"]),
                "oracle_over_lower_bound": _ratio(cost["oracle_usd"], cost["lower_bound_usd"]),
                "saving_vs_static": _ratio(cost["static_usd"] - cost["elastic_usd"], cost["static_usd"]),
                "elastic_machine_hours": round(self.elastic_machine_s / 3600, 4),
                "oracle_machine_hours": round(self.oracle.machine_minutes / 60, 4),
                "lower_bound_machine_hours": round(self.lower_bound_machine_s / 3600, 4),
            },
            "ttft": {
                "target_seconds": target,
                "served": len(served),
                "over_target": self.over_target(),
                "over_target_share": round(self.over_target() / total, 6),
                "unserved": self.unserved,
                "refused": self.refused,
                "over_target_from_waiting": self.over_target_from_waiting(),
                "over_target_from_waiting_share": round(self.over_target_from_waiting() / total, 6),
                "oracle_over_target": oracle_late,
                "oracle_over_target_share": round(oracle_late / total, 6),
                "p50_seconds": _quantile(ttft, 0.5),
                "p99_seconds": _quantile(ttft, 0.99),
                "max_seconds": round(ttft[-1], 6) if ttft else None,
                "waited": sum(1 for x in waits if x > 1e-9),
                "wait_p99_seconds": _quantile(waits, 0.99),
                "wait_max_seconds": round(waits[-1], 6) if waits else None,
                "requeued": self.requeued,
            },
            "scale": {
                "scale_outs": self.scale_outs,
                "fast_scale_outs": self.fast_scale_outs,
                "scale_ins": self.scale_ins,
                "launches": len(self.launches),
                "warm_launches": len(warm),
                "cold_launches": len(cold),
                "time_to_scale_seconds": {
                    "mean": round(sum(every) / len(every), 3) if every else None,
                    "p50": _quantile(every, 0.5),
                    "max": round(every[-1], 3) if every else None,
                    "warm": round(sum(warm) / len(warm), 3) if warm else None,
                    "cold": round(sum(cold) / len(cold), 3) if cold else None,
                },
                "capped_periods": self.capped_periods,
                "interruptions": self.interruptions,
                "max_machines": self.max_machines,
                "min_machines": self.min_machines,
            },
            "queue": {
                "max": max(queue) if queue else 0,
                "minutes_with_queue": sum(1 for q in queue if q > 0),
            },
            "timeline": [m.as_json() for m in self.timeline],
            "notes": list(self.notes),
            **({"kubernetes": self.kubernetes} if self.kubernetes is not None else {}),
        }

    def _scale_in_json(self) -> dict[str, Any]:
        """How a scale-in was sized: AWS's deficit steps or share policy, or the autoscaler's own
        recommendation (GCP, Kubernetes)."""
        scaler = self.autoscaler
        if scaler.cloud != "aws":
            return {"sizing": "recommendation", "threshold_in_flight": None, "steps": None}
        plan = replayed_plan(self.pool.plan, scaler)
        if not plan.scale_in_steps:
            threshold = round(plan.target_in_flight * scaler.scale_in_headroom, 2)
            return {"sizing": "share", "threshold_in_flight": threshold, "steps": None}
        return {
            "sizing": "deficit",
            "threshold_in_flight": plan.scale_in_threshold,
            "steps": [
                {"lower": x.lower, "upper": x.upper, "percent": x.percent} for x in plan.scale_in_steps
            ],
        }

    def _fast_json(self) -> dict[str, Any] | None:
        """The fast step as replayed (None: off, on GCP or turned off)."""
        plan = self.pool.plan
        scaler = self.autoscaler
        if not (scaler.cloud == "aws" and scaler.fast_scale_out and plan.fast_scale_out_steps):
            return None
        return {
            "ratio": plan.fast_scale_out_ratio,
            "threshold_in_flight": plan.fast_scale_out_threshold,
            "steps": [
                {"lower": x.lower, "upper": x.upper, "percent": x.percent} for x in plan.fast_scale_out_steps
            ],
        }


def replayed_plan(plan: ScalingPlan, scaler: Autoscaler) -> ScalingPlan:
    """The plan the replay runs: a headroom given to the scaler (--scale-in-headroom) moves the deficit
    alarm's threshold and its bands, as a stack rendering that headroom would."""
    if plan.scale_in_steps and scaler.scale_in_headroom != plan.scale_in_headroom:
        return with_scale_in(replace(plan, scale_in_headroom=scaler.scale_in_headroom))
    return plan


def _round(value: float | None, digits: int) -> float | None:
    return round(value, digits) if value is not None else None


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 6) if b else None


def _quantile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return round(sorted_values[index], 6)


# --- schedule ---------------------------------------------------------------------------------------


def _day_set(days: str) -> set[int]:
    """Cron day-of-week field -> {0..6} (0 = Sunday; 7 is Sunday too)."""
    if days.strip() == "*":
        return set(range(7))
    found: set[int] = set()
    for part in days.upper().split(","):
        ends = [_DAYS[p] if p in _DAYS else int(p) % 7 for p in part.split("-")]
        if len(ends) == 1:
            found.add(ends[0])
        else:
            start, end = ends
            day = start
            while True:
                found.add(day)
                if day == end:
                    break
                day = (day + 1) % 7
    return found


def working(schedule: ScheduleArgs, trace: Trace, t: float) -> bool:
    """True when `t` seconds into the trace falls in the schedule's working hours (local time)."""
    if trace.start is None:
        return True
    local = (trace.start + timedelta(seconds=t)).astimezone(ZoneInfo(schedule.time_zone))
    cron_day = (local.weekday() + 1) % 7  # Python: Monday 0; cron: Sunday 0
    return cron_day in _day_set(schedule.days) and schedule.start_hour <= local.hour < schedule.end_hour


# --- the replay -------------------------------------------------------------------------------------


class _Replay:
    def __init__(
        self, trace: Trace, pool: Pool, scaler: Autoscaler, work: Workload, oracle: OracleRun
    ) -> None:
        self.trace, self.pool, self.scaler, self.work = trace, pool, scaler, work
        self.plan = replayed_plan(pool.plan, scaler)
        self.slots_per = work.slots
        self.oracle = oracle
        last = work.arrivals[-1] if work.arrivals else 0.0
        self.window = max(len(self.oracle.machines), math.floor(last / MINUTE) + 1) * MINUTE
        self.timeline: list[Minute] = []
        self.rng = random.Random(scaler.seed)
        # The fast step is AWS's (GCP's autoscaler acts on each datapoint already) and the scaler may
        # turn it off (`Autoscaler.fast_scale_out`).
        self.fast = scaler.cloud == "aws" and scaler.fast_scale_out and bool(pool.plan.fast_scale_out_steps)

    def run(self) -> Result:
        plan, scaler, work = self.plan, self.scaler, self.work
        n = work.admitted
        arrivals = work.arrivals
        self.t = 0.0
        self.ttft = [math.inf] * n
        start = scaler.start_size if scaler.start_size is not None else self._floor(0.0)
        self.start_machines = start
        self.serving = start
        self.engines = Engines(work.engines)
        self.engines.resize(start, 0.0)
        self.launching: list[tuple[float, int, bool, float]] = []  # (ready, seq, warm, decided)
        self.refills: list[float] = []  # warm-pool replacements initialising (billed), ready times
        self.warm = plan.warm_pool_size
        self.nodes = NodeState(self.pool.nodes, start) if self.pool.nodes is not None else None
        self.draining = 0
        self.running: list[tuple[float, int]] = []  # (completion, request)
        self.queue: deque[int] = deque()
        self.launches: list[Launch] = []
        self.seq = 0
        self.scale_outs = self.scale_ins = self.capped = self.interruptions = self.requeued = 0
        self.high = self.low = 0
        self.last_out = self.last_in = -math.inf
        self.period_in_flight = 0.0
        self.period_waiting = 0.0  # the queue's share of the period's in-flight integral (GCP's 2nd signal)
        self.history: list[float] = []
        self.history_waiting: list[float] = []
        self.seen_waiting = 0.0
        # AWS: machines in their instance warm-up block every dynamic scale-in until it ends (the plan's
        # warm-up beyond serving: 0 when the rendered warm-up is the expected InService-to-serving time)
        self.warming_until = -math.inf
        # AWS: a simple policy's cooldown starts when its scale-in activity completes: the machines let go
        # drained (the load balancer's deregistration) and their termination hook timed out
        self.scale_in_pending = False
        # Kubernetes (HPA): (decided, machines) of recent scale-ups and scale-downs, for the rendered
        # behavior policies' limits per period
        self.ups: deque[tuple[float, int]] = deque()
        self.downs: deque[tuple[float, int]] = deque()
        self.history_serving: list[int] = []  # machines publishing each datapoint (its Average's count)
        self.seen_serving = 0
        # AWS, the deficit sizing: the low-load alarm's metric-math value of each datapoint (the load per
        # machine were one gone); the step policy aggregates the alarm's window of them (_tick_aws)
        self.alarm_values: list[float] = []
        self.fast_outs = 0
        self.recommended: deque[tuple[float, int]] = deque()  # GCP: (time, size) in the stabilisation
        if scaler.cloud in ("gcp", "kubernetes"):
            # the autoscaler kept the pool at its start size before the trace: its stabilisation window
            # holds it (a --start-size above the minimum is not let go at the first datapoint)
            self.recommended.append((0.0, start))
        self.elastic_s = 0.0
        self.max_machines = self.min_machines = self.serving
        was_working = True if plan.schedule is None else working(plan.schedule, self.trace, 0.0)
        next_tick = float(scaler.period_seconds)
        i = 0
        horizon = self.window + 7 * 86400.0
        while i < n or self.running or self.queue:
            t = next_tick
            if i < n and arrivals[i] < t:
                t = arrivals[i]
            if self.running and self.running[0][0] < t:
                t = self.running[0][0]
            if self.launching and self.launching[0][0] < t:
                t = self.launching[0][0]
            if self.refills and self.refills[0] < t:
                t = self.refills[0]
            if self.nodes is not None and (gone := self.nodes.next_event()) is not None and gone < t:
                t = gone
            if t > horizon:
                break
            self._advance(t)
            if self.nodes is not None:
                self.nodes.expire(t)
            while self.running and self.running[0][0] <= t:
                heapq.heappop(self.running)
                if self.draining:
                    self._release_drained()
            while self.launching and self.launching[0][0] <= t:
                heapq.heappop(self.launching)
                self.warming_until = max(self.warming_until, t + self.plan.warmup_beyond_serving_seconds)
                self.serving += 1
                self.engines.resize(self.serving, t)
                self.max_machines = max(self.max_machines, self.serving)
            while self.refills and self.refills[0] <= t:
                heapq.heappop(self.refills)
                self.warm += 1
            while i < n and arrivals[i] <= t:
                self.queue.append(i)
                i += 1
            self._admit()
            if t >= next_tick:
                now_working = True if plan.schedule is None else working(plan.schedule, self.trace, t)
                if scaler.interruptions_per_machine_hour > 0:
                    self._interrupt(t)
                self._tick(t, entering_off_hours=was_working and not now_working)
                was_working = now_working
                next_tick += scaler.period_seconds
                self._admit()
            self._note_queue()
        # bill what is left running to the end of the window (the pool keeps its floor)
        if self.t < self.window:
            self._advance(self.window)
        for minute, row in enumerate(self.timeline):
            row.arrivals = 0
            if minute < len(self.oracle.machines):
                row.oracle_machines = self.oracle.machines[minute]
        for a in arrivals:
            self.timeline[int(a // MINUTE)].arrivals += 1
        return Result(
            pool=self.pool,
            trace=self.trace,
            autoscaler=scaler,
            work=work,
            ttft_seconds=self.ttft,
            launches=self.launches,
            scale_outs=self.scale_outs,
            fast_scale_outs=self.fast_outs,
            scale_ins=self.scale_ins,
            capped_periods=self.capped,
            interruptions=self.interruptions,
            requeued=self.requeued,
            elastic_machine_s=self.elastic_s,
            window_s=self.window,
            oracle=self.oracle,
            lower_bound_machine_s=lower_bound_machine_seconds(work),
            timeline=self.timeline,
            max_machines=self.max_machines,
            min_machines=self.min_machines,
            start_machines=self.start_machines,
            notes=self._notes(),
            kubernetes=self.nodes.summary() if self.nodes is not None else None,
        )

    def _notes(self) -> list[str]:
        notes = list(self.plan.notes)
        if self.plan.schedule is not None and self.trace.start is None:
            notes.append(
                "the schedule is not applied: the trace's times are plain seconds, not wall-clock times"
            )
        if self.work.refused:
            notes.append(
                f"{self.work.refused} request(s) longer than --max-model-len"
                f" {self.pool.service.max_model_len} (prompt + output) are refused by the engine; they count"
                " as misses"
            )
        unserved = sum(1 for t in self.ttft if t == math.inf)
        if unserved:
            notes.append(
                f"{unserved} request(s) were still waiting when the replay ended; they count as late"
            )
        return notes

    def _floor(self, t: float) -> int:
        schedule = self.plan.schedule
        if schedule is not None and not working(schedule, self.trace, t):
            return schedule.off_hours_size
        return self.plan.min_size

    @property
    def capacity(self) -> int:
        """Machines the autoscaler counts: serving and launching."""
        return self.serving + len(self.launching)

    def _billed(self) -> int:
        if self.nodes is not None:
            return self.nodes.billed()
        return self.serving + len(self.launching) + len(self.refills) + self.draining

    def _advance(self, t: float) -> None:
        """Integrate the pool's state from self.t to t (it does not change in between)."""
        start = self.t
        if t <= start:
            return
        in_flight = len(self.running) + len(self.queue)
        billed = self._billed()
        self.period_in_flight += in_flight * (t - start)
        self.period_waiting += len(self.queue) * (t - start)
        self.elastic_s += billed * (t - start)
        last = self.window + 86400.0  # the timeline stops a day after the window
        while start < t and start < last:
            minute = int(start // MINUTE)
            while len(self.timeline) <= minute:
                self.timeline.append(Minute(start_s=len(self.timeline) * MINUTE))
            end = min(t, (minute + 1) * MINUTE)
            row = self.timeline[minute]
            dt = end - start
            row.in_flight_s += in_flight * dt
            row.serving_machine_s += self.serving * dt
            row.billed_machine_s += billed * dt
            start = end
        self.t = t

    def _note_queue(self) -> None:
        minute = int(self.t // MINUTE)
        if minute < len(self.timeline) and len(self.queue) > self.timeline[minute].queue_max:
            self.timeline[minute].queue_max = len(self.queue)

    def _admit(self) -> None:
        free = self.serving * self.slots_per - len(self.running)
        if free <= 0 or not self.queue:
            return
        work, t, ttft, queue, running = self.work, self.t, self.ttft, self.queue, self.running
        lanes, lane, own, decode, arrivals = (
            self.engines.lanes,
            work.lane,
            work.first_token,
            work.decode,
            work.arrivals,
        )
        heappush, heappop = heapq.heappush, heapq.heappop
        while free > 0 and queue:
            k = queue.popleft()
            # references.Engines.admit, inlined: the engine prefill that frees first takes the prompt
            free_at = heappop(lanes)
            end = (t if t > free_at else free_at) + lane[k]
            heappush(lanes, end)
            first = end if end > t + own[k] else t + own[k]
            if ttft[k] == math.inf:
                ttft[k] = first - arrivals[k]
            heappush(running, (first + decode[k], k))
            free -= 1

    def _release_drained(self) -> None:
        """A machine let go is billed until the requests it held are done (the pool is under its slots)."""
        while self.draining and len(self.running) <= (self.serving + self.draining - 1) * self.slots_per:
            self.draining -= 1
        if not self.draining and self.scale_in_pending:
            # the last machine let go is drained; its termination hook (the node does not complete it)
            # times out, and only then does the activity complete and the policy's cooldown start
            self.scale_in_pending = False
            self.last_in = self.t + TERMINATION_HOOK_SECONDS

    def _launch(self, count: int, t: float) -> None:
        plan = self.pool.plan
        for _ in range(count):
            warm = self.warm > 0 and self.nodes is None
            if self.nodes is not None:
                ready = self.nodes.place(t)
            elif warm:
                self.warm -= 1
                heapq.heappush(self.refills, t + self.pool.cold_start_seconds)
                ready = t + plan.warm_start_seconds
            else:
                ready = t + self.pool.cold_start_seconds
            self.seq += 1
            heapq.heappush(self.launching, (ready, self.seq, warm, t))
            self.launches.append(Launch(t, ready, warm))

    def _remove(self, count: int, t: float) -> None:
        gone = min(count, self.serving)
        if self.nodes is not None:
            self.nodes.release(gone, t)
        self.serving -= gone
        self.draining += gone
        self.engines.resize(self.serving, t)
        self.min_machines = min(self.min_machines, self.serving)
        self._release_drained()

    def _interrupt(self, t: float) -> None:
        """Spot reclaims: each serving machine independently, at the plan's rate per machine-hour."""
        chance = 1 - math.exp(-self.scaler.interruptions_per_machine_hour * self.scaler.period_seconds / 3600)
        hit = sum(1 for _ in range(self.serving) if self.rng.random() < chance)
        for _ in range(hit):
            # its share of the running requests goes back to the front of the queue
            share = len(self.running) // max(1, self.serving + self.draining)
            if share:
                picked = set(self.rng.sample(range(len(self.running)), share))
                back = [k for j, (_, k) in enumerate(self.running) if j in picked]
                self.running = [x for j, x in enumerate(self.running) if j not in picked]
                heapq.heapify(self.running)
                self.queue.extendleft(reversed(back))
                self.requeued += len(back)
            self.serving -= 1
            self.engines.resize(self.serving, t)
            self.min_machines = min(self.min_machines, self.serving)
            self.interruptions += 1
            if self.nodes is not None:
                self.nodes.reclaimed(t)
            self._launch(1, t)  # the group replaces it at its desired size

    def _seen(self, mean_in_flight: float, mean_waiting: float = 0.0) -> float | None:
        """The datapoint the autoscaler can see now (metric lag), or None before the first arrives."""
        self.history.append(mean_in_flight)
        self.history_waiting.append(mean_waiting)
        self.history_serving.append(self.serving)
        index = len(self.history) - 1 - self.scaler.lag_periods
        self.seen_serving = self.history_serving[index] if index >= 0 else 0
        self.seen_waiting = self.history_waiting[index] if index >= 0 else 0.0
        return self.history[index] if index >= 0 else None

    def _share(self) -> int:
        """Machines one scale-in lets go now, as the cloud computes the rendered share."""
        percent = round(self.scaler.scale_in_share * 100)
        return scale_in_step(percent, self.serving, cloud=self.scaler.cloud)

    def _tick(self, t: float, *, entering_off_hours: bool) -> None:
        plan, scaler = self.plan, self.scaler
        period = scaler.period_seconds
        seen = self._seen(self.period_in_flight / period, self.period_waiting / period)
        self.period_in_flight = self.period_waiting = 0.0
        floor = self._floor(t)
        if entering_off_hours and self.capacity > floor:
            # the scheduled action sets desired to the off-hours size; launches not yet serving go first
            extra = self.capacity - floor
            while extra and self.launching:
                self.launching.pop()  # the latest launch
                heapq.heapify(self.launching)
                if self.nodes is not None:
                    self.nodes.release(1, t)
                extra -= 1
            self._remove(extra, t)
            self.scale_ins += 1
            self.last_in = t
            self.high = self.low = 0
            return
        if self.capacity < floor:
            self._launch(floor - self.capacity, t)
            self.scale_outs += 1
            self.last_out = t
        if seen is None:
            return
        if scaler.cloud == "gcp":
            # Two signals (running, waiting: components/gcp/elastic.py autoscaling_policy), each per-group
            # against the target per VM; the autoscaler takes the LARGEST recommendation of its signals,
            # not their sum (docs.cloud.google.com/compute/docs/autoscaler, "Autoscaling policy": with
            # several signals it "calculates the recommended number of VMs for each signal and sets your
            # group's recommended size to the largest number"; read 2026-12-02).
            waiting = min(seen, self.seen_waiting)
            wanted = max(_ceil(seen - waiting, plan.target_in_flight), _ceil(waiting, plan.target_in_flight))
        else:
            wanted = _ceil(seen, plan.target_in_flight)
        if wanted > plan.max_size:
            self.capped += 1
        target = min(plan.max_size, max(floor, wanted))
        if scaler.cloud == "gcp":
            self._tick_gcp(t, seen, target, floor)
        elif scaler.cloud == "kubernetes":
            self._tick_hpa(t, seen, target, floor)
        else:
            self._tick_aws(t, seen, target, floor)

    def _tick_aws(self, t: float, seen: float, target: int, floor: int) -> None:
        plan, scaler = self.plan, self.scaler
        # target tracking's high alarm: the datapoint's Average per machine serving over the target (the
        # recommendation above the machines that published it); with none publishing, the group's need
        # above its capacity
        over = self.seen_serving if self.seen_serving > 0 else self.capacity
        self.high = self.high + 1 if target > over else 0
        deficit = bool(plan.scale_in_steps)
        if deficit:
            # the deficit step policy (plan.scale_in_steps): its alarm's metric is the datapoint's load
            # per machine were one of the machines that published it gone (scale_in_expression); each
            # period the alarm stays in ALARM it invokes the policy, which lets go its band's share of
            # the group's capacity now: a datapoint from before the last step still describes the
            # machines before it (the stale firing fleet.elastic.deficit_steps sizes the bands for)
            published = self.seen_serving
            if published > 1:
                after_one = seen / (published - 1)
            else:
                after_one = 0.0 if published == 1 and seen == 0 else math.inf
            quiet = published > 0 and after_one < plan.scale_in_threshold
            self.alarm_values.append(after_one)
            # EC2 Auto Scaling applies the policy's MetricAggregationType (Average) to the alarm's most
            # recent datapoints and picks the band that aggregate falls in, not the last datapoint's
            # (User Guide, "Step and simple scaling policies", section "Step adjustments for step
            # scaling", read 2026-12-02; the alarm history's "No step adjustment found for metric value
            # [a, b] and breach threshold t" lists the window): while in ALARM every datapoint of the
            # window (scale_in_datapoints, = the quiet periods below) breaches, so the mean of the window
            # is under the threshold too
            window = self.alarm_values[-max(1, plan.scale_in_cooldown_seconds // scaler.period_seconds) :]
            aggregated = sum(window) / len(window) if quiet else after_one
            step = plan.deficit_scale_in_machines(aggregated, self.capacity) if quiet else 0
        else:
            # the alarm judges the load on the machines left after the whole step; the group then stops
            # at its minimum (a step that would cross it removes fewer, one that starts there removes none)
            step = self._share()
            left = self.serving - step
            if left >= 1:
                quiet = seen / left < scaler.scale_in_headroom * plan.target_in_flight
            else:
                quiet = step > 0 and seen == 0
        gone = min(step, max(0, self.serving - floor))
        # the alarm stays in ALARM while every datapoint of its window breaches and invokes the policy each
        # period; the group acts on it only with machines to let go, none starting or still in its
        # instance warm-up (module doc), and the policy out of its cooldown
        self.low = self.low + 1 if quiet else 0
        quiet = gone > 0 and not self.launching and t >= self.warming_until
        quiet_periods = max(1, plan.scale_in_cooldown_seconds // scaler.period_seconds)
        # Both scale-out policies judge the same datapoint; the group takes the larger capacity (EC2 Auto
        # Scaling runs the policy that gives the most when several fire). Target tracking: its alarm in
        # ALARM after scale_out_periods datapoints invokes it each minute it stays there, and it adds what
        # its target wants over the capacity, machines warming up included; no cooldown holds it (EC2
        # Auto Scaling User Guide, "Scaling cooldowns", Considerations: "Target tracking and step scaling
        # policies can initiate a scale-out activity immediately without waiting for the cooldown period
        # to end", read 2026-12-02).
        tracked = 0
        if self.high >= scaler.scale_out_periods and target > self.capacity:
            tracked = target
        # The fast step (plan.fast_scale_out_steps): one datapoint's Average per machine over the
        # threshold adds its step's percent of the machines in service; machines still warming up count
        # toward the result, so the same step while they start launches none, a higher one the rest.
        fast = 0
        if self.fast and self.seen_serving > 0:
            added = plan.fast_scale_out_machines(seen / self.seen_serving, self.serving)
            if added:
                fast = min(plan.max_size, self.serving + added)
        wanted = max(tracked, fast)
        if wanted > self.capacity:
            self._launch(wanted - self.capacity, t)
            self.scale_outs += 1
            self.fast_outs += fast > tracked
            self.last_out = t
        elif deficit and quiet and self.low >= quiet_periods:
            # a step policy has no cooldown and answers its alarm while an activity is in progress
            self.last_in = t
            self._remove(gone, t)
            self.scale_ins += 1
        elif (
            not deficit
            and quiet
            and self.low >= quiet_periods
            and not self.scale_in_pending
            and t - self.last_in >= plan.scale_in_cooldown_seconds
        ):
            self.scale_in_pending = True  # the cooldown starts when the activity completes
            self.last_in = t
            self._remove(gone, t)
            self.scale_ins += 1

    def _tick_gcp(self, t: float, seen: float, target: int, floor: int) -> None:
        """The regional autoscaler: the recommendation is the largest of the stabilisation period's
        (10 minutes); the scale-in control keeps it at least the largest recommendation of its trailing
        window less maxScaledInReplicas (Compute API AutoscalingPolicyScaleInControl, read 2026-12-02:
        "Maximum allowed number (or %) of VMs that can be deducted from the peak recommendation during
        the window autoscaler looks at"; timeWindowSec: "how far back autoscaling looks"). The window is
        the rendered one (fleet.elastic.gcp_scale_in_window: the stabilisation period plus
        scale_in_cooldown_seconds); the share is of the VMs serving (`_share`)."""
        plan, scaler = self.plan, self.scaler
        window = gcp_scale_in_window(plan.scale_in_cooldown_seconds, scaler.stabilisation_seconds)
        self.recommended.append((t, target))
        keep = max(scaler.stabilisation_seconds, window)
        while self.recommended and self.recommended[0][0] <= t - keep:
            self.recommended.popleft()
        if target > self.capacity:
            self._launch(target - self.capacity, t)
            self.scale_outs += 1
            self.last_out = t
            return
        stable = max(size for at, size in self.recommended if at > t - scaler.stabilisation_seconds)
        peak = max(size for at, size in self.recommended if at > t - window)
        size = max(stable, peak - self._share(), floor)
        if self.launching or size >= self.serving:
            return
        self._remove(self.serving - size, t)
        self.scale_ins += 1
        self.last_in = t

    def _tick_hpa(self, t: float, seen: float, target: int, floor: int) -> None:
        """KEDA's HPA as the pool renders it (components/k8s/pool_manifests.py, module doc): one sync a
        period; no change within the HPA's 10% tolerance; scale-up at most one machine's pods per
        `scale_out_cooldown_seconds` (the rendered scaleUp policy); scale-down to the largest
        recommendation of the stabilisation window, at most one machine's pods a minute."""
        plan, scaler = self.plan, self.scaler
        current = self.capacity
        self.recommended.append((t, target))
        while self.recommended and self.recommended[0][0] <= t - scaler.stabilisation_seconds:
            self.recommended.popleft()
        if current > 0 and seen > 0 and abs(seen / (current * plan.target_in_flight) - 1) <= HPA_TOLERANCE:
            return
        up_period = plan.scale_out_cooldown_seconds or scaler.period_seconds
        while self.ups and self.ups[0][0] <= t - up_period:
            self.ups.popleft()
        while self.downs and self.downs[0][0] <= t - MINUTE:
            self.downs.popleft()
        if target > current:
            room = 1 - sum(n for _, n in self.ups)
            if scaler.hpa_scale_up_percent > 0:
                # a Percent policy per sync period beside the rendered one; the larger limit wins
                recent = sum(n for s, n in self.ups if s > t - scaler.period_seconds)
                percent = math.ceil(current * scaler.hpa_scale_up_percent / 100 - 1e-9) - recent
                room = max(room, percent)
            added = min(target - current, room)
            if added > 0:
                self._launch(added, t)
                self.ups.append((t, added))
                self.scale_outs += 1
                self.last_out = t
            return
        stable = max(size for _, size in self.recommended)
        if stable >= current:
            return
        room = 1 - sum(n for _, n in self.downs)
        if scaler.hpa_scale_down_percent > 0:
            # the rendered Percent policy beside it, the larger change winning: the HPA lets the replicas
            # fall to the replicas at the period's start x (1 - percent), truncated toward zero
            # (kubernetes pkg/controller/podautoscaler/horizontal.go, calculateScaleDownLimitWithBehaviors:
            # int32(float64(periodStartReplicas) * (1 - float64(policy.Value)/100)), read 2026-12-02; a
            # scale-up's Percent limit is the one rounded up, math.Ceil)
            at_start = current + sum(n for _, n in self.downs)
            lowest = math.floor(at_start * (1 - scaler.hpa_scale_down_percent / 100) + 1e-9)
            room = max(room, current - lowest)
        gone = min(current - max(stable, floor), room)
        if gone <= 0:
            return
        # launches not yet serving go first (the ReplicaSet deletes unready pods first)
        while gone and self.launching:
            self.launching.pop()
            heapq.heapify(self.launching)
            if self.nodes is not None:
                self.nodes.release(1, t)
            gone -= 1
            self.downs.append((t, 1))
        if gone:
            self._remove(gone, t)
            self.downs.append((t, gone))
        self.scale_ins += 1
        self.last_in = t


def _ceil(load: float, per_machine: float) -> int:
    return math.ceil(load / per_machine - 1e-9) if load > 0 else 0


def replay(
    trace: Trace,
    pool: Pool,
    autoscaler: Autoscaler | None = None,
    *,
    work: Workload | None = None,
    oracle: OracleRun | None = None,
) -> Result:
    """Replay `trace` against `pool`; the references are computed from the same work.

    `work` and `oracle` may be passed in when several settings of one pool replay one trace (`--tune`):
    they depend on the trace, the machine and the target only.
    """
    scaler = autoscaler or scaler_settings(pool.plan, cloud="kubernetes" if pool.nodes is not None else "aws")
    if work is None:
        work = workload(trace, pool.service, pool.slots)
    if oracle is None:
        oracle = slo_oracle(work, pool.ttft_target_seconds)
    return _Replay(trace, pool, scaler, work, oracle).run()
