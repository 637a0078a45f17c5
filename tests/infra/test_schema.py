"""Config models generated from component Args (infra/schema.py), and the way back to Args."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import pulumi
import pytest
from pydantic import Field, ValidationError

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.aws.capacity import (
    CapacityBlock,
    ExistingCapacityReservation,
    NewCapacityReservation,
)
from inference_infra.components.fleet import CapacityMode, FleetCommonArgs, ServedModel
from inference_infra.infra.schema import RenamedKey, args_model, config_path, rename_keys


class Disk(StrEnum):
    GP3 = "gp3"
    IO2 = "io2"


@renamed_inputs(Renamed("extra_tags", "tags"), Renamed("inference_port", "serving_port"))
@dataclass(frozen=True, kw_only=True)
class MiniFleetArgs(FleetCommonArgs):
    """A fleet shaped like the cloud fleets: the shared inputs and a few of its own."""

    instance_type: str | None = arg(None, "The machine type; default: the planner's pick for the model.")
    vpc_id: pulumi.Input[str] = arg(doc="Wired from the network.", stack=False)
    subnet_ids: Sequence[pulumi.Input[str]] = arg((), "Subnets to spread over.")
    reservation: NewCapacityReservation | ExistingCapacityReservation | CapacityBlock | None = arg(
        None, "Capacity held for the fleet."
    )
    disk: Disk = arg(Disk.GP3, "Root volume type.")
    root_volume_gib: int = arg(200, "Root volume size.", ge=50, le=16384)


KINDS = {
    NewCapacityReservation: "new",
    ExistingCapacityReservation: "existing",
    CapacityBlock: "capacity-block",
}


def _model(**options):
    return args_model(MiniFleetArgs, kinds=KINDS, **options)


FLEET = {
    "name": "ignored",  # a stack-only key: see the subclass below
    "model": {
        "name": "llama-3.1-8b",
        "contextTokens": 4096,
        "concurrency": 8,
        "engineArgs": ["--enforce-eager"],
    },
    "count": 3,
    "capacityOrder": ["reserved", "on-demand"],
    "reservation": {"availabilityZone": "us-east-1a", "instanceCount": 2},
    "kmsKey": "arn:aws:kms:us-east-1:123456789012:key/k",
    "tags": {"Team": "ml"},
    "subnetIds": ["subnet-0a", "subnet-0b"],
    "disk": "io2",
}


class MiniFleetSettings(_model()):
    name: str = Field(description="Stack only: the fleet's name.")
    efs: bool = Field(default=False, description="Stack only: mount the stack's cache.")


def test_args_model_round_trips_a_fleet_shaped_args_through_settings():
    settings = MiniFleetSettings.model_validate(FLEET)
    args = settings.to_args(vpc_id="vpc-0abc")
    assert isinstance(args, MiniFleetArgs)
    assert args.model == ServedModel(
        name="llama-3.1-8b", context_tokens=4096, concurrency=8, engine_args=["--enforce-eager"]
    )
    assert args.count == 3
    assert list(args.capacity_order) == [CapacityMode.RESERVED, CapacityMode.ON_DEMAND]
    assert args.reservation == NewCapacityReservation(availability_zone="us-east-1a", instance_count=2)
    assert (args.kms_key, args.tags, args.disk) == (
        "arn:aws:kms:us-east-1:123456789012:key/k",
        {"Team": "ml"},
        Disk.IO2,
    )
    assert list(args.subnet_ids) == ["subnet-0a", "subnet-0b"]
    assert args.vpc_id == "vpc-0abc"
    assert (args.serving_port, args.root_volume_gib, args.spot) == (8000, 200, 0)  # the Args' defaults
    assert not {"name", "efs"} & set(settings.args_kwargs())


def test_args_model_defaults_equal_the_args_defaults():
    settings = _model().model_validate({})
    defaults = MiniFleetArgs(vpc_id="v")
    assert settings.to_args(vpc_id="v") == defaults


def test_args_model_takes_keys_types_bounds_and_descriptions_from_the_args():
    schema = _model().model_json_schema(by_alias=True)
    properties = schema["properties"]
    assert "vpcId" not in properties  # stack=False: the stack wires it
    assert properties["rootVolumeGib"]["minimum"] == 50
    assert properties["rootVolumeGib"]["maximum"] == 16384
    assert properties["servingPort"]["default"] == 8000
    assert properties["instanceType"]["description"].startswith("The machine type")
    assert properties["kmsKey"]["anyOf"] == [{"type": "string"}, {"type": "null"}]  # Input[str] -> str
    assert properties["subnetIds"]["items"] == {"type": "string"}
    assert schema["$defs"]["Disk"]["enum"] == ["gp3", "io2"]
    assert schema["additionalProperties"] is False
    reservation = schema["$defs"]["NewCapacityReservationSettings"]["properties"]["kind"]
    assert (reservation["const"], reservation["default"]) == ("new", "new")


def test_args_model_union_of_dataclasses_takes_its_member_from_kind():
    model = _model()
    existing = {"kind": "existing", "id": "cr-0abc", "instanceType": "p5.48xlarge"}
    settings = model.model_validate(
        {"reservation": {**existing, "availabilityZone": "us-east-1a", "instanceCount": 1}}
    )
    assert settings.to_args(vpc_id="v").reservation == ExistingCapacityReservation(
        id="cr-0abc", instance_type="p5.48xlarge", availability_zone="us-east-1a", instance_count=1
    )


def test_args_model_rejects_an_unknown_kind_naming_the_kinds():
    with pytest.raises(ValidationError) as caught:
        _model().model_validate({"reservation": {"kind": "spare"}})
    (error,) = caught.value.errors()
    assert error["type"] == "union_tag_invalid"
    assert error["ctx"]["expected_tags"] == "'new', 'existing', 'capacity-block'"


def test_config_path_drops_the_union_tag_and_ends_in_the_members_model():
    model = _model()
    with pytest.raises(ValidationError) as caught:
        model.model_validate({"reservation": {"kind": "capacity-block", "availabilityZone": "us-east-1a"}})
    locs = {e["loc"] for e in caught.value.errors()}
    assert ("reservation", "capacity-block", "instanceCount") in locs
    path, ends = config_path(model, ("reservation", "capacity-block", "instanceCount"))
    assert (path, ends) == (("reservation", "instanceCount"), None)
    assert config_path(model, ("reservation", "capacity-block"))[1].__name__ == "CapacityBlockSettings"
    assert config_path(model, ("model",))[1].__name__ == "ServedModelSettings"


def test_args_model_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValidationError) as caught:
        _model().model_validate({"rootVolumeGib": 10, "disk": "st1", "instanceTyp": "p5.48xlarge"})
    assert {e["type"] for e in caught.value.errors()} == {"greater_than_equal", "enum", "extra_forbidden"}


def test_args_model_uses_a_given_model_for_a_nested_dataclass():
    class Served(args_model(ServedModel)):
        """With a stack-only check."""

    model = args_model(MiniFleetArgs, kinds=KINDS, models={ServedModel: Served})
    settings = model.model_validate({"model": {"name": "llama-3.1-8b", "contextTokens": 1, "concurrency": 1}})
    assert type(settings.model) is Served
    assert settings.to_args(vpc_id="v").model.context_tokens == 1


def test_args_model_stack_options_exclude_default_document_and_constrain():
    model = args_model(
        MiniFleetArgs,
        kinds=KINDS,
        exclude={"subnet_ids"},
        defaults={"serving_port": 9000},
        docs={"disk": "The stack's disk."},
        notes={"tags": "Merged with extraTags."},
        constraints={"instance_type": {"pattern": r"^[a-z0-9]+\.[a-z0-9]+$"}},
    )
    properties = model.model_json_schema(by_alias=True)["properties"]
    assert "subnetIds" not in properties
    assert properties["servingPort"]["default"] == 9000
    assert properties["disk"]["description"] == "The stack's disk."
    assert properties["tags"]["description"].endswith("Merged with extraTags.")
    with pytest.raises(ValidationError, match="String should match pattern"):
        model.model_validate({"instanceType": "p5"})


def test_args_model_rejects_options_naming_no_input():
    with pytest.raises(
        TypeError, match=r"args_model\(MiniFleetArgs, exclude=\.\.\.\): no input named subnets"
    ):
        args_model(MiniFleetArgs, kinds=KINDS, exclude={"subnets"})


def test_args_model_rejects_an_input_the_config_cannot_hold():
    @dataclass(frozen=True, kw_only=True)
    class HookArgs:
        on_ready: Callable[[str], None] | None = arg(None, "Called when ready.")

    with pytest.raises(TypeError, match=r"HookArgs\.on_ready: the stack config cannot hold"):
        args_model(HookArgs)
    assert "onReady" not in args_model(HookArgs, exclude={"on_ready"}).model_json_schema()["properties"]


def test_args_model_accepts_the_args_old_input_names_as_old_keys():
    model = _model()
    values, renames = rename_keys(model, {"extraTags": {"Team": "ml"}, "inferencePort": 9000})
    assert values == {"tags": {"Team": "ml"}, "servingPort": 9000}
    assert [(r.old, r.new, r.clash) for r in renames] == [
        ("extraTags", "tags", False),
        ("inferencePort", "servingPort", False),
    ]
    with pytest.warns(DeprecationWarning, match="inferencePort is deprecated; use servingPort"):
        assert model.model_validate({"inferencePort": 9000}).serving_port == 9000


def test_args_model_old_keys_with_a_new_shape_convert():
    def capacity(value: str, section: dict[str, object]) -> dict[str, object]:
        return {"count": section.pop("count", 1), "capacity_order": [value]}

    model = args_model(
        MiniFleetArgs, kinds=KINDS, renamed=[RenamedKey("capacity", "count", convert=capacity)]
    )
    values, renames = rename_keys(model, {"count": 2, "capacity": "spot"}, "gcpGpuFleets[0]")
    assert values == {"count": 2, "capacityOrder": ["spot"]}
    assert [(r.old, r.new, r.clash) for r in renames] == [
        ("gcpGpuFleets[0].capacity", "gcpGpuFleets[0].count", False)
    ]
    assert model.model_validate(values).to_args(vpc_id="v").capacity_order == [CapacityMode.SPOT]


def test_rename_keys_finds_old_keys_in_nested_sections_and_reports_clashes():
    class Root(args_model(MiniFleetArgs, kinds=KINDS)):
        pass

    @dataclass(frozen=True, kw_only=True)
    class StackArgs:
        fleets: Sequence[MiniFleetArgs] = arg((), "Fleets.")

    model = args_model(StackArgs, models={MiniFleetArgs: Root})
    values, renames = rename_keys(
        model, {"fleets": [{"servingPort": 1, "inferencePort": 2}, {"extraTags": {}}]}
    )
    assert values == {"fleets": [{"servingPort": 1}, {"tags": {}}]}
    assert [(r.old, r.new, r.value, r.clash) for r in renames] == [
        ("fleets[0].inferencePort", "fleets[0].servingPort", 2, True),
        ("fleets[1].extraTags", "fleets[1].tags", {}, False),
    ]


@dataclass(frozen=True, kw_only=True)
class Limits:
    low: int = arg(1, "Low.")
    high: int = arg(9, "High.")


@dataclass(frozen=True, kw_only=True)
class WithLimits:
    limits: Limits = arg(factory=Limits, doc="Limits.")


def test_args_model_nested_dataclass_default_becomes_settings():
    model = args_model(WithLimits)
    assert model.model_validate({"limits": {"high": 5}}).to_args() == WithLimits(limits=Limits(low=1, high=5))
    assert model().to_args() == WithLimits()
    assert type(model().limits).__name__ == "LimitsSettings"
