"""Capacity planning: the fallback order, spot diversification and reservation checks (pure)."""

from __future__ import annotations

import pytest

from inference_infra.components.aws.capacity import (
    CapacityBlock,
    ExistingCapacityReservation,
    NewCapacityReservation,
    allocate,
    plan_slots,
    validate_reservation,
)
from inference_infra.components.aws.network import SubnetRef
from inference_infra.components.fleet import CapacityCounts, CapacityMode

A = SubnetRef(id="subnet-a", availability_zone="us-east-1a")
B = SubnetRef(id="subnet-b", availability_zone="us-east-1b")
C = SubnetRef(id="subnet-c", availability_zone="us-east-1c")


def test_allocate_fills_reserved_then_spot_then_on_demand():
    order = (CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND)
    assert allocate(8, order, reservation_slots=4, max_spot=2) == (CapacityCounts(4, 2, 2), 0)
    assert allocate(3, order, reservation_slots=4, max_spot=2) == (CapacityCounts(3, 0, 0), 0)


def test_allocate_follows_a_configured_order():
    order = (CapacityMode.SPOT, CapacityMode.ON_DEMAND)
    assert allocate(5, order, reservation_slots=4, max_spot=3) == (CapacityCounts(0, 3, 2), 0)


def test_allocate_reports_instances_the_order_cannot_place():
    counts, unplaced = allocate(
        5, (CapacityMode.RESERVED, CapacityMode.SPOT), reservation_slots=2, max_spot=1
    )
    assert counts == CapacityCounts(2, 1, 0)
    assert unplaced == 2


def test_plan_slots_puts_reserved_instances_in_the_reservation_zone():
    slots = plan_slots("p5.48xlarge", CapacityCounts(2, 0, 1), [A, B], "us-east-1b")
    assert [(s.capacity, s.subnet.availability_zone) for s in slots] == [
        (CapacityMode.RESERVED, "us-east-1b"),
        (CapacityMode.RESERVED, "us-east-1b"),
        (CapacityMode.ON_DEMAND, "us-east-1a"),
    ]
    assert [s.suffix for s in slots] == ["reserved-0", "reserved-1", "ondemand-0"]


def test_plan_slots_spreads_spot_over_zones_then_types():
    slots = plan_slots("g6e.2xlarge", CapacityCounts(0, 6, 0), [A, B, C], None, ["g6e.4xlarge"])
    placed = [(s.subnet.availability_zone[-1], s.instance_type) for s in slots]
    assert placed == [
        ("a", "g6e.2xlarge"),
        ("b", "g6e.2xlarge"),
        ("c", "g6e.2xlarge"),
        ("a", "g6e.4xlarge"),
        ("b", "g6e.4xlarge"),
        ("c", "g6e.4xlarge"),
    ]


def test_validate_reservation_accepts_a_matching_reservation():
    reservation = NewCapacityReservation(availability_zone="us-east-1a", instance_count=2)
    assert validate_reservation(reservation, "p5.48xlarge", 2, ["us-east-1a", "us-east-1b"]) == []


def test_validate_reservation_rejects_more_reserved_than_reserved_capacity():
    reservation = NewCapacityReservation(availability_zone="us-east-1a", instance_count=2)
    [problem] = validate_reservation(reservation, "p5.48xlarge", 3, ["us-east-1a"])
    assert str(problem) == "reserved 3 is more than the reservation's 2 instances (p5.48xlarge in us-east-1a)"


def test_validate_reservation_rejects_zone_and_type_mismatch():
    reservation = ExistingCapacityReservation(
        id="cr-1", instance_type="p4d.24xlarge", availability_zone="us-east-1c", instance_count=4
    )
    problems = {p.input: p for p in validate_reservation(reservation, "p5.48xlarge", 1, ["us-east-1a"])}
    assert (
        "does not match the fleet's instance_type 'p5.48xlarge'"
        in problems["reservation.instance_type"].allowed
    )
    assert "has no subnet in the fleet (the fleet's subnets are in us-east-1a)" in str(
        problems["reservation.availability_zone"]
    )


def test_validate_reservation_rejects_capacity_block_purchase_without_the_flag():
    block = CapacityBlock(
        availability_zone="us-east-1a",
        instance_count=2,
        duration_hours=48,
        start_date_range="2026-12-01T00:00:00Z",
        end_date_range="2026-12-08T00:00:00Z",
    )
    [problem] = validate_reservation(block, "p5.48xlarge", 2, ["us-east-1a"])
    assert problem.input == "reservation.purchase"
    assert "must be True to launch 2 reserved instance(s) into a Capacity Block" in problem.allowed


def test_validate_reservation_rejects_bad_capacity_block_terms():
    block = CapacityBlock(
        availability_zone="us-east-1a",
        instance_count=1,
        duration_hours=30,
        start_date_range="next week",
        end_date_range="2026-12-08T00:00:00",
        purchase=True,
    )
    problems = {p.input: str(p) for p in validate_reservation(block, "g5.xlarge", 1, ["us-east-1a"])}
    assert "is not sold as a Capacity Block" in problems["instance_type"]
    assert "must be whole days" in problems["reservation.duration_hours"]
    assert "is not an RFC 3339 date-time" in problems["reservation.start_date_range"]
    assert "needs a time zone" in problems["reservation.end_date_range"]


def test_capacity_old_names_warn_and_are_the_shared_ones():
    from inference_infra.components.aws import capacity

    with pytest.warns(DeprecationWarning, match=r"Capacity is deprecated .* use CapacityMode"):
        assert capacity.Capacity is CapacityMode
    with pytest.warns(DeprecationWarning, match=r"Counts is deprecated .* use CapacityCounts"):
        assert capacity.Counts is CapacityCounts
    with pytest.warns(DeprecationWarning, match=r"Capacity is deprecated .* use CapacityMode"):
        from inference_infra.components.aws import Capacity as Old
    assert Old.SPOT is CapacityMode.SPOT


def test_existing_reservation_without_a_type_is_the_fleets():
    held = ExistingCapacityReservation(id="cr-0a", availability_zone="us-east-1a", instance_count=2)
    assert validate_reservation(held, "p5.48xlarge", 2, ["us-east-1a"]) == []
