"""Wrong input types get the one-paragraph error, not a crash: every public Args dataclass is checked."""

from __future__ import annotations

import dataclasses
import importlib
import typing

import pulumi
import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.validation import _hints, check_types

PACKAGES = (
    "inference_infra.components.aws",
    "inference_infra.components.gcp",
    "inference_infra.components.k8s",
)


def _args_classes() -> list[type]:
    found = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            if name.endswith("Args") and dataclasses.is_dataclass(value):
                found.append(value)
    return found


ARGS = _args_classes()


class _Wrong:
    """A value no type hint but Any admits."""

    def __repr__(self) -> str:
        return "<wrong>"


def test_every_component_package_exports_args_dataclasses():
    assert len(ARGS) >= 10


def _deprecated(field: dataclasses.Field) -> bool:
    """An input of the previous release (engines=, backends=): giving it warns, so it is left unset here."""
    return str(field.metadata.get("doc", "")).startswith("Deprecated")


@pytest.mark.parametrize("cls", ARGS, ids=lambda c: c.__name__)
def test_check_types_names_every_field_given_a_wrong_type(cls):
    fields = [f for f in dataclasses.fields(cls) if f.init and not _deprecated(f)]
    args = cls(**{f.name: _Wrong() for f in fields})
    problems = {p.input: p for p in check_types(args)}
    hints = _hints(cls)
    for f in fields:
        if hints[f.name] is typing.Any:
            continue
        assert f.name in problems, f"{cls.__name__}.{f.name} accepted a wrong type"
        assert str(problems[f.name]).startswith(f"{f.name} <wrong> must be ")


def test_gpu_fleet_rejects_subnet_id_strings_with_one_error(plan_of):
    from inference_infra.components.aws import GpuFleet, GpuFleetArgs

    with pytest.raises(InputError, match=r"subnets \['subnet-0a'\] must be a list of SubnetRef") as raised:
        GpuFleet(
            "serving", GpuFleetArgs(instance_type="g5.xlarge", vpc_id="vpc-1", subnets=["subnet-0a"], spot=1)
        )
    assert not isinstance(raised.value.__cause__, AttributeError)
    assert plan_of().custom == []


def test_gpu_fleet_rejects_a_string_count_naming_the_field(plan_of):
    from inference_infra.components.aws import GpuFleet, GpuFleetArgs, SubnetRef

    subnets = [SubnetRef(id="subnet-0a", availability_zone="us-east-1a")]
    with pytest.raises(InputError, match=r"spot '2' must be a whole number"):
        GpuFleet(
            "serving", GpuFleetArgs(instance_type="g5.xlarge", vpc_id="vpc-1", subnets=subnets, spot="2")
        )


def test_check_types_names_nested_fields():
    from inference_infra.components.aws import GpuFleetArgs, SubnetRef

    args = GpuFleetArgs(
        instance_type="g5.xlarge", vpc_id="vpc-1", subnets=[SubnetRef(id="s", availability_zone=1)], spot=1
    )
    assert [p.input for p in check_types(args)] == ["subnets[0].availability_zone"]


def test_check_types_accepts_outputs_where_inputs_are_allowed(plan_of):
    from inference_infra.components.aws import GpuFleetArgs, SubnetRef

    args = GpuFleetArgs(
        instance_type="g5.xlarge",
        vpc_id=pulumi.Output.from_input("vpc-1"),
        subnets=[SubnetRef(id=pulumi.Output.from_input("subnet-1"), availability_zone="us-east-1a")],
        spot=1,
    )
    assert check_types(args) == []


def test_tpu_vm_rejects_a_wrong_typed_zone_naming_it(plan_of):
    from inference_infra.components.gcp import TpuVm, TpuVmArgs

    with pytest.raises(InputError, match=r"zone 5 must be a string"):
        TpuVm("tpu", TpuVmArgs(zone=5, network="n", subnetwork="s", accelerator_type="v5litepod-4"))
