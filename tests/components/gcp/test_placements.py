"""GCP placements checked before anything is registered (issues #35 item 4, #33 item 8): a zone its
region lacks, a fleet outside its subnetwork's or the provider's region, a TPU generation or GPU
machine in a zone that does not offer it."""

from __future__ import annotations

import dataclasses

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp import GpuFleet, GpuFleetArgs, TpuVm, TpuVmArgs
from inference_infra.components.resources import GCP_INSTANCE, GCP_TPU_VM

NETWORK = "projects/test-project/global/networks/serving"
SUBNET = "projects/test-project/regions/us-central1/subnetworks/serving"


def tpu(**overrides) -> TpuVmArgs:
    base = TpuVmArgs(zone="us-central1-b", network=NETWORK, subnetwork=SUBNET, accelerator_type="v6e-4")
    return dataclasses.replace(base, **overrides)


def gpu(**overrides) -> GpuFleetArgs:
    base = GpuFleetArgs(machine_type="g2-standard-8", zone="us-central1-b", subnetwork=SUBNET, spot=1)
    return dataclasses.replace(base, **overrides)


def test_placements_tpu_vm_rejects_v6e_where_google_does_not_list_it(plan_of):
    with pytest.raises(
        InputError,
        match=r"zone 'us-central1-a' does not offer TPU v6e \(v6e-4\) \(in its region: us-central1-b\)",
    ):
        TpuVm("qwen", tpu(zone="us-central1-a"))
    assert [r.type for r in plan_of().resources if r.custom] == []


def test_placements_tpu_vm_plans_v6e_in_us_central1_b(plan_of):
    vm = plan_of(TpuVm("qwen", tpu())).one(GCP_TPU_VM)
    assert vm.props["zone"] == "us-central1-b"


@pytest.mark.stack_config({"gcp:region": "us-central1", "gcp:zone": "us-central1-a"})
def test_placements_tpu_vm_rejects_the_providers_default_zone_when_it_lacks_the_generation(plan_of):
    with pytest.raises(InputError, match=r"zone 'us-central1-a' does not offer TPU v6e"):
        TpuVm("qwen", tpu(zone=None))


def test_placements_gpu_fleet_rejects_a_zone_its_region_lacks(plan_of):
    with pytest.raises(InputError, match=r"zone 'europe-west9-z' is not a zone of europe-west9"):
        GpuFleet("l4", gpu(zone="europe-west9-z"))


def test_placements_gpu_fleet_rejects_an_unknown_region_with_did_you_mean(plan_of):
    with pytest.raises(InputError, match=r"unknown region 'us-centrl1' \(did you mean 'us-central1'"):
        GpuFleet("l4", gpu(zone="us-centrl1-a"))


def test_placements_gpu_fleet_rejects_a_zone_outside_its_subnetworks_region(plan_of):
    with pytest.raises(
        InputError, match=r"zone 'us-east4-a' is in us-east4, but the fleet's subnetwork .* is in us-central1"
    ):
        GpuFleet("l4", gpu(zone="us-east4-a"))
    assert [r.type for r in plan_of().resources if r.custom] == []


def test_placements_gpu_fleet_rejects_a_zone_outside_the_providers_region_when_the_subnetwork_is_wired(
    plan_of,
):
    import pulumi

    wired = pulumi.Output.from_input("projects/test-project/regions/us-central1/subnetworks/serving")
    with pytest.raises(InputError, match=r"outside the provider's region 'us-central1' \(gcp:region\)"):
        GpuFleet("l4", gpu(zone="us-east4-a", subnetwork=wired))


def test_placements_gpu_fleet_rejects_a_machine_its_zone_does_not_offer(plan_of):
    with pytest.raises(InputError, match=r"zone 'us-central1-f' does not offer a3-highgpu-8g"):
        GpuFleet("h100", gpu(machine_type="a3-highgpu-8g", zone="us-central1-f"))


def test_placements_gpu_fleet_plans_where_its_machine_is_offered(plan_of):
    vm = plan_of(GpuFleet("l4", gpu())).one(GCP_INSTANCE)
    assert vm.props["zone"] == "us-central1-b"


@pytest.mark.stack_config({"gcp:region": "us-centrall1"})
def test_placements_gpu_fleet_rejects_an_unknown_provider_region(plan_of):
    with pytest.raises(
        InputError, match=r"gcp:region \(the gcp provider's region\) 'us-centrall1' is an unknown region"
    ):
        GpuFleet("l4", gpu())
