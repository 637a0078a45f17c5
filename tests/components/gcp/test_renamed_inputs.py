"""The previous release's GCP input names: each still works for one release, with a DeprecationWarning
that names the new one; the new vocabulary's capacity rules (one mode per fleet, reservations)."""

from __future__ import annotations

import dataclasses
import importlib
import warnings

import pytest

from inference_infra.components.arguments import doc_of
from inference_infra.components.fleet import CapacityMode, ServedModel
from inference_infra.components.gcp.fleet_common import GcpNodeArgs
from inference_infra.components.gcp.gpu_fleet import (
    GcsWeights,
    GpuFleet,
    GpuFleetArgs,
    GpuReservation,
    validate_gpu_fleet,
)
from inference_infra.components.gcp.tpu_vm import TpuVm, TpuVmArgs
from inference_infra.components.resources import GCP_INSTANCE, GCP_RESERVATION, GCP_TPU_VM
from inference_infra.components.serving import plan_engines
from tests.components.gcp.helpers import pinned_weights

SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
NETWORK = "projects/test-project/global/networks/gpu"
GPU = {"machine_type": "g2-standard-8", "zone": "us-central1-a", "subnetwork": SUBNET}
TPU = {"zone": "us-central1-a", "network": NETWORK, "subnetwork": SUBNET, "accelerator_type": "v5litepod-4"}


def deprecations(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def build(cls, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        args = cls(**kwargs)
    return args, deprecations(caught)


# --- GpuFleetArgs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "count", "expected"),
    [
        (CapacityMode.SPOT, None, {"spot": 1}),
        (CapacityMode.SPOT, 3, {"spot": 3}),
        (CapacityMode.ON_DEMAND, 2, {"on_demand": 2}),
        (CapacityMode.RESERVED, 2, {"reserved": 2}),
    ],
)
def test_gpu_fleet_old_capacity_is_count_in_that_mode(mode, count, expected):
    more = {} if count is None else {"count": count}
    args, said = build(GpuFleetArgs, **GPU, capacity=mode, **more)
    assert said == [
        "GpuFleetArgs(capacity=...) is deprecated since 0.2.0 and goes in the next release; use count and "
        "capacity_order (or spot, on_demand, reserved)"
    ]
    assert args.capacity_order == (mode,)
    assert {k: v for k, v in dataclasses.asdict(args.counts(args.count or 0)[0]).items() if v} == expected


def test_gpu_fleet_old_reserved_capacity_still_makes_its_reservation(plan_of):
    args, _ = build(GpuFleetArgs, **{**GPU, "machine_type": "a3-highgpu-8g"}, capacity="reserved", count=2)
    assert args.reservation == GpuReservation()
    capture = plan_of(GpuFleet("h100", args))
    assert capture.one(GCP_RESERVATION).props["specificReservation"]["count"] == 2
    assert len(capture.of_type(GCP_INSTANCE)) == 2


def test_gpu_fleet_old_capacity_keeps_a_reservation_given_with_it():
    reservation = GpuReservation(existing_name="pool")
    args, _ = build(GpuFleetArgs, **GPU, capacity="reserved", reservation=reservation)
    assert args.reservation is reservation


def test_gpu_fleet_old_capacity_enum_is_capacity_mode():
    module = importlib.import_module("inference_infra.components.gcp")
    with pytest.warns(DeprecationWarning, match=r"gcp.Capacity is deprecated .* use .*fleet.CapacityMode"):
        capacity = module.Capacity
    assert capacity is CapacityMode


@pytest.mark.parametrize(
    ("old", "new", "value", "read"),
    [
        ("client_ranges", "client_cidr_blocks", ("10.0.0.0/8",), ("10.0.0.0/8",)),
        ("monitoring_ranges", "monitoring_cidr_blocks", ("10.8.0.0/14",), ("10.8.0.0/14",)),
        ("labels", "tags", {"team": "ml"}, {"team": "ml"}),
    ],
)
@pytest.mark.parametrize("cls", [GpuFleetArgs, TpuVmArgs])
def test_gcp_node_old_input_names_warn_and_move(cls, old, new, value, read):
    base = {**(GPU if cls is GpuFleetArgs else TPU), "spot": 1}
    args, said = build(cls, **base, **{old: value})
    assert said == [
        f"{cls.__name__}({old}=...) is deprecated since 0.2.0 and goes in the next release; use {new}"
    ]
    assert getattr(args, new) == read
    with pytest.warns(DeprecationWarning, match=rf"{cls.__name__}.{old} is deprecated; use {new}"):
        assert getattr(args, old) == read


@pytest.mark.parametrize("cls", [GpuFleetArgs, TpuVmArgs])
def test_gcp_node_old_model_bucket_and_uris_become_weights(cls):
    base = {**(GPU if cls is GpuFleetArgs else TPU), "spot": 1}
    args, said = build(cls, **base, model_uris=["gs://models/a"], model_bucket="models")
    assert args.weights == GcsWeights("models", ("gs://models/a",))
    assert len(said) == 2
    assert all(m.endswith("use weights") for m in said)
    with pytest.warns(
        DeprecationWarning, match=rf"{cls.__name__}.model_uris is deprecated; use weights.uris"
    ):
        assert args.model_uris == ("gs://models/a",)  # old reads still answer
    with pytest.warns(
        DeprecationWarning, match=rf"{cls.__name__}.model_bucket is deprecated; use weights.bucket"
    ):
        assert args.model_bucket == "models"


def test_gpu_fleet_old_model_bucket_alone_grants_the_whole_bucket(plan_of):
    args, _ = build(GpuFleetArgs, **GPU, spot=1, model_bucket="models")
    assert args.weights == GcsWeights("models", ())
    capture = plan_of(GpuFleet("l4", args))
    grant = capture.one("gcp:storage/bucketIAMMember:BucketIAMMember").props
    assert grant["bucket"] == "models"
    assert "condition" not in grant


def test_gpu_fleet_old_model_uris_without_a_bucket_are_refused_by_input():
    args, _ = build(GpuFleetArgs, **GPU, spot=1, model_uris=["gs://models/a"])
    problems = validate_gpu_fleet("l4", args, project="test-project")
    assert [(p.input, p.value) for p in problems] == [
        ("weights.bucket", ""),
        ("weights.uris[0]", "gs://models/a"),
        # The previous release had no pinned manifests: the fleet asks for one.
        ("weights.manifest_sha256['gs://models/a']", None),
    ]


def test_gcp_node_rejects_an_old_and_a_new_name_together():
    with pytest.raises(TypeError, match=r"'labels' is the old name of 'tags'; give one of them, not both"):
        GpuFleetArgs(**GPU, spot=1, labels={"a": "b"}, tags={"c": "d"})
    with pytest.raises(TypeError, match=r"'model_bucket' is the old name of 'weights'"):
        GpuFleetArgs(**GPU, spot=1, model_bucket="m", weights=GcsWeights("m"))


def test_gpu_fleet_old_engines_input_warns_and_still_serves(plan_of):
    engines = plan_engines(
        model="llama-3.1-8b",
        traffic=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8).traffic(),
        precision=None,
        instance_type_name="g2-standard-8",
        cloud="gcp",
    )
    args, said = build(
        GpuFleetArgs, **GPU, spot=1, engines=engines, weights=pinned_weights("models", ["gs://models/llama"])
    )
    assert said == [
        "GpuFleetArgs(engines=...) is deprecated since 0.2.0 and goes in the next release; use "
        "model=ServedModel(...): the component plans its engines"
    ]
    fleet = GpuFleet("l4", args)
    script = plan_of().one(GCP_INSTANCE).props["metadata"]["startup-script"]
    assert "systemctl start --no-block inference-engine@0.service" in script
    assert fleet.engines is engines
    assert fleet.cold_start is None  # only a planned model has an estimate


def test_gpu_fleet_rejects_old_engines_and_a_model_together():
    engines = plan_engines(
        model="llama-3.1-8b",
        traffic=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8).traffic(),
        precision=None,
        instance_type_name="g2-standard-8",
        cloud="gcp",
    )
    args, _ = build(
        GpuFleetArgs,
        **GPU,
        spot=1,
        engines=engines,
        model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8),
        weights=pinned_weights("models", ["gs://models/llama"]),
    )
    problems = validate_gpu_fleet("l4", args, project="test-project")
    assert [p.input for p in problems] == ["engines"]
    assert "give model (the component plans the engines) or engines, not both" in problems[0].allowed


# --- the new capacity vocabulary on a GCP GPU fleet --------------------------------------------


@pytest.mark.parametrize(
    ("capacity", "key", "message"),
    [
        (
            {"preemptible": 1},
            "preemptible",
            "is not offered here: preemptible VMs are the older form of Spot",
        ),
        (
            {"spot": 1, "on_demand": 1},
            "capacity",
            "must use one mode: a GCP fleet's VMs carry one capacity label",
        ),
        ({"reserved": 1}, "reserved", "needs a reservation: reservation=GpuReservation() makes one"),
        ({}, "reserved + spot + on_demand", "must be at least 1 (or set count)"),
        (
            {"count": 3, "max_spot": 1, "capacity_order": (CapacityMode.SPOT,)},
            "count",
            "leaves 2 machine(s) unplaced",
        ),
    ],
)
def test_gpu_fleet_rejects_capacity_a_gcp_fleet_cannot_buy(capacity, key, message):
    problems = validate_gpu_fleet("l4", GpuFleetArgs(**GPU, **capacity), project="test-project")
    assert [(p.input, message in p.allowed) for p in problems] == [(key, True)]


def test_gpu_fleet_count_fills_the_reservation_first(plan_of):
    args = GpuFleetArgs(
        **{**GPU, "machine_type": "a3-highgpu-8g"},
        count=2,
        capacity_order=(CapacityMode.RESERVED, CapacityMode.SPOT),
        reservation=GpuReservation(),
    )
    fleet = GpuFleet("h100", args)
    capture = plan_of()
    assert fleet.mode is CapacityMode.RESERVED
    assert capture.one(GCP_RESERVATION).props["specificReservation"]["count"] == 2


def test_gpu_fleet_count_along_the_default_order_without_a_reservation_is_spot(plan_of):
    fleet = GpuFleet("l4", GpuFleetArgs(**GPU, count=2))
    capture = plan_of()
    assert fleet.mode is CapacityMode.SPOT
    assert {vm.props["scheduling"]["provisioningModel"] for vm in capture.of_type(GCP_INSTANCE)} == {"SPOT"}


# --- TpuVmArgs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(CapacityMode))
def test_tpu_vm_old_scheduling_is_one_slice_of_that_mode(plan_of, mode):
    args, said = build(TpuVmArgs, **TPU, scheduling=mode.value)
    assert said == [
        "TpuVmArgs(scheduling=...) is deprecated since 0.2.0 and goes in the next release; use on_demand, "
        "spot, preemptible or reserved (=1: one slice)"
    ]
    slice_ = TpuVm("t", args)
    assert slice_.mode is mode
    assert plan_of().one(GCP_TPU_VM).props["labels"]["capacity"] == mode.value


def test_tpu_vm_old_scheduling_enum_is_capacity_mode():
    module = importlib.import_module("inference_infra.components.gcp")
    with pytest.warns(DeprecationWarning, match=r"gcp.TpuScheduling is deprecated .* use .*CapacityMode"):
        scheduling = module.TpuScheduling
    assert scheduling.SPOT is CapacityMode.SPOT


# --- every input a stack may set has a description ----------------------------------------------


@pytest.mark.parametrize("cls", [GcpNodeArgs, GpuFleetArgs, TpuVmArgs, GpuReservation, GcsWeights])
def test_gcp_fleet_args_describe_every_stack_input(cls):
    missing = [
        f.name
        for f in dataclasses.fields(cls)
        if f.metadata.get("stack", True) and len(doc_of(cls, f.name)) < 12
    ]
    assert missing == []


@pytest.mark.stack_config({"gcp:zone": "", "gcp:region": "us-east1"})
def test_gcp_node_without_a_zone_takes_the_providers_regions_first_zone(plan_of):
    # us-east1 has zones b, c and d (catalog.zones): its first, not a zone a that does not exist
    subnet = SUBNET.replace("us-central1", "us-east1")  # a VM attaches to a subnetwork of its region
    fleet = GpuFleet("l4", GpuFleetArgs(**{**GPU, "zone": None, "subnetwork": subnet}, spot=1))
    assert fleet.zone == "us-east1-b"
    assert plan_of().one(GCP_INSTANCE).props["zone"] == "us-east1-b"


@pytest.mark.stack_config({"gcp:zone": "", "gcp:region": "us-west4"})
def test_gcp_node_without_a_zone_takes_region_a_where_it_exists(plan_of):
    subnet = SUBNET.replace("us-central1", "us-west4")
    fleet = GpuFleet("l4", GpuFleetArgs(**{**GPU, "zone": None, "subnetwork": subnet}, spot=1))
    assert fleet.zone == "us-west4-a"


@pytest.mark.stack_config({"gcp:zone": "", "gcp:region": ""})
def test_gcp_node_rejects_a_missing_zone(plan_of):
    from inference_infra.components.errors import InputError

    with pytest.raises(InputError, match=r"zone \(unset\) is required: pass zone or set the gcp:zone"):
        TpuVm("t", TpuVmArgs(**{**TPU, "zone": None}))
