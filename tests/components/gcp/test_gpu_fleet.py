"""GpuFleet (GCP): what the engine receives, and every input it refuses."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from inference_infra.components.catalog.gcp import N1MachinePrice
from inference_infra.components.errors import InputError
from inference_infra.components.gcp.gpu_fleet import (
    DEFAULT_IMAGE,
    RESERVATION_KEY,
    GcsWeights,
    GpuFleet,
    GpuFleetArgs,
    GpuReservation,
)
from inference_infra.components.gcp.service_account import MODEL_BUCKET_ROLE, NODE_SCOPES, PROJECT_ROLES
from inference_infra.components.gcp.startup import CACHE_METADATA_KEY
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.resources import GCP_INSTANCE, GCP_RESERVATION, Purchase, accelerator_use
from tests.components.gcp.helpers import pinned_weights

INSTANCE = GCP_INSTANCE
RESERVATION = GCP_RESERVATION
SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
NETWORK = "projects/test-project/global/networks/gpu"


def args(**overrides) -> GpuFleetArgs:
    base = GpuFleetArgs(machine_type="g2-standard-8", zone="us-central1-a", subnetwork=SUBNET, spot=1)
    return dataclasses.replace(base, **overrides)


def vms(plan):
    return sorted(plan.of_type(INSTANCE), key=lambda r: r.name)


# --- what the engine receives ----------------------------------------------------------------


def test_gpu_fleet_spot_vms_stop_on_preemption(plan_of):
    plan = plan_of(GpuFleet("l4", args(spot=2)))
    assert [vm.name for vm in vms(plan)] == ["l4-0", "l4-1"]
    for vm in vms(plan):
        assert vm.props["scheduling"] == {
            "provisioningModel": "SPOT",
            "preemptible": True,
            "automaticRestart": False,
            "onHostMaintenance": "TERMINATE",
            "instanceTerminationAction": "STOP",
        }
        assert vm.props["reservationAffinity"] == {"type": "NO_RESERVATION"}
    assert plan.of_type(RESERVATION) == []


def test_gpu_fleet_on_demand_vms_restart_and_terminate_on_maintenance(plan_of):
    vm = vms(plan_of(GpuFleet("l4", args(spot=0, on_demand=1))))[0]
    assert vm.props["scheduling"]["provisioningModel"] == "STANDARD"
    assert vm.props["scheduling"]["automaticRestart"] is True
    assert vm.props["scheduling"]["onHostMaintenance"] == "TERMINATE"


def test_gpu_fleet_reserved_makes_a_specific_reservation_and_consumes_it(plan_of):
    plan = plan_of(
        GpuFleet("h100", args(machine_type="a3-highgpu-8g", spot=0, reserved=2, reservation=GpuReservation()))
    )
    reservation = plan.one(RESERVATION)
    assert reservation.props["specificReservationRequired"] is True
    assert reservation.props["zone"] == "us-central1-a"
    assert reservation.props["specificReservation"]["count"] == 2
    assert reservation.props["specificReservation"]["instanceProperties"]["machineType"] == "a3-highgpu-8g"
    for vm in vms(plan):
        assert vm.props["reservationAffinity"] == {
            "type": "SPECIFIC_RESERVATION",
            "specificReservation": {"key": RESERVATION_KEY, "values": [reservation.props["name"]]},
        }
        assert reservation.urn in vm.dependencies


def test_gpu_fleet_reserved_is_priced_once_at_the_reservation(plan_of):
    plan = plan_of(
        GpuFleet("h100", args(machine_type="a3-highgpu-8g", spot=0, reserved=2, reservation=GpuReservation()))
    )
    items = price_capture(plan).items
    by_name = {i.urn.rsplit("::", 1)[-1]: i for i in items if i.category == "accelerator"}
    assert by_name["h100-0"].hourly_usd == 0.0
    assert by_name["h100-1"].hourly_usd == 0.0
    assert by_name["h100-reservation"].hourly_usd == pytest.approx(2 * 8 * 11.06125)
    assert "reserved capacity" in by_name["h100-reservation"].basis


def test_gpu_fleet_consumes_an_existing_reservation_without_making_one(plan_of):
    reservation = GpuReservation(existing_name="team-h100-pool", count=4)
    plan = plan_of(
        GpuFleet("h100", args(machine_type="a3-highgpu-8g", spot=0, reserved=1, reservation=reservation))
    )
    assert plan.of_type(RESERVATION) == []
    affinity = vms(plan)[0].props["reservationAffinity"]
    assert affinity["specificReservation"]["values"] == ["team-h100-pool"]


def test_gpu_fleet_n1_attaches_guest_gpus_and_reserves_them_too(plan_of):
    fleet = args(
        machine_type="n1-standard-16",
        accelerator_type="nvidia-tesla-t4",
        accelerator_count=2,
        spot=0,
        reserved=1,
        reservation=GpuReservation(),
    )
    plan = plan_of(GpuFleet("t4", fleet))
    vm = vms(plan)[0]
    assert vm.props["guestAccelerators"] == [{"type": "nvidia-tesla-t4", "count": 2}]
    properties = plan.one(RESERVATION).props["specificReservation"]["instanceProperties"]
    assert properties["guestAccelerators"] == [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 2}]
    use = accelerator_use(RESERVATION, plan.one(RESERVATION).props)
    assert use.guest_accelerators == (("nvidia-tesla-t4", 2),)
    assert use.purchase is Purchase.RESERVED


def test_gpu_fleet_built_in_gpus_are_not_attached_again(plan_of):
    vm = vms(plan_of(GpuFleet("h100", args(machine_type="a3-highgpu-8g", accelerator_count=8))))[0]
    assert "guestAccelerators" not in vm.props
    assert vm.props["machineType"] == "a3-highgpu-8g"


def test_gpu_fleet_vms_are_shielded_private_and_os_login_only(plan_of):
    vm = vms(plan_of(GpuFleet("l4", args())))[0]
    assert vm.props["shieldedInstanceConfig"] == {
        "enableSecureBoot": True,
        "enableVtpm": True,
        "enableIntegrityMonitoring": True,
    }
    (nic,) = vm.props["networkInterfaces"]
    assert "accessConfigs" not in nic
    assert nic["subnetwork"] == SUBNET
    assert vm.props["metadata"]["block-project-ssh-keys"] == "true"
    assert vm.props["metadata"]["enable-oslogin"] == "TRUE"
    assert vm.props["bootDisk"]["initializeParams"]["image"] == DEFAULT_IMAGE


def test_gpu_fleet_boot_disk_takes_a_customer_managed_key(plan_of):
    key = "projects/test-project/locations/us-central1/keyRings/r/cryptoKeys/k"
    vm = vms(plan_of(GpuFleet("l4", args(kms_key=key))))[0]
    assert vm.props["bootDisk"]["kmsKeySelfLink"] == key


def test_gpu_fleet_runs_as_its_own_least_privilege_account(plan_of):
    plan = plan_of(GpuFleet("l4", args(weights=pinned_weights("acme-models", ["gs://acme-models/llama"]))))
    account = plan.one("gcp:serviceaccount/account:Account")
    email = f"{account.props['accountId']}@test-project.iam.gserviceaccount.com"
    vm = vms(plan)[0]
    assert vm.props["serviceAccount"] == {"email": email, "scopes": list(NODE_SCOPES)}
    assert "https://www.googleapis.com/auth/cloud-platform" not in NODE_SCOPES
    project_roles = sorted(r.props["role"] for r in plan.of_type("gcp:projects/iAMMember:IAMMember"))
    assert project_roles == sorted(PROJECT_ROLES)
    bucket_grant = plan.one("gcp:storage/bucketIAMMember:BucketIAMMember")
    props = dict(bucket_grant.props)
    condition = props.pop("condition")
    assert props == {
        "bucket": "acme-models",
        "role": MODEL_BUCKET_ROLE,
        "member": f"serviceAccount:{email}",
    }
    # Reads only the fleet's model folder (as the AWS roles are limited to their prefix).
    assert condition["expression"] == (
        'resource.name.startsWith("projects/_/buckets/acme-models/objects/llama/") || '
        '(resource.type == "storage.googleapis.com/Bucket" && '
        'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("llama/"))'
    )
    grants = {r.urn for r in plan.of_type("gcp:projects/iAMMember:IAMMember")} | {bucket_grant.urn}
    assert grants <= set(vm.dependencies)  # the roles exist before the VM boots


def test_gpu_fleet_without_weights_grants_no_storage_access(plan_of):
    plan = plan_of(GpuFleet("l4", args()))
    assert plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember") == []


def test_gpu_fleet_startup_script_raids_bundled_local_ssds(plan_of):
    vm = vms(plan_of(GpuFleet("h100", args(machine_type="a3-highgpu-8g"))))[0]
    script = vm.props["metadata"]["startup-script"]
    assert "LOCAL_SSD_COUNT=16" in script
    assert "\nsetup_local_ssd\n" in script
    assert "GPU_METRICS=true" in script
    assert "\nsetup_ops_agent ||" in script
    assert "scratchDisks" not in vm.props or vm.props["scratchDisks"] == []


def test_gpu_fleet_adds_local_ssds_to_types_without_them(plan_of):
    vm = vms(plan_of(GpuFleet("l4", args(local_ssd_count=1))))[0]
    assert vm.props["scratchDisks"] == [{"interface": "NVME"}]
    assert "LOCAL_SSD_COUNT=1" in vm.props["metadata"]["startup-script"]


def test_gpu_fleet_mounts_the_model_cache_named_in_metadata(plan_of):
    vm = vms(plan_of(GpuFleet("l4", args(model_cache_nfs="10.1.2.3:/models"))))[0]
    assert vm.props["metadata"][CACHE_METADATA_KEY] == "10.1.2.3:/models"
    assert "\nmount_model_cache\n" in vm.props["metadata"]["startup-script"]


def test_gpu_fleet_rejects_client_cidr_blocks_only_the_load_balancer_reaches_the_api(plan_of):
    with pytest.raises(InputError, match=r"client_cidr_blocks \['10.40.0.0/20'\] are refused: only the load"):
        GpuFleet("l4", args(network=NETWORK, client_cidr_blocks=("10.40.0.0/20",), serving_port=8080))


def test_gpu_fleet_without_monitoring_ranges_opens_nothing(plan_of):
    assert plan_of(GpuFleet("l4", args())).of_type("gcp:compute/firewall:Firewall") == []


def test_gpu_fleet_tags_reach_the_engine_as_labels_with_the_cost_labels(plan_of, tagged):
    vm = vms(plan_of(GpuFleet("l4", args(tags={"model": "llama-3-8b"}))))[0]
    assert vm.props["labels"] == {
        "cost-center": "ml-platform",
        "environment": "test",
        "owner": "ml-team_example_com",
        "auto-shutdown": "true",
        "component": "gpu-fleet",
        "fleet": "l4",
        "capacity": "spot",
        "model": "llama-3-8b",
    }


def test_gpu_fleet_auto_shutdown_of_its_own_wins_over_the_stack(plan_of, tagged):
    vm = vms(plan_of(GpuFleet("l4", args(auto_shutdown=False))))[0]
    assert vm.props["labels"]["auto-shutdown"] == "false"


def test_gpu_fleet_can_be_built_twice_in_one_stack(plan_of):
    plan = plan_of(GpuFleet("a", args()), GpuFleet("b", args()))
    assert [vm.name for vm in vms(plan)] == ["a-0", "b-0"]
    assert len({r.props["accountId"] for r in plan.of_type("gcp:serviceaccount/account:Account")}) == 2


def test_gpu_fleet_exposes_its_outputs(plan_of):
    plan = plan_of(
        GpuFleet("h100", args(machine_type="a3-highgpu-8g", spot=0, reserved=1, reservation=GpuReservation()))
    )
    fleet = plan.one("inference-infra:gcp:GpuFleet")
    assert fleet.outputs["reservation_name"] == "h100-reservation"
    assert fleet.outputs["service_account_email"].startswith("h100-sa@")
    assert len(fleet.outputs["internal_ips"]) == 1


# --- what it refuses ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"machine_type": "a3-highgpu-9g"}, r"machine_type 'a3-highgpu-9g' must be a GCP GPU machine type"),
        (
            {"machine_type": "v5litepod-8"},
            r"machine_type 'v5litepod-8' is a TPU slice; use inference_infra.components.gcp.TpuVm",
        ),
        (
            {"machine_type": "a3-highgpu-8g", "accelerator_count": 4},
            r"accelerator_count 4 does not match a3-highgpu-8g, which has 8 GPUs",
        ),
        (
            {"machine_type": "a3-highgpu-8g", "accelerator_type": "nvidia-l4"},
            r"accelerator_type 'nvidia-l4' does not match a3-highgpu-8g, which comes with 8 x nvidia-h100",
        ),
        (
            {"machine_type": "n1-standard-8"},
            r"accelerator_type \(unset\) is required with an N1 machine type",
        ),
        (
            {"machine_type": "n1-standard-8", "accelerator_type": "nvidia-tesla-t4", "accelerator_count": 3},
            r"accelerator_count 3 is not a valid count of nvidia-tesla-t4: one of 1, 2, 4",
        ),
        (
            {"machine_type": "n1-standard-8", "accelerator_type": "nvidia-tesla-k80"},
            r"accelerator_type 'nvidia-tesla-k80' is not an N1 GPU we know; one of nvidia-tesla-t4",
        ),
        (
            {"machine_type": "n1-standard-64", "accelerator_type": "nvidia-tesla-t4"},
            r"machine_type 'n1-standard-64' is not an N1 machine type we know; close matches: n1-standard-4",
        ),
        ({"zone": "us-central1"}, r"zone 'us-central1' must be a zone such as 'us-central1-a'"),
        ({"spot": 0}, r"reserved \+ spot \+ on_demand 0 must be at least 1 \(or set count\)"),
        ({"spot": 0, "count": 0}, r"count 0 must be at least 1"),
        (
            {"machine_type": "a3-highgpu-8g", "local_ssd_count": 2},
            r"local_ssd_count 2 must be 0: a3-highgpu-8g comes with 16 local SSDs of its own",
        ),
        ({"boot_disk_size_gib": 20}, r"boot_disk_size_gib 20 must be at least 50"),
        ({"tags": {"Team": "x"}}, r"tags key 'Team' must be a GCP label key"),
    ],
)
def test_gpu_fleet_rejects_bad_shapes(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        GpuFleet("fleet", args(**overrides))
    assert plan_of().of_type(INSTANCE) == []


def test_gpu_fleet_rejects_an_n1_too_large_for_its_gpus(plan_of, monkeypatch):
    big = N1MachinePrice(
        name="n1-standard-96", vcpus=96, memory_gib=360, hourly_usd={"us-central1": 4.56}, spot_discount=0.6,
        source="https://cloud.google.com/compute/vm-instance-pricing", as_of=date(2026, 11, 21),
    )  # fmt: skip
    monkeypatch.setattr("inference_infra.components.gcp.gpu_fleet.gcp_n1_machine", lambda name: big)
    with pytest.raises(
        InputError, match=r"is too large for 2 x nvidia-tesla-t4: at most 48 vCPUs and 312 GB"
    ):
        GpuFleet(
            "t4", args(machine_type="n1-standard-96", accelerator_type="nvidia-tesla-t4", accelerator_count=2)
        )
    GpuFleet(
        "t4", args(machine_type="n1-standard-96", accelerator_type="nvidia-tesla-t4", accelerator_count=4)
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"reservation": GpuReservation(count=2)},
            r"reservation .* cannot be used: Spot VMs never consume reservations",
        ),
        (
            {"spot": 0, "on_demand": 1, "reservation": GpuReservation()},
            r"reservation .* applies only to reserved VMs \(on-demand VMs never consume one",
        ),
        (
            {"spot": 0, "reserved": 1, "reservation": GpuReservation(zone="us-central1-b")},
            r"reservation.zone 'us-central1-b' must be the fleet's zone 'us-central1-a': a reservation is",
        ),
        (
            {"spot": 0, "reserved": 1, "reservation": GpuReservation(machine_type="a3-highgpu-8g")},
            r"reservation.machine_type 'a3-highgpu-8g' must be the fleet's machine type 'g2-standard-8'",
        ),
        (
            {"spot": 0, "reserved": 3, "reservation": GpuReservation(count=2)},
            r"reservation.count 2 must hold the whole fleet \(3 VMs\)",
        ),
        (
            {"spot": 0, "reserved": 1, "reservation": GpuReservation(existing_name="Team_Pool")},
            r"reservation.existing_name 'Team_Pool' must be a Compute Engine name",
        ),
    ],
)
def test_gpu_fleet_rejects_reservations_that_do_not_fit(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        GpuFleet("fleet", args(**overrides))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"monitoring_cidr_blocks": ("10.8.0.0/14",)}, r"network \(unset\) is required with monitoring"),
        (
            {"network": NETWORK, "monitoring_cidr_blocks": ("0.0.0.0/0",)},
            r"monitoring_cidr_blocks\[0\] '0.0.0.0/0' must be a private CIDR block",
        ),
        ({"serving_port": 0}, r"serving_port 0 is an engine port, .* must lie in 1024\.\.65535"),
    ],
)
def test_gpu_fleet_rejects_open_or_malformed_ingress(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        GpuFleet("fleet", args(**overrides))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"weights": pinned_weights("", ["gs://acme-models/llama"])},
            r"weights.bucket '' is required: the nodes may read only this bucket",
        ),
        (
            {"weights": pinned_weights("acme-models", ["gs://other/llama"])},
            r"weights.uris\[0\] 'gs://other/llama' is outside the model bucket 'acme-models'",
        ),
        (
            {"weights": pinned_weights("acme-models", ["s3://acme-models/llama"])},
            r"must be 'gs://<bucket>/<folder>', the folder a path of segments",
        ),
        (
            {
                "weights": pinned_weights(
                    "acme-models", ["gs://acme-models/a/llama", "gs://acme-models/b/llama"]
                )
            },
            r"name the folder 'llama' twice",
        ),
        (
            {"weights": GcsWeights("gs://acme-models")},
            r"weights.bucket 'gs://acme-models' must be a Cloud Storage bucket name",
        ),
    ],
)
def test_gpu_fleet_rejects_models_it_could_not_read(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        GpuFleet("fleet", args(**overrides))


def test_gpu_fleet_reports_every_problem_at_once(plan_of):
    with pytest.raises(InputError) as caught:
        GpuFleet("Fleet", args(machine_type="a3-highgpu-9g", zone="central", spot=0, count=0))
    assert [p.input for p in caught.value.problems] == ["name", "zone", "count", "machine_type"]
    assert str(caught.value).startswith(
        "GpuFleet 'Fleet': 4 problems: (1) name 'Fleet' must be a Compute Engine"
    )


@pytest.mark.stack_config({"gcp:project": ""})
def test_gpu_fleet_rejects_a_missing_project(plan_of):
    with pytest.raises(
        InputError, match=r"project \(unset\) is required: pass project or set the gcp:project"
    ):
        GpuFleet("fleet", args())


def test_gpu_fleet_admits_the_monitoring_cluster_to_the_metrics_ports_only(plan_of):
    plan = plan_of(GpuFleet("l4", args(network=NETWORK, monitoring_cidr_blocks=("10.8.0.0/14",))))
    rule = plan.one("gcp:compute/firewall:Firewall", "l4-metrics")
    assert rule.props["sourceRanges"] == ["10.8.0.0/14"]
    # A fleet without engines: the exporters only (no API port, which only the load balancer reaches).
    assert rule.props["allows"] == [{"protocol": "tcp", "ports": ["9400", "9100"]}]
    assert rule.props["targetServiceAccounts"] == [vms(plan)[0].props["serviceAccount"]["email"]]


def test_gpu_fleet_rejects_public_monitoring_cidr_blocks(plan_of):
    with pytest.raises(InputError, match=r"monitoring_cidr_blocks\[0\] '0.0.0.0/0' must be a private"):
        plan_of(GpuFleet("l4", args(network=NETWORK, monitoring_cidr_blocks=("0.0.0.0/0",))))
