"""The instances the watchdog looks at: running, carrying the opt-in tag.

`parse_instance` turns one DescribeInstances item into the few facts the
decision needs; `list_candidates` pages through DescribeInstances (1,000 per
page, filtered server-side on state and tag) and `spot_request_types` looks up
the Spot requests behind Spot instances, both with boto3 paginators.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .settings import Settings

ASG_TAG = "aws:autoscaling:groupName"
# Instances an EC2 Fleet or Spot Fleet keeps at its target count: stopping one gets it replaced.
FLEET_TAGS = ("aws:ec2:fleet-id", "aws:ec2spot:fleet-request-id")
DESCRIBE_PAGE_SIZE = 1000
SPOT_FILTER_VALUES = 200


@dataclass(frozen=True, kw_only=True)
class Instance:
    instance_id: str
    instance_type: str
    launch_time: datetime  # last launch or start: EC2 updates it when a stopped instance starts
    lifecycle: str | None = None  # None (on-demand), "spot", "capacity-block", "scheduled"
    spot_request_id: str | None = None
    capacity_reservation_id: str | None = None
    root_device_type: str = "ebs"
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.instance_id

    @property
    def type_name(self) -> str:
        return self.instance_type

    @property
    def managed_by(self) -> str | None:
        """The Auto Scaling group or fleet that would replace this instance if stopped."""
        for key in (ASG_TAG, *FLEET_TAGS):
            if self.tags.get(key):
                return f"{key}={self.tags[key]}"
        return None

    @property
    def on_reserved_capacity(self) -> bool:
        return self.lifecycle == "capacity-block" or bool(self.capacity_reservation_id)

    @property
    def is_spot(self) -> bool:
        return self.lifecycle == "spot"


def parse_instance(raw: Mapping[str, Any]) -> Instance:
    """One item of DescribeInstances' Reservations[].Instances[]."""
    return Instance(
        instance_id=raw["InstanceId"],
        instance_type=raw.get("InstanceType", ""),
        launch_time=raw["LaunchTime"],
        lifecycle=raw.get("InstanceLifecycle"),
        spot_request_id=raw.get("SpotInstanceRequestId"),
        capacity_reservation_id=raw.get("CapacityReservationId"),
        root_device_type=raw.get("RootDeviceType", "ebs"),
        tags={t["Key"]: t.get("Value", "") for t in raw.get("Tags") or ()},
    )


def list_candidates(ec2: Any, settings: Settings) -> list[Instance]:
    """Running instances tagged TAG_KEY=TAG_VALUE and every SCOPE_TAGS tag, in the order EC2 returns
    them."""
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[
            {"Name": "instance-state-name", "Values": ["running"]},
            {"Name": f"tag:{settings.tag_key}", "Values": [settings.tag_value]},
            *({"Name": f"tag:{key}", "Values": [value]} for key, value in settings.scope_tags),
        ],
        PaginationConfig={"PageSize": DESCRIBE_PAGE_SIZE},
    )
    seen: dict[str, Instance] = {}
    for page in pages:
        for reservation in page.get("Reservations", ()):
            for raw in reservation.get("Instances", ()):
                instance = parse_instance(raw)
                seen.setdefault(instance.instance_id, instance)
    return list(seen.values())


def spot_request_types(ec2: Any, request_ids: Iterable[str]) -> dict[str, str]:
    """Spot request id -> its type ("one-time" or "persistent"); unknown ids are left out.

    A filter (not SpotInstanceRequestIds) so that one vanished request cannot
    fail the whole look-up.
    """
    ids = sorted(set(request_ids))
    types: dict[str, str] = {}
    paginator = ec2.get_paginator("describe_spot_instance_requests")
    for start in range(0, len(ids), SPOT_FILTER_VALUES):
        chunk = ids[start : start + SPOT_FILTER_VALUES]
        for page in paginator.paginate(Filters=[{"Name": "spot-instance-request-id", "Values": chunk}]):
            for request in page.get("SpotInstanceRequests", ()):
                types[request["SpotInstanceRequestId"]] = request.get("Type", "")
    return types
