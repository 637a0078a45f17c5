"""TpuVm: slices, runtimes, capacity modes, queued resources, and every input it refuses."""

from __future__ import annotations

import dataclasses
import json

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import CapacityMode, ServedModel
from inference_infra.components.gcp.service_account import NODE_SCOPES
from inference_infra.components.gcp.startup import (
    ENGINE_DROP_IN,
    METADATA_BLOCK_UNIT,
    UNIT_DIR,
    WEIGHTS_CONFIG,
    WEIGHTS_UNIT,
)
from inference_infra.components.gcp.tpu_vm import TpuDataDisk, TpuVm, TpuVmArgs
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.resources import (
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
    Purchase,
    accelerator_use,
)
from tests.components.gcp.helpers import files_of, pin, pinned_weights

NETWORK = "projects/test-project/global/networks/tpu"
SUBNET = "projects/test-project/regions/us-central1/subnetworks/tpu"


def args(**overrides) -> TpuVmArgs:
    base = TpuVmArgs(zone="us-central1-a", network=NETWORK, subnetwork=SUBNET, accelerator_type="v5litepod-8")
    return dataclasses.replace(base, **overrides)


def queued(**overrides) -> TpuVmArgs:
    accept = "burst pool that reads no bucket"
    return args(
        **{"queued": True, "secure_boot": False, "accept_default_service_account": accept, **overrides}
    )


# --- what the engine receives ----------------------------------------------------------------


def test_tpu_vm_v5e_gets_its_own_runtime_by_default(plan_of):
    vm = plan_of(TpuVm("gemma", args())).one(GCP_TPU_VM)
    assert vm.props["acceleratorType"] == "v5litepod-8"
    assert vm.props["runtimeVersion"] == "v2-alpha-tpuv5-lite"
    assert vm.props["zone"] == "us-central1-a"


@pytest.mark.parametrize(
    ("slice_name", "runtime"),
    [("v5p-8", "v2-alpha-tpuv5"), ("v6e-8", "v2-alpha-tpuv6e"), ("v4-8", "tpu-ubuntu2204-base")],
)
def test_tpu_vm_defaults_each_generation_to_its_base_image(plan_of, slice_name, runtime):
    vm = plan_of(TpuVm("t", args(accelerator_type=slice_name))).one(GCP_TPU_VM)
    assert vm.props["runtimeVersion"] == runtime


def test_tpu_vm_by_topology_sends_an_accelerator_config(plan_of):
    vm = plan_of(TpuVm("t", args(accelerator_type=None, generation="v5p", topology="2x2x2"))).one(GCP_TPU_VM)
    assert vm.props["acceleratorConfig"] == {"type": "V5P", "topology": "2x2x2"}
    assert "acceleratorType" not in vm.props
    use = accelerator_use(GCP_TPU_VM, vm.props)
    assert use.machine_type == "v5p-16"  # the inventory reads the same slice back


def test_tpu_vm_accepts_a_tensorflow_runtime_for_its_generation(plan_of):
    vm = plan_of(TpuVm("t", args(runtime_version="tpu-vm-tf-2.16.1-pjrt"))).one(GCP_TPU_VM)
    assert vm.props["runtimeVersion"] == "tpu-vm-tf-2.16.1-pjrt"


@pytest.mark.parametrize(
    ("mode", "config"),
    [
        (CapacityMode.SPOT, {"spot": True}),
        (CapacityMode.PREEMPTIBLE, {"preemptible": True}),
        (CapacityMode.RESERVED, {"reserved": True}),
    ],
)
def test_tpu_vm_capacity_mode_reaches_the_engine(plan_of, mode, config):
    vm = plan_of(TpuVm("t", args(**{mode.value: 1}))).one(GCP_TPU_VM)
    assert vm.props["schedulingConfig"] == config


def test_tpu_vm_without_a_count_is_one_on_demand_slice(plan_of):
    vm = plan_of(TpuVm("t", args())).one(GCP_TPU_VM)
    assert "schedulingConfig" not in vm.props
    assert vm.props["labels"]["capacity"] == "on-demand"


def test_tpu_vm_count_fills_its_capacity_order(plan_of):
    tpu_args = args(count=1, capacity_order=(CapacityMode.SPOT, CapacityMode.ON_DEMAND))
    assert plan_of(TpuVm("t", tpu_args)).one(GCP_TPU_VM).props["schedulingConfig"] == {"spot": True}


def test_tpu_vm_spot_is_priced_at_the_spot_rate(plan_of):
    plan = plan_of(TpuVm("t", args(spot=1)))
    (item,) = price_capture(plan).items
    assert item.hourly_usd == pytest.approx(8 * 1.2 * 0.5)
    assert item.basis.startswith("v5litepod-8 spot")


def test_tpu_vm_has_no_external_ip_and_its_own_account(plan_of):
    plan = plan_of(TpuVm("t", args(weights=pinned_weights("acme-models", ["gs://acme-models/gemma"]))))
    vm = plan.one(GCP_TPU_VM)
    assert vm.props["networkConfig"] == {
        "network": NETWORK,
        "subnetwork": SUBNET,
        "enableExternalIps": False,
        "canIpForward": False,
    }
    account = plan.one("gcp:serviceaccount/account:Account")
    assert vm.props["serviceAccount"] == {
        "email": f"{account.props['accountId']}@test-project.iam.gserviceaccount.com",
        "scopes": list(NODE_SCOPES),
    }
    assert plan.one("gcp:storage/bucketIAMMember:BucketIAMMember").props["bucket"] == "acme-models"
    assert vm.props["shieldedInstanceConfig"] == {"enableSecureBoot": True}
    assert vm.props["metadata"]["block-project-ssh-keys"] == "true"
    assert vm.props["metadata"]["enable-oslogin"] == "TRUE"


def test_tpu_vm_startup_serves_from_the_read_only_cache_without_local_ssd_or_ops_agent(plan_of):
    plan = plan_of(
        TpuVm(
            "t",
            args(
                weights=pinned_weights("acme-models", ["gs://acme-models/gemma"]),
                model_cache_nfs="10.1.2.3:/models",
            ),
        )
    )
    metadata = plan.one(GCP_TPU_VM).props["metadata"]
    script = metadata["startup-script"]
    config = json.loads(files_of(script)[WEIGHTS_CONFIG])
    # A serving node waits for the cache's writer to publish the pinned folder; only the writer fills it.
    assert config["mode"] == "wait"
    assert config["models"] == [
        {
            "bucket": "acme-models",
            "prefix": "gemma",
            "folder": "gemma",
            "manifest_sha256": pin("gs://acme-models/gemma"),
        }
    ]
    assert "mount -t nfs -o ro," in script
    assert "\nsetup_local_ssd\n" not in script
    assert "\nsetup_ops_agent ||" not in script
    assert metadata["inference-infra-model-cache"] == "10.1.2.3:/models"


def test_tpu_vm_attaches_data_disks_of_a_supported_type(plan_of):
    key = "projects/test-project/locations/us-central1/keyRings/r/cryptoKeys/k"
    plan = plan_of(TpuVm("t", args(data_disks=(TpuDataDisk(size_gib=200),), kms_key=key)))
    disk = plan.one("gcp:compute/disk:Disk")
    assert disk.props["type"] == "pd-balanced"
    assert disk.props["size"] == 200
    assert disk.props["zone"] == "us-central1-a"
    assert disk.props["diskEncryptionKey"] == {"kmsKeySelfLink": key}
    assert plan.one(GCP_TPU_VM).props["dataDisks"] == [{"sourceDisk": disk.id, "mode": "READ_WRITE"}]
    assert disk.id.startswith("projects/test-project/zones/us-central1-a/disks/t-data-0")


def test_tpu_vm_v6e_data_disks_default_to_hyperdisk(plan_of):
    plan = plan_of(TpuVm("t", args(accelerator_type="v6e-8", data_disks=(TpuDataDisk(size_gib=100),))))
    assert plan.one("gcp:compute/disk:Disk").props["type"] == "hyperdisk-balanced"


def test_tpu_vm_multi_host_slices_share_disks_read_only(plan_of):
    plan = plan_of(
        TpuVm(
            "t",
            args(accelerator_type="v5litepod-16", data_disks=(TpuDataDisk(size_gib=100, read_only=True),)),
        )
    )
    assert plan.one(GCP_TPU_VM).props["dataDisks"][0]["mode"] == "READ_ONLY"


def test_tpu_vm_tags_reach_the_engine_as_labels_with_the_cost_labels(plan_of, tagged):
    vm = plan_of(TpuVm("t", args(tags={"model": "gemma-2-27b"}, auto_shutdown=False))).one(GCP_TPU_VM)
    assert vm.props["labels"] == {
        "cost-center": "ml-platform",
        "environment": "test",
        "owner": "ml-team_example_com",
        "auto-shutdown": "false",
        "component": "tpu-vm",
        "tpu": "t",
        "capacity": "on-demand",
        "model": "gemma-2-27b",
    }


def test_tpu_vm_queued_requests_the_slice_through_a_queued_resource(plan_of):
    plan = plan_of(TpuVm("burst", queued()))
    assert plan.of_type(GCP_TPU_VM) == []
    assert plan.of_type("gcp:serviceaccount/account:Account") == []
    request = plan.one(GCP_TPU_QUEUED_RESOURCE)
    (spec,) = request.props["tpu"]["nodeSpecs"]
    assert spec["parent"] == "projects/test-project/locations/us-central1-a"
    assert spec["nodeId"] == "burst"
    assert spec["node"]["acceleratorType"] == "v5litepod-8"
    assert spec["node"]["runtimeVersion"] == "v2-alpha-tpuv5-lite"
    assert spec["node"]["networkConfig"]["enableExternalIps"] is False
    use = accelerator_use(GCP_TPU_QUEUED_RESOURCE, request.props)
    assert (use.machine_type, use.purchase, use.zone) == ("v5litepod-8", Purchase.ON_DEMAND, "us-central1-a")


def test_tpu_vm_queued_by_topology_names_the_slice(plan_of):
    plan = plan_of(TpuVm("burst", queued(accelerator_type=None, generation="v6e", topology="2x2")))
    spec = plan.one(GCP_TPU_QUEUED_RESOURCE).props["tpu"]["nodeSpecs"][0]
    assert spec["node"]["acceleratorType"] == "v6e-4"


def test_tpu_vm_exposes_its_outputs(plan_of):
    plan = plan_of(TpuVm("t", args()))
    outputs = plan.one("inference-infra:gcp:TpuVm").outputs
    assert outputs["accelerator_type"] == "v5litepod-8"
    assert outputs["runtime_version"] == "v2-alpha-tpuv5-lite"
    assert outputs["service_account_email"].startswith("t-node-sa@")


# --- what it refuses ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"runtime_version": "tpu-ubuntu2204-base"},
            r"runtime_version 'tpu-ubuntu2204-base' is not a TPU v5e runtime \(it is the runtime for TPU v4",
        ),
        (
            {"accelerator_type": "v6e-8", "runtime_version": "v2-alpha-tpuv5-lite"},
            r"is not a TPU v6e runtime \(it is the runtime for TPU v5e\); allowed: 'v2-alpha-tpuv6e'",
        ),
        (
            {"runtime_version": "v2-alpha-tpuv5-lit"},
            r"is not a TPU v5e runtime \(did you mean 'v2-alpha-tpuv5-lite'\?\)",
        ),
        (
            {"runtime_version": "tpu-vm-tf-2.16.1-pod-pjrt"},
            r"is a multi-host \(-pod\) runtime; this slice has one host, drop '-pod'",
        ),
        (
            {"accelerator_type": "v5litepod-16", "runtime_version": "tpu-vm-tf-2.16.1-pjrt"},
            r"is a single-host runtime; this slice has several hosts, use the '-pod' variant",
        ),
        (
            {"runtime_version": "tpu-vm-tf-2.14.1"},
            r"'tpu-vm-tf-2.14.1' is not a TPU v5e runtime \(it is the runtime for TPU v4\)",
        ),
        (
            {"accelerator_type": "v5litepod-7"},
            r"accelerator_type 'v5litepod-7' is not a TPU slice in the catalog",
        ),
        ({"accelerator_type": "a3-highgpu-8g"}, r"accelerator_type 'a3-highgpu-8g' is not a TPU slice"),
        (
            {"accelerator_type": None, "generation": "v5e", "topology": "3x3"},
            r"topology '3x3' is not a v5e topology; one of 1x1 \(v5litepod-1\), 2x2 \(v5litepod-4\)",
        ),
        (
            {"accelerator_type": None, "generation": "v7", "topology": "2x2"},
            r"generation 'v7' must be one of v6e",
        ),
        (
            {"generation": "v5e", "topology": "2x4"},
            r"give either accelerator_type .* or generation and topology",
        ),
        ({"accelerator_type": None}, r"accelerator_type \(unset\) is required unless model is set"),
        ({"spot": 1, "on_demand": 1}, r"capacity 'spot=1, on_demand=1' must be one slice"),
        ({"count": 2}, r"capacity 'spot=2' must be one slice: a TpuVm is one slice"),
        ({"network": None}, r"network \(unset\) is required: the VPC of the slice's subnetwork"),
        ({"zone": "us-central1"}, r"zone 'us-central1' must be a zone"),
    ],
)
def test_tpu_vm_rejects_bad_slices_and_runtimes(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        TpuVm("t", args(**overrides))
    assert plan_of().of_type(GCP_TPU_VM) == []


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"accelerator_type": "v5litepod-16", "data_disks": (TpuDataDisk(size_gib=100),)},
            r"data_disks\[0\].read_only False must be True: v5litepod-16 has 4 hosts",
        ),
        (
            {
                "accelerator_type": "v6e-8",
                "data_disks": (TpuDataDisk(size_gib=100, disk_type="pd-balanced"),),
            },
            r"data_disks\[0\].disk_type 'pd-balanced' is not attachable to TPU v6e; one of hyperdisk-bal",
        ),
        ({"data_disks": (TpuDataDisk(size_gib=5),)}, r"data_disks\[0\].size_gib 5 must be at least 10"),
        (
            {"accelerator_type": "v6e-8", "data_disks": tuple(TpuDataDisk(size_gib=10) for _ in range(32))},
            r"data_disks 32 is too many for TPU v6e: at most 31",
        ),
    ],
)
def test_tpu_vm_rejects_data_disks_the_slice_cannot_take(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        TpuVm("t", args(**overrides))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"spot": 1},
            r"spot 1 is not offered here: a queued slice is on-demand: pulumi-gcp's V2QueuedResource node "
            r"has no field for spot",
        ),
        ({"reserved": 1}, r"reserved 1 is not offered here: a queued slice is on-demand"),
        (
            {"monitoring_cidr_blocks": ("10.2.0.0/16",)},
            r"monitoring_cidr_blocks \['10.2.0.0/16'\] cannot be set on a queued resource",
        ),
        (
            {"model": ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8)},
            r"model 'qwen2.5-7b' cannot be set .*: a queued slice runs no boot script, so no engine",
        ),
        (
            {"weights": pinned_weights("models", ["gs://models/q"])},
            r"weights GcsWeights.* cannot be set on a queued resource",
        ),
        ({"data_disks": (TpuDataDisk(size_gib=10),)}, r"data_disks .* cannot be set on a queued resource"),
        (
            {"model_cache_nfs": "10.0.0.2:/models"},
            r"model_cache_nfs '\(set\)' cannot be set on a queued resource",
        ),
        ({"tags": {"team": "ml"}}, r"tags \{'team': 'ml'\} cannot be set on a queued resource"),
        ({"secure_boot": True}, r"secure_boot True cannot be set .*; set secure_boot=False to accept"),
    ],
)
def test_tpu_vm_queued_rejects_what_a_queued_resource_cannot_carry(plan_of, overrides, message):
    with pytest.raises(InputError, match=message):
        TpuVm("burst", queued(**overrides))
    assert plan_of().of_type(GCP_TPU_QUEUED_RESOURCE) == []


def test_tpu_vm_rejects_a_queued_slice_without_accepting_the_default_service_account():
    with pytest.raises(InputError, match=r"accept_default_service_account \(unset\) must give the reason"):
        TpuVm("burst", queued(accept_default_service_account=None))


# --- engines: single-host slices only --------------------------------------------------------

QWEN = ServedModel(name="qwen2.5-7b", context_tokens=8192, concurrency=32)
QWEN_WEIGHTS = pinned_weights("models", ["gs://models/qwen2.5-7b"])


def test_tpu_vm_serves_a_model_on_a_single_host_slice(plan_of):
    tpu = TpuVm("small", args(accelerator_type="v5litepod-4", model=QWEN, weights=QWEN_WEIGHTS))
    assert len(plan_of().of_type(GCP_TPU_VM)) == 1
    assert tpu.engines is not None
    assert tpu.engines.served_model_name == "qwen2.5-7b"


def test_tpu_vm_engines_run_on_a_bridge_network_without_the_metadata_server(plan_of):
    TpuVm("small", args(accelerator_type="v5litepod-4", model=QWEN, weights=QWEN_WEIGHTS))
    files = files_of(plan_of().one(GCP_TPU_VM).props["metadata"]["startup-script"])
    template = files[f"{UNIT_DIR}/inference-engine@.service"]
    start = next(line for line in template.splitlines() if line.startswith("ExecStart="))
    assert " --network bridge --publish ${ENGINE_PORT}:${ENGINE_PORT} " in start
    # The slice the component planned, as environment: no container asks the metadata server for it.
    for variable in (
        "TPU_SKIP_MDS_QUERY=true",
        "TPU_ACCELERATOR_TYPE=v5litepod-4",
        "TPU_TOPOLOGY=2x2",
        "TPU_CHIPS_PER_HOST_BOUNDS=2,2,1",
        "TPU_NAME=small",
    ):
        assert f" --env {variable} " in start
    assert f"{UNIT_DIR}/{METADATA_BLOCK_UNIT}" in files
    needs = f"{WEIGHTS_UNIT} {METADATA_BLOCK_UNIT}"
    assert files[ENGINE_DROP_IN] == f"[Unit]\nBindsTo={needs}\nAfter={needs}\n"


def test_tpu_vm_refuses_a_model_on_a_multi_host_slice_before_any_resource(plan_of):
    with pytest.raises(InputError) as raised:
        TpuVm("big", args(accelerator_type="v5litepod-16", model=QWEN, weights=QWEN_WEIGHTS))
    message = str(raised.value)
    # The planner's servability check (planner/servable.py) refuses it, once, naming the slice's hosts.
    assert "accelerator_type 'v5litepod-16' cannot serve this model: v5litepod-16 spans 4 hosts" in message
    assert "Ray cluster" in message
    assert message.count("spans 4 hosts") == 1
    assert "v5litepod-8" in message  # the single-host slices of the generation are named
    assert "v5litepod-16" not in message.split("single-host slice")[1]
    assert plan_of().of_type(GCP_TPU_VM) == []


def test_tpu_vm_multi_host_slice_without_a_model_still_boots_and_caches(plan_of):
    tpu = TpuVm("cache-only", args(accelerator_type="v5litepod-16", weights=QWEN_WEIGHTS))
    vm = plan_of().one(GCP_TPU_VM)
    config = json.loads(files_of(vm.props["metadata"]["startup-script"])[WEIGHTS_CONFIG])
    assert [m["prefix"] for m in config["models"]] == ["qwen2.5-7b"]
    assert tpu.serving is None
