"""The resource readers (components.resources): what a resource runs, from its engine-shaped props."""

from __future__ import annotations

import pytest

from inference_infra.components import resources
from inference_infra.components.catalog import Cloud
from inference_infra.components.resources import (
    AWS_CAPACITY_RESERVATION,
    AWS_INSTANCE,
    AWS_LAUNCH_TEMPLATE,
    GCP_INSTANCE,
    GCP_RESERVATION,
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
    UNKNOWN_VALUE,
    Purchase,
    accelerator_use,
    is_accelerator_instance,
    region_of_zone,
    tpu_slice_name,
)


def test_accelerator_use_reads_an_on_demand_gpu_instance():
    use = accelerator_use(AWS_INSTANCE, {"instanceType": "p5.48xlarge", "availabilityZone": "us-east-1b"})
    assert (use.cloud, use.machine_type, use.count, use.purchase) == (
        Cloud.AWS,
        "p5.48xlarge",
        1,
        Purchase.ON_DEMAND,
    )
    assert use.region == "us-east-1"


def test_accelerator_use_reads_spot_and_capacity_reservation_targets():
    spot = accelerator_use(
        AWS_INSTANCE, {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}}
    )
    assert spot.purchase is Purchase.SPOT
    reserved = accelerator_use(
        AWS_INSTANCE,
        {
            "instanceType": "p5.48xlarge",
            "capacityReservationSpecification": {
                "capacityReservationTarget": {"capacityReservationId": "cr-1"}
            },
        },
    )
    assert reserved.reservation_ref == "cr-1"


def test_accelerator_use_resolves_the_type_from_the_launch_template():
    template = {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}}
    use = accelerator_use(AWS_INSTANCE, {"launchTemplate": {"id": "lt-1"}}, lambda ref: template)
    assert (use.machine_type, use.purchase) == ("g5.xlarge", Purchase.SPOT)


def test_accelerator_use_ignores_cpu_and_unknown_types():
    assert accelerator_use(AWS_INSTANCE, {"instanceType": "m5.large"}) is None
    assert accelerator_use(AWS_INSTANCE, {"instanceType": UNKNOWN_VALUE}) is None
    assert accelerator_use("aws:s3/bucketV2:BucketV2", {}) is None


def test_accelerator_use_marks_templates_and_reservations():
    assert accelerator_use(AWS_LAUNCH_TEMPLATE, {"instanceType": "g5.xlarge"}).template
    cr = accelerator_use(AWS_CAPACITY_RESERVATION, {"instanceType": "p5.48xlarge", "instanceCount": 4})
    assert (cr.count, cr.reservation, cr.purchase) == (4, True, Purchase.RESERVED)


def test_accelerator_use_reads_gcp_vms_reservations_and_tpus():
    vm = accelerator_use(
        GCP_INSTANCE,
        {
            "machineType": "zones/us-central1-a/machineTypes/a3-highgpu-8g",
            "zone": "us-central1-a",
            "scheduling": {"provisioningModel": "SPOT"},
        },
    )
    assert (vm.machine_type, vm.purchase, vm.region) == ("a3-highgpu-8g", Purchase.SPOT, "us-central1")
    n1 = accelerator_use(
        GCP_INSTANCE,
        {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 2}]},
    )
    assert n1.guest_accelerators == (("nvidia-tesla-t4", 2),)
    reservation = accelerator_use(
        GCP_RESERVATION,
        {
            "zone": "us-central1-a",
            "specificReservation": {"count": 2, "instanceProperties": {"machineType": "a3-highgpu-8g"}},
        },
    )
    assert (reservation.count, reservation.reservation) == (2, True)
    tpu = accelerator_use(
        GCP_TPU_VM,
        {"acceleratorConfig": {"type": "V5LITE_POD", "topology": "2x4"}, "schedulingConfig": {"spot": True}},
    )
    assert (tpu.machine_type, tpu.purchase) == ("v5litepod-8", Purchase.SPOT)
    queued = accelerator_use(
        GCP_TPU_QUEUED_RESOURCE, {"tpu": {"nodeSpecs": [{"node": {"acceleratorType": "v6e-8"}}]}, "spot": {}}
    )
    assert (queued.machine_type, queued.purchase) == ("v6e-8", Purchase.SPOT)


def test_is_accelerator_instance_only_for_running_machines():
    assert is_accelerator_instance(AWS_INSTANCE, {"instanceType": "g5.xlarge"})
    assert is_accelerator_instance(GCP_TPU_VM, {})
    assert not is_accelerator_instance(AWS_LAUNCH_TEMPLATE, {"instanceType": "g5.xlarge"})
    assert not is_accelerator_instance(AWS_CAPACITY_RESERVATION, {"instanceType": "g5.xlarge"})


def test_region_of_zone_and_tpu_slice_names():
    assert region_of_zone("us-east-1a") == "us-east-1"
    assert region_of_zone("europe-west4-b") == "europe-west4"
    assert tpu_slice_name("V5P", "2x2x1") == "v5p-8"
    assert tpu_slice_name("V6E", "4x4") == "v6e-16"
    assert tpu_slice_name("V5LITE_POD", "axb") is None


def _batch(kind: str, types: list[str], **vcpus: int) -> dict:
    return {"computeResources": {"type": kind, "instanceTypes": types, **vcpus}}


def test_accelerator_use_counts_a_batch_environment_in_machines_of_its_smallest_gpu_type():
    use = accelerator_use(
        resources.AWS_BATCH_COMPUTE_ENVIRONMENT,
        _batch("SPOT", ["c5.large", "g5.2xlarge", "g5.xlarge"], minVcpus=0, desiredVcpus=6, maxVcpus=16),
    )
    assert use is not None
    assert (use.machine_type, use.count, use.min_count, use.max_count) == ("g5.xlarge", 2, 0, 4)
    assert use.purchase is resources.Purchase.SPOT


def test_accelerator_use_expands_batch_instance_families_from_the_catalog():
    use = accelerator_use(resources.AWS_BATCH_COMPUTE_ENVIRONMENT, _batch("EC2", ["g5"], maxVcpus=8))
    assert use is not None
    assert use.machine_type.startswith("g5.")
    assert (use.count, use.purchase) == (0, resources.Purchase.ON_DEMAND)  # desired defaults to min


@pytest.mark.parametrize(
    "props",
    [
        _batch("FARGATE", ["g5.xlarge"], maxVcpus=8),
        _batch("EC2", ["optimal"], maxVcpus=8),
        _batch("EC2", ["c5", "m5.large"], maxVcpus=8),
        {"type": "UNMANAGED"},
    ],
)
def test_accelerator_use_ignores_batch_environments_without_accelerator_types(props):
    assert accelerator_use(resources.AWS_BATCH_COMPUTE_ENVIRONMENT, props) is None


def test_accelerator_use_counts_a_gke_pool_per_zone_of_its_node_locations():
    props = {
        "nodeLocations": ["us-central1-a", "us-central1-b", "us-central1-c"],
        "nodeCount": 1,
        "nodeConfig": {
            "machineType": "g2-standard-8",
            "guestAccelerators": [{"type": "nvidia-l4", "count": 1}],
        },
        "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 6},
    }
    use = accelerator_use(resources.GCP_GKE_NODE_POOL, props)
    assert use is not None
    assert (use.count, use.min_count, use.max_count) == (3, 0, 6)  # totals are for the whole pool
    per_zone = {**props, "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2}}
    use = accelerator_use(resources.GCP_GKE_NODE_POOL, per_zone)
    assert use is not None
    assert (use.count, use.min_count, use.max_count) == (3, 3, 6)


@pytest.mark.parametrize("name", ["p3.16xlarge", "g5g.xlarge", "g4ad.xlarge", "inf1.xlarge", "trn2.48xlarge"])
def test_accelerator_use_reads_accelerated_families_the_catalog_lacks(name):
    use = accelerator_use(AWS_INSTANCE, {"instanceType": name})
    assert use is not None
    assert use.machine_type == name
    assert not use.in_catalog


@pytest.mark.parametrize("name", ["m5.large", "c7g.large", "t3.medium", "r7g.large", "i4i.large"])
def test_accelerator_use_still_ignores_cpu_families(name):
    assert accelerator_use(AWS_INSTANCE, {"instanceType": name}) is None


@pytest.mark.parametrize("name", ["a3-ultragpu-8g", "a4-highgpu-8g", "g4-standard-48"])
def test_accelerator_use_reads_gce_accelerator_optimized_types_the_catalog_lacks(name):
    use = accelerator_use(GCP_INSTANCE, {"machineType": name, "zone": "us-central1-a"})
    assert use is not None
    assert use.machine_type == name
    assert accelerator_use(GCP_INSTANCE, {"machineType": "n2-standard-8", "zone": "us-central1-a"}) is None
