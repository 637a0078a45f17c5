"""How a fleet buys its machines, in one vocabulary for every cloud (pure).

Every fleet (AWS GPU and Inferentia pools, GCP GPU VMs, TPU slices) states its machines the same way:
a count per capacity mode (`reserved`, `spot`, `on_demand`, `preemptible`), or a total `count` filled
along `capacity_order` (reserved up to the reservation's size, spot up to `max_spot`, on-demand and
preemptible for the rest). A cloud that offers fewer modes, or one mode per fleet, refuses the rest
with its reason (`capacity_problems`), before anything is registered.

The counts are a pool's size today; an elastic pool (a group instead of fixed machines) keeps the same
inputs as its desired size and adds its bounds, so there is no second vocabulary.

`CapacityMode` is also the vocabulary of every input that says how a machine is bought outside a fleet
(the CLI's `--purchase` of `size` and `simulate`): each mode has exactly one price in the catalog's
pricing model (`price_model`), so such an input is priced however it is spelled.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from inference_infra.components.arguments import arg
from inference_infra.components.catalog.types import PriceModel
from inference_infra.components.errors import Problem
from inference_infra.components.limits import MAX_MACHINES_PER_FLEET, MAX_MACHINES_PER_FLEET_CEILING


class CapacityMode(StrEnum):
    """How a machine is bought."""

    RESERVED = "reserved"  # capacity held for the fleet (reservation, Capacity Block), billed used or not
    SPOT = "spot"  # spare capacity at a discount; the cloud may reclaim it
    ON_DEMAND = "on-demand"  # list price, no commitment
    PREEMPTIBLE = "preemptible"  # GCP's older spare capacity (24-hour limit); spot replaces it


# How the catalog prices each mode: a total mapping (tests/components/fleet checks every mode has one).
# Preemptible VMs and TPUs are billed at the Spot rates: "preemptible VMs use the same pricing model as
# Spot VMs" (https://docs.cloud.google.com/compute/docs/instances/create-use-preemptible, read
# 2026-12-02); the stack's reader prices `preemptible: true` as spot too (resources/gcp.py).
PRICE_MODELS: Mapping[CapacityMode, PriceModel] = {
    CapacityMode.RESERVED: PriceModel.RESERVED,
    CapacityMode.SPOT: PriceModel.SPOT,
    CapacityMode.ON_DEMAND: PriceModel.ON_DEMAND,
    CapacityMode.PREEMPTIBLE: PriceModel.SPOT,
}


def price_model(mode: CapacityMode | str) -> PriceModel:
    """The price of a machine bought this way (a CapacityMode or its value, e.g. 'on-demand')."""
    return PRICE_MODELS[mode_of(mode)]


def mode_values() -> list[str]:
    """Every capacity mode's value, for the choices of an input (the CLI's --purchase)."""
    return [mode.value for mode in CapacityMode]


DEFAULT_CAPACITY_ORDER: tuple[CapacityMode, ...] = (
    CapacityMode.RESERVED,
    CapacityMode.SPOT,
    CapacityMode.ON_DEMAND,
)

# The per-mode count inputs, in the order the modes are filled.
COUNT_INPUTS: Mapping[CapacityMode, str] = {
    CapacityMode.RESERVED: "reserved",
    CapacityMode.SPOT: "spot",
    CapacityMode.ON_DEMAND: "on_demand",
    CapacityMode.PREEMPTIBLE: "preemptible",
}


@dataclass(frozen=True)
class CapacityCounts:
    """Machines per capacity mode."""

    reserved: int = 0
    spot: int = 0
    on_demand: int = 0
    preemptible: int = 0

    @property
    def total(self) -> int:
        return self.reserved + self.spot + self.on_demand + self.preemptible

    def of(self, mode: CapacityMode) -> int:
        return int(getattr(self, COUNT_INPUTS[mode]))

    def modes(self) -> list[CapacityMode]:
        """The modes with at least one machine, in CapacityMode order."""
        return [mode for mode in CapacityMode if self.of(mode) > 0]


class CapacityInputs(Protocol):
    """What every fleet's Args carry (see `CapacityArgs`)."""

    reserved: int
    spot: int
    on_demand: int
    preemptible: int
    count: int | None
    capacity_order: Sequence[CapacityMode]
    max_spot: int | None


@dataclass(frozen=True, kw_only=True)
class CapacityArgs:
    """The capacity inputs every fleet's Args start with (one vocabulary on every cloud)."""

    reserved: int = arg(0, "Machines on reserved capacity (a reservation or Capacity Block).", ge=0)
    spot: int = arg(0, "Spot machines: discounted spare capacity the cloud may reclaim.", ge=0)
    on_demand: int = arg(0, "On-demand machines at list price.", ge=0)
    preemptible: int = arg(0, "GCP TPU only: preemptible slices (24-hour limit); prefer spot.", ge=0)
    count: int | None = arg(
        None,
        "A total filled along capacityOrder instead of the per-mode counts: reserved up to the "
        "reservation's size, spot up to maxSpot, the next mode for the rest.",
        ge=1,
    )
    capacity_order: Sequence[CapacityMode] = arg(
        DEFAULT_CAPACITY_ORDER, "The modes count is filled in, first to last (each once)."
    )
    max_spot: int | None = arg(None, "With count: at most this many spot machines.", ge=0)
    max_machines: int = arg(
        MAX_MACHINES_PER_FLEET,
        "The most machines this fleet may have, checked before anything is registered (a guard against "
        f"a mistyped count); raise it for a larger pool, up to {MAX_MACHINES_PER_FLEET_CEILING:,}.",
        ge=1,
        le=MAX_MACHINES_PER_FLEET_CEILING,
    )

    def counts(self, reservation_slots: int = 0) -> tuple[CapacityCounts, int]:
        """Machines per mode, and how many `count` could not place (see `allocate`)."""
        return resolve_counts(self, reservation_slots)


def allocate(
    count: int, order: Sequence[CapacityMode], reservation_slots: int, max_spot: int | None
) -> tuple[CapacityCounts, int]:
    """Fill `count` machines along `order`; returns the counts and how many could not be placed."""
    left = count
    placed = dict.fromkeys(CapacityMode, 0)
    for mode in order:
        cap = {
            CapacityMode.RESERVED: reservation_slots,
            CapacityMode.SPOT: left if max_spot is None else max_spot,
        }.get(mode, left)
        take = max(0, min(left, cap))
        placed[mode] += take
        left -= take
    return CapacityCounts(**{COUNT_INPUTS[m]: n for m, n in placed.items()}), left


def resolve_counts(inputs: CapacityInputs, reservation_slots: int = 0) -> tuple[CapacityCounts, int]:
    """The fleet's machines per mode (from the per-mode counts, or `count` along the order)."""
    if inputs.count is None:
        return (
            CapacityCounts(inputs.reserved, inputs.spot, inputs.on_demand, inputs.preemptible),
            0,
        )
    return allocate(inputs.count, inputs.capacity_order, reservation_slots, inputs.max_spot)


def machine_limit(inputs: object) -> int:
    """The most machines a fleet may have: its `max_machines`, else MAX_MACHINES_PER_FLEET."""
    limit = getattr(inputs, "max_machines", None)
    return MAX_MACHINES_PER_FLEET if limit is None else limit


def machine_bound(limit: int) -> str:
    """What a count over a fleet's machine limit is told (capacity_problems, fleet.plan)."""
    return f"must be at most {limit:,} machines in one fleet (max_machines; raise it for a larger pool)"


def capacity_problems(
    inputs: CapacityInputs,
    *,
    supported: Collection[CapacityMode],
    why_not: Mapping[CapacityMode, str] | None = None,
    single_mode: str | None = None,
    reservation_slots: int = 0,
    max_machines: int | None = None,
) -> list[Problem]:
    """Every problem with a fleet's capacity inputs on a cloud that offers `supported` modes.

    `why_not` gives the reason per unsupported mode; `single_mode`, when set, is why the fleet
    buys all its machines one way (the message when two modes are used); `max_machines` bounds
    the total (default: the inputs' own `max_machines`, else MAX_MACHINES_PER_FLEET). The bound is
    checked on the counts as given, before anything is computed from them.
    """
    problems: list[Problem] = []
    limit = max_machines if max_machines is not None else machine_limit(inputs)
    reasons = why_not or {}
    per_mode = [(mode, COUNT_INPUTS[mode], getattr(inputs, COUNT_INPUTS[mode])) for mode in CapacityMode]
    # Each count's floor (arg(ge=...)) is check_types', which every caller runs first (the fleet skeleton's
    # step 0, simulate): the counts here are whole numbers within their bounds.
    given = inputs.count if inputs.count is not None else sum(v for _, _, v in per_mode)
    if given > limit:
        names = "count" if inputs.count is not None else " + ".join(n for _, n, v in per_mode if v > 0)
        problems.append(
            Problem(
                names,
                given,
                machine_bound(limit),
            )
        )
        return problems  # nothing else is computed from a count this large
    if inputs.count is not None:
        given = [name for _, name, value in per_mode if value]
        if given:
            problems.append(
                Problem("count", inputs.count, f"replaces {'/'.join(given)}; set either count or those")
            )
        order = list(inputs.capacity_order)
        if not order or len(set(order)) != len(order):
            problems.append(Problem("capacity_order", [m.value for m in order], "must list modes once each"))
        for i, mode in enumerate(order):
            if mode not in supported:
                problems.append(
                    Problem(f"capacity_order[{i}]", mode.value, _unsupported(mode, supported, reasons))
                )
    elif sum(value for _, _, value in per_mode) < 1:
        names = " + ".join(COUNT_INPUTS[m] for m in CapacityMode if m in supported)
        problems.append(Problem(names, 0, "must be at least 1 (or set count): a fleet needs a machine"))
    if inputs.count is None:
        for mode, name, value in per_mode:
            if value > 0 and mode not in supported:
                problems.append(Problem(name, value, _unsupported(mode, supported, reasons)))
    if problems:
        return problems
    counts, unplaced = resolve_counts(inputs, reservation_slots)
    if unplaced > 0 and inputs.count is not None:
        order_text = " -> ".join(m.value for m in inputs.capacity_order)
        placed = ", ".join(f"{counts.of(m)} {m.value}" for m in inputs.capacity_order)
        problems.append(
            Problem(
                "count",
                inputs.count,
                f"leaves {unplaced} machine(s) unplaced in the order {order_text} (placed {placed}); "
                "add on-demand to capacity_order, raise max_spot or the reservation",
            )
        )
    if single_mode is not None and len(counts.modes()) > 1:
        used = ", ".join(f"{COUNT_INPUTS[m]}={counts.of(m)}" for m in counts.modes())
        problems.append(Problem("capacity", used, f"must use one mode: {single_mode}"))
    return problems


def _unsupported(
    mode: CapacityMode, supported: Collection[CapacityMode], reasons: Mapping[CapacityMode, str]
) -> str:
    offered = ", ".join(m.value for m in CapacityMode if m in supported)
    why = reasons.get(mode)
    return f"is not offered here{f': {why}' if why else ''}; this fleet buys {offered}"


def mode_of(value: Any) -> CapacityMode:
    """A CapacityMode from itself or its value ('on-demand'); ValueError names the allowed values."""
    try:
        return CapacityMode(value)
    except ValueError:
        allowed = ", ".join(m.value for m in CapacityMode)
        raise ValueError(f"capacity mode {value!r} is not one of {allowed}") from None
