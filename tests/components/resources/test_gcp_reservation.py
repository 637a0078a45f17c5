"""The inventory reads N1 reservations, whose GPUs are spelled acceleratorType/acceleratorCount."""

from __future__ import annotations

from inference_infra.components.resources import GCP_INSTANCE, GCP_RESERVATION, Purchase, accelerator_use


def test_inventory_reads_guest_gpus_of_an_n1_reservation():
    props = {
        "zone": "us-central1-a",
        "specificReservation": {
            "count": 3,
            "instanceProperties": {
                "machineType": "n1-standard-8",
                "guestAccelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 2}],
            },
        },
    }
    use = accelerator_use(GCP_RESERVATION, props)
    assert use is not None
    assert (use.machine_type, use.count, use.purchase) == ("n1-standard-8", 3, Purchase.RESERVED)
    assert use.guest_accelerators == (("nvidia-tesla-t4", 2),)


def test_inventory_still_reads_instance_guest_gpus():
    props = {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 4}]}
    assert accelerator_use(GCP_INSTANCE, props).guest_accelerators == (("nvidia-tesla-t4", 4),)


def test_inventory_ignores_an_n1_reservation_without_gpus():
    props = {"specificReservation": {"count": 1, "instanceProperties": {"machineType": "n1-standard-8"}}}
    assert accelerator_use(GCP_RESERVATION, props) is None
