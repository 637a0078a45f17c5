"""What EKS accepts of a managed node group and its launch template: pure checks over the engine's inputs.

`plan` cannot run `pulumi up`, so these hold a node group's inputs (camelCase, as the engine receives
them) and its launch template's against what the EKS API refuses. The tests run them over every node
group `EksNodeGroups` renders; any program's groups can be held to them the same way. Sources (read
2026-12-02):

- the EKS API reference, CreateNodegroup `instanceTypes`: with a launch template, "zero or one instance
  type in your launch template or ... 0-20 instance types for instanceTypes. If however, you specify an
  instance type in your launch template and specify any instanceTypes, the node group deployment will
  fail";
- the EKS user guide, capacity-blocks-mng (awsdocs/amazon-eks-user-guide, latest/ug/ml/
  capacity-blocks-mng.adoc): a Capacity Block group needs a launch template with InstanceMarketOptions
  MarketType `capacity-block`, a CapacityReservationTarget with the block's CapacityReservationId and an
  InstanceType; the capacity type `CAPACITY_BLOCK` ("If the capacity type isn't set to CAPACITY_BLOCK or
  any of the other above required launch template values are missing, then the create request will be
  rejected"); "When upgrading managed node groups with Capacity Blocks, make sure that the desired size
  of the node group is set to 0"; EKS scales the group to 0 forty minutes before the block ends;
- EKS's scaling checks: "Minimum capacity N can't be greater than desired size M" and "desiredSize can't
  be greater than maxSize" (InvalidParameterException on CreateNodegroup and UpdateNodegroupConfig, as
  reported in terraform-aws-modules/terraform-aws-eks#2508 and #3306); terraform-provider-aws
  `internal/service/eks/node_group.go` (scaling_config max_size >= 1, min and desired >= 0; its update
  runs UpdateNodegroupVersion for a template change before UpdateNodegroupConfig, so a Capacity Block
  group is drained in one `pulumi up` and upgraded in the next).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inference_infra.components.k8s.node_capacity_spot import EKS_MAX_INSTANCE_TYPES

__all__ = ["eks_node_group_api_problems"]


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def eks_node_group_api_problems(group: Mapping[str, Any], template: Mapping[str, Any] | None) -> list[str]:
    """Why EKS would refuse the node group (or, for a Capacity Block group, its upgrade); [] when it
    accepts it. `template` is the launch template's inputs, None when the group names none."""
    problems: list[str] = []
    types = list(group.get("instanceTypes") or [])
    template_type = _get(template, "instanceType")
    capacity = group.get("capacityType") or "ON_DEMAND"
    market = _get(template, "instanceMarketOptions", "marketType")
    if len(types) > EKS_MAX_INSTANCE_TYPES:
        problems.append(f"instanceTypes has {len(types)} types; EKS takes at most {EKS_MAX_INSTANCE_TYPES}")
    if types and template_type:
        problems.append(
            f"instanceTypes {types} and the launch template's instanceType {template_type!r} are both set; "
            "EKS fails the node group: name the types on one of them"
        )
    scaling = group.get("scalingConfig") or {}
    low, want, high = (scaling.get(k) for k in ("minSize", "desiredSize", "maxSize"))
    if all(isinstance(n, int) for n in (low, want, high)) and (not low <= want <= high or high < 1):
        problems.append(
            f"scalingConfig (min {low}, desired {want}, max {high}) must have min <= desired <= max and "
            "max >= 1"
        )
    if capacity == "CAPACITY_BLOCK":
        if template is None:
            problems.append("a CAPACITY_BLOCK group needs a launch template (EKS creates none for a block)")
        else:
            if market != "capacity-block":
                problems.append(
                    f"the launch template's instanceMarketOptions.marketType is {market!r}; a CAPACITY_BLOCK "
                    "group needs 'capacity-block'"
                )
            target = _get(template, "capacityReservationSpecification", "capacityReservationTarget")
            if not _get(target, "capacityReservationId"):
                problems.append(
                    "the launch template names no capacityReservationTarget.capacityReservationId; a "
                    "CAPACITY_BLOCK group targets the block by its id"
                )
            if not template_type:
                problems.append("the launch template names no instanceType; a CAPACITY_BLOCK group needs it")
        if types:
            problems.append(f"instanceTypes {types} is set; a CAPACITY_BLOCK group's type is its template's")
        if isinstance(low, int) and low > 0:
            problems.append(
                f"scalingConfig.minSize is {low}; a CAPACITY_BLOCK group is upgraded only at desired size 0, "
                "which EKS refuses below the minimum: the minimum must be 0"
            )
    elif market == "capacity-block":
        problems.append(
            f"the launch template buys a Capacity Block (marketType capacity-block) but the capacity type "
            f"is {capacity}; EKS rejects it unless the capacity type is CAPACITY_BLOCK"
        )
    return problems
