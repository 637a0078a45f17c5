"""The stack's elastic-pool operations on AWS (issue #25): spot drain and working hours.

- One `SpotDrain` when any AWS pool is elastic and runs spot capacity: EC2's interruption warnings
  and rebalance recommendations take the instance out of the stack's target groups (and let its
  group replace it) before it goes. It may touch only groups and target groups carrying the stack's
  cost tags (CostCenter, Environment, Owner), which the cost-tag transform sets on every resource.
- One `OffHours` per elastic AWS pool with `elastic.schedule`: scheduled actions on its group, the
  503 + Retry-After responder, and the switch of every endpoint rule that sends traffic to that pool
  alone.

Runs after the fleets and the endpoints (it reads both from `built`).
"""

from __future__ import annotations

from typing import Any

from inference_infra.components.errors import Problem
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.tagging import COST_TAG_KEYS
from inference_infra.infra.built import Built
from inference_infra.infra.config import StackSettings

SPOT_DRAIN_NAME = "spot-drain"


def applies(settings: StackSettings) -> bool:
    return any(f.elastic is not None for f in [*settings.aws_gpu_fleets, *settings.aws_inferentia_fleets])


def validate(settings: StackSettings) -> list[Problem]:
    return []  # every input here is a pool's or an endpoint's, validated by their parts


def has_spot(config: Any) -> bool:
    """A pool's settings ask for spot machines (spot: N, or count + a capacity order with spot)."""
    if getattr(config, "spot", 0):
        return True
    order = getattr(config, "capacity_order", None) or ()
    return bool(getattr(config, "count", 0)) and any(
        mode in (CapacityMode.SPOT, CapacityMode.SPOT.value, "spot") for mode in order
    )


def deploy(settings: StackSettings, built: Built) -> dict[str, Any]:
    from inference_infra.components.aws.off_hours import OffHours, OffHoursArgs
    from inference_infra.components.aws.spot_drain import SpotDrain, SpotDrainArgs

    outputs: dict[str, Any] = {}
    elastic = {name: f for name, f in built.aws_pools.items() if getattr(f, "scaling_plan", None) is not None}
    spot_pools = sorted(n for n in elastic if has_spot(built.aws_pool_settings.get(n)))
    if spot_pools:
        tags = settings.cost_tags().aws_tags()
        drain = SpotDrain(SPOT_DRAIN_NAME, SpotDrainArgs(scope_tags={k: tags[k] for k in COST_TAG_KEYS}))
        outputs["spotDrain"] = {"function": drain.function_name, "rule": drain.rule_arn, "pools": spot_pools}
    for name, fleet in sorted(elastic.items()):
        plan = fleet.scaling_plan
        if plan.schedule is None:
            continue
        rules = [arn for lb in built.aws_endpoints.values() for arn in lb.pool_rule_arns.get(name, ())]
        groups = next(
            (
                lb.pool_target_group_arns[name]
                for lb in built.aws_endpoints.values()
                if name in lb.pool_rule_arns
            ),
            [],
        )
        hours = OffHours(
            f"{name}-hours",
            OffHoursArgs(
                group_name=fleet.group_name,
                schedule=plan.schedule,
                min_size=plan.min_size,
                warmup_seconds=plan.warmup_seconds,
                pool_name=name,
                scheduled_actions=False,  # the pool's own (elastic_group.py)
                listener_rule_arns=rules if groups else [],
                pool_target_group_arns=groups if rules else [],
            ),
        )
        outputs.setdefault("offHours", {})[name] = {
            "scheduledActions": [a.recurrence for a in hours.plan.actions],  # made by the pool
            "timeZone": hours.plan.time_zone,
            "responderTargetGroup": hours.target_group_arn,
        }
    return outputs
