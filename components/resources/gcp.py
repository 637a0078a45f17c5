"""GCP readers: what a Compute Engine instance, instance template, managed instance group,
reservation, TPU VM, TPU node or queued TPU resource runs (GKE is in `gke`).

Each reader takes a resource's engine-shaped props, an instance template lookup and the machine
types it accepts, and returns an `AcceleratorUse` or None. A value not known yet reads as absent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.resources.props import get_path, known
from inference_infra.components.resources.types import (
    GCP_INSTANCE,
    GCP_INSTANCE_GROUP_MANAGER,
    GCP_INSTANCE_TEMPLATE,
    GCP_REGION_INSTANCE_GROUP_MANAGER,
    GCP_REGION_INSTANCE_TEMPLATE,
    GCP_RESERVATION,
    GCP_TPU_NODE,
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
)
from inference_infra.components.resources.use import (
    AcceleratorUse,
    Known,
    Purchase,
    Reader,
    TemplateLookup,
    as_int,
    last_segment,
)


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


def guest_accelerators(items: Any) -> tuple[tuple[str, int], ...]:
    """(type, count) pairs: instances say type/count, reservations acceleratorType/acceleratorCount."""
    found = []
    for item in items if isinstance(items, list) else []:
        kind = last_segment(known(get_path(item, "type")) or known(get_path(item, "acceleratorType")))
        if kind:
            found.append(
                (kind, as_int(known(get_path(item, "count")) or known(get_path(item, "acceleratorCount")), 1))
            )
    return tuple(found)


def _gcp_purchase(scheduling: Any) -> Purchase:
    if (
        known(get_path(scheduling, "provisioningModel")) == "SPOT"
        or known(get_path(scheduling, "preemptible")) is True
    ):
        return Purchase.SPOT
    return Purchase.ON_DEMAND


# GCE accelerator-optimized families with bundled GPUs (A2, A3, A4, A4X, G2, G4: cloud.google.com/
# compute/docs/accelerator-optimized-machines, read 2026-11-24): a type the catalog lacks
# (a3-ultragpu-8g, a4-highgpu-8g) is still an accelerator, judged by policy and flagged unpriced.
_GCP_ACCELERATED = re.compile(r"^(a2|a3|a4|a4x|g2|g4)-[a-z]+-[0-9]+g?$")


def gcp_machine(machine_type: str | None, guests: tuple[tuple[str, int], ...], accepts: Known) -> bool:
    return bool(machine_type) and (accepts(machine_type, Cloud.GCP) or bool(guests))


def _gcp_vm(props: Mapping[str, Any], accepts: Known) -> AcceleratorUse | None:
    """What an instance or an instance template describes alike: its machine type, the GPUs attached to
    it and how it is bought; None when that is no machine `accepts` takes."""
    machine_type = last_segment(known(get_path(props, "machineType")))
    guests = guest_accelerators(known(get_path(props, "guestAccelerators")))
    if not gcp_machine(machine_type, guests, accepts):
        return None
    purchase = _gcp_purchase(known(get_path(props, "scheduling")))
    return AcceleratorUse(Cloud.GCP, machine_type, 1, purchase, guest_accelerators=guests)


def _gcp_instance(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    if (use := _gcp_vm(props, accepts)) is None:
        return None
    affinity = known(get_path(props, "reservationAffinity"))
    ref = None
    if known(get_path(affinity, "type")) == "SPECIFIC_RESERVATION":
        values = known(get_path(affinity, "specificReservation", "values")) or []
        ref = last_segment(values[0]) if values else None
    return replace(use, zone=last_segment(known(get_path(props, "zone"))), reservation_ref=ref)


def _gcp_instance_template(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    use = _gcp_vm(props, accepts)
    return replace(use, template=True) if use is not None else None


def group_manager_template_refs(props: Mapping[str, Any]) -> list[str]:
    """The instance templates a managed instance group launches from (its versions')."""
    refs = [known(get_path(v, "instanceTemplate")) for v in known(get_path(props, "versions")) or []]
    return [r for r in refs if isinstance(r, str) and r]


def _gcp_group_manager(
    props: Mapping[str, Any], template_of: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    """A managed instance group (zonal or regional): target size x its template's machine."""
    template = None
    for ref in group_manager_template_refs(props) if template_of is not None else []:
        if (template := template_of({"selfLink": ref})) is not None:
            break
    described = _gcp_instance_template(template, None, accepts) if template is not None else None
    if described is None:
        return None
    zone, region = known(get_path(props, "zone")), known(get_path(props, "region"))
    # A group its autoscaler sizes sets no targetSize: its bounds are the autoscaler's (read through
    # schedules.schedules_of), so it is an elastic pool from 0 machines here.
    autoscaled = get_path(props, "targetSize") is None
    return AcceleratorUse(
        Cloud.GCP,
        described.machine_type,
        as_int(known(get_path(props, "targetSize")), 0),
        described.purchase,
        zone=zone if isinstance(zone, str) else None,
        guest_accelerators=described.guest_accelerators,
        region_hint=region if isinstance(region, str) else None,
        min_count=0 if autoscaled else None,
        max_count=0 if autoscaled else None,
    )


def _gcp_reservation(
    props: Mapping[str, Any], _: TemplateLookup | None, accepts: Known
) -> AcceleratorUse | None:
    spec = known(get_path(props, "specificReservation"))
    machine_type = last_segment(known(get_path(spec, "instanceProperties", "machineType")))
    guests = guest_accelerators(known(get_path(spec, "instanceProperties", "guestAccelerators")))
    if not gcp_machine(machine_type, guests, accepts):
        return None
    return AcceleratorUse(
        Cloud.GCP,
        machine_type,
        as_int(known(get_path(spec, "count")), 1),
        Purchase.RESERVED,
        zone=last_segment(known(get_path(props, "zone"))),
        guest_accelerators=guests,
        reservation=True,
    )


def _tpu_type(props: Mapping[str, Any] | None) -> str | None:
    if name := known(get_path(props, "acceleratorType")):
        return last_segment(name)
    config = known(get_path(props, "acceleratorConfig"))
    if config and known(get_path(config, "type")) and known(get_path(config, "topology")):
        return tpu_slice_name(config["type"], config["topology"])
    return None


def _tpu_purchase(props: Mapping[str, Any] | None) -> Purchase:
    scheduling = known(get_path(props, "schedulingConfig"))
    if known(get_path(scheduling, "spot")) is True or known(get_path(scheduling, "preemptible")) is True:
        return Purchase.SPOT
    if known(get_path(scheduling, "reserved")) is True:
        return Purchase.RESERVED
    return Purchase.ON_DEMAND


def _gcp_tpu_vm(props: Mapping[str, Any], _: TemplateLookup | None, __: Known) -> AcceleratorUse | None:
    slice_type = _tpu_type(props)
    if not slice_type:
        return None
    return AcceleratorUse(
        Cloud.GCP, slice_type, 1, _tpu_purchase(props), zone=last_segment(known(get_path(props, "zone")))
    )


def _gcp_tpu_queued(props: Mapping[str, Any], _: TemplateLookup | None, __: Known) -> AcceleratorUse | None:
    specs = known(get_path(props, "tpu", "nodeSpecs")) or []
    node = known(get_path(specs[0], "node")) if specs else None
    slice_type = _tpu_type(node)
    if not slice_type:
        return None
    if known(get_path(props, "spot")) is not None:
        purchase = Purchase.SPOT
    elif known(get_path(props, "guaranteed", "reserved")) is True:
        purchase = Purchase.RESERVED
    else:
        purchase = _tpu_purchase(node)
    return AcceleratorUse(Cloud.GCP, slice_type, len(specs), purchase, zone=known(get_path(props, "zone")))


def is_gcp_accelerator_type(name: str) -> bool:
    """A GCE machine or TPU slice type with accelerators: in the catalog, or of an
    accelerator-optimized family the catalog lacks."""
    return find_instance_type(name, Cloud.GCP) is not None or _GCP_ACCELERATED.fullmatch(name) is not None


READERS: dict[str, Reader] = {
    GCP_INSTANCE: _gcp_instance,
    GCP_INSTANCE_TEMPLATE: _gcp_instance_template,
    GCP_REGION_INSTANCE_TEMPLATE: _gcp_instance_template,
    GCP_RESERVATION: _gcp_reservation,
    GCP_TPU_VM: _gcp_tpu_vm,
    GCP_TPU_NODE: _gcp_tpu_vm,
    GCP_TPU_QUEUED_RESOURCE: _gcp_tpu_queued,
    GCP_INSTANCE_GROUP_MANAGER: _gcp_group_manager,
    GCP_REGION_INSTANCE_GROUP_MANAGER: _gcp_group_manager,
}
