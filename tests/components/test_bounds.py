"""Every count and size a component takes has a documented upper bound, checked before anything is
registered: `arg(le=...)` puts it in the stack schema and the docs, `check_types` enforces it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing
from dataclasses import dataclass

import pytest

import inference_infra.components as components
from inference_infra.components.arguments import DOC, LE, arg
from inference_infra.components.fleet import CapacityMode, capacity_problems
from inference_infra.components.fleet.capacity import MAX_MACHINES_PER_FLEET, CapacityArgs
from inference_infra.components.validation import _hints, check_types

# Counts bounded together by the fleet's max_machines (capacity_problems) rather than one by one.
BOUNDED_BY_MAX_MACHINES = {"reserved", "spot", "on_demand", "preemptible", "count", "max_spot"}
COUNT_OR_SIZE = ("count", "_gib", "_mib", "size", "tokens", "concurrency", "machines")


def _args_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(components.__path__, f"{components.__name__}."):
        if ".cli" in info.name or ".offline_plan" in info.name:
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
                and any(DOC in f.metadata for f in dataclasses.fields(value))
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def _is_int(hint: object) -> bool:
    return hint is int or (
        typing.get_origin(hint) in (typing.Union, __import__("types").UnionType)
        and int in typing.get_args(hint)
    )


def test_every_count_and_size_input_has_an_upper_bound():
    unbounded = []
    for cls in _args_classes():
        hints = _hints(cls)
        for f in dataclasses.fields(cls):
            if DOC not in f.metadata or not _is_int(hints.get(f.name)):
                continue
            if f.name in BOUNDED_BY_MAX_MACHINES or not any(word in f.name for word in COUNT_OR_SIZE):
                continue
            if f.metadata.get(LE) is None:
                unbounded.append(f"{cls.__qualname__}.{f.name}")
    assert unbounded == []


@dataclass(frozen=True, kw_only=True)
class Sized:
    size_gib: int = arg(10, "A size.", ge=1, le=100)
    replicas: int = arg(1, "A count.", le=8)
    spare: int = arg(0, "A count with a floor only.", ge=0)
    share: float = arg(0.5, "A share.", ge=0.0, le=1.0)


def test_check_types_rejects_a_value_above_its_documented_bound():
    problems = check_types(Sized(size_gib=1000, replicas=9))
    assert [(p.input, p.value, p.allowed) for p in problems] == [
        ("size_gib", 1000, "must be 1..100"),
        ("replicas", 9, "must be at most 8"),
    ]
    assert check_types(Sized(size_gib=100, replicas=8)) == []


def test_check_types_rejects_a_value_below_its_documented_lower_bound():
    problems = check_types(Sized(size_gib=0, spare=-1, share=-0.5))
    assert [(p.input, p.value, p.allowed) for p in problems] == [
        ("size_gib", 0, "must be at least 1"),
        ("spare", -1, "must be at least 0"),
        ("share", -0.5, "must be at least 0.0"),
    ]
    assert check_types(Sized(size_gib=1, spare=0, share=0.0)) == []


@pytest.mark.parametrize(
    ("module", "cls", "validator", "field", "value"),
    [
        ("k8s.observability_args", "GpuObservabilityArgs", None, "retention_days", 0),
        ("k8s.observability_args", "GpuObservabilityArgs", None, "storage_size_gib", 2),
        ("aws.model_store_args", "ModelStoreArgs", "validate_model_store", "noncurrent_version_days", 0),
        ("aws.model_store_args", "ModelStoreArgs", "validate_model_store", "access_log_days", 4000),
        ("aws.efs_model_cache_args", "EfsModelCacheArgs", "validate_efs_cache", "posix_uid", 0),
    ],
)
def test_check_types_alone_enforces_the_bounds_validators_used_to_restate(
    module, cls, validator, field, value
):
    """The component runs check_types before its validator (`check_types(args) or validate(args)`), and
    the stack schema carries the same bounds, so the validator no longer repeats them."""
    found = importlib.import_module(f"{components.__name__}.{module}")
    args_type = getattr(found, cls)
    required = {"vpc_id": "vpc-0test", "subnets": ()} if cls == "EfsModelCacheArgs" else {}
    args = args_type(**required, **{field: value})
    assert [p.input for p in check_types(args)] == [field]
    if validator is None:  # GpuObservability's validator takes the name too
        problems = found.validate_gpu_observability("gpu-obs", args)
    else:
        problems = getattr(found, validator)(args)
    assert field not in {p.input for p in problems}


@pytest.mark.parametrize("field", ["spot", "on_demand", "count"])
def test_capacity_problems_rejects_a_fleet_above_max_machines_before_placing_it(field):
    args = CapacityArgs(**{field: 100_000})
    problems = capacity_problems(args, supported=(CapacityMode.SPOT, CapacityMode.ON_DEMAND))
    assert [(p.input, p.value) for p in problems] == [(field, 100_000)]
    assert f"at most {MAX_MACHINES_PER_FLEET:,} machines" in problems[0].allowed


def test_capacity_max_machines_raises_the_bound():
    args = CapacityArgs(spot=2_000, max_machines=5_000)
    assert capacity_problems(args, supported=(CapacityMode.SPOT,)) == []
    assert [p.input for p in check_types(CapacityArgs(spot=1, max_machines=20_000))] == ["max_machines"]


def test_input_problems_reports_a_value_below_its_floor_with_every_other_problem():
    from inference_infra.components.errors import Problem
    from inference_infra.components.validation import blocking_problems, input_problems

    def validate(args: Sized) -> list[Problem]:
        return [Problem("replicas", args.replicas, "must be even")]

    args = Sized(size_gib=0, replicas=3)
    assert blocking_problems(args) == []  # a floor does not stop the validator
    assert [(p.input, p.allowed) for p in input_problems(args, validate)] == [
        ("size_gib", "must be at least 1"),
        ("replicas", "must be even"),
    ]


def test_input_problems_stops_at_a_value_above_its_bound():
    from inference_infra.components.validation import input_problems

    def validate(args: Sized) -> list:
        raise AssertionError("the validator must not see a value above its bound")

    problems = input_problems(Sized(size_gib=0, replicas=9), validate)
    assert [(p.input, p.allowed) for p in problems] == [("replicas", "must be at most 8")]
