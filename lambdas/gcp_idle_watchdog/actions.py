"""Stopping idle machines: one call per VM (`instances.stop`) or TPU node (`nodes.stop`), never a delete.

Compute Engine has no batch stop, so the calls run a few at a time. Each call starts a long-running
operation and returns; the watchdog does not wait for it (the next run sees the machine stopped, or
still running if the stop failed, and decides again). Throttling (429) and server errors (5xx) are
retried with backoff by google-api-core's Retry before they reach this code; what still fails is
reported failed. An answer that the machine cannot be stopped or is gone (400, 404, 409, 412) is a
refusal: the machine is reported `not_stoppable`, as on AWS.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from google.api_core import exceptions

from ..watchdog_core.loop import StopOutcome
from .machines import Kind, Machine

__all__ = ["PARALLEL_STOPS", "StopOutcome", "stop_machines"]

PARALLEL_STOPS = 8
REFUSED = (
    exceptions.BadRequest,
    exceptions.NotFound,
    exceptions.Conflict,
    exceptions.FailedPrecondition,
)


def stop_machines(
    compute: Any, tpu: Any, machines: Sequence[Machine], *, discard_local_ssd: bool, retry: Any
) -> StopOutcome:
    outcome = StopOutcome()

    def stop(machine: Machine) -> tuple[Machine, str | None, bool]:
        try:
            if machine.kind is Kind.VM:
                request = {"project": machine.project, "zone": machine.zone, "instance": machine.name}
                if machine.local_ssds:  # Compute Engine requires the choice when the VM has local SSDs
                    request["discard_local_ssd"] = discard_local_ssd
                compute.stop(request=request, retry=retry)
            else:
                tpu.stop_node(request={"name": machine.key}, retry=retry)
        except REFUSED as error:
            return machine, f"{error.code}: {error.message}", True
        except exceptions.GoogleAPIError as error:
            return machine, f"{type(error).__name__}: {error}", False
        return machine, None, False

    with ThreadPoolExecutor(max_workers=PARALLEL_STOPS) as pool:
        results = list(pool.map(stop, machines))
    for machine, error, refused in results:
        outcome.calls += 1
        if error is None:
            outcome.stopped.append(machine.key)
        elif refused:
            outcome.refused[machine.key] = error
        else:
            outcome.failed[machine.key] = error
    return outcome
