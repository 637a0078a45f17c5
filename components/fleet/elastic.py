"""Elastic serving pools: the inputs and the resolved scaling numbers every cloud uses (pure).

A fleet with `elastic` set is a group (AWS Auto Scaling group, GCP managed instance group) instead of
fixed machines. Its capacity counts stay its PEAK (the size the pool runs at when busiest); `elastic`
adds the bounds around them and how fast the group follows its load. `plan_scaling` resolves them into
a `ScalingPlan`: the numbers the cloud resources, `plan` and `simulate` all read, so the three never
disagree.

The load signal is the engine's own: vLLM's running + waiting requests summed over a machine's engines
(`vllm:num_requests_running` + `vllm:num_requests_waiting`). A machine holds at most the sum of its
engines' `--max-num-seqs` at once (more wait in its queue), so the target per machine is that capacity
times `target_utilisation`: at 0.7 (the default, chosen from the replay of the Azure traces with the
fast scale-out: benchmarks/simulate_scaling_defaults.py, 2026-12-02) a pool scales out while every
machine still has 30% of its batch free, which absorbs the growth during the cold start of the next
machine; the fast step (`fast_scale_out_ratio` 1.0: one datapoint at the target) starts those machines
two datapoints sooner than target tracking alone. Without the fast step 0.7 misses the 1% SLO on both
replayed diurnal pools (1.84%, 3.63%); with it both keep it (0.14%, 0.99%).
"""

from __future__ import annotations

import itertools
import math
import re
import typing
import zoneinfo
from dataclasses import dataclass, replace
from typing import Literal

from inference_infra.components.arguments import arg
from inference_infra.components.catalog import find_instance_type
from inference_infra.components.errors import Problem
from inference_infra.components.planner import Assumptions, fit, model_spec
from inference_infra.components.planner.throughput import estimate, pipelined
from inference_infra.components.serving.cold_start import ENGINE_WARMUP_SECONDS
from inference_infra.components.serving.model import FleetServing, ServedModel

# ALB target groups accept a deregistration delay of 0-3600 s (the default 300 s), read 2026-11-25 at
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-target-group-attributes.html
# ("deregistration_delay.timeout_seconds ... The range is 0-3600 seconds"). GCP's connection draining
# timeout has the same ceiling (backend service `connectionDraining.drainingTimeoutSec`, 0-3600).
MAX_DRAIN_SECONDS = 3600
# Added to the longest generation: the balancer's and the client's own round trips, and the
# engine's first token (prefill of a long prompt) which the decode speed does not cover.
DRAIN_MARGIN_SECONDS = 30
# gp3's baseline throughput is 125 MiB/s; the fleets' launch templates provision 500 MiB/s
# (components/aws/launch.py). A stopped machine's volume keeps its blocks (no lazy load from a
# snapshot, which only a new volume has), so a warm start reads the cached weights at that rate.
WARM_CACHE_READ_GIB_S = 500 / 1024
# A stopped machine started again: EC2 start, OS boot and the enabled units. No cloud-init first boot,
# packages or image pulls (all on the root volume). An estimate of ours (2026-11-25), not a measurement;
# the cold start's NODE_BOOT (120 s) includes those first-boot steps.
WARM_BOOT_SECONDS = 60
# A warm pool by default only when a warm start takes at most this share of a cold start. Each warm
# machine used is replaced by one that initialises (a cold start, billed) and then stops, so a warm pool
# costs more machine time than it saves and pays only in time to first token. The replay (2026-12-02,
# benchmarks/simulate_scaling_defaults.py's pools) finds a warm start at 93-97% of the cold start (8B on
# g6e.xlarge: 212 s against 228 s; 8B on inf2.8xlarge: 422 s against 436 s) costing 2-9% more for the
# same late share within 0.7 points on the conv, conv 10x, diurnal and burst traces. Half is ours: below
# it a warm start removes most of a cold start's queue; not measured here.
WARM_POOL_MAX_START_SHARE = 0.5
# The scaler's view of the load: each node publishes one datapoint a minute (AWS: the serving-load
# metric, components/aws/bootstrap.py; GCP: the Ops Agent's engine metrics), and the policies judge it
# per minute. A target-tracking policy's high alarm on a one-minute metric wants 3 datapoints of 3 (as
# the alarms AWS creates read; not a documented contract), and the replay assumes the same of GCP.
METRIC_PERIOD_SECONDS = 60
SCALE_OUT_DATAPOINTS = 3
# The termination hook's timeout (components/aws/elastic_group.py): the balancer has drained the machine
# already and the node does not complete the hook, so a scale-in activity ends this long after the drain;
# a simple policy's cooldown starts only then (EC2 Auto Scaling User Guide, "Scaling cooldowns": with a
# load balancer the group "waits for the terminating instance to finish deregistering" and, with a
# lifecycle hook, for the action to complete or time out, before the cooldown starts; read 2026-12-02).
TERMINATION_HOOK_SECONDS = 120
# GCP's autoscaler holds the largest recommendation of its stabilisation period (the Compute API's
# AutoscalingPolicy stabilizationPeriodSec: "The default stabilization period is 600 seconds"; not rendered,
# so the default), and its scale-in control the peak recommendation of a trailing window less
# maxScaledInReplicas. A window no longer than the stabilisation period never binds.
GCP_STABILISATION_SECONDS = 600
GCP_MAX_WINDOW_SECONDS = 3600  # kept within an hour here (components/gcp/elastic.py MAX_AUTOSCALER_SECONDS)
# Scale in only while the load would stay under this share of the target without the machines let go:
# the gap to the target (where target tracking scales out again) keeps the two policies from flapping.
SCALE_IN_HEADROOM = 0.8
# The largest scale-in share taken: one scale-in always leaves at least one machine of those serving
# (AWS's alarm divides the load by the machines left; GCP's percent of 100 would empty the group).
MAX_SCALE_IN_SHARE = 0.9
# The fast scale-out (AWS: a step-scaling policy and its one-datapoint alarm beside target tracking).
# Its steps are bands of the load per machine over the target, each adding the share of the group that
# brings the band's top back to the target: a load of 1.3 x the target adds 30% (rounded up to the
# next band edge). Bands a tenth of the target wide up to 2x; above 2x the step adds 100%, the most a
# PercentChangeInCapacity adjustment takes (-100..100: api_rules.scaling_policy_problems), and target
# tracking sizes the rest after its datapoints. AWS allows 20 step adjustments a policy (EC2 Auto
# Scaling quotas, "Step adjustments per scaling policy", read 2026-12-02): at most 11 are made here.
FAST_STEP_WIDTH = 0.1
FAST_STEP_TOP = 2.0
MAX_FAST_SCALE_OUT_RATIO = FAST_STEP_TOP
# How a scale-in is sized (ElasticArgs.scale_in_sizing). "deficit" (AWS: a StepScaling policy on the
# low-load alarm, `deficit_steps`): each datapoint under the threshold lets go the share of the group
# the load is under it, as the fast scale-out adds the share it is over the target; "share" (AWS: the
# SimpleScaling policy of before): a fixed share of the group per scale-in, a cooldown apart, its
# cooldown starting when the activity completes.
ScaleInSizing = Literal["deficit", "share"]
SCALE_IN_SIZINGS: tuple[str, ...] = typing.get_args(ScaleInSizing)
# Datapoints a deficit step may act on before the load it describes shows its own removal. CloudWatch
# invokes an Auto Scaling action once a minute while its alarm stays in ALARM (AWS re:Post Knowledge
# Center, "Why doesn't my CloudWatch alarm's state change invoke my Amazon EC2 Auto Scaling policy?",
# read 2026-12-02) and a step policy has no cooldown (it answers every alarm, even while an activity
# is in progress: EC2 Auto Scaling User Guide, "Step and simple scaling policies", read 2026-12-02), so
# the datapoint seen one minute after a step is the one before it (the replay's 60 s metric lag,
# simulate/settings.py): the step fires again on it. Each step is therefore sized so that it and the
# stale firings after it together let go at most the deficit (`deficit_steps`).
SCALE_IN_STALE_DATAPOINTS = 1
# A Kubernetes pool's scale-out (KEDA's HPA, components/k8s/pool_manifests.py): beside one machine's
# pods per scale-out cooldown, a Percent policy lets the HPA double the pods each sync (15 s), the
# larger limit winning (selectPolicy Max, the default): Kubernetes's own default scaleUp policy
# ("Horizontal Pod Autoscaling", default behavior, read 2026-12-02). The one-machine policy alone took
# 33 minutes from 12 to 45 machines on conv 10x (61.8% of requests late; with this policy 17.3%:
# benchmarks/simulate_scaler_truth.py, 2026-12-02); the replay replays the rendered value.
K8S_SCALE_UP_PERCENT = 100
K8S_SCALE_UP_PERCENT_PERIOD_SECONDS = 15
# A Kubernetes pool with the deficit sizing: beside one machine's pods a minute, a Percent scaleDown
# policy lets the HPA go down to its recommendation (already sized to the load: desired = ceil(pods x
# metric / target)) by up to this share of the pods a minute, the larger change winning (selectPolicy
# Max: "the policy which allows the highest amount of change"; Kubernetes docs, "Horizontal Pod
# Autoscaling", scaling policies, read 2026-12-02). The stabilisation window (scale_in_cooldown_seconds)
# holds the highest recommendation of its span, so a recommendation computed on a stale per-pod average
# after a scale-down (fewer pods times the old load per pod) does not win until fresh readings fill the
# window; the share caps a minute's step. Half is ours (the deficit step's largest share with its stale
# firing is 1 - sqrt(0.1) = 68%, the 0.9 cap aside): not a documented default.
K8S_SCALE_DOWN_PERCENT = 50
K8S_SCALE_DOWN_PERCENT_PERIOD_SECONDS = 60
# Working-hours schedules: cron day-of-week field, as AWS scheduled actions take it (MON-FRI, 1-5, SUN,SAT).
_DAY = r"(?:[0-7]|SUN|MON|TUE|WED|THU|FRI|SAT)"
_DAYS = re.compile(rf"^(?:\*|{_DAY}(?:-{_DAY})?(?:,{_DAY}(?:-{_DAY})?)*)$")


@dataclass(frozen=True, kw_only=True)
class ScheduleArgs:
    """Working hours: outside them the pool's minimum and desired drop to off_hours_size."""

    time_zone: str = arg(doc="IANA time zone the hours are in, e.g. Europe/Berlin (checked with zoneinfo).")
    days: str = arg("MON-FRI", "Working days, as a cron day-of-week field (MON-FRI, 1-5, MON,WED,FRI).")
    start_hour: int = arg(8, "Hour working hours start (0-23, local time).", ge=0, le=23)
    end_hour: int = arg(19, "Hour working hours end (1-24, local time, after start_hour).", ge=1, le=24)
    off_hours_size: int = arg(
        0,
        "Minimum and desired machines outside working hours (0: the pool scales to zero).",
        ge=0,
        le=10_000,
    )


@dataclass(frozen=True, kw_only=True)
class ElasticArgs:
    """A serving fleet that follows its traffic. The fleet's counts (reserved/spot/on_demand/count)
    remain its PEAK: max_size defaults to them (capped by the stack budget in infra/)."""

    min_size: int | None = arg(
        None,
        "Fewest machines; default: the floor, ceil(peak x floor_share) (and the reserved count).",
        ge=0,
        le=10_000,
    )
    floor_share: float = arg(
        0.25, "Share of the peak kept running as the floor when min_size is not set (0-1).", ge=0, le=1
    )
    max_size: int | None = arg(
        None,
        "Most machines; default: the fleet's peak counts, capped by the stack's budget.",
        ge=1,
        le=10_000,
    )
    target_utilisation: float = arg(
        0.7,
        "In-flight requests per machine the pool tracks, as a share of a machine's capacity (the sum of "
        "its engines' --max-num-seqs); lower scales out earlier (more headroom during a cold start).",
        ge=0.05,
        le=1,
    )
    scale_out_cooldown_seconds: int = arg(
        60, "Seconds between scale-outs: short, a queue grows while a machine cold-starts.", ge=0, le=3600
    )
    scale_in_cooldown_seconds: int = arg(
        300,
        "Seconds of quiet load before a scale-in and, sized by share, between scale-ins (a machine let "
        "go costs a cold start to get back; the replay of the Azure traces favours 300 s: "
        "benchmarks/simulate_scaling_defaults.py); sized by deficit, the quiet time before the first step "
        "only (a step policy has no cooldown).",
        ge=0,
        le=86400,
    )
    scale_in_share: float = arg(
        0.25,
        "Machines one scale-in lets go, as a share of those in the group, in whole percent (0-0.9; "
        "0: one machine per scale-in). AWS: the share rounded down, at least one machine, once the load "
        "would stay under the scale-in headroom on the machines left; GCP: at most the share a "
        "scale-in window, rounded up.",
        ge=0,
        le=MAX_SCALE_IN_SHARE,
    )
    scale_in_sizing: ScaleInSizing = arg(
        "share",
        "How one scale-in is sized: deficit (AWS: a step policy letting go, each quiet minute, the share "
        "of the group the load is under the scale-in threshold, scale_in_cooldown_seconds being the quiet "
        "time before the first step; Kubernetes: the HPA may also let half the pods go a minute) or share "
        "(scale_in_share per scale-in, a cooldown apart). GCP's autoscaler sizes its scale-in from the "
        "load already (nothing changes there). Default share: on the replayed Azure traces the deficit "
        "is 4-9% cheaper but takes the 70B diurnal pool over 1% late (1.02-1.06%; share 0.99%): "
        "benchmarks/simulate_scaling_defaults.py --full, 2026-12-02.",
    )
    fast_scale_out_ratio: float = arg(
        1.0,
        "Scale out after ONE datapoint once the load per machine reaches this multiple of the target "
        "(1-2; 0: off): AWS, a step-scaling policy beside target tracking adding the share of the group "
        "the load is over the target (at most 100% a step); GCP's autoscaler already acts on each "
        "datapoint, so nothing is rendered there.",
        ge=0,
        le=MAX_FAST_SCALE_OUT_RATIO,
    )
    warm_pool_size: int | None = arg(
        None,
        "AWS, on-demand and reserved pools only: stopped machines kept with their weights on EBS for a "
        "fast scale-out; default: max - min when a warm start takes at most half a cold start, else 0.",
        ge=0,
        le=10_000,
    )
    schedule: ScheduleArgs | None = arg(None, "Working hours (outside them the pool shrinks).")


@dataclass(frozen=True)
class FastStep:
    """One step adjustment, offsets from its alarm's threshold. The fast scale-out: the load per machine
    over the threshold by [lower, upper) (upper None: no end) adds `percent` of the machines in service.
    The deficit scale-in (`deficit_steps`): under it by (lower, upper] (lower None: no end), `percent`
    (negative) lets that share go."""

    lower: float | None
    upper: float | None
    percent: int


def fast_steps(ratio: float, target: float) -> tuple[float, tuple[FastStep, ...]]:
    """(threshold, steps) of the fast scale-out for a target of `target` in-flight requests per machine.

    The threshold is `ratio` x the target; band k covers a load of [a, b) x the target and adds
    ceil((b - 1) x 100)% of the group (the share that brings a load of b back to the target), the last
    band, from FAST_STEP_TOP up, 100%. Offsets are from the threshold, as StepAdjustment's
    MetricIntervalLowerBound/UpperBound are (the Auto Scaling API reference, StepAdjustment: "the lower
    bound for the difference between the alarm threshold and the CloudWatch metric"); the first band
    starts at 0 and the last has no upper bound, so they cover every breach without a gap or an overlap.
    ratio 0: no fast scale-out, (0.0, ()).
    """
    if ratio <= 0 or target <= 0:
        return 0.0, ()
    edges = [ratio]
    k = 1
    while True:
        edge = round(1 + k * FAST_STEP_WIDTH, 6)
        k += 1
        if edge > FAST_STEP_TOP + 1e-9:
            break
        if edge > ratio + 1e-9:
            edges.append(edge)
    threshold = round(ratio * target, 2)
    steps: list[FastStep] = []
    for low, high in itertools.pairwise(edges):
        steps.append(
            FastStep(
                lower=round((low - ratio) * target, 2),
                upper=round((high - ratio) * target, 2),
                percent=min(100, math.ceil((high - 1) * 100 - 1e-6)),
            )
        )
    steps.append(FastStep(lower=round((edges[-1] - ratio) * target, 2), upper=None, percent=100))
    return threshold, tuple(steps)


def percent_change(percent: int, machines: int, *, magnitude: int = 1) -> int:
    """Machines a PercentChangeInCapacity adjustment of +`percent` adds to `machines` in service.

    EC2 Auto Scaling User Guide, "Scaling adjustment types" (read 2026-12-02): a percentage result
    above 1 is rounded down (12.7 to 12), one between 0 and 1 is rounded to 1; MinAdjustmentMagnitude
    (here 1) is the least it adds.
    """
    if percent <= 0 or machines <= 0:
        return 0
    exact = percent * machines / 100
    step = math.floor(exact + 1e-9) if exact > 1 else 1
    return max(step, magnitude)


def deficit_steps(
    headroom: float, target: float, *, stale: int = SCALE_IN_STALE_DATAPOINTS
) -> tuple[float, tuple[FastStep, ...]]:
    """(threshold, steps) of the deficit scale-in for a target of `target` in-flight requests per machine.

    The alarm's metric is the load per machine were ONE machine gone (`scale_in_expression` of the AWS
    renderer: at least one may go whenever it breaches); the threshold is `headroom` x the target. Bands
    a tenth of the target wide go down from the threshold; the band whose top is b x the target lets go
    the share p with (1 - p) ** (stale + 1) = b / headroom, rounded down to a whole percent (at least 1:
    MinAdjustmentMagnitude 1 lets one machine go), at most MAX_SCALE_IN_SHARE: `stale` + 1 firings on
    the same datapoint (SCALE_IN_STALE_DATAPOINTS) together leave the load at most at the threshold, and
    one firing lets go only part of the deficit, the rest when a datapoint after it confirms. The top of
    a band is its highest load, so a step never lets go more than its band's lightest case allows.

    Offsets are from the threshold (StepAdjustment's bounds), all at or below 0: under the threshold the
    lower bound is exclusive and the upper inclusive (the CloudFormation StepAdjustment reference's
    example: "greater than 40 and less than or equal to 50 ... a lower bound of -10 and an upper bound
    of 0", read 2026-12-02); the lowest band has no lower bound, so every breach matches one step.
    Percents are negative (PercentChangeInCapacity, a decrease). headroom or target 0: (0.0, ()).
    """
    if headroom <= 0 or target <= 0:
        return 0.0, ()
    edges = [headroom]
    k = 1
    while (edge := round(headroom - k * FAST_STEP_WIDTH, 6)) > 1e-9:
        edges.append(edge)
        k += 1
    threshold = round(headroom * target, 2)
    offsets = [round((e - headroom) * target, 2) for e in edges]

    def share(top: float) -> int:
        exact = 100 * (1 - (top / headroom) ** (1 / (stale + 1)))
        return -max(1, min(round(MAX_SCALE_IN_SHARE * 100), math.floor(exact + 1e-6)))

    steps = [
        FastStep(lower=offsets[i + 1], upper=offsets[i], percent=share(edges[i]))
        for i in range(len(edges) - 1)
    ]
    steps.append(FastStep(lower=None, upper=offsets[-1], percent=share(edges[-1])))
    return threshold, tuple(steps)


@dataclass(frozen=True)
class ScalingPlan:
    """Resolved numbers for one pool: what the cloud resources, the plan and the replay use."""

    min_size: int
    max_size: int
    desired: int
    in_flight_per_machine: int  # capacity: sum of the engines' --max-num-seqs
    target_in_flight: float  # target-tracking value per machine = capacity * target_utilisation
    scale_out_cooldown_seconds: int
    scale_in_cooldown_seconds: int
    warmup_seconds: int  # the cold start's health-check grace (FleetServing.grace_seconds()): hooks, health
    warm_start_seconds: int  # a stopped warm-pool machine back in service (weights on EBS)
    warm_pool_size: int
    deregistration_delay_seconds: int  # longest generation at the planned decode speed + margin, <= 3600
    schedule: ScheduleArgs | None
    # Added (see elastic-interface.md "Changes"): why the numbers are what they are, for `plan`.
    peak: int = 0
    longest_generation_seconds: float = 0.0
    notes: tuple[str, ...] = ()
    # What the scaler renderers and the replay read rather than recompute (issue #32 item 3):
    seconds_per_output_token: float = 0.0  # one stream's decode speed on the machine (the planner's)
    target_utilisation: float = 0.0  # the input target_in_flight came from
    period_seconds: int = METRIC_PERIOD_SECONDS  # one datapoint a period
    scale_out_datapoints: int = SCALE_OUT_DATAPOINTS  # periods in a row over the target before scaling out
    scale_in_datapoints: int = 1  # quiet periods in a row before one machine goes: the scale-in cooldown
    scale_in_headroom: float = SCALE_IN_HEADROOM  # quiet: under this share of the target without a machine
    scale_in_share: float = 0.0  # machines one scale-in lets go, of those in the group (0: one machine)
    # The fast scale-out (AWS step scaling on one datapoint; `fast_steps`): 0 and () when off.
    fast_scale_out_ratio: float = 0.0
    fast_scale_out_threshold: float = 0.0  # in-flight per machine (Average) at which the step alarm fires
    fast_scale_out_steps: tuple[FastStep, ...] = ()
    # The scale-in's sizing (ElasticArgs.scale_in_sizing) and, for "deficit", the step policy's bands
    # under `scale_in_threshold` (`deficit_steps`): what AWS renders and the replay replays.
    scale_in_sizing: str = "share"
    scale_in_steps: tuple[FastStep, ...] = ()
    # The instance warm-up the scaling policies get (issue #39): how long after InService a machine's load
    # is not yet representative, not the grace. AWS starts a machine's warm-up when it reaches InService
    # ("how long after an instance reaches the InService state it waits before contributing usage data")
    # and, until it ends, counts the machine as capacity and blocks every dynamic scale-in (EC2 Auto
    # Scaling User Guide, "Set the default instance warmup for an Auto Scaling group" and "Scaling
    # cooldowns", read 2026-12-02). The node completes the launch hook once every engine answers
    # (components/aws/node/serving_load.py), so InService is when it serves; its share of the traffic then
    # ramps over the load balancer's slow start (FleetServing.slow_start_seconds()), which is the warm-up.
    # The grace rendered before (600 s for the 8B pool) held every scale-in 10 minutes after each machine
    # served.
    instance_warmup_seconds: int = 0
    # InService to serving, as the node completes its launch hook: 0 (the engines answer first); the
    # replay holds the rendered warm-up against it (warmup_beyond_serving_seconds).
    in_service_to_serving_seconds: int = 0
    # Launch to serving, expected (the cold start's typical sum): GCP's initialization period.
    expected_start_seconds: int = 0

    @property
    def policy_warmup_seconds(self) -> int:
        """The warm-up the group and its policies are rendered with: the instance warm-up, or the grace
        for a plan made without one."""
        return self.instance_warmup_seconds or self.warmup_seconds

    @property
    def warmup_beyond_serving_seconds(self) -> int:
        """Seconds a machine stays in its instance warm-up after it serves (0 when the rendered warm-up is
        the estimate; a grace-long warm-up, as rendered before, gave the 8B pool several minutes)."""
        return max(0, self.policy_warmup_seconds - self.in_service_to_serving_seconds)

    def fast_scale_out_machines(self, per_machine: float, machines: int) -> int:
        """Machines the fast step adds to `machines` in service at a datapoint of `per_machine` (0: none)."""
        if not self.fast_scale_out_steps or per_machine < self.fast_scale_out_threshold:
            return 0
        over = per_machine - self.fast_scale_out_threshold
        for step in self.fast_scale_out_steps:
            if step.lower <= over and (step.upper is None or over < step.upper):
                return percent_change(step.percent, machines)
        return 0

    def deficit_scale_in_machines(self, after_one: float, machines: int) -> int:
        """Machines the deficit step lets go of `machines` (the group's capacity) at a datapoint whose
        load per machine, were one machine gone, is `after_one` (0: no breach, or no steps)."""
        if not self.scale_in_steps or after_one >= self.scale_in_threshold or machines <= 0:
            return 0
        under = after_one - self.scale_in_threshold
        for step in self.scale_in_steps:
            if (step.lower is None or step.lower < under) and (step.upper is None or under <= step.upper):
                return percent_change(-step.percent, machines)
        return 0

    @property
    def scale_in_percent(self) -> int:
        """The scale-in share as the clouds take it: a whole percent (0: one machine a scale-in)."""
        return round(self.scale_in_share * 100)

    def scale_in_machines(self, machines: int, *, cloud: str = "aws") -> int:
        """Machines one scale-in lets go from a group of `machines` (`scale_in_step`)."""
        return scale_in_step(self.scale_in_percent, machines, cloud=cloud)

    @property
    def scale_in_threshold(self) -> float:
        """In-flight requests per machine, were one machine gone, under which the pool scales in."""
        return round(self.target_in_flight * self.scale_in_headroom, 2)

    def mean_request_seconds(self, output_tokens: int) -> float:
        """A request of `output_tokens` at the planned decode speed."""
        return output_tokens * self.seconds_per_output_token

    def describe(self) -> str:
        """One line for `plan` and logs."""
        warm = f", warm pool {self.warm_pool_size}" if self.warm_pool_size else ""
        shed = f", scale-in {self.scale_in_percent}% a step" if self.scale_in_percent else ""
        fast = (
            f", fast scale-out from {self.fast_scale_out_threshold:g} per machine"
            if self.fast_scale_out_steps
            else ""
        )
        return (
            f"elastic {self.min_size}..{self.max_size} machines (desired {self.desired}, peak {self.peak})"
            f" tracking {self.target_in_flight:g} in-flight requests per machine of"
            f" {self.in_flight_per_machine}{fast}; warm-up {self.policy_warmup_seconds} s (grace"
            f" {self.warmup_seconds} s){warm}{shed},"
            f" drain {self.deregistration_delay_seconds} s"
        )


def with_fast_scale_out(plan: ScalingPlan, ratio: float | None = None) -> ScalingPlan:
    """`plan` with its fast step recomputed for its own target (after a changed target_in_flight) and
    `ratio` (None: the plan's); what `simulate`'s flags and `--tune` replay, as a stack would render it."""
    ratio = plan.fast_scale_out_ratio if ratio is None else ratio
    threshold, steps = fast_steps(ratio, plan.target_in_flight)
    return replace(
        plan,
        fast_scale_out_ratio=ratio if steps else 0.0,
        fast_scale_out_threshold=threshold,
        fast_scale_out_steps=steps,
    )


def with_scale_in(plan: ScalingPlan, sizing: str | None = None) -> ScalingPlan:
    """`plan` with its scale-in steps recomputed for its own target and headroom and `sizing` (None: the
    plan's); what `simulate`'s flags and `--tune` replay, as a stack would render it."""
    sizing = plan.scale_in_sizing if sizing is None else sizing
    steps = deficit_steps(plan.scale_in_headroom, plan.target_in_flight)[1] if sizing == "deficit" else ()
    return replace(plan, scale_in_sizing=sizing, scale_in_steps=steps)


def scale_in_step(percent: int, machines: int, *, cloud: str = "aws") -> int:
    """Machines one scale-in lets go from a group of `machines` at `percent` (0: one machine).

    AWS (a SimpleScaling policy, PercentChangeInCapacity -percent with MinAdjustmentMagnitude 1): the
    decrease rounds toward zero and is at least one machine (EC2 Auto Scaling User Guide, "Scaling
    adjustment types"; the PutScalingPolicy reference: MinAdjustmentMagnitude "the minimum value to
    scale by when the adjustment type is PercentChangeInCapacity"). GCP (scaleInControl
    maxScaledInReplicas.percent): percent/100 x the group's size, a remainder rounded up (the Compute
    API's FixedOrPercent.calculated, as Google's Java client documents it). Never the whole group: at
    least one machine stays.
    """
    if machines <= 1:
        return 0 if machines < 1 else 1
    if percent <= 0:
        return 1
    exact = percent * machines / 100
    step = math.ceil(exact - 1e-9) if cloud == "gcp" else max(1, math.floor(exact + 1e-9))
    return min(step, machines - 1)


def gcp_scale_in_window(cooldown_seconds: int, stabilisation_seconds: int = GCP_STABILISATION_SECONDS) -> int:
    """scaleInControl.timeWindowSec for a scale-in of one step per `cooldown_seconds` (at least 60 s).

    The control keeps the group at least the peak recommendation of the window less one step
    (Compute API AutoscalingPolicyScaleInControl, read 2026-12-02: "Maximum allowed number (or %) of
    VMs that can be deducted from the peak recommendation during the window"). The stabilisation period
    already holds that peak for its 600 s, so the first step comes when it lets go and the next one only
    when the peak leaves the window: a window of the stabilisation period plus the cooldown spaces the
    steps a cooldown apart. A window of the cooldown alone (as rendered before, 300 s by default) is
    shorter than the stabilisation and binds nothing: the group fell to the stabilised recommendation at
    once. At most GCP_MAX_WINDOW_SECONDS.
    """
    return min(GCP_MAX_WINDOW_SECONDS, stabilisation_seconds + max(60, cooldown_seconds))


def resolved_bounds(args: ElasticArgs, *, peak: int, reserved: int = 0) -> tuple[int, int]:
    """(min, max) before any budget cap: the inputs, or the floor and the peak."""
    floor = math.ceil(peak * args.floor_share - 1e-9)
    low = args.min_size if args.min_size is not None else max(floor, min(reserved, peak))
    high = args.max_size if args.max_size is not None else peak
    return low, high


def elastic_problems(args: ElasticArgs, *, peak: int, key: str = "elastic") -> list[Problem]:
    """Every problem with a pool's elastic inputs (pure; before anything is registered).

    `peak` is the fleet's machines from its capacity counts; `key` prefixes the problems' inputs
    (the stack names its own, e.g. "awsGpuFleets[0].elastic").
    """
    problems: list[Problem] = []
    if peak < 1:
        problems.append(Problem(key, peak, "needs a peak of at least 1 machine in the fleet's counts"))
    # The fields' own bounds (arg(ge=..., le=...)) are check_types', which every caller runs first (the
    # fleet skeleton's step 0, simulate/pool.py build_pool): only what relates two inputs is checked here.
    if abs(args.scale_in_share * 100 - round(args.scale_in_share * 100)) > 1e-6:
        problems.append(
            Problem(
                f"{key}.scale_in_share",
                args.scale_in_share,
                "must be a whole percent (e.g. 0.25): AWS's PercentChangeInCapacity and GCP's "
                "maxScaledInReplicas.percent take integers",
            )
        )
    if problems:
        return problems
    low, high = resolved_bounds(args, peak=peak)
    if low > high:
        which = "min_size" if args.min_size is not None else "floor_share"
        value = args.min_size if args.min_size is not None else args.floor_share
        problems.append(
            Problem(
                f"{key}.{which}",
                value,
                f"gives a minimum of {low} machines above the maximum of {high} "
                f"({'max_size' if args.max_size is not None else 'the peak counts'}); min must be <= max",
            )
        )
    if 0 < args.fast_scale_out_ratio < 1:
        problems.append(
            Problem(
                f"{key}.fast_scale_out_ratio",
                args.fast_scale_out_ratio,
                "must be 0 (off) or 1 to 2: a multiple of the target under 1 would scale out while the "
                "load is below the target that target tracking holds",
            )
        )
    if args.warm_pool_size is not None and args.warm_pool_size > high:
        problems.append(
            Problem(
                f"{key}.warm_pool_size",
                args.warm_pool_size,
                f"must be at most the maximum ({high}): a warm machine only ever joins up to max_size",
            )
        )
    if args.min_size == 0 and args.schedule is None:
        problems.append(
            Problem(
                f"{key}.min_size",
                0,
                "must be at least 1 without a schedule: a pool at zero machines publishes no load, so "
                "nothing would ever scale it out again; to run nothing outside working hours give "
                "schedule=ScheduleArgs(..., off_hours_size=0) (the working-hours minimum is then 1)",
            )
        )
    if args.schedule is not None:
        problems += schedule_problems(args.schedule, key=f"{key}.schedule", max_size=high)
    return problems


def schedule_problems(
    schedule: ScheduleArgs, *, key: str = "schedule", max_size: int | None = None
) -> list[Problem]:
    problems: list[Problem] = []
    try:
        ok_zone = bool(schedule.time_zone) and zoneinfo.ZoneInfo(schedule.time_zone) is not None
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        ok_zone = False
    if not ok_zone:
        problems.append(
            Problem(f"{key}.time_zone", schedule.time_zone, "must be an IANA time zone, e.g. Europe/Berlin")
        )
    if not _DAYS.fullmatch(schedule.days or ""):
        problems.append(
            Problem(
                f"{key}.days",
                schedule.days,
                "must be a cron day-of-week field: *, MON-FRI, 1-5 or a comma list such as MON,WED,FRI",
            )
        )
    # start_hour, end_hour and off_hours_size within their arg() bounds: check_types, run first.
    if schedule.end_hour <= schedule.start_hour:
        problems.append(
            Problem(f"{key}.end_hour", schedule.end_hour, f"must be after start_hour ({schedule.start_hour})")
        )
    if max_size is not None and schedule.off_hours_size > max_size:
        problems.append(
            Problem(
                f"{key}.off_hours_size", schedule.off_hours_size, f"must be at most max_size ({max_size})"
            )
        )
    return problems


def decode_seconds_per_token(model: ServedModel, machine: str, hosts: int = 1) -> float:
    """Seconds between generated tokens one stream sees on `machine` at the model's planned batch
    (`hosts` > 1: a replica over that many machines, pipeline parallel: planner/fit.py multi_host_fit)."""
    spec = model_spec(model.name)
    instance = find_instance_type(machine)
    if instance is None:
        raise ValueError(f"instance type {machine!r} is not in the catalog")
    assumptions = Assumptions()
    layout = fit(spec, model.traffic(), model.precision(), assumptions, instance, hosts)
    if not layout.fits:
        raise ValueError(f"{spec.name} does not fit {machine}: {layout.problem}")
    throughput = pipelined(estimate(spec, model.traffic(), model.precision(), assumptions, layout), hosts)
    return 1 / throughput.per_sequence_tokens_per_s


def plan_scaling(
    args: ElasticArgs,
    *,
    peak: int,
    serving: FleetServing,
    model: ServedModel,
    machine: str,
    reserved: int = 0,
    max_by_budget: int | None = None,
    warm_pool: bool = True,
    warm_read_gib_s: float = WARM_CACHE_READ_GIB_S,
) -> ScalingPlan:
    """The scaling numbers of one pool (inputs already checked with `elastic_problems`).

    - min: `min_size`, else ceil(peak x floor_share), and never below the pool's `reserved` machines
      (a reservation is billed used or not, so letting them go saves nothing); at least 1 in working
      hours (a pool at zero publishes no load to scale out on: min 0 is taken only with a schedule,
      whose off-hours size may be 0);
    - max: `max_size`, else the peak; a default max above `max_by_budget` (machines the stack's budget
      pays for, computed by the caller) is lowered to it with a note; an explicit max_size is kept (the
      budget policy judges it);
    - desired: the minimum (the policy scales out from there; the group keeps its own desired after);
    - grace (`warmup_seconds`): the cold-start estimate's health-check grace; instance warm-up
      (`instance_warmup_seconds`): the load balancer's slow start after the machine serves (InService
      is when its engines answer: the node completes the launch hook then); warm start: a restart's
      boot, the weights read back twice (verified, then loaded) from the stopped machine's disk at
      `warm_read_gib_s`, the engine's warm-up;
    - warm pool: `warm_pool_size`, else max - min where `warm_pool` (the cloud and the capacity modes
      allow one) and a warm start takes at most WARM_POOL_MAX_START_SHARE of a cold one, else 0;
    - deregistration delay: the longest generation the engine admits (--max-model-len - 1 tokens) at
      the planned decode speed, plus a margin, at most 3600 s.
    """
    notes: list[str] = []
    low, high = resolved_bounds(args, peak=peak, reserved=reserved)
    if args.min_size is None and min(reserved, peak) > math.ceil(peak * args.floor_share - 1e-9):
        notes.append(f"minimum {low}: the {low} reserved machine(s) are billed whether used or not")
    if max_by_budget is not None and high > max_by_budget:
        if args.max_size is None:
            notes.append(
                f"maximum lowered from the peak {high} to {max_by_budget}: the stack's budget pays for "
                f"{max_by_budget} machine(s) of this pool (set max_size to override)"
            )
            high = max(max_by_budget, 1)
        else:
            notes.append(
                f"max_size {high} is above the {max_by_budget} machine(s) the stack's budget pays for; kept "
                "as given (the budget policy judges the maximum)"
            )
    if low > high:
        notes.append(f"minimum lowered from {low} to the budget-capped maximum {high}")
        low = high
    if low == 0:
        # Back from zero (issue #38): a pool at zero publishes no load, so no policy would scale it out
        # on the first request. The pool keeps one machine in working hours (elastic_problems refuses
        # an explicit min_size 0 without a schedule) and runs off_hours_size outside them.
        low = 1
        notes.append(
            "working-hours minimum 1 (0 asked, or a floor of 0): a pool at zero has no load signal to scale "
            "out on; outside working hours (schedule) it runs schedule.off_hours_size"
        )
    capacity = serving.engines.engines * serving.engines.max_num_seqs
    warmup = serving.grace_seconds()
    start = serving.cold_start
    # The weights are read back twice: the prefetch verifies every file against its manifest at each
    # boot (its SHA-256s), then the engine loads them (no page cache is assumed to survive).
    warm_start = math.ceil(
        WARM_BOOT_SECONDS
        + 2 * start.weights_gib / warm_read_gib_s
        + ENGINE_WARMUP_SECONDS[start.family].value
    )
    if args.warm_pool_size is not None:
        warm_size = args.warm_pool_size
    elif not warm_pool:
        warm_size = 0
    elif warm_start <= WARM_POOL_MAX_START_SHARE * start.seconds:
        warm_size = high - low
    else:
        warm_size = 0
        notes.append(
            f"no warm pool by default: a warm start (~{warm_start} s, {start.weights_gib:.0f} GiB read twice "
            f"from EBS at {warm_read_gib_s:.2f} GiB/s) is not at most {WARM_POOL_MAX_START_SHARE:.0%} of a"
            f" cold start (~{start.seconds:.0f} s); each warm machine used is replaced by one that"
            " initialises for a cold start, billed (set warm_pool_size to keep one)"
        )
    hosts = serving.engines.pipeline_parallel
    # A replica over several hosts (a Kubernetes LeaderWorkerSet group) decodes through its stages.
    tpot = (
        decode_seconds_per_token(model, machine)
        if hosts == 1
        else decode_seconds_per_token(model, machine, hosts)
    )
    longest = (model.context_tokens - 1) * tpot
    drain = math.ceil(longest) + DRAIN_MARGIN_SECONDS
    if drain > MAX_DRAIN_SECONDS:
        notes.append(
            f"the longest generation (~{longest:.0f} s: {model.context_tokens - 1} tokens at"
            f" {tpot * 1000:.1f} ms) is longer than the {MAX_DRAIN_SECONDS} s drain the load balancers"
            " allow; longer requests are cut"
        )
        drain = MAX_DRAIN_SECONDS
    target = round(capacity * args.target_utilisation, 2)
    fast_threshold, steps = fast_steps(args.fast_scale_out_ratio, target)
    return ScalingPlan(
        min_size=low,
        max_size=high,
        desired=low,
        in_flight_per_machine=capacity,
        target_in_flight=target,
        scale_out_cooldown_seconds=args.scale_out_cooldown_seconds,
        scale_in_cooldown_seconds=args.scale_in_cooldown_seconds,
        warmup_seconds=warmup,
        warm_start_seconds=warm_start,
        warm_pool_size=warm_size,
        deregistration_delay_seconds=drain,
        schedule=args.schedule,
        peak=peak,
        longest_generation_seconds=longest,
        notes=tuple(notes),
        seconds_per_output_token=tpot,
        target_utilisation=args.target_utilisation,
        scale_in_datapoints=max(1, args.scale_in_cooldown_seconds // METRIC_PERIOD_SECONDS),
        scale_in_share=args.scale_in_share,
        fast_scale_out_ratio=args.fast_scale_out_ratio if steps else 0.0,
        fast_scale_out_threshold=fast_threshold,
        fast_scale_out_steps=steps,
        scale_in_sizing=args.scale_in_sizing,
        scale_in_steps=(
            deficit_steps(SCALE_IN_HEADROOM, target)[1] if args.scale_in_sizing == "deficit" else ()
        ),
        instance_warmup_seconds=serving.slow_start_seconds(),
        in_service_to_serving_seconds=0,
        expected_start_seconds=math.ceil(start.seconds),
    )


__all__ = [
    "DRAIN_MARGIN_SECONDS",
    "FAST_STEP_TOP",
    "FAST_STEP_WIDTH",
    "GCP_MAX_WINDOW_SECONDS",
    "GCP_STABILISATION_SECONDS",
    "K8S_SCALE_DOWN_PERCENT",
    "K8S_SCALE_DOWN_PERCENT_PERIOD_SECONDS",
    "K8S_SCALE_UP_PERCENT",
    "K8S_SCALE_UP_PERCENT_PERIOD_SECONDS",
    "MAX_DRAIN_SECONDS",
    "MAX_FAST_SCALE_OUT_RATIO",
    "MAX_SCALE_IN_SHARE",
    "METRIC_PERIOD_SECONDS",
    "SCALE_IN_HEADROOM",
    "SCALE_IN_SIZINGS",
    "SCALE_IN_STALE_DATAPOINTS",
    "SCALE_OUT_DATAPOINTS",
    "TERMINATION_HOOK_SECONDS",
    "WARM_BOOT_SECONDS",
    "WARM_CACHE_READ_GIB_S",
    "WARM_POOL_MAX_START_SHARE",
    "ElasticArgs",
    "FastStep",
    "ScaleInSizing",
    "ScalingPlan",
    "ScheduleArgs",
    "decode_seconds_per_token",
    "deficit_steps",
    "elastic_problems",
    "fast_steps",
    "gcp_scale_in_window",
    "percent_change",
    "plan_scaling",
    "resolved_bounds",
    "scale_in_step",
    "schedule_problems",
    "with_fast_scale_out",
    "with_scale_in",
]
