"""One fleet vocabulary across clouds: capacity modes, the served model, and the inputs every fleet shares.

`FleetCommonArgs` is the base of every fleet's Args (AWS GpuFleet and InferentiaFleet, GCP GpuFleet,
TpuVm): the same concept has the same input name and type on each, and the cloud's Args add only
what is the cloud's own (subnets and zones, reservations, images). Pure: no provider SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.fleet.capacity import (
    COUNT_INPUTS,
    DEFAULT_CAPACITY_ORDER,
    CapacityArgs,
    CapacityCounts,
    CapacityMode,
    allocate,
    capacity_problems,
    mode_of,
    resolve_counts,
)
from inference_infra.components.fleet.elastic import (
    ElasticArgs,
    ScalingPlan,
    ScheduleArgs,
    elastic_problems,
    plan_scaling,
)
from inference_infra.components.serving.engines import FIRST_ENGINE_PORT
from inference_infra.components.serving.model import (
    FleetServing,
    ServedModel,
    choose_machine,
    plan_serving,
    served_model_problems,
)


@dataclass(frozen=True, kw_only=True)
class FleetCommonArgs(CapacityArgs):
    """Inputs every fleet takes, with one name and type on every cloud."""

    model: ServedModel | None = arg(
        None,
        "The model the fleet serves and its traffic: with the weights' source the fleet plans its own "
        "engines (the capacity planner picks the machine when none is given, else checks the fit).",
    )
    serving_port: int = arg(
        FIRST_ENGINE_PORT,
        "The first engine's port; a node with several engines (one per tensor-parallel group) uses the "
        "next ports too.",
        ge=1,
        le=65535,
    )
    tags: Mapping[str, str] = arg(
        factory=dict, doc="More tags on the fleet's resources (labels on GCP, in GCP's label rules)."
    )
    kms_key: pulumi.Input[str] | None = arg(
        None, "Customer-managed key for the fleet's disks; default: the cloud's managed encryption."
    )
    auto_shutdown: bool | None = arg(
        None,
        "This fleet's AutoShutdown tag (auto-shutdown label on GCP); default: the stack's (true outside "
        "production).",
    )
    elastic: ElasticArgs | None = arg(
        None,
        "Serve as a group that follows its load (AWS Auto Scaling group, GCP managed instance group): "
        "the counts above become the peak, and these the bounds, the target and the warm pool.",
    )


__all__ = [
    "COUNT_INPUTS",
    "DEFAULT_CAPACITY_ORDER",
    "CapacityArgs",
    "CapacityCounts",
    "CapacityMode",
    "ElasticArgs",
    "FleetCommonArgs",
    "FleetServing",
    "ScalingPlan",
    "ScheduleArgs",
    "ServedModel",
    "allocate",
    "capacity_problems",
    "choose_machine",
    "elastic_problems",
    "mode_of",
    "plan_scaling",
    "plan_serving",
    "resolve_counts",
    "served_model_problems",
]
