"""What the stack's parts built that later parts wire to (the endpoints front the fleets).

`__main__` makes one `Built` and hands it to every part's `deploy`, in order; a
part records what it made and reads what the parts before it recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi


@dataclass(frozen=True)
class GcpPool:
    """A GCP GPU fleet or TPU VM, its zone, engines and cold-start estimate."""

    component: Any  # GpuFleet | TpuVm
    zone: str
    engines: Any
    cold_start: Any
    is_tpu: bool


@dataclass
class Built:
    aws_vpc_id: pulumi.Input[str] | None = None
    aws_subnet_ids: list[pulumi.Input[str]] = field(default_factory=list)
    aws_pools: dict[str, Any] = field(default_factory=dict)  # name -> GpuFleet | InferentiaFleet
    aws_pool_settings: dict[str, Any] = field(default_factory=dict)  # name -> its AwsFleetSettings
    aws_endpoints: dict[str, Any] = field(default_factory=dict)  # name -> InferenceEndpoint
    gcp_network: Any = None  # gcp_stack.NetworkRefs
    gcp_pools: dict[str, GcpPool] = field(default_factory=dict)
