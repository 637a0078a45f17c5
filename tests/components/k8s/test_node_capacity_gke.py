"""GkeNodePool: GPU node pools with GKE's driver installation, TPU pools with their slice topology.

Held against pulumi-gcp 10.2.0's input types (pulumi_gcp/container/_inputs.py, read 2026-12-02):
`gpu_driver_installation_config.gpu_driver_version` accepts GPU_DRIVER_VERSION_UNSPECIFIED,
INSTALLATION_DISABLED, DEFAULT, LATEST; `placement_policy` takes `type` COMPACT and `tpu_topology`;
`reservation_affinity` SPECIFIC_RESERVATION with the key compute.googleapis.com/reservation-name;
autoscaling's `total_min/max_node_count` count the whole pool. The taint effects NO_SCHEDULE,
PREFER_NO_SCHEDULE, NO_EXECUTE are terraform-provider-google's ValidateFunc for node_config.taint.effect
(google/services/container/node_config.go).
"""

from __future__ import annotations

import inspect

import pulumi_gcp as gcp
import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.k8s.node_capacity import GkeNodePool
from inference_infra.components.k8s.node_capacity_args import (
    GKE_NODE_ROLES,
    GkeNodePoolArgs,
    GpuDriverVersion,
)
from tests.components.k8s.node_cases import gke_args

POOL = "gcp:container/nodePool:NodePool"


def _args(**kw) -> GkeNodePoolArgs:
    return gke_args(**kw)


def test_gke_driver_versions_are_the_providers():
    # The node pool's input type and the cluster's share the API field; the cluster's documents the values.
    assert (
        "gpu_driver_version"
        in inspect.signature(
            gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs
        ).parameters
    )
    doc = inspect.getdoc(
        gcp.container.ClusterNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs.gpu_driver_version.fget
    )
    assert all(f'"{v.value}"' in (doc or "") for v in GpuDriverVersion)


def test_gke_gpu_pool_has_guest_gpus_with_driver_installation(plan_of):
    capture = plan_of(GkeNodePool("chat-gke", _args(gpu_driver_version=GpuDriverVersion.LATEST)))
    config = capture.one(POOL).props["nodeConfig"]
    assert config["machineType"] == "g2-standard-8"
    assert config["guestAccelerators"] == [
        {"type": "nvidia-l4", "count": 1, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
    ]
    assert "placementPolicy" not in capture.one(POOL).props


def test_gke_pool_is_hardened(plan_of):
    capture = plan_of(GkeNodePool("chat-gke", _args()))
    props = capture.one(POOL).props
    config = props["nodeConfig"]
    assert config["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert config["metadata"] == {"disable-legacy-endpoints": "true"}
    assert config["spot"] is False
    assert props["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert props["autoscaling"] == {"totalMinNodeCount": 1, "totalMaxNodeCount": 3, "locationPolicy": "ANY"}


def test_gke_pool_labels_and_its_own_taint(plan_of):
    capture = plan_of(GkeNodePool("chat-gke", _args()))
    config = capture.one(POOL).props["nodeConfig"]
    assert config["labels"] == {
        "inference-infra.dev/pool": "chat",
        "inference-infra.dev/accelerator-family": "nvidia-gpu",
    }
    # GKE adds nvidia.com/gpu=present:NoSchedule itself; the pool adds its own.
    assert config["taints"] == [{"key": "inference-infra.dev/pool", "value": "chat", "effect": "NO_SCHEDULE"}]


def test_gke_pool_creates_a_minimal_service_account(plan_of):
    capture = plan_of(GkeNodePool("chat-gke", _args()))
    account = capture.one("gcp:serviceaccount/account:Account")
    roles = sorted(m.props["role"] for m in capture.of_type("gcp:projects/iAMMember:IAMMember"))
    assert (
        roles
        == sorted(GKE_NODE_ROLES)
        # GKE's minimum for a node's account is roles/container.defaultNodeServiceAccount
        # (kubernetes-engine/docs/how-to/service-accounts, read 2026-12-02): logWriter and metricWriter
        # alone lack monitoring.viewer, the resource metadata and autoscaling metrics writers.
        == ["roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount"]
    )
    email = capture.one(POOL).props["nodeConfig"]["serviceAccount"]
    assert email.startswith(account.props["accountId"])
    assert all(
        m.props["member"] == f"serviceAccount:{email}"
        for m in capture.of_type("gcp:projects/iAMMember:IAMMember")
    )


def test_gke_pool_given_service_account_creates_none(plan_of):
    capture = plan_of(GkeNodePool("g", _args(service_account_email="nodes@p.iam.gserviceaccount.com")))
    assert capture.one(POOL).props["nodeConfig"]["serviceAccount"] == "nodes@p.iam.gserviceaccount.com"
    assert capture.of_type("gcp:serviceaccount/account:Account") == []


def test_gke_spot_pool_and_reserved_pool(plan_of):
    capture = plan_of(
        GkeNodePool("s", _args(spot=True, min_nodes=0)),
        GkeNodePool("r", _args(reservation="l4-reservation")),
    )
    spot = capture.one(POOL, "s-pool").props
    assert spot["nodeConfig"]["spot"] is True
    assert spot["autoscaling"]["totalMinNodeCount"] == 0
    assert "reservationAffinity" not in spot["nodeConfig"]
    reserved = capture.one(POOL, "r-pool").props["nodeConfig"]
    assert reserved["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["l4-reservation"],
    }


@pytest.mark.parametrize(
    ("machine_type", "topology"),
    [("ct5lp-hightpu-4t", "2x2"), ("ct5lp-hightpu-8t", "2x4"), ("ct6e-standard-4t", "2x2")],
)
def test_gke_tpu_single_host_slice_sets_no_placement_policy(plan_of, machine_type, topology):
    # GKE creates a single-host TPU slice node pool from its machine type alone; the placement policy's
    # tpu_topology is the multi-host ("pod slice") node pool's (GKE API NodePool.PlacementPolicy), and a
    # COMPACT policy would bind the pool to one zone and one atomic slice.
    args = _args(machine_type=machine_type, tpu_topology=topology, min_nodes=0, max_nodes=3)
    props = plan_of(GkeNodePool("tpu", args)).one(POOL).props
    assert "placementPolicy" not in props
    assert props["nodeConfig"]["machineType"] == machine_type
    assert props["autoscaling"]["totalMaxNodeCount"] == 3


def test_gke_tpu_multi_host_slice_has_its_topology(plan_of):
    args = _args(
        machine_type="ct5lp-hightpu-4t",
        tpu_topology="4x4",
        min_nodes=0,
        max_nodes=4,
        node_locations=["us-central1-a"],
    )
    capture = plan_of(GkeNodePool("tpu", args))
    props = capture.one(POOL).props
    assert props["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert props["nodeLocations"] == ["us-central1-a"]
    assert "guestAccelerators" not in props["nodeConfig"]
    assert props["nodeConfig"]["labels"]["inference-infra.dev/accelerator-family"] == "google-tpu"
    assert props["nodeConfig"]["taints"] == [
        {"key": "inference-infra.dev/pool", "value": "chat", "effect": "NO_SCHEDULE"}
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pool": "chat pool"}, "pool 'chat pool' must be a DNS label"),
        ({"machine_type": "n2-standard-8"}, "machine_type 'n2-standard-8' must be a GPU machine type"),
        (
            {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4-4"},
            "tpu_topology '4-4' must be AxB or AxBxC",
        ),
        (
            {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "1x2"},
            "has 2 chips, not a multiple of the machine's 4",
        ),
        ({"tpu_topology": "2x4"}, "tpu_topology '2x4' is for TPU machine types only"),
        (
            {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x12"},
            "tpu_topology '4x12' is not a multi-host slice of ct5lp-hightpu-4t's TPU generation in the "
            "catalog (allowed: 4x4, 4x8, 8x8, 8x16, 16x16)",
        ),
        (
            {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x4", "max_nodes": 3},
            "must be (0 or 4, 4) for a 4x4 slice of 4 hosts",
        ),
        ({"min_nodes": 5}, "min_nodes 5 must be at most max_nodes (3)"),
        ({"spot": True, "reservation": "l4-res"}, "reservation 'l4-res' cannot be consumed by spot nodes"),
        ({"reservation": "L4_Res"}, "reservation 'L4_Res' must be a reservation name"),
        ({"location": "central"}, "location 'central' must be a region"),
        ({"node_locations": ["us-central1"]}, "node_locations[0] 'us-central1' must be a zone"),
        ({"boot_disk_kms_key": "my-key"}, "boot_disk_kms_key 'my-key' must be projects/"),
        ({"max_nodes": 2000}, "max_nodes 2000 must be"),
    ],
)
def test_gke_node_pool_rejects_bad_input_before_registering(plan_of, change, message):
    with pytest.raises(InputError) as raised:
        GkeNodePool("bad", _args(**change))
    assert message in str(raised.value)
    assert [r for r in plan_of() if r.name.startswith("bad")] == []


def test_gke_pool_outputs_its_instance_groups_offline(plan_of, harness):
    pool = GkeNodePool(
        "tpu", _args(machine_type="ct5lp-hightpu-4t", max_nodes=2, node_locations=["us-central1-b"])
    )
    seen: list = []
    harness.in_loop(lambda: pool.node_pool.instance_group_urls.apply(seen.append))
    plan_of()
    [[url]] = seen  # the offline mock's shape: one managed instance group per zone
    assert url.startswith("https://www.googleapis.com/compute/v1/projects/test-project/zones/us-central1-b/")


def test_gke_node_pool_rejects_a_name_too_long_for_gkes_pool_names(plan_of):
    with pytest.raises(InputError) as raised:
        GkeNodePool("a-very-long-serving-pool-name", _args())
    assert "name 'a-very-long-serving-pool-name' must be 1-27 of a-z" in str(raised.value)
    assert "40 at most" in str(raised.value)
