"""AWS readers: what an EC2 instance, launch template, reservation, Auto Scaling group, EKS node
group, EC2 or Spot Fleet, SageMaker endpoint configuration or Batch compute environment runs.

Each reader takes a resource's engine-shaped props, a launch template lookup and the machine
types it accepts, and returns an `AcceleratorUse` or None. A value not known yet reads as absent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from inference_infra.components.catalog import Cloud, InstanceType, find_instance_type, instance_types
from inference_infra.components.resources.props import get_path, known
from inference_infra.components.resources.types import (
    AWS_AUTOSCALING_GROUP,
    AWS_BATCH_COMPUTE_ENVIRONMENT,
    AWS_CAPACITY_BLOCK,
    AWS_CAPACITY_RESERVATION,
    AWS_EC2_FLEET,
    AWS_EKS_NODE_GROUP,
    AWS_INSTANCE,
    AWS_LAUNCH_CONFIGURATION,
    AWS_LAUNCH_TEMPLATE,
    AWS_SAGEMAKER_ENDPOINT_CONFIG,
    AWS_SPOT_FLEET,
    AWS_SPOT_REQUEST,
)
from inference_infra.components.resources.use import (
    AcceleratorUse,
    Known,
    Purchase,
    Reader,
    TemplateLookup,
    Variant,
    as_int,
)

# The instance type EKS gives a managed node group that names none (CreateNodegroup's default).
EKS_DEFAULT_INSTANCE_TYPE = "t3.medium"


def _aws_purchase(props: Mapping[str, Any] | None) -> tuple[Purchase, str | None]:
    market = known(get_path(props, "instanceMarketOptions", "marketType"))
    if market == "spot":
        return Purchase.SPOT, None
    if market == "capacity-block":
        return Purchase.CAPACITY_BLOCK, known(
            get_path(
                props,
                "capacityReservationSpecification",
                "capacityReservationTarget",
                "capacityReservationId",
            )
        )
    target = known(
        get_path(
            props, "capacityReservationSpecification", "capacityReservationTarget", "capacityReservationId"
        )
    )
    return Purchase.ON_DEMAND, target


def _aws_instance(
    props: Mapping[str, Any], template_of: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    template = None
    if template_of is not None and isinstance(known(get_path(props, "launchTemplate")), Mapping):
        template = template_of(props["launchTemplate"])
    instance_type = known(get_path(props, "instanceType")) or known(get_path(template, "instanceType"))
    if not isinstance(instance_type, str) or not accepts(instance_type, Cloud.AWS):
        return None
    # Settings on the instance win over the template's, as in EC2.
    own_market = known(get_path(props, "instanceMarketOptions")) is not None
    own_target = known(get_path(props, "capacityReservationSpecification")) is not None
    purchase, target = _aws_purchase(props if own_market or own_target or template is None else template)
    zone = known(get_path(props, "availabilityZone")) or known(
        get_path(template, "placement", "availabilityZone")
    )
    return AcceleratorUse(Cloud.AWS, instance_type, 1, purchase, zone=zone, reservation_ref=target)


def _aws_spot_request(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    instance_type = known(get_path(props, "instanceType"))
    if not isinstance(instance_type, str) or not accepts(instance_type, Cloud.AWS):
        return None
    return AcceleratorUse(
        Cloud.AWS, instance_type, 1, Purchase.SPOT, zone=known(get_path(props, "availabilityZone"))
    )


def _aws_launch_template(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    instance_type = known(get_path(props, "instanceType"))
    if not isinstance(instance_type, str) or not accepts(instance_type, Cloud.AWS):
        return None
    purchase, target = _aws_purchase(props)
    return AcceleratorUse(
        Cloud.AWS,
        instance_type,
        1,
        purchase,
        zone=known(get_path(props, "placement", "availabilityZone")),
        reservation_ref=target,
        template=True,
    )


def _aws_launch_configuration(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    """An Auto Scaling launch configuration: describes instances, spot when it names a spot price."""
    instance_type = known(get_path(props, "instanceType"))
    if not isinstance(instance_type, str) or not accepts(instance_type, Cloud.AWS):
        return None
    purchase = Purchase.SPOT if known(get_path(props, "spotPrice")) else Purchase.ON_DEMAND
    return AcceleratorUse(Cloud.AWS, instance_type, 1, purchase, template=True)


def _aws_reservation(
    purchase: Purchase,
) -> Reader:
    """Reader for a capacity reservation or Capacity Block: billed whether used or not."""

    def read(props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known) -> AcceleratorUse | None:
        instance_type = known(get_path(props, "instanceType"))
        if not isinstance(instance_type, str) or not accepts(instance_type, Cloud.AWS):
            return None
        count = as_int(known(get_path(props, "instanceCount")), 1)
        return AcceleratorUse(
            Cloud.AWS,
            instance_type,
            count,
            purchase,
            zone=known(get_path(props, "availabilityZone")),
            reservation=True,
        )

    return read


# EC2 families whose instances carry GPUs, Inferentia/Trainium/Gaudi chips, FPGAs or media
# accelerators (https://aws.amazon.com/ec2/instance-types/, accelerated computing, read 2026-11-24).
# A type of these families that the catalog lacks (p3.16xlarge, g5g.xlarge, g4ad.xlarge, inf1, trn2)
# is still an accelerator: the policies judge it and the plan says it is not priced.
_AWS_ACCELERATED = re.compile(r"^(p|g|gr|inf|trn|dl|f|vt)[0-9]+[a-z-]*\.[0-9a-z]+$")


def is_aws_accelerator_type(value: Any) -> bool:
    """An EC2 instance type with accelerators: in the catalog, or of an accelerated family."""
    return isinstance(value, str) and (
        find_instance_type(value, Cloud.AWS) is not None or _AWS_ACCELERATED.fullmatch(value) is not None
    )


def _known_aws_type(value: Any, accepts: Known) -> str | None:
    return value if isinstance(value, str) and accepts(value, Cloud.AWS) else None


def _aws_autoscaling_group(
    props: Mapping[str, Any], template_of: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    mixed = known(get_path(props, "mixedInstancesPolicy"))
    ref = known(get_path(props, "launchTemplate")) or known(
        get_path(mixed, "launchTemplate", "launchTemplateSpecification")
    )
    template = template_of(ref) if template_of is not None and isinstance(ref, Mapping) else None
    configuration = props.get("launchConfiguration")  # the legacy template: its name (or not known yet)
    if template is None and template_of is not None and configuration is not None:
        template = template_of({"name": configuration})
    overrides = known(get_path(mixed, "launchTemplate", "overrides")) or []
    override_types: list[str] = []
    for override in overrides:
        # An override names a type, or a launch template of its own whose type it launches.
        spec = known(get_path(override, "launchTemplateSpecification"))
        own = template_of(spec) if template_of is not None and isinstance(spec, Mapping) else None
        for candidate in (known(get_path(override, "instanceType")), known(get_path(own, "instanceType"))):
            if (t := _known_aws_type(candidate, accepts)) and t not in override_types:
                override_types.append(t)
    instance_type = _known_aws_type(known(get_path(template, "instanceType")), accepts) or next(
        iter(override_types), None
    )
    if instance_type is None:
        return None
    low, high = as_int(known(get_path(props, "minSize")), 0), as_int(known(get_path(props, "maxSize")), 0)
    count = as_int(known(get_path(props, "desiredCapacity")), low)
    distribution = known(get_path(mixed, "instancesDistribution"))
    on_demand_pct = as_int(known(get_path(distribution, "onDemandPercentageAboveBaseCapacity")), 100)
    base = as_int(known(get_path(distribution, "onDemandBaseCapacity")), 0)
    share = None
    if mixed is not None:
        share = max(count - base, 0) * (100 - on_demand_pct) / 100 / count if count else 0.0
    if mixed is not None and base == 0 and on_demand_pct == 0:
        purchase = Purchase.SPOT
    elif mixed is None and template is not None and known(get_path(template, "spotPrice")):
        purchase = Purchase.SPOT  # a launch configuration that bids for spot
    elif mixed is None and template is not None:
        purchase = _aws_purchase(template)[0]
    else:
        purchase = Purchase.ON_DEMAND
    return AcceleratorUse(
        Cloud.AWS,
        instance_type,
        count,
        purchase,
        min_count=low,
        max_count=high,
        spot_share=share,
        alternatives=tuple(override_types),
        mixed=(base, on_demand_pct) if mixed is not None else None,
    )


def _aws_node_group(
    props: Mapping[str, Any], template_of: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    ref = known(get_path(props, "launchTemplate"))
    template = template_of(ref) if template_of is not None and isinstance(ref, Mapping) else None
    types = tuple(t for t in known(get_path(props, "instanceTypes")) or [] if _known_aws_type(t, accepts))
    instance_type = types[0] if types else _known_aws_type(known(get_path(template, "instanceType")), accepts)
    if instance_type is None and "instanceTypes" not in props and "launchTemplate" not in props:
        instance_type = _known_aws_type(EKS_DEFAULT_INSTANCE_TYPE, accepts)  # what EKS launches then
    if instance_type is None:
        return None
    scaling = known(get_path(props, "scalingConfig"))
    low, high = as_int(known(get_path(scaling, "minSize")), 0), as_int(known(get_path(scaling, "maxSize")), 0)
    capacity = known(get_path(props, "capacityType"))
    # EKS's CapacityTypes: ON_DEMAND (default), SPOT, CAPACITY_BLOCK (botocore's eks service model)
    purchase = {"SPOT": Purchase.SPOT, "CAPACITY_BLOCK": Purchase.CAPACITY_BLOCK}.get(
        capacity, Purchase.ON_DEMAND
    )
    if purchase is Purchase.CAPACITY_BLOCK:
        # A Capacity Block is paid for whole, whether its nodes run or not: its group is priced at its
        # maximum (the block's nodes), not at a desired size EKS lowers to 0 for an upgrade and before
        # the block ends (EKS user guide, capacity-blocks-mng, read 2026-12-02).
        return AcceleratorUse(Cloud.AWS, instance_type, high, purchase, reservation=True)
    return AcceleratorUse(
        Cloud.AWS,
        instance_type,
        as_int(known(get_path(scaling, "desiredSize")), low),
        purchase,
        min_count=low,
        max_count=high,
        alternatives=types,
    )


def _aws_fleet(
    spot_fleet: bool,
) -> Reader:
    """EC2 Fleet / Spot Fleet: the first accepts type among its overrides, specs or template."""

    def read(
        props: Mapping[str, Any], template_of: TemplateLookup | None, accepts: Known
    ) -> AcceleratorUse | None:
        candidates: list[Any] = []
        for config in known(get_path(props, "launchTemplateConfigs")) or []:
            candidates += [
                known(get_path(o, "instanceType")) for o in known(get_path(config, "overrides")) or []
            ]
            spec = known(get_path(config, "launchTemplateSpecification"))
            if template_of is not None and isinstance(spec, Mapping):
                candidates.append(known(get_path(template_of(spec), "instanceType")))
        candidates += [
            known(get_path(s, "instanceType")) for s in known(get_path(props, "launchSpecifications")) or []
        ]
        found = tuple(dict.fromkeys(t for t in candidates if _known_aws_type(t, accepts)))
        if not found:
            return None
        instance_type = found[0]
        if spot_fleet:
            count = as_int(known(get_path(props, "targetCapacity")), 1)
            on_demand = as_int(known(get_path(props, "onDemandTargetCapacity")), 0)
            purchase = Purchase.ON_DEMAND if on_demand >= count else Purchase.SPOT
            share = (count - on_demand) / count if count else 0.0
        else:
            target = known(get_path(props, "targetCapacitySpecification"))
            count = as_int(known(get_path(target, "totalTargetCapacity")), 1)
            spot = as_int(known(get_path(target, "spotTargetCapacity")), 0)
            default = known(get_path(target, "defaultTargetCapacityType"))
            share = spot / count if count and spot else (1.0 if default == "spot" else 0.0)
            purchase = Purchase.SPOT if share >= 1.0 else Purchase.ON_DEMAND
        return AcceleratorUse(Cloud.AWS, instance_type, count, purchase, spot_share=share, alternatives=found)

    return read


def _sagemaker_endpoint_config(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    """The instances of every production and shadow variant (SageMaker prices its own ml.* rate).

    The use is the first variant on an accepted ml.* type (its type and count), with every accepted
    variant's type in `alternatives` (the policies judge them all) and every variant in `variants`
    (pricing prices each: instance variants at their counts, serverless ones said to be unpriced).
    None when no variant runs an accepted type."""
    variants: list[Variant] = []
    for key in ("productionVariants", "shadowProductionVariants"):
        for i, variant in enumerate(known(get_path(props, key)) or []):
            name = known(get_path(variant, "variantName"))
            name = name if isinstance(name, str) and name else f"{key}[{i}]"
            ml_type = known(get_path(variant, "instanceType"))
            if isinstance(ml_type, str) and ml_type.startswith("ml."):
                count = as_int(known(get_path(variant, "initialInstanceCount")), 1)
                variants.append(Variant(name, AcceleratorUse(Cloud.AWS, ml_type, count, Purchase.ON_DEMAND)))
            elif known(get_path(variant, "serverlessConfig")) is not None:
                variants.append(Variant(name, None))
    accepted = [
        v.use for v in variants if v.use is not None and _known_aws_type(v.use.machine_type[3:], accepts)
    ]
    if not accepted:
        return None
    types = tuple(dict.fromkeys(u.machine_type for u in accepted))
    return replace(accepted[0], alternatives=types if len(types) > 1 else (), variants=tuple(variants))


def _aws_batch_types(names: Any) -> list[InstanceType]:
    """Accelerator types a Batch compute environment may launch: named types, and the catalog's
    types of each named family ('g5' -> g5.xlarge, g5.2xlarge, ...), in the order given."""
    found: list[InstanceType] = []
    for name in names if isinstance(names, list) else []:
        if not isinstance(name, str):
            continue
        if (one := find_instance_type(name, Cloud.AWS)) is not None:
            found.append(one)
        elif "." not in name:
            found.extend(t for t in instance_types(Cloud.AWS) if t.name.split(".")[0] == name)
    return found


def _aws_batch(
    props: Mapping[str, Any], template_of: TemplateLookup | None, _: Known
) -> AcceleratorUse | None:
    """An EC2 or SPOT Batch compute environment on accelerator types: its desired (and min, max)
    vCPUs, read as machines of any one of its types by dividing by that type's vCPUs, rounded up
    (machine_type is the smallest; pricing takes the type that makes the vCPUs dearest).
    Batch itself moves desiredVcpus with the job queue; the program's value is what runs at once.
    (Accelerator types from the catalog only, in both modes: CPU environments are not priced yet.)"""
    resources = known(get_path(props, "computeResources"))
    kind = known(get_path(resources, "type"))
    if kind not in ("EC2", "SPOT"):  # Fargate has no accelerators
        return None
    ref = known(get_path(resources, "launchTemplate"))
    template = template_of(ref) if template_of is not None and isinstance(ref, Mapping) else None
    types = _aws_batch_types(known(get_path(resources, "instanceTypes"))) or _aws_batch_types(
        [known(get_path(template, "instanceType"))]
    )
    if not types:
        return None
    smallest = min(types, key=lambda t: t.vcpus)
    vcpus = (
        as_int(known(get_path(resources, "desiredVcpus")), as_int(known(get_path(resources, "minVcpus")), 0)),
        as_int(known(get_path(resources, "minVcpus")), 0),
        as_int(known(get_path(resources, "maxVcpus")), 0),
    )
    purchase = Purchase.SPOT if kind == "SPOT" else Purchase.ON_DEMAND
    use = AcceleratorUse(
        Cloud.AWS,
        smallest.name,
        0,
        purchase,
        alternatives=tuple(t.name for t in types),
        vcpus=vcpus,
    )
    return replace(use.as_type(smallest.name), alternatives=use.alternatives)


READERS: dict[str, Reader] = {
    AWS_INSTANCE: _aws_instance,
    AWS_SPOT_REQUEST: _aws_spot_request,
    AWS_LAUNCH_TEMPLATE: _aws_launch_template,
    AWS_LAUNCH_CONFIGURATION: _aws_launch_configuration,
    AWS_CAPACITY_RESERVATION: _aws_reservation(Purchase.RESERVED),
    AWS_CAPACITY_BLOCK: _aws_reservation(Purchase.CAPACITY_BLOCK),
    AWS_AUTOSCALING_GROUP: _aws_autoscaling_group,
    AWS_EKS_NODE_GROUP: _aws_node_group,
    AWS_EC2_FLEET: _aws_fleet(spot_fleet=False),
    AWS_SPOT_FLEET: _aws_fleet(spot_fleet=True),
    AWS_SAGEMAKER_ENDPOINT_CONFIG: _sagemaker_endpoint_config,
    AWS_BATCH_COMPUTE_ENVIRONMENT: _aws_batch,
}
