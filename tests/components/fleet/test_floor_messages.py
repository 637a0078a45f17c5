"""A value below its floor (arg(ge=...)) is one message per input, in the same words on every fleet.

#32 item 8.
The bounds live on the Args fields; check_types states them and the fleet skeleton (components/fleet/plan.py,
step 0) reports what it finds: a value below its floor together with the fleet's other problems, a value
above its bound alone. No fleet module restates a floor any more, so each test below shows the one message
(input, value received, what is allowed) an input gets, on the AWS GPU pool, the GCP GPU fleet and the TPU
VM where the input exists. `simulate` runs the same check on the ServedModel and ElasticArgs it builds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from inference_infra.components.aws.fleet_args import GPU_FLEET, AwsProfile
from inference_infra.components.errors import InputError, Problem
from inference_infra.components.fleet import ElasticArgs, ScheduleArgs, ServedModel
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.gcp.gpu_fleet import GcpGpuProfile
from inference_infra.components.gcp.tpu_vm import GcpTpuProfile
from inference_infra.components.gcp.tpu_vm_args import TpuDataDisk
from tests.components.fleet.serving_fleets import LLAMA, aws_args, gcp_args, tpu_args


def _aws(**changes: Any) -> tuple[str, Any, Any]:
    return "pool", dataclasses.replace(aws_args(), **changes), AwsProfile(GPU_FLEET)


def _gcp(**changes: Any) -> tuple[str, Any, Any]:
    return "l4", dataclasses.replace(gcp_args(), **changes), GcpGpuProfile("p-1234", None)


def _tpu(**changes: Any) -> tuple[str, Any, Any]:
    return "t", dataclasses.replace(tpu_args(), **changes), GcpTpuProfile("p-1234", None)


FLEETS: dict[str, Callable[..., tuple[str, Any, Any]]] = {"aws-gpu": _aws, "gcp-gpu": _gcp, "gcp-tpu": _tpu}
ELASTIC_FLEETS = ("aws-gpu", "gcp-gpu")  # a TPU VM is one fixed slice


def _problems(fleet: str, **changes: Any) -> list[Problem]:
    name, args, profile = FLEETS[fleet](**changes)
    return list(fleet_plan.plan_fleet(name, args, profile).problems)


def _model(**changes: Any) -> ServedModel:
    return dataclasses.replace(LLAMA, **changes)


def _elastic(**changes: Any) -> ElasticArgs:
    return ElasticArgs(**changes)


def _schedule(**changes: Any) -> ElasticArgs:
    return ElasticArgs(schedule=ScheduleArgs(time_zone="UTC", **changes))


# (the Args change, the one problem expected: input, value, allowed)
SHARED = {
    "reserved": ({"reserved": -1}, ("reserved", -1, "must be at least 0")),
    "spot": ({"spot": -2}, ("spot", -2, "must be at least 0")),
    "on_demand": ({"on_demand": -3}, ("on_demand", -3, "must be at least 0")),
    "preemptible": ({"preemptible": -1}, ("preemptible", -1, "must be at least 0")),
    "count": ({"count": 0}, ("count", 0, "must be at least 1")),
    "max_spot": ({"max_spot": -1}, ("max_spot", -1, "must be at least 0")),
    "max_machines": ({"max_machines": 0}, ("max_machines", 0, "must be at least 1")),
    "model.context_tokens": (
        {"model": _model(context_tokens=0)},
        ("model.context_tokens", 0, "must be at least 1"),
    ),
    "model.concurrency": ({"model": _model(concurrency=0)}, ("model.concurrency", 0, "must be at least 1")),
    "model.output_tokens": (
        {"model": _model(output_tokens=0)},
        ("model.output_tokens", 0, "must be at least 1"),
    ),
}
ELASTIC = {
    "elastic.min_size": ({"elastic": _elastic(min_size=-1)}, ("elastic.min_size", -1, "must be at least 0")),
    "elastic.max_size": ({"elastic": _elastic(max_size=0)}, ("elastic.max_size", 0, "must be at least 1")),
    "elastic.floor_share": (
        {"elastic": _elastic(floor_share=-0.5)},
        ("elastic.floor_share", -0.5, "must be at least 0"),
    ),
    "elastic.target_utilisation": (
        {"elastic": _elastic(target_utilisation=0.01)},
        ("elastic.target_utilisation", 0.01, "must be at least 0.05"),
    ),
    "elastic.scale_out_cooldown_seconds": (
        {"elastic": _elastic(scale_out_cooldown_seconds=-1)},
        ("elastic.scale_out_cooldown_seconds", -1, "must be at least 0"),
    ),
    "elastic.scale_in_cooldown_seconds": (
        {"elastic": _elastic(scale_in_cooldown_seconds=-60)},
        ("elastic.scale_in_cooldown_seconds", -60, "must be at least 0"),
    ),
    "elastic.schedule.start_hour": (
        {"elastic": _schedule(start_hour=-1)},
        ("elastic.schedule.start_hour", -1, "must be at least 0"),
    ),
    "elastic.schedule.off_hours_size": (
        {"elastic": _schedule(off_hours_size=-1)},
        ("elastic.schedule.off_hours_size", -1, "must be at least 0"),
    ),
}


# AWS only: a GCP fleet refuses any warm pool, with its own reason (next test)
AWS_ELASTIC = {
    "elastic.warm_pool_size": (
        {"elastic": _elastic(warm_pool_size=-1)},
        ("elastic.warm_pool_size", -1, "must be at least 0"),
    ),
}


def _cases(table: dict[str, Any], fleets: tuple[str, ...]) -> list[Any]:
    return [
        pytest.param(fleet, changes, expected, id=f"{fleet}-{name}")
        for name, (changes, expected) in table.items()
        for fleet in fleets
    ]


@pytest.mark.parametrize(
    ("fleet", "changes", "expected"),
    _cases(SHARED, tuple(FLEETS)) + _cases(ELASTIC, ELASTIC_FLEETS) + _cases(AWS_ELASTIC, ("aws-gpu",)),
)
def test_a_value_below_its_floor_is_one_message_in_the_same_words_on_every_fleet(fleet, changes, expected):
    found = [(p.input, p.value, p.allowed) for p in _problems(fleet, **changes)]
    assert expected in found, found
    assert [f for f in found if f[0] == expected[0]] == [expected], "one message per input"
    # nothing is computed from the refused value: no other problem names its section
    section = expected[0].rsplit(".", 1)[0] + "." if "." in expected[0] else None
    if section is not None:
        assert [f for f in found if f[0].startswith(section)] == [expected], found


@pytest.mark.parametrize(
    ("fleet", "changes", "expected"),
    [
        # where a fleet's own check names the input and says more, its message is the one kept (as
        # validation.input_problems keeps it): 0 is below end_hour's floor and before any start_hour
        (
            "aws-gpu",
            {"elastic": _schedule(end_hour=0)},
            ("elastic.schedule.end_hour", 0, "must be after start_hour (8)"),
        ),
        (
            "gcp-gpu",
            {"elastic": _schedule(end_hour=0)},
            ("elastic.schedule.end_hour", 0, "must be after start_hour (8)"),
        ),
        (
            "gcp-gpu",
            {"elastic": _elastic(warm_pool_size=-1)},
            (
                "elastic.warm_pool_size",
                -1,
                "is not offered on GCP: a new VM fetches its weights at boot (local SSDs come back empty), "
                "so a stopped VM would start no faster; leave it unset",
            ),
        ),
        ("aws-gpu", {"serving_port": 0}, None),
        ("gcp-gpu", {"local_ssd_count": -1}, ("local_ssd_count", -1, "must be at least 0")),
        ("gcp-gpu", {"boot_disk_size_gib": 20}, ("boot_disk_size_gib", 20, "must be at least 50")),
        (
            "gcp-tpu",
            {"data_disks": [TpuDataDisk(size_gib=5)]},
            ("data_disks[0].size_gib", 5, "must be at least 10"),
        ),
    ],
    ids=[
        "aws-end_hour",
        "gcp-end_hour",
        "gcp-warm_pool_size",
        "aws-serving_port",
        "gcp-local_ssd_count",
        "gcp-boot_disk_size_gib",
        "tpu-data_disks.size_gib",
    ],
)
def test_one_message_per_input_below_its_floor(fleet, changes, expected):
    found = [(p.input, p.value, p.allowed) for p in _problems(fleet, **changes)]
    if expected is None:  # serving_port 0: the port rules' message (the range 1024..65535), not "at least 1"
        (port,) = [f for f in found if f[0] == "serving_port"]
        assert port[1] == 0, found
        assert "must lie in 1024..65535" in port[2], found
        return
    assert [f for f in found if f[0] == expected[0]] == [expected], found


def test_a_floor_is_reported_with_the_fleets_other_problems():
    """Below a floor is not a stop: the name and the port are reported in the same plan."""
    _, args, profile = _aws(spot=-1, serving_port=9400)
    problems = fleet_plan.plan_fleet("a b", args, profile).problems
    assert {"name", "spot", "serving_port"} <= {p.input for p in problems}


def test_a_value_above_its_bound_stops_the_plan_alone():
    name, args, profile = _gcp(spot=-1, max_machines=10**9)
    problems = fleet_plan.plan_fleet(name, args, profile).problems
    assert [p.input for p in problems] == ["max_machines"]


def test_simulate_checks_the_same_bounds_in_the_same_words():
    from inference_infra.components.simulate.pool import build_pool
    from inference_infra.components.simulate.trace import Trace

    with pytest.raises(InputError) as caught:
        build_pool(
            name="p",
            model=_model(concurrency=0),
            machine="g6.xlarge",
            peak=4,
            trace=Trace(requests=()),
            elastic=_elastic(min_size=-1),
        )
    found = [(p.input, p.value, p.allowed) for p in caught.value.problems]
    assert found == [
        ("model.concurrency", 0, "must be at least 1"),
        ("elastic.min_size", -1, "must be at least 0"),
    ]


# -- capacity_problems is one call of the skeleton; the AWS name check is the profile's (#32 item 8) --------


@pytest.mark.parametrize("fleet", list(FLEETS))
def test_a_refused_count_leaves_every_fleet_without_machines(fleet):
    """One behaviour on every target (AWS kept its counts before; GCP zeroed them): nothing is planned
    from counts capacity_problems refused."""
    changes = {"count": 3, "on_demand": 2}  # count replaces the per-mode counts: set one or the other
    name, args, profile = FLEETS[fleet](**changes)
    plan = fleet_plan.plan_fleet(name, args, profile)
    assert "count" in {p.input for p in plan.problems}
    assert plan.counts.total == 0


def test_the_aws_name_is_checked_once_by_the_profile():
    _, args, profile = _aws()
    assert [p.input for p in profile.input_problems("a b", args, None)] == ["name"]
    problems = fleet_plan.plan_fleet("a b", args, profile).problems
    assert [p.input for p in problems].count("name") == 1
