"""How a fleet buys capacity (reservations, Capacity Blocks, spot, on-demand) and where instances go.

Pure: these types and functions decide how many instances of which type run
in which subnet under which purchase option. The fleets (launch.py) turn the
result into resources, so pricing and policies see one explicit instance type,
zone and purchase option per instance.

Fallback order. A pool states its instances either per capacity mode
(`reserved`, `spot`, `on_demand`) or as a total `count` filled in
`capacity_order` (default: reserved, then spot, then on-demand): reserved up
to the reservation's size, spot up to `max_spot`, on-demand for the rest. If
the order leaves instances unplaced (e.g. no on-demand in it), that is an error.
The modes, counts and order are every fleet's (components.fleet); AWS sells
reserved, spot and on-demand and refuses preemptible (GCP's) with the reason.

Spot diversification. Spot slot i runs in subnet i mod S with type
(i div S) mod T of [instance_type, *spot_instance_types]: the slots spread over
every zone first, then over every allowed type, so one spot pool running dry
takes out as few instances as possible. Each spot instance is a persistent
request that stops (not terminates) on interruption and starts again when
capacity returns, keeping its volumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pulumi

from inference_infra.components.arguments import arg, deprecated
from inference_infra.components.aws.network_args import SubnetRef
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import (
    DEFAULT_CAPACITY_ORDER,
    CapacityCounts,
    CapacityMode,
    allocate,
)

# The previous release's names: `Capacity` is CapacityMode and `Counts` is CapacityCounts
# (components.fleet), shared by every cloud.
_DEPRECATED: dict[str, tuple[Any, str]] = {
    "Capacity": (CapacityMode, "CapacityMode (inference_infra.components.fleet)"),
    "Counts": (CapacityCounts, "CapacityCounts (inference_infra.components.fleet)"),
}


def __getattr__(name: str) -> Any:
    """The previous release's names, each with a DeprecationWarning naming the new one."""
    if name in _DEPRECATED:
        value, new = _DEPRECATED[name]
        deprecated(f"{name} is deprecated since 0.2.0 and goes in the next release; use {new}")
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Instance families AWS sells as EC2 Capacity Blocks for ML.
CAPACITY_BLOCK_FAMILIES = frozenset({"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "trn1", "trn2"})
CAPACITY_BLOCK_MAX_HOURS = 182 * 24


@dataclass(frozen=True, kw_only=True)
class NewCapacityReservation:
    """A targeted On-Demand Capacity Reservation made with the fleet (on-demand rates, used or not)."""

    availability_zone: str = arg(doc="The reservation's zone; reserved instances launch there.")
    instance_count: int = arg(doc="Instances the reservation holds.", ge=1, le=10_000)
    end_date: str | None = arg(None, "RFC 3339 end, e.g. 2026-12-01T00:00:00Z; default: kept until released.")


@dataclass(frozen=True, kw_only=True)
class ExistingCapacityReservation:
    """A reservation made elsewhere; its facts are stated so they can be checked before deploy."""

    id: pulumi.Input[str] = arg(doc="The reservation's id (cr-...).")
    availability_zone: str = arg(doc="The reservation's zone.")
    instance_count: int = arg(doc="Instances the reservation holds.", ge=1, le=10_000)
    instance_type: str | None = arg(
        None, "The reservation's instance type, if it differs; default: the fleet's (as given or planned)."
    )


@dataclass(frozen=True, kw_only=True)
class CapacityBlock:
    """An EC2 Capacity Block for ML, looked up always and purchased only with `purchase=True`.

    A Capacity Block cannot be cancelled once bought, so buying is an explicit
    choice and the reservation resource is protected from deletion.
    """

    availability_zone: str = arg(doc="Where the fleet expects the block; the offering must be in this zone.")
    instance_count: int = arg(doc="Instances in the block (Capacity Blocks hold 1 to 64).", ge=1, le=64)
    duration_hours: int = arg(doc="Whole days in hours: 24 to 182 days.", ge=24, le=182 * 24)
    start_date_range: str = arg(doc="RFC 3339: the earliest start.")
    end_date_range: str = arg(doc="RFC 3339: the latest end.")
    purchase: bool = arg(
        False, "Buy the block (it cannot be cancelled); without it the offering is only looked up."
    )


Reservation = NewCapacityReservation | ExistingCapacityReservation | CapacityBlock


@dataclass(frozen=True)
class Slot:
    """One instance of the pool: its purchase option, index within that option, type and subnet."""

    capacity: CapacityMode
    index: int
    instance_type: str
    subnet: SubnetRef

    @property
    def suffix(self) -> str:
        return f"{self.capacity.value.replace('-', '')}-{self.index}"


def plan_slots(
    instance_type: str,
    counts: CapacityCounts,
    subnets: Sequence[SubnetRef],
    reservation_zone: str | None,
    spot_instance_types: Sequence[str] = (),
) -> list[Slot]:
    """Every instance of the pool, reserved first (in the reservation's zone), then spot, then on-demand."""
    slots: list[Slot] = []
    in_zone = [s for s in subnets if s.availability_zone == reservation_zone]
    for i in range(counts.reserved):
        slots.append(Slot(CapacityMode.RESERVED, i, instance_type, in_zone[i % len(in_zone)]))
    types = [instance_type, *spot_instance_types]
    for i in range(counts.spot):
        spot_type = types[(i // len(subnets)) % len(types)]
        slots.append(Slot(CapacityMode.SPOT, i, spot_type, subnets[i % len(subnets)]))
    for i in range(counts.on_demand):
        slots.append(Slot(CapacityMode.ON_DEMAND, i, instance_type, subnets[i % len(subnets)]))
    return slots


def reservation_facts(reservation: Reservation, instance_type: str) -> tuple[str, str, int]:
    """(instance type, zone, instance count) of a reservation."""
    held = (
        reservation.instance_type or instance_type
        if isinstance(reservation, ExistingCapacityReservation)
        else instance_type
    )
    return held, reservation.availability_zone, reservation.instance_count


def validate_reservation(
    reservation: Reservation, instance_type: str, reserved: int, zones: Sequence[str]
) -> list[Problem]:
    """The reservation agrees with the pool: type, zone, size, and the Capacity Block rules."""
    problems: list[Problem] = []
    held_type, zone, size = reservation_facts(reservation, instance_type)
    if size < 1:
        problems.append(Problem("reservation.instance_count", size, "must be at least 1"))
    elif reserved > size:
        problems.append(
            Problem(
                "reserved",
                reserved,
                f"is more than the reservation's {size} instances ({held_type} in {zone})",
            )
        )
    if held_type != instance_type:
        problems.append(
            Problem(
                "reservation.instance_type",
                held_type,
                f"does not match the fleet's instance_type {instance_type!r}; a reservation only "
                "serves instances of its own type",
            )
        )
    if zone not in zones:
        problems.append(
            Problem(
                "reservation.availability_zone",
                zone,
                f"has no subnet in the fleet (the fleet's subnets are in {', '.join(sorted(set(zones)))}); "
                "reserved instances must launch in the reservation's zone",
            )
        )
    if isinstance(reservation, NewCapacityReservation) and reservation.end_date is not None:
        problems += _date_problems("reservation.end_date", reservation.end_date)
    if isinstance(reservation, CapacityBlock):
        problems += _capacity_block_problems(reservation, instance_type, reserved)
    return problems


def _capacity_block_problems(block: CapacityBlock, instance_type: str, reserved: int) -> list[Problem]:
    problems: list[Problem] = []
    family = instance_type.split(".", 1)[0]
    if family not in CAPACITY_BLOCK_FAMILIES:
        problems.append(
            Problem(
                "instance_type",
                instance_type,
                f"is not sold as a Capacity Block (families: {', '.join(sorted(CAPACITY_BLOCK_FAMILIES))})",
            )
        )
    hours = block.duration_hours
    if hours < 24 or hours % 24 or hours > CAPACITY_BLOCK_MAX_HOURS:
        problems.append(
            Problem(
                "reservation.duration_hours",
                hours,
                f"must be whole days: a multiple of 24 from 24 to {CAPACITY_BLOCK_MAX_HOURS}",
            )
        )
    problems += _date_problems("reservation.start_date_range", block.start_date_range)
    problems += _date_problems("reservation.end_date_range", block.end_date_range)
    if reserved > 0 and not block.purchase:
        problems.append(
            Problem(
                "reservation.purchase",
                block.purchase,
                f"must be True to launch {reserved} reserved instance(s) into a Capacity Block: buying one "
                "cannot be undone, so it is never implied (without purchase the offering is only looked up)",
            )
        )
    return problems


def _date_problems(name: str, value: str) -> list[Problem]:
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return [Problem(name, value, "is not an RFC 3339 date-time like '2026-12-01T00:00:00Z'")]
    if parsed.tzinfo is None:
        return [Problem(name, value, "needs a time zone (e.g. a trailing 'Z')")]
    return []


__all__ = [
    "CAPACITY_BLOCK_FAMILIES",
    "DEFAULT_CAPACITY_ORDER",
    "CapacityBlock",
    "CapacityCounts",
    "CapacityMode",
    "ExistingCapacityReservation",
    "NewCapacityReservation",
    "Reservation",
    "Slot",
    "allocate",
    "plan_slots",
    "reservation_facts",
    "validate_reservation",
]
