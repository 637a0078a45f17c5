"""Every pool of the stack, from the plans its cloud parts keep (one FleetPlan a fleet).

The endpoints part checks its pools against what each fleet serves, and the observability part prices
each pool and scrapes its engine ports, from the plan each cloud part made once for its fleets and
builds them from (`aws_stack.fleet_plans`, `gcp_stack.fleet_plans`). A cloud part is imported only
when the stack has its fleets (it loads that cloud's provider SDK); no part imports this module back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inference_infra.infra.pools import PlannedPool

if TYPE_CHECKING:
    from inference_infra.infra.config import StackSettings


def planned_pools(
    settings: StackSettings, clouds: frozenset[str] = frozenset({"aws", "gcp"})
) -> list[PlannedPool]:
    """Every pool of the stack's fleets in `clouds`, in config order (AWS first)."""
    pools: list[PlannedPool] = []
    if "aws" in clouds and (settings.aws_gpu_fleets or settings.aws_inferentia_fleets):
        from inference_infra.infra import aws_stack

        pools += aws_stack.planned_pools(settings)
    if "gcp" in clouds and (settings.gcp_gpu_fleets or settings.tpu_vms):
        from inference_infra.infra import gcp_stack

        pools += gcp_stack.planned_pools(settings)
    if "aws" in clouds and settings.kubernetes_pools:
        from inference_infra.infra import k8s_stack

        pools += k8s_stack.planned_pools(settings)
    return pools
