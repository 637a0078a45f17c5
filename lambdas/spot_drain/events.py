"""The two EventBridge events the drain acts on, parsed into a `Notice` (pure).

Shapes as AWS documents them (checked 2026-11-25):

- "EC2 Spot Instance Interruption Warning", source `aws.ec2`, detail
  `{"instance-id": "i-...", "instance-action": "terminate" | "stop" | "hibernate"}`, emitted two
  minutes before EC2 interrupts the instance (hibernation starts at once):
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html
  ("EC2 Spot Instance Interruption Warning event").
- "EC2 Instance Rebalance Recommendation", source `aws.ec2`, detail `{"instance-id": "i-..."}`,
  a signal that the instance is at elevated risk of interruption (it may arrive with the warning):
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/rebalance-recommendations.html
  ("Monitor rebalance recommendation signals").

- "EC2 Instance State-change Notification", source `aws.ec2`, detail
  `{"instance-id": "i-...", "state": "pending" | "running" | "stopping" | "stopped" | ...}`:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitoring-instance-state-changes.html
  (the SpotDrain's second rule delivers only `running`: a Spot instance stopped on interruption that
  EC2 started again, which the drain put back into the target groups it took it out of).

All carry the instance ARN in `resources`. Anything else is refused with a message naming
what was received: the rules' patterns should never deliver it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

SOURCE = "aws.ec2"
_INSTANCE_ID = re.compile(r"^i-[0-9a-f]{8,17}$")
ACTIONS = frozenset({"terminate", "stop", "hibernate"})


class Kind(StrEnum):
    INTERRUPTION = "EC2 Spot Instance Interruption Warning"
    REBALANCE = "EC2 Instance Rebalance Recommendation"
    STATE_CHANGE = "EC2 Instance State-change Notification"


# The warnings' rule (EVENT_PATTERN in components/aws/spot_drain.py); the state change has its own.
DETAIL_TYPES = (Kind.INTERRUPTION.value, Kind.REBALANCE.value)
RUNNING = "running"


class EventError(ValueError):
    """The event is not one of the two the drain acts on."""


@dataclass(frozen=True)
class Notice:
    kind: Kind
    instance_id: str
    # the interruption's instance-action, the state change's new state; None for a rebalance
    action: str | None
    region: str | None
    time: str | None
    event_id: str | None


def parse_event(event: Any) -> Notice:
    if not isinstance(event, Mapping):
        raise EventError(f"expected an EventBridge event object, got {type(event).__name__}")
    detail_type = event.get("detail-type")
    kinds = tuple(k.value for k in Kind)
    if event.get("source") != SOURCE or detail_type not in kinds:
        raise EventError(
            f"source {event.get('source')!r} detail-type {detail_type!r} is not one of "
            f"{', '.join(map(repr, kinds))} from {SOURCE!r}"
        )
    detail = event.get("detail")
    instance_id = detail.get("instance-id") if isinstance(detail, Mapping) else None
    if not isinstance(instance_id, str) or not _INSTANCE_ID.fullmatch(instance_id):
        raise EventError(f"detail.instance-id {instance_id!r} is not an EC2 instance id")
    kind = Kind(detail_type)
    action = detail.get("instance-action") if kind is Kind.INTERRUPTION else None
    if kind is Kind.INTERRUPTION and action not in ACTIONS:
        raise EventError(f"detail.instance-action {action!r} is not one of {sorted(ACTIONS)}")
    if kind is Kind.STATE_CHANGE:
        action = detail.get("state")
        if not isinstance(action, str) or not action:
            raise EventError(f"detail.state {action!r} is not an instance state")
    return Notice(
        kind=kind,
        instance_id=instance_id,
        action=action,
        region=_text(event.get("region")),
        time=_text(event.get("time")),
        event_id=_text(event.get("id")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
