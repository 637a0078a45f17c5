"""The two costs an elastic pool is judged against: a hard lower bound and an SLO-aware oracle.

- **Lower bound**: the work itself, with no machine granularity. Every admitted request holds a slot
  at least for its own prefill and decode, and its prompt occupies an engine's prefill for P / rate;
  no pool can spend fewer machine-seconds than max(sum of holds / slots per machine, sum of prefill
  occupancy / engines per machine). It is not reachable; it says how far the rest could go.
- **SLO-aware oracle**: perfect foresight, no cold start, whole machines per whole minute. Minute by
  minute (in order, carrying the queue, the running requests and the engines' prefill over), the
  fewest machines such that every request it admits gets its first token within the target, queueing
  allowed: a request may wait as long as its own prefill leaves room for. It never holds fewer
  machines than its running requests occupy. A request whose prefill alone exceeds the target is late
  whatever the size and does not raise it. The search carries each minute's answer into the next, so
  it is the fewest machines given the past it chose (not a joint optimum over all minutes); a test
  holds lower bound <= oracle <= the cost of any replayed policy that meets the target, on random
  synthetic traces.

Both share `Engines`: a pool's slots and its engines' prefill lanes, as the replay uses them.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

from inference_infra.components.simulate.workload import Workload

MINUTE = 60.0


class Engines:
    """The pool's prefill lanes (one per engine, each the time it is free again)."""

    __slots__ = ("engines", "lanes")

    def __init__(self, engines_per_machine: int) -> None:
        self.engines = engines_per_machine
        self.lanes: list[float] = []

    def resize(self, machines: int, t: float) -> None:
        """Lanes for `machines` machines: new ones free at t; the idlest go first."""
        want = machines * self.engines
        while len(self.lanes) < want:
            heapq.heappush(self.lanes, t)
        while len(self.lanes) > want:
            heapq.heappop(self.lanes)

    def admit(self, w: Workload, k: int, t: float) -> float:
        """Request k admitted at t: the time of its first token (its engine's prefill may be busy)."""
        free = heapq.heappop(self.lanes)
        end = max(t, free) + w.lane[k]
        heapq.heappush(self.lanes, end)
        return max(end, t + w.first_token[k])

    def copy(self) -> Engines:
        other = Engines(self.engines)
        other.lanes = list(self.lanes)
        return other


def lower_bound_machine_seconds(w: Workload) -> float:
    """Machine-seconds no pool can go under (module doc)."""
    holds = sum(w.first_token) + sum(w.decode)
    lanes = sum(w.lane)
    return max(holds / w.slots, lanes / w.engines)


@dataclass(frozen=True)
class OracleRun:
    machines: tuple[int, ...]  # per minute from the first arrival
    ttft: tuple[float, ...]  # per admitted request

    @property
    def machine_minutes(self) -> int:
        return sum(self.machines)

    def late(self, target: float) -> int:
        return sum(1 for t in self.ttft if t > target)


class _State:
    __slots__ = ("engines", "i", "queue", "running")

    def __init__(self, engines: Engines) -> None:
        self.running: list[float] = []  # completion times (a heap)
        self.engines = engines
        self.queue: deque[int] = deque()
        self.i = 0  # next arrival

    def copy(self) -> _State:
        other = _State(self.engines.copy())
        other.running = list(self.running)
        other.queue = deque(self.queue)
        other.i = self.i
        return other


def slo_oracle(w: Workload, target: float) -> OracleRun:
    """The SLO-aware oracle's machines per minute (module doc)."""
    n = w.admitted
    ttft = [math.inf] * n
    state = _State(Engines(w.engines))
    machines: list[int] = []
    previous = 0
    minute = 0
    while state.i < n or state.queue or state.running:
        t0 = minute * MINUTE
        while state.running and state.running[0] <= t0:
            heapq.heappop(state.running)
        arriving = 0
        while state.i + arriving < n and w.arrivals[state.i + arriving] < t0 + MINUTE:
            arriving += 1
        waiting = len(state.queue) + arriving
        low = math.ceil(len(state.running) / w.slots)
        if waiting:
            low = max(low, 1)
        cap = max(low, math.ceil((len(state.running) + waiting) / w.slots) + math.ceil(waiting / w.engines))
        # a first guess: the slot-seconds the minute's arrivals bring, or the last minute's size
        brought = sum(w.first_token[k] + w.decode[k] for k in range(state.i, state.i + arriving))
        fluid = math.ceil(min(brought, MINUTE * (len(state.running) + waiting)) / MINUTE / w.slots)
        guess = min(max(low, fluid, previous - 1), cap)
        size = _fewest(w, state, t0, target, low, cap, guess)
        _minute(w, state, t0, size, target, ttft, check=False)
        machines.append(size)
        previous = size
        minute += 1
    return OracleRun(tuple(machines), tuple(ttft))


def _fewest(w: Workload, state: _State, t0: float, target: float, low: int, cap: int, guess: int) -> int:
    """The fewest machines in [low, cap] that keep the minute's requests on time (cap always does)."""

    def ok(size: int) -> bool:
        return _minute(w, state.copy(), t0, size, target, None, check=True)

    if ok(guess):
        size = guess
        while size > low and ok(size - 1):
            size -= 1
        return size
    lo, hi = guess + 1, cap  # guess fails; cap holds
    step = 1
    while lo < hi:
        probe = min(hi, guess + step)
        if ok(probe):
            hi = probe
            break
        lo = probe + 1
        step *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def _minute(
    w: Workload,
    state: _State,
    t0: float,
    size: int,
    target: float,
    ttft: list[float] | None,
    *,
    check: bool,
) -> bool:
    """Serve [t0, t0 + 60 s) on `size` machines. check: then drain the queue on the same machines
    and say whether every request admitted kept its first token within the target."""
    t1 = t0 + MINUTE
    slots = size * w.slots
    state.engines.resize(size, t0)
    running, queue, engines = state.running, state.queue, state.engines
    n = w.admitted

    lanes, arrivals, lane, own, decode = engines.lanes, w.arrivals, w.lane, w.first_token, w.decode
    heappush, heappop = heapq.heappush, heapq.heappop

    def admit(t: float) -> bool:
        while queue and len(running) < slots:
            k = queue.popleft()
            free = heappop(lanes)
            end = (t if t > free else free) + lane[k]
            heappush(lanes, end)
            first = end if end > t + own[k] else t + own[k]
            if ttft is not None:
                ttft[k] = first - arrivals[k]
            if check and first - arrivals[k] > target and _salvageable(w, k, t0, target):
                return False
            heappush(running, first + decode[k])
        return True

    t = t0
    if not admit(t):
        return False
    while True:
        nxt_arrival = w.arrivals[state.i] if state.i < n and w.arrivals[state.i] < t1 else math.inf
        nxt_done = running[0] if running else math.inf
        t = min(nxt_arrival, nxt_done)
        if t >= t1 or t == math.inf:
            break
        while running and running[0] <= t:
            heapq.heappop(running)
        while state.i < n and w.arrivals[state.i] <= t:
            queue.append(state.i)
            state.i += 1
        if not admit(t):
            return False
    if not check:
        return True
    # the rest of the queue, on the same machines, until it is admitted
    while queue:
        k = queue[0]
        if not running:
            return False  # no slot will ever free (size 0 with a queue)
        t = heapq.heappop(running)
        if t - w.arrivals[k] + w.first_token[k] > target and _salvageable(w, k, t0, target):
            return False
        if not admit(t):
            return False
    return True


def _salvageable(w: Workload, k: int, t0: float, target: float) -> bool:
    """Whether request k could still be on time when minute t0 begins (its prefill fits, and it has
    not already waited too long)."""
    return max(t0, w.arrivals[k]) - w.arrivals[k] + w.first_token[k] <= target
