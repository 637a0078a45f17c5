"""Replay a request trace against an elastic pool, a static fleet and the oracle (pure, deterministic).

The pool (one `ScalingPlan`, one machine's `ServiceModel`, a price per machine-hour):

- Requests go to one first-come-first-served queue in front of all in-service machines' slots (the
  load balancer is taken as perfect: a request waits only when every slot of the pool is busy). A
  request admitted at t holds a slot until t + prefill + (output - 1) x TPOT (`service`); its time
  to first token is its wait plus its prefill. A request longer than the engine's `--max-model-len`
  (prompt + output) is refused by vLLM and counted apart (`rejected_too_long`).
- The autoscaler is the AWS pool's (components/aws/elastic_group.py): the signal is in-flight
  requests (running + waiting) per machine, one datapoint per `period_seconds`, the period's mean.
  Scale-out is target tracking: after `scale_out_periods` datapoints in a row that want more than the
  pool has (ceil(in-flight / target_in_flight), up to max; machines still starting count as the
  pool's, as the policy's instance warm-up makes them), it launches the difference at once, at most
  once per scale-out cooldown. Scale-in is one machine at a time: when for scale_in_cooldown_seconds
  (in whole periods) the load would have stayed under `scale_in_headroom` x the target without one
  machine (in-flight / (machines - 1); the last machine only with nothing in flight), and a
  scale-in cooldown after the last scale-in. A schedule sets the minimum and desired to
  `off_hours_size` outside working hours (as the scheduled actions do). Requests waiting at a pool of
  zero machines count as its load (the replay does not model how a pool at zero hears of them).
- A new machine serves after a warm start when the warm pool has a stopped machine (which is then
  replaced: a new machine initialises for a cold start, billed, then stops), else after a cold start.
  A machine let go stops taking requests at once and is billed until the requests it holds finish.
- Billing is per second from launch (boot and weights load included) to release; stopped warm-pool
  machines cost their disks only, which the replay leaves out.

The static fleet runs, for the whole trace, as many machines as the busiest minute needs; the oracle
runs each minute exactly the machines that minute needs, with no cold start. "Needs" is
ceil(most requests in flight at once during the minute / slots per machine) with every request
admitted on arrival: neither the static fleet nor the oracle ever queues, so their late first tokens
are only the prompts whose prefill alone exceeds the target.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from inference_infra.components.fleet.elastic import ScalingPlan, ScheduleArgs
from inference_infra.components.simulate.service import ServiceModel
from inference_infra.components.simulate.trace import Trace

MINUTE = 60.0
_DAYS = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}


@dataclass(frozen=True, kw_only=True)
class Autoscaler:
    """What the replay assumes of the cloud's autoscaler beyond the pool's ScalingPlan.

    period_seconds: the node publishes one datapoint a minute (components/aws/elastic_group.py
    METRIC_PERIOD_SECONDS). scale_out_periods: the high alarm of an AWS target-tracking policy on a
    one-minute metric needs 3 datapoints of 3 (as the alarms it creates read; not a documented
    contract). scale_in_headroom: the AWS pool's scale-in alarm threshold, 0.8 x the target
    (elastic_group.SCALE_IN_HEADROOM).
    """

    period_seconds: int = 60
    scale_out_periods: int = 3
    scale_in_headroom: float = 0.8
    # Machines serving when the trace starts. None: the size the policy holds for the first period's
    # load (between min and max), as if the pool had followed the traffic before the trace began;
    # starting at the minimum would charge the pool for a ramp that happened before the trace.
    start_size: int | None = None

    @classmethod
    def of(cls, plan: ScalingPlan) -> Autoscaler:
        """The pool's own scaler, as its ScalingPlan states it: period, scale-out datapoints, headroom."""
        return cls(
            period_seconds=plan.period_seconds,
            scale_out_periods=plan.scale_out_datapoints,
            scale_in_headroom=plan.scale_in_headroom,
        )


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
    most_in_flight: int = 0  # the oracle's: most requests in flight at once with no queue

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
    requests: int
    rejected_too_long: int
    ttft_seconds: list[float]  # served requests, in arrival order
    prefill_seconds: list[float]
    launches: list[Launch]
    scale_outs: int
    scale_ins: int
    capped_periods: int  # periods that wanted more machines than max_size
    elastic_machine_s: float
    window_s: float
    static_machines: int
    oracle_machine_minutes: int
    timeline: list[Minute]
    max_machines: int
    min_machines: int
    notes: list[str] = field(default_factory=list)

    # --- figures --------------------------------------------------------------------------------

    @property
    def served(self) -> int:
        return len(self.ttft_seconds)

    def cost(self) -> dict[str, float]:
        price = self.pool.usd_per_hour
        elastic = self.elastic_machine_s / 3600 * price
        static = self.static_machines * self.window_s / 3600 * price
        oracle = self.oracle_machine_minutes / 60 * price
        return {"elastic_usd": elastic, "static_usd": static, "oracle_usd": oracle}

    def over_target(self) -> int:
        target = self.pool.ttft_target_seconds
        return sum(1 for t in self.ttft_seconds if t > target)

    def over_target_from_waiting(self) -> int:
        """Late only because they waited: their prefill alone is within the target."""
        target = self.pool.ttft_target_seconds
        return sum(1 for t, p in zip(self.ttft_seconds, self.prefill_seconds, strict=True) if t > target >= p)

    def oracle_over_target(self) -> int:
        target = self.pool.ttft_target_seconds
        return sum(1 for t in self.prefill_seconds if t > target)

    def as_json(self) -> dict[str, Any]:
        cost = self.cost()
        served = max(1, self.served)
        ttft = sorted(self.ttft_seconds)
        waits = sorted(t - p for t, p in zip(self.ttft_seconds, self.prefill_seconds, strict=True))
        warm = [x.seconds for x in self.launches if x.warm]
        cold = [x.seconds for x in self.launches if not x.warm]
        every = sorted(x.seconds for x in self.launches)
        plan = self.pool.plan
        queue = [m.queue_max for m in self.timeline]
        return {
            "pool": self.pool.name,
            "model": self.pool.service.spec.name,
            "machine": self.pool.service.machine,
            "latency": self.pool.latency,
            "trace": {
                "source": self.trace.source,
                "start": self.trace.start.isoformat() if self.trace.start else None,
                "requests": self.requests,
                "duration_s": round(self.trace.duration_s, 3),
                "rejected_too_long": self.rejected_too_long,
            },
            "scaling": {
                "min_size": plan.min_size,
                "max_size": plan.max_size,
                "desired": plan.desired,
                "in_flight_per_machine": plan.in_flight_per_machine,
                "target_in_flight": plan.target_in_flight,
                "scale_out_cooldown_seconds": plan.scale_out_cooldown_seconds,
                "scale_in_cooldown_seconds": plan.scale_in_cooldown_seconds,
                "cold_start_seconds": round(self.pool.cold_start_seconds, 1),
                "warm_start_seconds": plan.warm_start_seconds,
                "warm_pool_size": plan.warm_pool_size,
                "period_seconds": self.autoscaler.period_seconds,
                "scale_out_periods": self.autoscaler.scale_out_periods,
                "scale_in_headroom": self.autoscaler.scale_in_headroom,
            },
            "service": {
                "slots_per_machine": self.pool.service.slots,
                "tpot_seconds": round(self.pool.service.tpot_seconds, 6),
                "mean_context_tokens": round(self.pool.service.mean_context_tokens, 1),
            },
            "cost": {
                "usd_per_machine_hour": self.pool.usd_per_hour,
                "basis": self.pool.price_basis,
                "window_s": round(self.window_s, 3),
                "elastic_usd": round(cost["elastic_usd"], 4),
                "static_usd": round(cost["static_usd"], 4),
                "oracle_usd": round(cost["oracle_usd"], 4),
                "static_machines": self.static_machines,
                "elastic_over_oracle": _ratio(cost["elastic_usd"], cost["oracle_usd"]),
                "static_over_oracle": _ratio(cost["static_usd"], cost["oracle_usd"]),
                "saving_vs_static": _ratio(cost["static_usd"] - cost["elastic_usd"], cost["static_usd"]),
                "elastic_machine_hours": round(self.elastic_machine_s / 3600, 4),
                "oracle_machine_hours": round(self.oracle_machine_minutes / 60, 4),
            },
            "ttft": {
                "target_seconds": self.pool.ttft_target_seconds,
                "served": self.served,
                "over_target": self.over_target(),
                "over_target_share": round(self.over_target() / served, 6),
                "over_target_from_waiting": self.over_target_from_waiting(),
                "over_target_from_waiting_share": round(self.over_target_from_waiting() / served, 6),
                "oracle_over_target": self.oracle_over_target(),
                "oracle_over_target_share": round(self.oracle_over_target() / served, 6),
                "p50_seconds": _quantile(ttft, 0.5),
                "p99_seconds": _quantile(ttft, 0.99),
                "max_seconds": round(ttft[-1], 6) if ttft else None,
                "waited": sum(1 for w in waits if w > 1e-9),
                "wait_p99_seconds": _quantile(waits, 0.99),
                "wait_max_seconds": round(waits[-1], 6) if waits else None,
            },
            "scale": {
                "scale_outs": self.scale_outs,
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
                "max_machines": self.max_machines,
                "min_machines": self.min_machines,
            },
            "queue": {
                "max": max(queue) if queue else 0,
                "minutes_with_queue": sum(1 for q in queue if q > 0),
            },
            "timeline": [m.as_json() for m in self.timeline],
            "notes": list(self.notes),
        }


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


# --- the oracle -------------------------------------------------------------------------------------


def most_in_flight_per_minute(arrivals: Sequence[float], ends: Sequence[float], minutes: int) -> list[int]:
    """Most requests in flight at once in each minute when every request starts on arrival."""
    events = sorted([(a, 1) for a in arrivals] + [(e, -1) for e in ends], key=lambda x: (x[0], x[1]))
    peak = [0] * minutes
    level = 0
    for t, step in events:
        minute = min(minutes - 1, int(t // MINUTE))
        if step < 0:
            level -= 1
            # the level right after a departure holds until the next event, inside this minute
            continue
        level += 1
        if level > peak[minute]:
            peak[minute] = level
    # a minute with no arrival still carries what was in flight when it began
    level = 0
    starts = sorted(arrivals)
    finishes = sorted(ends)
    i = j = 0
    for minute in range(minutes):
        t = minute * MINUTE
        while i < len(starts) and starts[i] <= t:
            i += 1
        while j < len(finishes) and finishes[j] <= t:
            j += 1
        level = i - j
        peak[minute] = max(peak[minute], level)
    return peak


def static_machines(trace: Trace, service: ServiceModel) -> int:
    """Machines the trace's busiest minute needs when every request starts on arrival."""
    arrivals, ends = [], []
    for r in trace.requests:
        if r.prompt_tokens + r.output_tokens > service.max_model_len:
            continue
        arrivals.append(r.arrival_s)
        ends.append(r.arrival_s + service.service_seconds(r.prompt_tokens, r.output_tokens))
    if not arrivals:
        return 0
    minutes = max(1, math.ceil((max(ends) + 1e-9) / MINUTE))
    return max(math.ceil(m / service.slots) for m in most_in_flight_per_minute(arrivals, ends, minutes))


# --- the replay -------------------------------------------------------------------------------------


class _Replay:
    def __init__(self, trace: Trace, pool: Pool, autoscaler: Autoscaler) -> None:
        self.trace, self.pool, self.scaler = trace, pool, autoscaler
        self.plan = pool.plan
        self.slots_per = pool.slots
        service = pool.service
        limit = service.max_model_len
        self.rejected = 0
        self.arrivals: list[float] = []
        self.holds: list[float] = []
        self.prefill: list[float] = []
        for r in trace.requests:
            if r.prompt_tokens + r.output_tokens > limit:
                self.rejected += 1
                continue
            self.arrivals.append(r.arrival_s)
            self.holds.append(service.service_seconds(r.prompt_tokens, r.output_tokens))
            self.prefill.append(service.prefill_seconds(r.prompt_tokens))
        self.ttft: list[float] = [0.0] * len(self.arrivals)
        ends = [a + h for a, h in zip(self.arrivals, self.holds, strict=True)]
        last = max(ends) if ends else 0.0
        self.minutes = max(1, math.ceil((last + 1e-9) / MINUTE))
        self.window = self.minutes * MINUTE
        self.timeline = [Minute(start_s=m * MINUTE) for m in range(self.minutes)]
        self.most = most_in_flight_per_minute(self.arrivals, ends, self.minutes)

    # state ---------------------------------------------------------------------------------------

    def run(self) -> Result:
        plan, scaler = self.plan, self.scaler
        n = len(self.arrivals)
        self.t = 0.0
        self.serving = self._start_size()
        self.launching: list[tuple[float, int, bool, float]] = []  # (ready, seq, warm, decided)
        self.refills: list[float] = []  # warm-pool replacements initialising (billed), ready times
        self.warm = plan.warm_pool_size
        self.draining = 0
        self.running: list[float] = []  # completion times
        self.queue: deque[int] = deque()
        self.launches: list[Launch] = []
        self.seq = 0
        self.scale_outs = self.scale_ins = self.capped = 0
        self.high = self.low = 0
        self.last_out = self.last_in = -math.inf
        self.period_in_flight = 0.0
        self.elastic_s = 0.0
        self.max_machines = self.min_machines = self.serving
        was_working = True if plan.schedule is None else working(plan.schedule, self.trace, 0.0)
        next_tick = float(scaler.period_seconds)
        i = 0
        horizon = self.window + 7 * 86400.0
        while i < n or self.running or self.queue:
            candidates = [next_tick]
            if i < n:
                candidates.append(self.arrivals[i])
            if self.running:
                candidates.append(self.running[0])
            if self.launching:
                candidates.append(self.launching[0][0])
            if self.refills:
                candidates.append(self.refills[0])
            t = min(candidates)
            if t > horizon:
                break
            self._advance(t)
            while self.running and self.running[0] <= t:
                heapq.heappop(self.running)
                self._release_drained()
            while self.launching and self.launching[0][0] <= t:
                heapq.heappop(self.launching)
                self.serving += 1
                self.max_machines = max(self.max_machines, self.serving)
            while self.refills and self.refills[0] <= t:
                heapq.heappop(self.refills)
                self.warm += 1
            while i < n and self.arrivals[i] <= t:
                self.queue.append(i)
                minute = int(self.arrivals[i] // MINUTE)
                if minute < self.minutes:
                    self.timeline[minute].arrivals += 1
                i += 1
            self._admit()
            if t >= next_tick:
                now_working = True if plan.schedule is None else working(plan.schedule, self.trace, t)
                self._tick(t, entering_off_hours=was_working and not now_working)
                was_working = now_working
                next_tick += scaler.period_seconds
                self._admit()
            self._note_queue()
        # bill what is left running to the end of the window (the pool keeps its floor)
        if self.t < self.window:
            self._advance(self.window)
        return Result(
            pool=self.pool,
            trace=self.trace,
            autoscaler=scaler,
            requests=len(self.trace.requests),
            rejected_too_long=self.rejected,
            ttft_seconds=self.ttft,
            prefill_seconds=self.prefill,
            launches=self.launches,
            scale_outs=self.scale_outs,
            scale_ins=self.scale_ins,
            capped_periods=self.capped,
            elastic_machine_s=self.elastic_s,
            window_s=self.window,
            static_machines=max(math.ceil(m / self.slots_per) for m in self.most) if self.most else 0,
            oracle_machine_minutes=sum(math.ceil(m / self.slots_per) for m in self.most),
            timeline=self.timeline,
            max_machines=self.max_machines,
            min_machines=self.min_machines,
            notes=self._notes(),
        )

    def _start_size(self) -> int:
        """The size the policy holds for the load until it could first react (its scale-out periods
        plus a cold start): the busiest period's mean in-flight requests in that span, over the target."""
        plan = self.plan
        if self.scaler.start_size is not None:
            return self.scaler.start_size
        period = float(self.scaler.period_seconds)
        react = self.scaler.scale_out_periods * period + self.pool.cold_start_seconds
        spans = max(1, math.ceil(react / period))
        busy = [0.0] * spans
        for a, h in zip(self.arrivals, self.holds, strict=True):
            if a >= spans * period:
                break
            end = a + h
            for k in range(int(a // period), min(spans, math.ceil(end / period))):
                busy[k] += min(end, (k + 1) * period) - max(a, k * period)
        wanted = math.ceil(max(busy) / period / plan.target_in_flight - 1e-9)
        return min(plan.max_size, max(self._floor(0.0), wanted))

    def _notes(self) -> list[str]:
        notes = list(self.plan.notes)
        if self.plan.schedule is not None and self.trace.start is None:
            notes.append(
                "the schedule is not applied: the trace's times are plain seconds, not wall-clock times"
            )
        if self.rejected:
            notes.append(
                f"{self.rejected} request(s) longer than --max-model-len {self.pool.service.max_model_len}"
                " (prompt + output) are refused by the engine and left out"
            )
        return notes

    def _floor(self, t: float) -> int:
        schedule = self.plan.schedule
        if schedule is not None and not working(schedule, self.trace, t):
            return schedule.off_hours_size
        return self.plan.min_size

    @property
    def slots(self) -> int:
        return self.serving * self.slots_per

    @property
    def capacity(self) -> int:
        """Machines the autoscaler counts: serving and launching."""
        return self.serving + len(self.launching)

    def _billed(self) -> int:
        return self.serving + len(self.launching) + len(self.refills) + self.draining

    def _advance(self, t: float) -> None:
        """Integrate the pool's state from self.t to t (it does not change in between)."""
        start = self.t
        if t <= start:
            return
        in_flight = len(self.running) + len(self.queue)
        billed = self._billed()
        self.period_in_flight += in_flight * (t - start)
        self.elastic_s += billed * (t - start)
        while start < t:
            minute = int(start // MINUTE)
            end = min(t, (minute + 1) * MINUTE)
            if minute < self.minutes:
                row = self.timeline[minute]
                dt = end - start
                row.in_flight_s += in_flight * dt
                row.serving_machine_s += self.serving * dt
                row.billed_machine_s += billed * dt
            else:
                break
            start = end
        self.t = t

    def _note_queue(self) -> None:
        minute = int(self.t // MINUTE)
        if minute < self.minutes and len(self.queue) > self.timeline[minute].queue_max:
            self.timeline[minute].queue_max = len(self.queue)

    def _admit(self) -> None:
        free = self.slots - len(self.running)
        while free > 0 and self.queue:
            k = self.queue.popleft()
            wait = self.t - self.arrivals[k]
            self.ttft[k] = wait + self.prefill[k]
            heapq.heappush(self.running, self.t + self.holds[k])
            free -= 1

    def _release_drained(self) -> None:
        """A machine let go is billed until the requests it held are done (the pool is under its slots)."""
        while self.draining and len(self.running) <= (self.serving + self.draining - 1) * self.slots_per:
            self.draining -= 1

    def _launch(self, count: int, t: float) -> None:
        plan = self.pool.plan
        for _ in range(count):
            warm = self.warm > 0
            if warm:
                self.warm -= 1
                heapq.heappush(self.refills, t + self.pool.cold_start_seconds)
                ready = t + plan.warm_start_seconds
            else:
                ready = t + self.pool.cold_start_seconds
            self.seq += 1
            heapq.heappush(self.launching, (ready, self.seq, warm, t))
            self.launches.append(Launch(t, ready, warm))

    def _remove(self, count: int) -> None:
        gone = min(count, self.serving)
        self.serving -= gone
        self.draining += gone
        self.min_machines = min(self.min_machines, self.serving)
        self._release_drained()

    def _tick(self, t: float, *, entering_off_hours: bool) -> None:
        plan, scaler = self.plan, self.scaler
        period = scaler.period_seconds
        mean_in_flight = self.period_in_flight / period
        self.period_in_flight = 0.0
        wanted = math.ceil(mean_in_flight / plan.target_in_flight - 1e-9) if mean_in_flight > 0 else 0
        if wanted > plan.max_size:
            self.capped += 1
        floor = self._floor(t)
        if entering_off_hours and self.capacity > floor:
            # the scheduled action sets desired to the off-hours size; launches not yet serving go first
            extra = self.capacity - floor
            while extra and self.launching:
                self.launching.pop()  # the latest launch
                heapq.heapify(self.launching)
                extra -= 1
            self._remove(extra)
            self.scale_ins += 1
            self.last_in = t
            self.high = self.low = 0
            return
        if self.capacity < floor:
            self._launch(floor - self.capacity, t)
            self.scale_outs += 1
            self.last_out = t
        target = min(plan.max_size, max(floor, wanted))
        self.high = self.high + 1 if target > self.capacity else 0
        if self.serving > 1:
            quiet = mean_in_flight / (self.serving - 1) < scaler.scale_in_headroom * plan.target_in_flight
        else:
            quiet = self.serving == 1 and mean_in_flight == 0
        quiet = quiet and not self.launching and self.serving > floor
        # the alarm stays in ALARM while every datapoint of its window breaches: one machine per cooldown
        self.low = self.low + 1 if quiet else 0
        quiet_periods = max(1, plan.scale_in_cooldown_seconds // period)
        if (
            self.high >= scaler.scale_out_periods
            and t - self.last_out >= plan.scale_out_cooldown_seconds
            and target > self.capacity
        ):
            self._launch(target - self.capacity, t)
            self.scale_outs += 1
            self.last_out = t
            self.high = 0
        elif self.low >= quiet_periods and t - self.last_in >= plan.scale_in_cooldown_seconds:
            self._remove(1)
            self.scale_ins += 1
            self.last_in = t


def replay(trace: Trace, pool: Pool, autoscaler: Autoscaler | None = None) -> Result:
    """Replay `trace` against `pool`; the static fleet and the oracle are computed from the same trace."""
    run = _Replay(trace, pool, autoscaler or Autoscaler.of(pool.plan))
    result = run.run()
    for minute, most in zip(result.timeline, run.most, strict=True):
        minute.most_in_flight = most
        minute.oracle_machines = math.ceil(most / pool.slots)
    return result
