"""Stopping idle instances: batched calls, tolerant of partial failures, never TerminateInstances.

StopInstances is all-or-nothing per call: one instance with stop protection
or one that vanished fails the whole call. A failed batch is split in halves
until the bad instances stand alone, so k bad instances in a batch of n cost
about 2k*log2(n) extra calls and never hold back the rest. Stopping an
instance that is already stopping or stopped succeeds, so overlapping or
repeated runs are harmless. Throttling and transient errors are retried by
botocore (adaptive mode) before they reach this code; if they persist, the
batch is reported failed rather than split (splitting would only add calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ..watchdog_core.loop import StopOutcome

__all__ = ["STOP_BATCH_SIZE", "StopOutcome", "stop_instances"]

STOP_BATCH_SIZE = 100
# The instance cannot be stopped by anyone: stop protection, a one-time Spot instance, ...
REFUSED_CODES = frozenset({"OperationNotPermitted", "UnsupportedOperation"})
# The instance changed under us since DescribeInstances (terminated, shutting down, gone).
GONE_CODES = frozenset(
    {"IncorrectInstanceState", "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"}
)
# Still failing after botocore's retries: splitting would only add calls.
THROTTLE_CODES = frozenset(
    {"Throttling", "ThrottlingException", "RequestLimitExceeded", "RequestThrottled", "ServiceUnavailable"}
)


def stop_instances(ec2: Any, instance_ids: Sequence[str], batch_size: int = STOP_BATCH_SIZE) -> StopOutcome:
    outcome = StopOutcome()
    for start in range(0, len(instance_ids), batch_size):
        _stop(ec2, list(instance_ids[start : start + batch_size]), outcome)
    return outcome


def _stop(ec2: Any, ids: list[str], outcome: StopOutcome) -> None:
    outcome.calls += 1
    try:
        response = ec2.stop_instances(InstanceIds=ids)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        message = f"{code}: {error.response.get('Error', {}).get('Message', '')}".strip()
        if len(ids) > 1 and code not in THROTTLE_CODES:
            middle = len(ids) // 2
            _stop(ec2, ids[:middle], outcome)
            _stop(ec2, ids[middle:], outcome)
        elif code in REFUSED_CODES or code in GONE_CODES:
            outcome.refused.update(dict.fromkeys(ids, message))
        else:
            outcome.failed.update(dict.fromkeys(ids, message))
        return
    except BotoCoreError as error:  # connection or timeout errors that outlived the retries
        outcome.failed.update(dict.fromkeys(ids, f"{type(error).__name__}: {error}"))
        return
    for item in response.get("StoppingInstances", ()):
        outcome.stopped.append(item["InstanceId"])
