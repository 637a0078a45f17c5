"""A trace as one pool's machines see it: per request, its arrival and the seconds each phase takes.

Shared by the elastic replay and the two references (`references.py`) so all three serve exactly the
same work. A request longer than the engine's `--max-model-len` (prompt + output) is refused by
vLLM: it is kept out of the work but counted (`refused`), and the replay's shares count it as a miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inference_infra.components.simulate.trace import Trace


@dataclass(frozen=True)
class Workload:
    """Requests the engine admits, in arrival order, and those it refuses."""

    requests: int  # all of the trace's, refused ones included (the shares' denominator)
    refused: int  # longer than --max-model-len
    arrivals: tuple[float, ...]
    first_token: tuple[float, ...]  # admission to first token on a quiet engine (its own prefill)
    lane: tuple[float, ...]  # seconds its prompt occupies the engine's prefill
    decode: tuple[float, ...]  # first token to last: (output - 1) x TPOT
    engines: int  # engines (prefill lanes) per machine
    slots: int  # sequences in flight per machine

    @property
    def admitted(self) -> int:
        return len(self.arrivals)

    def hold(self, k: int) -> float:
        """The least time request k holds a slot: no wait for its engine's prefill."""
        return self.first_token[k] + self.decode[k]


def workload(trace: Trace, service: Any, slots: int) -> Workload:
    """The work of `trace` on machines of `service` (a ServiceModel, or a test's stand-in)."""
    limit = service.max_model_len
    engines = int(getattr(service, "engines", 1))
    lane_of = getattr(service, "prefill_lane_seconds", service.prefill_seconds)
    arrivals, first, lane, decode = [], [], [], []
    refused = 0
    known: dict[tuple[int, int], tuple[float, float, float]] = {}  # a scaled trace repeats its requests
    for r in trace.requests:
        if r.prompt_tokens + r.output_tokens > limit:
            refused += 1
            continue
        key = (r.prompt_tokens, r.output_tokens)
        times = known.get(key)
        if times is None:
            pre = service.prefill_seconds(r.prompt_tokens)
            times = (
                pre,
                min(pre, lane_of(r.prompt_tokens)),
                max(0.0, service.service_seconds(r.prompt_tokens, r.output_tokens) - pre),
            )
            known[key] = times
        arrivals.append(r.arrival_s)
        first.append(times[0])
        lane.append(times[1])
        decode.append(times[2])
    return Workload(
        requests=len(trace.requests),
        refused=refused,
        arrivals=tuple(arrivals),
        first_token=tuple(first),
        lane=tuple(lane),
        decode=tuple(decode),
        engines=engines,
        slots=slots,
    )
