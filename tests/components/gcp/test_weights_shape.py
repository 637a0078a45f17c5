"""GcsWeights pins one folder with a string, as S3Weights does; the folder -> digest map (the older
shape, still accepted) pins several (issue #35 item 7)."""

from __future__ import annotations

import dataclasses

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp import GcsWeights, GpuFleet, GpuFleetArgs
from inference_infra.components.gcp.fleet_common import pin_problems
from inference_infra.components.resources import GCP_INSTANCE

FOLDER = "gs://acme-models/llama-3.1-8b-instruct"
OTHER = "gs://acme-models/mistral-7b-instruct"
PIN = "5c" * 32
SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"


def test_weights_shape_a_string_pins_the_one_folder_like_s3weights():
    weights = GcsWeights(bucket="acme-models", uris=[FOLDER], manifest_sha256=PIN)
    assert weights.pins() == {FOLDER: PIN}
    assert weights.pinned(FOLDER + "/") == PIN
    assert pin_problems(weights) == []


def test_weights_shape_the_map_still_pins_one_or_several_folders():
    one = GcsWeights(bucket="acme-models", uris=[FOLDER], manifest_sha256={FOLDER: PIN})
    several = GcsWeights(
        bucket="acme-models", uris=[FOLDER, OTHER], manifest_sha256={FOLDER: PIN, OTHER: PIN}
    )
    assert one.pins() == {FOLDER: PIN}
    assert pin_problems(one) == pin_problems(several) == []


def test_weights_shape_rejects_one_string_for_several_folders_as_one_problem():
    [problem] = pin_problems(GcsWeights(bucket="acme-models", uris=[FOLDER, OTHER], manifest_sha256=PIN))
    assert problem.input == "weights.manifest_sha256"
    assert "is one digest for 2 folders" in problem.allowed


def test_weights_shape_both_shapes_plan_the_same_boot(plan_of):
    def fleet(name: str, pinned) -> GpuFleetArgs:
        weights = GcsWeights(bucket="acme-models", uris=[FOLDER], manifest_sha256=pinned)
        return GpuFleetArgs(
            machine_type="g2-standard-8", zone="us-central1-b", subnetwork=SUBNET, spot=1, weights=weights
        )

    GpuFleet("as-string", fleet("as-string", PIN))
    GpuFleet("as-map", fleet("as-map", {FOLDER: PIN}))
    GpuFleet("other-pin", fleet("other-pin", "ab" * 32))
    vms = {vm.name: vm for vm in plan_of().of_type(GCP_INSTANCE)}
    scripts = [
        vms[f"{n}-0"].props["metadata"]["startup-script"].replace(n, "X")
        for n in ("as-string", "as-map", "other-pin")
    ]
    assert scripts[0] == scripts[1]
    assert scripts[2] != scripts[0]  # the pin reaches the boot


def test_weights_shape_rejects_a_string_pin_with_no_folder(plan_of):
    weights = GcsWeights(bucket="acme-models", manifest_sha256=PIN)
    args = GpuFleetArgs(
        machine_type="g2-standard-8", zone="us-central1-b", subnetwork=SUBNET, spot=1, weights=weights
    )
    with pytest.raises(InputError, match=r"weights.manifest_sha256 .* is one digest for 0 folders"):
        GpuFleet("bare", dataclasses.replace(args))
