"""The capacity vocabulary every fleet shares: counts per mode, a total along an order, unsupported modes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from inference_infra.components.fleet import (
    CapacityArgs,
    CapacityCounts,
    CapacityMode,
    allocate,
    capacity_problems,
)

ALL = set(CapacityMode)
AWS = {CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND}


@dataclass(frozen=True, kw_only=True)
class Pool(CapacityArgs):
    pass


def test_allocate_fills_reserved_then_spot_then_on_demand() -> None:
    order = (CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND)
    counts, left = allocate(10, order, reservation_slots=2, max_spot=5)
    assert counts == CapacityCounts(reserved=2, spot=5, on_demand=3)
    assert left == 0


def test_allocate_reports_unplaced_when_the_order_runs_out() -> None:
    counts, left = allocate(4, (CapacityMode.SPOT,), reservation_slots=0, max_spot=1)
    assert (counts.spot, left) == (1, 3)


def test_counts_per_mode_are_the_fleet_size() -> None:
    counts, left = Pool(spot=2, on_demand=1).counts()
    assert (counts.total, counts.modes(), left) == (3, [CapacityMode.SPOT, CapacityMode.ON_DEMAND], 0)


def test_capacity_problems_accept_a_supported_mix() -> None:
    assert capacity_problems(Pool(spot=2, on_demand=1), supported=AWS) == []


def test_capacity_problems_rejects_an_unsupported_mode_with_the_reason() -> None:
    problems = capacity_problems(
        Pool(preemptible=1), supported=AWS, why_not={CapacityMode.PREEMPTIBLE: "AWS has no preemptible VMs"}
    )
    assert [(p.input, p.value) for p in problems] == [("preemptible", 1)]
    assert "AWS has no preemptible VMs" in problems[0].allowed
    assert "reserved, spot, on-demand" in problems[0].allowed


def test_capacity_problems_rejects_unsupported_modes_in_the_order() -> None:
    pool = Pool(count=2, capacity_order=(CapacityMode.PREEMPTIBLE, CapacityMode.ON_DEMAND))
    problems = capacity_problems(pool, supported=AWS)
    assert [p.input for p in problems] == ["capacity_order[0]"]


def test_capacity_problems_rejects_two_modes_on_a_single_mode_cloud() -> None:
    problems = capacity_problems(
        Pool(spot=1, on_demand=1), supported=ALL, single_mode="a GCP fleet buys one way"
    )
    assert [(p.input, p.value) for p in problems] == [("capacity", "spot=1, on_demand=1")]
    assert "a GCP fleet buys one way" in problems[0].allowed


def test_capacity_problems_rejects_an_empty_fleet() -> None:
    problems = capacity_problems(Pool(), supported=AWS)
    assert [p.input for p in problems] == ["reserved + spot + on_demand"]


def test_capacity_problems_rejects_count_with_per_mode_counts() -> None:
    problems = capacity_problems(Pool(count=2, spot=1), supported=AWS)
    assert problems[0].input == "count"
    assert "replaces spot" in problems[0].allowed


def test_capacity_problems_rejects_unplaced_machines() -> None:
    problems = capacity_problems(
        Pool(count=3, capacity_order=(CapacityMode.SPOT,), max_spot=1), supported=AWS
    )
    assert [p.input for p in problems] == ["count"]
    assert "leaves 2 machine(s) unplaced" in problems[0].allowed


def test_capacity_problems_rejects_more_machines_than_the_bound() -> None:
    problems = capacity_problems(Pool(on_demand=1001), supported=AWS, max_machines=1000)
    assert [(p.input, p.value) for p in problems] == [("on_demand", 1001)]


@pytest.mark.parametrize("name", ["reserved", "spot", "on_demand", "preemptible"])
def test_a_negative_count_is_check_types_problem_not_capacity_problems(name: str) -> None:
    """#32 item 8: each count's floor is its arg(ge=0), checked by check_types (the fleet skeleton's step
    0 and simulate run it first); capacity_problems no longer restates it."""
    from inference_infra.components.validation import check_types

    assert [(p.input, p.value, p.allowed) for p in check_types(Pool(**{name: -1}))] == [
        (name, -1, "must be at least 0")
    ]
    assert not any(
        p.allowed == "must be 0 or more" for p in capacity_problems(Pool(**{name: -1}), supported=ALL)
    )


def test_capacity_price_model_prices_every_mode() -> None:
    from inference_infra.components.catalog import PriceModel
    from inference_infra.components.fleet.capacity import PRICE_MODELS, mode_values, price_model

    assert set(PRICE_MODELS) == set(CapacityMode)  # total: an input in this vocabulary always has a price
    assert mode_values() == ["reserved", "spot", "on-demand", "preemptible"]
    assert price_model("on-demand") is PriceModel.ON_DEMAND
    assert price_model(CapacityMode.RESERVED) is PriceModel.RESERVED
    assert price_model("preemptible") is PriceModel.SPOT  # Google bills preemptible at the Spot rates


def test_capacity_price_model_rejects_a_word_outside_the_vocabulary() -> None:
    from inference_infra.components.fleet.capacity import price_model

    with pytest.raises(ValueError, match="capacity mode 'capacity-block' is not one of reserved, spot"):
        price_model("capacity-block")
