"""fleet.endpoint_pool(): a GCP GPU fleet or TPU slice handed to a GcpInferenceEndpoint in one call."""

from __future__ import annotations

import pytest

from inference_infra.components.endpoints import PoolWeight, Route
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.endpoint import (
    GcpInferenceEndpoint,
    GcpInferenceEndpointArgs,
    GcpPoolBackend,
)
from inference_infra.components.gcp.gpu_fleet import GpuFleet, GpuFleetArgs
from inference_infra.components.gcp.tpu_vm import TpuVm, TpuVmArgs
from tests.components.gcp.helpers import pinned_weights

SUBNET = "projects/test-project/regions/us-central1/subnetworks/serving"
NETWORK = "projects/test-project/global/networks/serving"
QWEN = ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8)
WEIGHTS = pinned_weights("models", ["gs://models/qwen2.5-7b-instruct"])


def gpu_fleet(name: str = "l4", **overrides) -> GpuFleet:
    args = {
        "machine_type": "g2-standard-8",
        "zone": "us-central1-b",
        "subnetwork": SUBNET,
        "spot": 2,
        "model": QWEN,
        "weights": WEIGHTS,
        **overrides,
    }
    return GpuFleet(name, GpuFleetArgs(**args))


def tpu_vm(name: str = "tpu", **overrides) -> TpuVm:
    args = {
        "zone": "us-central1-a",
        "network": NETWORK,
        "subnetwork": SUBNET,
        "accelerator_type": "v5litepod-4",
        "model": QWEN,
        "weights": WEIGHTS,
        **overrides,
    }
    return TpuVm(name, TpuVmArgs(**args))


def test_gpu_fleet_endpoint_pool_carries_its_model_ports_and_vms(plan_of):
    fleet = gpu_fleet()
    pool = fleet.endpoint_pool()
    capture = plan_of()
    assert (pool.name, pool.model, list(pool.ports)) == ("l4", "qwen2.5-7b", [8000])
    assert fleet.cold_start is not None
    assert pool.slow_start_seconds == pool.unhealthy_after_seconds == fleet.cold_start.slow_start_seconds()
    assert isinstance(pool.backend, GcpPoolBackend)
    assert pool.backend.zone == "us-central1-b"
    assert len(pool.backend.instances) == len(pool.backend.instance_ips) == 2
    assert pool.backend.service_account_email is fleet.service_account_email
    assert len(capture.of_type("gcp:compute/instance:Instance")) == 2


def test_gpu_fleet_endpoint_pool_takes_another_name(plan_of):
    assert gpu_fleet().endpoint_pool("canary").name == "canary"


def test_tpu_vm_endpoint_pool_carries_its_address(plan_of):
    slice_ = tpu_vm()
    pool = slice_.endpoint_pool()
    assert pool.model == "qwen2.5-7b"
    assert isinstance(pool.backend, GcpPoolBackend)
    assert len(pool.backend.tpu_ips) == 1
    assert pool.backend.instances == ()
    assert pool.backend.zone == "us-central1-a"


def test_gcp_endpoint_fronts_fleets_from_their_pools_alone(plan_of):
    fleet, slice_ = gpu_fleet(), tpu_vm()
    GcpInferenceEndpoint(
        "llm",
        GcpInferenceEndpointArgs(
            network=NETWORK,
            subnetwork=SUBNET,
            pools=[fleet.endpoint_pool(), slice_.endpoint_pool()],
            routes=[Route(pools=[PoolWeight("l4", 90), PoolWeight("tpu", 10)])],
        ),
    )
    capture = plan_of()
    vms = capture.of_type("gcp:compute/instance:Instance")
    group = capture.one("gcp:compute/instanceGroup:InstanceGroup").props
    assert len(group["instances"]) == len(vms) == 2  # the self links the fleet handed over
    assert group["zone"] == "us-central1-b"
    neg = capture.one("gcp:compute/networkEndpointGroup:NetworkEndpointGroup").props
    assert (neg["networkEndpointType"], neg["zone"]) == ("NON_GCP_PRIVATE_IP_PORT", "us-central1-a")
    # The endpoint admits its proxies to the nodes' own service accounts, which the pools carried.
    rule = capture.one("gcp:compute/firewall:Firewall", "llm-to-engines").props
    nodes = [vms[0], capture.one("gcp:tpu/v2Vm:V2Vm")]
    assert sorted(rule["targetServiceAccounts"]) == sorted(n.props["serviceAccount"]["email"] for n in nodes)
    checks = capture.of_type("gcp:compute/regionHealthCheck:RegionHealthCheck")
    assert {c.props["region"] for c in checks} == {"us-central1"}


def test_gpu_fleet_without_a_model_refuses_to_be_an_endpoint_pool(plan_of):
    fleet = gpu_fleet(model=None)
    with pytest.raises(InputError, match=r"GpuFleet 'l4' serves no model: give it model and weights"):
        fleet.endpoint_pool()


def test_queued_tpu_vm_refuses_to_be_an_endpoint_pool(plan_of):
    slice_ = tpu_vm(
        model=None,
        weights=None,
        queued=True,
        secure_boot=False,
        accept_default_service_account="burst pool that reads no bucket",
    )
    with pytest.raises(InputError, match=r"TpuVm 'tpu' is a queued slice, whose node address"):
        slice_.endpoint_pool()
