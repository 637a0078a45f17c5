"""What a resource runs, read from its engine-shaped (camelCase) inputs.

One place decides which resources carry accelerators, of which catalog type,
how many machines, and how they are bought (on-demand, spot, reserved). The
cost-tag transform, the offline plan's pricing and the policy pack all ask
here, so they cannot disagree. Pure functions: no Pulumi runtime needed.

Values that are not known yet (preview) are never guessed: a property that is
not a plain value is treated as absent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from inference_infra.components.catalog import Cloud, InstanceType, find_instance_type, instance_types

AWS_INSTANCE = "aws:ec2/instance:Instance"
AWS_SPOT_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
AWS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
AWS_CAPACITY_RESERVATION = "aws:ec2/capacityReservation:CapacityReservation"
AWS_CAPACITY_BLOCK = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
AWS_AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
GCP_INSTANCE = "gcp:compute/instance:Instance"
GCP_INSTANCE_TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
GCP_REGION_INSTANCE_TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GCP_INSTANCE_GROUP_MANAGER = "gcp:compute/instanceGroupManager:InstanceGroupManager"
GCP_REGION_INSTANCE_GROUP_MANAGER = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
GCP_GROUP_MANAGERS = frozenset({GCP_INSTANCE_GROUP_MANAGER, GCP_REGION_INSTANCE_GROUP_MANAGER})
GCP_RESERVATION = "gcp:compute/reservation:Reservation"
GCP_TPU_VM = "gcp:tpu/v2Vm:V2Vm"
GCP_TPU_NODE = "gcp:tpu/node:Node"
GCP_TPU_QUEUED_RESOURCE = "gcp:tpu/v2QueuedResource:V2QueuedResource"
AWS_EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AWS_EC2_FLEET = "aws:ec2/fleet:Fleet"
AWS_SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
AWS_SAGEMAKER_ENDPOINT_CONFIG = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
AWS_BATCH_COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
GCP_GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GCP_GKE_CLUSTER = "gcp:container/cluster:Cluster"
# The instance type EKS gives a managed node group that names none (CreateNodegroup's default).
EKS_DEFAULT_INSTANCE_TYPE = "t3.medium"
# Resources that launch a group of accelerator machines themselves (count = desired size).
GROUP_TYPES = frozenset(
    {
        AWS_AUTOSCALING_GROUP,
        AWS_EKS_NODE_GROUP,
        AWS_EC2_FLEET,
        AWS_SPOT_FLEET,
        AWS_SAGEMAKER_ENDPOINT_CONFIG,
        AWS_BATCH_COMPUTE_ENVIRONMENT,
        GCP_GKE_NODE_POOL,
        GCP_GKE_CLUSTER,
    }
)

# Resources that run accelerators (an instance, a VM, a TPU slice): these carry AutoShutdown.
RUNNING_TYPES = frozenset({AWS_INSTANCE, AWS_SPOT_REQUEST, GCP_INSTANCE, GCP_TPU_VM, GCP_TPU_NODE})
# Resources that describe accelerator machines without running one.
TEMPLATE_TYPES = frozenset({AWS_LAUNCH_TEMPLATE, GCP_INSTANCE_TEMPLATE, GCP_REGION_INSTANCE_TEMPLATE})
# Resources billed for accelerator capacity whether or not anything runs in it.
RESERVATION_TYPES = frozenset({AWS_CAPACITY_RESERVATION, AWS_CAPACITY_BLOCK, GCP_RESERVATION})


class Purchase(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED = "reserved"  # capacity reservation / specific reservation (billed at on-demand rates)
    CAPACITY_BLOCK = "capacity-block"


@dataclass(frozen=True)
class AcceleratorUse:
    """Accelerator capacity a resource runs, describes or reserves."""

    cloud: Cloud
    machine_type: str  # EC2 instance type, GCE machine type, or TPU slice type
    count: int  # machines (instances, VMs, slices)
    purchase: Purchase
    zone: str | None = None
    guest_accelerators: tuple[tuple[str, int], ...] = ()  # GCP N1 + attached GPUs
    reservation_ref: str | None = None  # id/name of the reservation the machine consumes
    template: bool = False  # describes machines (launch template) rather than running one
    reservation: bool = False  # reserved capacity, billed whether used or not
    min_count: int | None = None  # a scaling group's bounds (count is its desired size)
    max_count: int | None = None
    spot_share: float | None = None  # a mixed group: the share of machines above base on spot
    region_hint: str | None = None  # a regional group's region (no zone)
    # Every type a group may launch (node group instanceTypes, mixed-instances or fleet overrides,
    # Batch types), machine_type first; priced at the dearest (pricing.groups), judged by policy as all.
    alternatives: tuple[str, ...] = ()
    # A Batch compute environment counts vCPUs, not machines: (desired, min, max) vCPUs, from which
    # each type's machine count is derived (count, min_count and max_count are machine_type's).
    vcpus: tuple[int, int, int] | None = None

    @property
    def all_types(self) -> tuple[str, ...]:
        return (self.machine_type, *(t for t in self.alternatives if t != self.machine_type))

    def as_type(self, name: str) -> AcceleratorUse:
        """The same use launching only `name` (one of all_types); a Batch environment's machine
        counts are its vCPUs over that type's vCPUs, rounded up."""
        if self.vcpus is None:
            return replace(self, machine_type=name, alternatives=())
        item = find_instance_type(name, self.cloud)
        if item is None:
            raise ValueError(f"Batch type {name!r} is not in the catalog")
        desired, low, high = (-(-v // item.vcpus) for v in self.vcpus)
        return replace(self, machine_type=name, alternatives=(), count=desired, min_count=low, max_count=high)

    @property
    def scaling(self) -> str:
        """'; desired 2 (min 1, max 4)' for a scaling group, else ''."""
        if self.min_count is None and self.max_count is None:
            return ""
        return f"; desired {self.count} (min {self.min_count}, max {self.max_count})"

    @property
    def region(self) -> str | None:
        return region_of_zone(self.zone) if self.zone else self.region_hint

    @property
    def in_catalog(self) -> bool:
        return find_instance_type(self.machine_type.removeprefix("ml."), self.cloud) is not None


TemplateLookup = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
# Which machine types a reader accepts: (type name, cloud) -> bool.
Known = Callable[[str, Cloud], bool]

Reader = Callable[[Mapping[str, Any], TemplateLookup | None, Known], "AcceleratorUse | None"]

# The same record describes any machine a resource runs (machine_use), accelerator or not.
MachineUse = AcceleratorUse


def _in_accelerator_catalog(name: str, cloud: Cloud) -> bool:
    """An accelerator type: in the catalog, or of an accelerated family the catalog lacks (judged by the
    policies, reported unpriced)."""
    if cloud is Cloud.AWS:
        return is_aws_accelerator_type(name)
    return find_instance_type(name, cloud) is not None or _GCP_ACCELERATED.match(name) is not None


def _any_machine(name: str, cloud: Cloud) -> bool:
    return bool(name)


def accelerator_use(
    type_token: str, props: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> AcceleratorUse | None:
    """The accelerator capacity of one resource, or None when it has none.

    template_of resolves an AWS instance's `launchTemplate` reference to the
    template's props, so an instance whose type comes from its template is
    still recognised.
    """
    reader = _READERS.get(type_token)
    return reader(props, template_of, _in_accelerator_catalog) if reader else None


def machine_use(
    type_token: str, props: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> MachineUse | None:
    """The machines one resource runs, describes or reserves, whatever their type (CPU machines too).

    The same readers as accelerator_use, accepting any machine type: pricing
    uses it so that a bastion, a system node group or a GKE default pool is
    priced (or reported unpriced) rather than silently free. Policies keep
    asking accelerator_use, which decides what an accelerator is.
    """
    reader = _READERS.get(type_token)
    return reader(props, template_of, _any_machine) if reader else None


def is_accelerator_instance(type_token: str, props: Mapping[str, Any]) -> bool:
    """True for a resource that runs accelerators (the ones that carry AutoShutdown)."""
    if type_token in (GCP_TPU_VM, GCP_TPU_NODE):
        return True
    use = accelerator_use(type_token, props)
    return use is not None and type_token in RUNNING_TYPES


def region_of_zone(zone: str) -> str:
    """'us-east-1a' -> 'us-east-1'; 'us-central1-a' -> 'us-central1'."""
    if zone[-1:].isalpha() and zone[-2:-1].isdigit():  # AWS availability zone
        return zone[:-1]
    head, _, tail = zone.rpartition("-")
    return head if head and len(tail) == 1 else zone


def tpu_slice_name(tpu_type: str, topology: str) -> str | None:
    """Slice name for an acceleratorConfig ({type: V5LITE_POD, topology: '2x4'} -> 'v5litepod-8')."""
    try:
        chips = 1
        for dim in topology.lower().split("x"):
            chips *= int(dim)
    except ValueError:
        return None
    prefix, per_chip = _TPU_CONFIG_TYPES.get(tpu_type.upper(), (None, 0))
    return f"{prefix}-{chips * per_chip}" if prefix else None


# acceleratorConfig.type -> (slice prefix, number in the name per chip)
_TPU_CONFIG_TYPES = {"V5LITE_POD": ("v5litepod", 1), "V5P": ("v5p", 2), "V6E": ("v6e", 1), "V4": ("v4", 2)}


def _plain(value: Any) -> Any:
    """A value usable as-is, or None when it is unknown or not a plain value."""
    return value if isinstance(value, (str, int, float, bool, list, dict)) else None


def _get(props: Mapping[str, Any] | None, *path: str) -> Any:
    node: Any = props
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return _plain(node)


def _last_segment(value: Any) -> str | None:
    return value.rsplit("/", 1)[-1] if isinstance(value, str) and value else None


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


# --- AWS -------------------------------------------------------------------------------------


def _aws_purchase(props: Mapping[str, Any] | None) -> tuple[Purchase, str | None]:
    market = _get(props, "instanceMarketOptions", "marketType")
    if market == "spot":
        return Purchase.SPOT, None
    if market == "capacity-block":
        return Purchase.CAPACITY_BLOCK, _get(
            props, "capacityReservationSpecification", "capacityReservationTarget", "capacityReservationId"
        )
    target = _get(
        props, "capacityReservationSpecification", "capacityReservationTarget", "capacityReservationId"
    )
    return Purchase.ON_DEMAND, target


def _aws_instance(
    props: Mapping[str, Any], template_of: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    template = None
    if template_of is not None and isinstance(_get(props, "launchTemplate"), Mapping):
        template = template_of(props["launchTemplate"])
    instance_type = _get(props, "instanceType") or _get(template, "instanceType")
    if not isinstance(instance_type, str) or not known(instance_type, Cloud.AWS):
        return None
    # Settings on the instance win over the template's, as in EC2.
    own_market = _get(props, "instanceMarketOptions") is not None
    own_target = _get(props, "capacityReservationSpecification") is not None
    purchase, target = _aws_purchase(props if own_market or own_target or template is None else template)
    zone = _get(props, "availabilityZone") or _get(template, "placement", "availabilityZone")
    return AcceleratorUse(Cloud.AWS, instance_type, 1, purchase, zone=zone, reservation_ref=target)


def _aws_spot_request(
    props: Mapping[str, Any], _: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    instance_type = _get(props, "instanceType")
    if not isinstance(instance_type, str) or not known(instance_type, Cloud.AWS):
        return None
    return AcceleratorUse(Cloud.AWS, instance_type, 1, Purchase.SPOT, zone=_get(props, "availabilityZone"))


def _aws_launch_template(
    props: Mapping[str, Any], _: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    instance_type = _get(props, "instanceType")
    if not isinstance(instance_type, str) or not known(instance_type, Cloud.AWS):
        return None
    purchase, target = _aws_purchase(props)
    return AcceleratorUse(
        Cloud.AWS,
        instance_type,
        1,
        purchase,
        zone=_get(props, "placement", "availabilityZone"),
        reservation_ref=target,
        template=True,
    )


def _aws_reservation(
    purchase: Purchase,
) -> Reader:
    """Reader for a capacity reservation or Capacity Block: billed whether used or not."""

    def read(props: Mapping[str, Any], _: TemplateLookup | None, known: Known) -> AcceleratorUse | None:
        instance_type = _get(props, "instanceType")
        if not isinstance(instance_type, str) or not known(instance_type, Cloud.AWS):
            return None
        count = _int(_get(props, "instanceCount"), 1)
        return AcceleratorUse(
            Cloud.AWS, instance_type, count, purchase, zone=_get(props, "availabilityZone"), reservation=True
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
        find_instance_type(value, Cloud.AWS) is not None or _AWS_ACCELERATED.match(value) is not None
    )


def _known_aws_type(value: Any, known: Known) -> str | None:
    return value if isinstance(value, str) and known(value, Cloud.AWS) else None


def _aws_autoscaling_group(
    props: Mapping[str, Any], template_of: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    mixed = _get(props, "mixedInstancesPolicy")
    ref = _get(props, "launchTemplate") or _get(mixed, "launchTemplate", "launchTemplateSpecification")
    template = template_of(ref) if template_of is not None and isinstance(ref, Mapping) else None
    overrides = _get(mixed, "launchTemplate", "overrides") or []
    override_types = tuple(t for o in overrides if (t := _known_aws_type(_get(o, "instanceType"), known)))
    instance_type = _known_aws_type(_get(template, "instanceType"), known) or next(iter(override_types), None)
    if instance_type is None:
        return None
    low, high = _int(_get(props, "minSize"), 0), _int(_get(props, "maxSize"), 0)
    count = _int(_get(props, "desiredCapacity"), low)
    distribution = _get(mixed, "instancesDistribution")
    on_demand_pct = _int(_get(distribution, "onDemandPercentageAboveBaseCapacity"), 100)
    base = _int(_get(distribution, "onDemandBaseCapacity"), 0)
    share = None
    if mixed is not None:
        share = max(count - base, 0) * (100 - on_demand_pct) / 100 / count if count else 0.0
    if mixed is not None and base == 0 and on_demand_pct == 0:
        purchase = Purchase.SPOT
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
        alternatives=override_types,
    )


def _aws_node_group(
    props: Mapping[str, Any], template_of: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    ref = _get(props, "launchTemplate")
    template = template_of(ref) if template_of is not None and isinstance(ref, Mapping) else None
    types = tuple(t for t in _get(props, "instanceTypes") or [] if _known_aws_type(t, known))
    instance_type = types[0] if types else _known_aws_type(_get(template, "instanceType"), known)
    if instance_type is None and "instanceTypes" not in props and "launchTemplate" not in props:
        instance_type = _known_aws_type(EKS_DEFAULT_INSTANCE_TYPE, known)  # what EKS launches then
    if instance_type is None:
        return None
    scaling = _get(props, "scalingConfig")
    low, high = _int(_get(scaling, "minSize"), 0), _int(_get(scaling, "maxSize"), 0)
    purchase = Purchase.SPOT if _get(props, "capacityType") == "SPOT" else Purchase.ON_DEMAND
    return AcceleratorUse(
        Cloud.AWS,
        instance_type,
        _int(_get(scaling, "desiredSize"), low),
        purchase,
        min_count=low,
        max_count=high,
        alternatives=types,
    )


def _aws_fleet(
    spot_fleet: bool,
) -> Reader:
    """EC2 Fleet / Spot Fleet: the first known type among its overrides, specs or template."""

    def read(
        props: Mapping[str, Any], template_of: TemplateLookup | None, known: Known
    ) -> AcceleratorUse | None:
        candidates: list[Any] = []
        for config in _get(props, "launchTemplateConfigs") or []:
            candidates += [_get(o, "instanceType") for o in _get(config, "overrides") or []]
            spec = _get(config, "launchTemplateSpecification")
            if template_of is not None and isinstance(spec, Mapping):
                candidates.append(_get(template_of(spec), "instanceType"))
        candidates += [_get(s, "instanceType") for s in _get(props, "launchSpecifications") or []]
        found = tuple(dict.fromkeys(t for t in candidates if _known_aws_type(t, known)))
        if not found:
            return None
        instance_type = found[0]
        if spot_fleet:
            count = _int(_get(props, "targetCapacity"), 1)
            on_demand = _int(_get(props, "onDemandTargetCapacity"), 0)
            purchase = Purchase.ON_DEMAND if on_demand >= count else Purchase.SPOT
            share = (count - on_demand) / count if count else 0.0
        else:
            target = _get(props, "targetCapacitySpecification")
            count = _int(_get(target, "totalTargetCapacity"), 1)
            spot = _int(_get(target, "spotTargetCapacity"), 0)
            default = _get(target, "defaultTargetCapacityType")
            share = spot / count if count and spot else (1.0 if default == "spot" else 0.0)
            purchase = Purchase.SPOT if share >= 1.0 else Purchase.ON_DEMAND
        return AcceleratorUse(Cloud.AWS, instance_type, count, purchase, spot_share=share, alternatives=found)

    return read


def _sagemaker_endpoint_config(
    props: Mapping[str, Any], _: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    """The first production variant on an accelerator ml.* instance (SageMaker prices its own)."""
    for variant in _get(props, "productionVariants") or []:
        ml_type = _get(variant, "instanceType")
        if isinstance(ml_type, str) and ml_type.startswith("ml.") and _known_aws_type(ml_type[3:], known):
            count = _int(_get(variant, "initialInstanceCount"), 1)
            return AcceleratorUse(Cloud.AWS, ml_type, count, Purchase.ON_DEMAND)
    return None


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
    resources = _get(props, "computeResources")
    kind = _get(resources, "type")
    if kind not in ("EC2", "SPOT"):  # Fargate has no accelerators
        return None
    ref = _get(resources, "launchTemplate")
    template = template_of(ref) if template_of is not None and isinstance(ref, Mapping) else None
    types = _aws_batch_types(_get(resources, "instanceTypes")) or _aws_batch_types(
        [_get(template, "instanceType")]
    )
    if not types:
        return None
    smallest = min(types, key=lambda t: t.vcpus)
    vcpus = (
        _int(_get(resources, "desiredVcpus"), _int(_get(resources, "minVcpus"), 0)),
        _int(_get(resources, "minVcpus"), 0),
        _int(_get(resources, "maxVcpus"), 0),
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


# --- GCP -------------------------------------------------------------------------------------


def _guest_accelerators(items: Any) -> tuple[tuple[str, int], ...]:
    """(type, count) pairs: instances say type/count, reservations acceleratorType/acceleratorCount."""
    found = []
    for item in items if isinstance(items, list) else []:
        kind = _last_segment(_get(item, "type") or _get(item, "acceleratorType"))
        if kind:
            found.append((kind, _int(_get(item, "count") or _get(item, "acceleratorCount"), 1)))
    return tuple(found)


def _gcp_purchase(scheduling: Any) -> Purchase:
    if _get(scheduling, "provisioningModel") == "SPOT" or _get(scheduling, "preemptible") is True:
        return Purchase.SPOT
    return Purchase.ON_DEMAND


# GCE accelerator-optimized families with bundled GPUs (A2, A3, A4, A4X, G2, G4: cloud.google.com/
# compute/docs/accelerator-optimized-machines, read 2026-11-24): a type the catalog lacks
# (a3-ultragpu-8g, a4-highgpu-8g) is still an accelerator, judged by policy and flagged unpriced.
_GCP_ACCELERATED = re.compile(r"^(a2|a3|a4|a4x|g2|g4)-[a-z]+-[0-9]+g?$")


def _gcp_machine(machine_type: str | None, guests: tuple[tuple[str, int], ...], known: Known) -> bool:
    return bool(machine_type) and (known(machine_type, Cloud.GCP) or bool(guests))


def _gcp_instance(props: Mapping[str, Any], _: TemplateLookup | None, known: Known) -> AcceleratorUse | None:
    machine_type = _last_segment(_get(props, "machineType"))
    guests = _guest_accelerators(_get(props, "guestAccelerators"))
    if not _gcp_machine(machine_type, guests, known):
        return None
    affinity = _get(props, "reservationAffinity")
    ref = None
    if _get(affinity, "type") == "SPECIFIC_RESERVATION":
        values = _get(affinity, "specificReservation", "values") or []
        ref = _last_segment(values[0]) if values else None
    return AcceleratorUse(
        Cloud.GCP,
        machine_type,
        1,
        _gcp_purchase(_get(props, "scheduling")),
        zone=_last_segment(_get(props, "zone")),
        guest_accelerators=guests,
        reservation_ref=ref,
    )


def _gcp_instance_template(
    props: Mapping[str, Any], _: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    machine_type = _last_segment(_get(props, "machineType"))
    guests = _guest_accelerators(_get(props, "guestAccelerators"))
    if not _gcp_machine(machine_type, guests, known):
        return None
    return AcceleratorUse(
        Cloud.GCP,
        machine_type,
        1,
        _gcp_purchase(_get(props, "scheduling")),
        guest_accelerators=guests,
        template=True,
    )


def group_manager_template_refs(props: Mapping[str, Any]) -> list[str]:
    """The instance templates a managed instance group launches from (its versions')."""
    refs = [_get(v, "instanceTemplate") for v in _get(props, "versions") or []]
    return [r for r in refs if isinstance(r, str) and r]


def _gcp_group_manager(
    props: Mapping[str, Any], template_of: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    """A managed instance group (zonal or regional): target size x its template's machine."""
    template = None
    for ref in group_manager_template_refs(props) if template_of is not None else []:
        if (template := template_of({"selfLink": ref})) is not None:
            break
    described = _gcp_instance_template(template, None, known) if template is not None else None
    if described is None:
        return None
    zone, region = _get(props, "zone"), _get(props, "region")
    return AcceleratorUse(
        Cloud.GCP,
        described.machine_type,
        _int(_get(props, "targetSize"), 0),
        described.purchase,
        zone=zone if isinstance(zone, str) else None,
        guest_accelerators=described.guest_accelerators,
        region_hint=region if isinstance(region, str) else None,
    )


def _gcp_reservation(
    props: Mapping[str, Any], _: TemplateLookup | None, known: Known
) -> AcceleratorUse | None:
    spec = _get(props, "specificReservation")
    machine_type = _last_segment(_get(spec, "instanceProperties", "machineType"))
    guests = _guest_accelerators(_get(spec, "instanceProperties", "guestAccelerators"))
    if not _gcp_machine(machine_type, guests, known):
        return None
    return AcceleratorUse(
        Cloud.GCP,
        machine_type,
        _int(_get(spec, "count"), 1),
        Purchase.RESERVED,
        zone=_last_segment(_get(props, "zone")),
        guest_accelerators=guests,
        reservation=True,
    )


def _tpu_type(props: Mapping[str, Any] | None) -> str | None:
    if name := _get(props, "acceleratorType"):
        return _last_segment(name)
    config = _get(props, "acceleratorConfig")
    if config and _get(config, "type") and _get(config, "topology"):
        return tpu_slice_name(config["type"], config["topology"])
    return None


def _tpu_purchase(props: Mapping[str, Any] | None) -> Purchase:
    scheduling = _get(props, "schedulingConfig")
    if _get(scheduling, "spot") is True or _get(scheduling, "preemptible") is True:
        return Purchase.SPOT
    if _get(scheduling, "reserved") is True:
        return Purchase.RESERVED
    return Purchase.ON_DEMAND


def _gcp_tpu_vm(props: Mapping[str, Any], _: TemplateLookup | None, __: Known) -> AcceleratorUse | None:
    slice_type = _tpu_type(props)
    if not slice_type:
        return None
    return AcceleratorUse(
        Cloud.GCP, slice_type, 1, _tpu_purchase(props), zone=_last_segment(_get(props, "zone"))
    )


def _gcp_tpu_queued(props: Mapping[str, Any], _: TemplateLookup | None, __: Known) -> AcceleratorUse | None:
    specs = _get(props, "tpu", "nodeSpecs") or []
    node = _get(specs[0], "node") if specs else None
    slice_type = _tpu_type(node)
    if not slice_type:
        return None
    if _get(props, "spot") is not None:
        purchase = Purchase.SPOT
    elif _get(props, "guaranteed", "reserved") is True:
        purchase = Purchase.RESERVED
    else:
        purchase = _tpu_purchase(node)
    return AcceleratorUse(Cloud.GCP, slice_type, len(specs), purchase, zone=_get(props, "zone"))


# GKE TPU machine types: (family prefix, chips per node, slice-name units per chip).
_GKE_TPU = {
    "ct5lp-hightpu": ("v5litepod", 1),
    "ct5p-hightpu": ("v5p", 2),
    "ct6e-standard": ("v6e", 1),
    "ct4p-hightpu": ("v4", 2),
}


def gke_tpu_slice(machine_type: str) -> str | None:
    """'ct5lp-hightpu-4t' -> 'v5litepod-4': the catalog slice with a node's chips."""
    head, _, chips = machine_type.rpartition("-")
    if head not in _GKE_TPU or not chips.endswith("t") or not chips[:-1].isdigit():
        return None
    prefix, units = _GKE_TPU[head]
    return f"{prefix}-{int(chips[:-1]) * units}"


def _gke_node_config(
    node_config: Any, node_count: Any, autoscaling: Any, known: Known, zones: int = 1
) -> AcceleratorUse | None:
    """zones: how many zones the pool's nodeLocations name. GKE's nodeCount, initialNodeCount and
    min/maxNodeCount are per zone; totalMin/totalMaxNodeCount are for the whole pool."""
    machine_type = _get(node_config, "machineType") or "e2-medium"
    guests = _guest_accelerators(_get(node_config, "guestAccelerators"))
    tpu = gke_tpu_slice(machine_type)
    if not tpu and not _gcp_machine(machine_type, guests, known):
        return None
    spot = _get(node_config, "spot") is True or _get(node_config, "preemptible") is True
    low = _get(autoscaling, "minNodeCount") if autoscaling else None
    high = _get(autoscaling, "maxNodeCount") if autoscaling else None
    low = _int(low, 0) * zones if low is not None else _get(autoscaling, "totalMinNodeCount")
    high = _int(high, 0) * zones if high is not None else _get(autoscaling, "totalMaxNodeCount")
    count = _int(node_count, 0) * zones if _int(node_count, -1) >= 0 else _int(low, zones)
    return AcceleratorUse(
        Cloud.GCP,
        tpu or machine_type,
        count,
        Purchase.SPOT if spot else Purchase.ON_DEMAND,
        guest_accelerators=() if tpu else guests,
        min_count=_int(low, count) if autoscaling else None,
        max_count=_int(high, count) if autoscaling else None,
    )


def _gke_node_pool(props: Mapping[str, Any], _: TemplateLookup | None, known: Known) -> AcceleratorUse | None:
    count = (
        _get(props, "nodeCount") if _get(props, "nodeCount") is not None else _get(props, "initialNodeCount")
    )
    locations = _get(props, "nodeLocations")
    zones = len(locations) if isinstance(locations, list) and locations else 1
    return _gke_node_config(_get(props, "nodeConfig"), count, _get(props, "autoscaling"), known, zones)


def _gke_cluster(props: Mapping[str, Any], _: TemplateLookup | None, known: Known) -> AcceleratorUse | None:
    """The cluster's default node pool, unless the program removes it."""
    if _get(props, "removeDefaultNodePool") is True or _get(props, "enableAutopilot") is True:
        return None
    return _gke_node_config(_get(props, "nodeConfig"), _get(props, "initialNodeCount") or 1, None, known)


_READERS: dict[str, Reader] = {
    AWS_INSTANCE: _aws_instance,
    AWS_SPOT_REQUEST: _aws_spot_request,
    AWS_LAUNCH_TEMPLATE: _aws_launch_template,
    AWS_CAPACITY_RESERVATION: _aws_reservation(Purchase.RESERVED),
    AWS_CAPACITY_BLOCK: _aws_reservation(Purchase.CAPACITY_BLOCK),
    AWS_AUTOSCALING_GROUP: _aws_autoscaling_group,
    GCP_INSTANCE: _gcp_instance,
    GCP_INSTANCE_TEMPLATE: _gcp_instance_template,
    GCP_REGION_INSTANCE_TEMPLATE: _gcp_instance_template,
    GCP_RESERVATION: _gcp_reservation,
    GCP_TPU_VM: _gcp_tpu_vm,
    GCP_TPU_NODE: _gcp_tpu_vm,
    GCP_TPU_QUEUED_RESOURCE: _gcp_tpu_queued,
    AWS_EKS_NODE_GROUP: _aws_node_group,
    AWS_EC2_FLEET: _aws_fleet(spot_fleet=False),
    AWS_SPOT_FLEET: _aws_fleet(spot_fleet=True),
    AWS_SAGEMAKER_ENDPOINT_CONFIG: _sagemaker_endpoint_config,
    AWS_BATCH_COMPUTE_ENVIRONMENT: _aws_batch,
    GCP_GKE_NODE_POOL: _gke_node_pool,
    GCP_GKE_CLUSTER: _gke_cluster,
    GCP_INSTANCE_GROUP_MANAGER: _gcp_group_manager,
    GCP_REGION_INSTANCE_GROUP_MANAGER: _gcp_group_manager,
}
