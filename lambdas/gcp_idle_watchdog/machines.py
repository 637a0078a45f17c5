"""The machines the watchdog looks at: running GCE VMs and ready TPU VMs carrying the opt-in label.

`list_vms` pages through Compute Engine's aggregated list (every zone of a project, 500 VMs a page,
filtered server-side on status and label; one call per page, not one per zone), and `list_tpus`
through the TPU API's node list (`locations/-`: every zone). Both check status and label again on
what comes back, so a server that ignored the filter cannot widen what is stopped. The parsers turn
one API object into the few facts the decision needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from ..watchdog_core.window import parse_utc
from .settings import Settings

LIST_PAGE_SIZE = 500  # Compute Engine's largest maxResults
# Compute Engine writes this metadata key on every VM a managed instance group creates.
CREATED_BY_KEY = "created-by"
RESERVED_MODELS = frozenset({"RESERVATION_BOUND"})


class Kind(StrEnum):
    VM = "vm"
    TPU = "tpu"


@dataclass(frozen=True, kw_only=True)
class Machine:
    """One GPU VM or TPU VM; `key` is its full resource name, unique across projects."""

    kind: Kind
    project: str
    zone: str
    name: str
    numeric_id: str  # the VM's or node's id: Cloud Monitoring's instance_id / node_id label
    machine_type: str  # a2-highgpu-1g, v5litepod-8, ...
    started: datetime  # VM: last start (lastStartTimestamp, else creation); TPU: creation
    labels: Mapping[str, str] = field(default_factory=dict)
    devices: int = 0  # GPUs (VM) or workers (TPU) whose series must all be present; 0: unknown
    provisioning: str = "STANDARD"  # STANDARD, SPOT (preemptible too), RESERVATION_BOUND, FLEX_START
    reservation: str | None = None  # the reservation it consumes (or is bound to), when known
    created_by: str | None = None  # a managed instance group, a queued resource
    multislice: bool = False
    local_ssds: int = 0

    @property
    def key(self) -> str:
        what = "instances" if self.kind is Kind.VM else "nodes"
        where = "zones" if self.kind is Kind.VM else "locations"
        return f"projects/{self.project}/{where}/{self.zone}/{what}/{self.name}"

    @property
    def type_name(self) -> str:
        return self.machine_type

    @property
    def is_spot(self) -> bool:
        return self.provisioning == "SPOT"

    @property
    def on_reserved_capacity(self) -> bool:
        return self.reservation is not None or self.provisioning in RESERVED_MODELS


def _last(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def _timestamp(value: Any) -> datetime | None:
    """An RFC 3339 string (Compute) or a datetime (TPU) as an aware UTC datetime; None when absent."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not value:
        return None
    return parse_utc(str(value))


def parse_vm(project: str, raw: Any) -> Machine | None:
    """One `compute_v1.Instance`; None when it lacks what a decision needs (it is then left alone)."""
    started = _timestamp(raw.last_start_timestamp) or _timestamp(raw.creation_timestamp)
    if started is None or not raw.name or not raw.zone:
        return None
    metadata = {item.key: item.value for item in raw.metadata.items} if raw.metadata else {}
    scheduling = raw.scheduling
    provisioning = scheduling.provisioning_model or "STANDARD"
    if scheduling.preemptible:
        provisioning = "SPOT"  # the older preemptible VMs: stopped by preemption like Spot VMs
    return Machine(
        kind=Kind.VM,
        project=project,
        zone=_last(raw.zone),
        name=raw.name,
        numeric_id=str(raw.id),
        machine_type=_last(raw.machine_type),
        started=started,
        labels=dict(raw.labels),
        devices=sum(a.accelerator_count for a in raw.guest_accelerators),
        provisioning=provisioning,
        reservation=_vm_reservation(raw),
        created_by=metadata.get(CREATED_BY_KEY) or None,
        local_ssds=sum(1 for d in raw.disks if d.type_ == "SCRATCH"),
    )


def _vm_reservation(raw: Any) -> str | None:
    """The reservation a VM consumes: Compute's report of it, or the specific one it must use."""
    consumed = raw.resource_status.reservation_consumption_info.consumed_reservation
    if consumed:
        return _last(consumed)
    affinity = raw.reservation_affinity
    if affinity.consume_reservation_type == "SPECIFIC_RESERVATION":
        return ",".join(_last(v) for v in affinity.values) or "a specific reservation"
    return None


def parse_tpu(raw: Any) -> Machine | None:
    """One `tpu_v2.Node` (name `projects/<p>/locations/<zone>/nodes/<name>`)."""
    parts = raw.name.split("/")
    started = _timestamp(raw.create_time)
    if len(parts) != 6 or parts[0] != "projects" or started is None:
        return None
    scheduling = raw.scheduling_config
    provisioning = "SPOT" if scheduling.spot or scheduling.preemptible else "STANDARD"
    return Machine(
        kind=Kind.TPU,
        project=parts[1],
        zone=parts[3],
        name=parts[5],
        numeric_id=str(raw.id),
        machine_type=raw.accelerator_type or raw.accelerator_config.topology,
        started=started,
        labels=dict(raw.labels),
        devices=len(raw.network_endpoints),
        provisioning=provisioning,
        reservation="a TPU reservation" if scheduling.reserved else None,
        created_by=raw.queued_resource or None,
        multislice=bool(raw.multislice_node),
    )


def vm_filter(settings: Settings) -> str:
    return f'(status = "RUNNING") AND (labels.{settings.tag_key} = "{settings.tag_value}")'


def opted_in(labels: Mapping[str, str], settings: Settings) -> bool:
    return labels.get(settings.tag_key) == settings.tag_value


@dataclass
class Inventory:
    machines: list[Machine] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)  # zones or locations that did not answer
    unreadable: int = 0  # objects without a name, zone or start time: left alone


def list_vms(compute: Any, project: str, settings: Settings, *, retry: Any, inventory: Inventory) -> None:
    """Running VMs carrying the label in every zone of `project`, one call per page of 500."""
    from google.cloud import compute_v1

    request = compute_v1.AggregatedListInstancesRequest(
        project=project, filter=vm_filter(settings), max_results=LIST_PAGE_SIZE, return_partial_success=True
    )
    for page in compute.aggregated_list(request=request, retry=retry).pages:
        inventory.unreachable.extend(f"{project}/{scope}" for scope in page.unreachables)
        for scoped in page.items.values():
            for raw in scoped.instances:
                if raw.status != "RUNNING" or not opted_in(raw.labels, settings):
                    continue
                _add(inventory, parse_vm(project, raw))


def list_tpus(tpu: Any, project: str, settings: Settings, *, retry: Any, inventory: Inventory) -> None:
    """READY TPU nodes carrying the label in the configured locations (`-`: every zone)."""
    from google.cloud import tpu_v2

    for location in settings.tpu_locations:
        request = tpu_v2.ListNodesRequest(parent=f"projects/{project}/locations/{location}")
        pager = tpu.list_nodes(request=request, retry=retry)
        for page in pager.pages:
            inventory.unreachable.extend(f"{project}/{where}" for where in page.unreachable)
            for raw in page.nodes:
                if raw.state != tpu_v2.Node.State.READY or not opted_in(raw.labels, settings):
                    continue
                _add(inventory, parse_tpu(raw))


def _add(inventory: Inventory, machine: Machine | None) -> None:
    if machine is None:
        inventory.unreadable += 1
    else:
        inventory.machines.append(machine)


def dedupe(machines: Iterable[Machine]) -> list[Machine]:
    """First occurrence of each key, in order (a page boundary may repeat one)."""
    seen: dict[str, Machine] = {}
    for machine in machines:
        seen.setdefault(machine.key, machine)
    return list(seen.values())
