"""Args inputs carry their description once; old input names work for a release with a warning."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from inference_infra.components.arguments import Renamed, arg, doc_of, renamed_input_names, renamed_inputs


@renamed_inputs(Renamed("inference_port", "serving_port"))
@dataclass(frozen=True, kw_only=True)
class BaseArgs:
    serving_port: int = arg(8000, "The first engine's port.", ge=1, le=65535)
    vpc_id: str = arg("vpc-1", "Wired by the stack.", stack=False)


def _spot(value: str, _: object) -> dict[str, int]:
    return {"spot": 1} if value == "spot" else {"on_demand": 1}


@renamed_inputs(Renamed("capacity", "spot/on_demand", convert=_spot))
@dataclass(frozen=True, kw_only=True)
class ChildArgs(BaseArgs):
    spot: int = 0
    on_demand: int = 0


def test_arg_keeps_description_and_bounds() -> None:
    field = next(f for f in dataclasses.fields(BaseArgs) if f.name == "serving_port")
    assert (field.metadata["doc"], field.metadata["ge"], field.metadata["le"]) == (
        "The first engine's port.",
        1,
        65535,
    )
    assert doc_of(BaseArgs, "serving_port") == "The first engine's port."
    assert next(f for f in dataclasses.fields(BaseArgs) if f.name == "vpc_id").metadata["stack"] is False


def test_renamed_inputs_accept_the_old_name_with_a_deprecation_warning() -> None:
    with pytest.warns(
        DeprecationWarning, match=r"BaseArgs\(inference_port=\.\.\.\) is deprecated.*use serving_port"
    ):
        args = BaseArgs(inference_port=9000)
    assert args.serving_port == 9000


def test_renamed_inputs_old_attribute_reads_warn() -> None:
    args = BaseArgs(serving_port=9001)
    with pytest.warns(DeprecationWarning, match="use serving_port"):
        assert args.inference_port == 9001


def test_renamed_inputs_apply_to_subclasses_and_convert_shapes() -> None:
    with pytest.warns(DeprecationWarning, match="deprecated"):
        args = ChildArgs(capacity="spot", inference_port=8100)
    assert (args.spot, args.on_demand, args.serving_port) == (1, 0, 8100)
    assert renamed_input_names(ChildArgs) == {"inference_port": "serving_port", "capacity": "spot/on_demand"}


def test_renamed_inputs_rejects_old_and_new_together() -> None:
    with pytest.raises(TypeError, match="'inference_port' is the old name of 'serving_port'"):
        BaseArgs(inference_port=9000, serving_port=9001)


def test_renamed_inputs_unknown_attribute_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = BaseArgs().nope  # type: ignore[attr-defined]
