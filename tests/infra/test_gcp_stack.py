"""The GCP part of the reference stack: the prod plan, and config errors named by their key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from inference_infra.components.catalog import PriceModel, find_instance_type, hourly_price
from inference_infra.components.catalog.placements import tpu_zones
from inference_infra.components.errors import InputError
from inference_infra.components.gcp.startup import CACHE_METADATA_KEY
from inference_infra.components.offline_plan import plan
from inference_infra.components.resources import (
    GCP_INSTANCE,
    GCP_RESERVATION,
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
)
from inference_infra.components.tagging import tag_field
from tests.components.gcp.helpers import expanded, pins

REPO = Path(__file__).resolve().parents[2]
BASE = {
    "gcp:project": "acme-test",
    "gcp:region": "us-central1",
    "inference-infra:costCenter": "ml-platform",
    "inference-infra:owner": "ml@example.com",
    "inference-infra:gcpModelBucket": "acme-models",
}
FLEET = {"name": "l4", "machineType": "g2-standard-8", "spot": 1}


def plan_config(tmp_path: Path, config: dict, stack: str = "test"):
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {REPO / 'infra'}\n")
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return plan(tmp_path, stack)


def gcp_resources(result):
    return [r for r in result.capture.custom if r.type.startswith("gcp:")]


# --- the prod stack ----------------------------------------------------------------------------


def test_prod_plan_runs_every_gcp_accelerator_component(plan_stack):
    capture = plan_stack("prod").capture
    components = {r.type for r in capture if not r.custom and r.type.startswith("inference-infra:gcp:")}
    assert components == {
        "inference-infra:gcp:PrivateNetwork",
        "inference-infra:gcp:FilestoreModelCache",
        "inference-infra:gcp:GpuFleet",
        "inference-infra:gcp:TpuVm",
        "inference-infra:gcp:InferenceEndpoint",
        "inference-infra:gcp:ArtifactMirrors",
        "inference-infra:gcp:GcsModelPublishers",
        "inference-infra:gcp:IdleGpuWatchdog",  # infra/watchdog_stack.py, for the GPUs and TPUs
    }
    machines = sorted((r.name, r.props["machineType"]) for r in capture.of_type(GCP_INSTANCE))
    assert machines == [("llama70b-h100-0", "a3-highgpu-8g")]
    # small-l4 is elastic: a managed instance group of the same machine (test_gcp_elastic_stack.py)
    templates = capture.of_type("gcp:compute/instanceTemplate:InstanceTemplate")
    assert [(t.name, t.props["machineType"]) for t in templates] == [("small-l4-template", "g2-standard-8")]
    assert capture.one(GCP_RESERVATION).props["specificReservationRequired"] is True
    slices = sorted((r.name, r.props["acceleratorType"]) for r in capture.of_type(GCP_TPU_VM))
    # qwen7b-tpu: the planner's pick (cheapest spot per token), direct, not queued.
    assert slices == [("qwen7b-tpu-tpu", "v6e-4")]
    assert capture.of_type(GCP_TPU_QUEUED_RESOURCE) == []


def test_prod_plan_prices_gcp_from_the_catalog(plan_stack):
    result = plan_stack("prod")
    gcp_urns = {r.urn for r in gcp_resources(result)}
    gcp_hourly = sum(
        i.hourly_usd for i in result.cost.items if i.urn in gcp_urns and i.category == "accelerator"
    )

    def price(name: str, model: PriceModel, count: int = 1) -> float:
        return hourly_price(
            find_instance_type(name, "gcp"), region="us-central1", model=model, count=count
        ).hourly_usd

    expected = (
        price("a3-highgpu-8g", PriceModel.ON_DEMAND)  # the reservation; its VM is priced at 0
        + price("g2-standard-8", PriceModel.SPOT, 2)
        + price("v6e-4", PriceModel.SPOT)  # the planner's pick for qwen7b-tpu
    )
    assert gcp_hourly == pytest.approx(expected)
    assert not [u for u, _ in result.cost.unpriced if u in gcp_urns]


def test_prod_plan_labels_every_gcp_resource_that_takes_labels(plan_stack):
    result = plan_stack("prod")
    labelled = [r for r in gcp_resources(result) if tag_field(r.type) == "labels"]
    assert {r.type for r in labelled} >= {GCP_INSTANCE, GCP_TPU_VM, "gcp:filestore/instance:Instance"}
    for r in labelled:
        labels = r.props["labels"]
        assert labels["cost-center"] == "ml-platform", r.name
        assert labels["environment"] == "prod", r.name
        assert labels["service"] == "llm-serving", r.name
    for r in [*result.capture.of_type(GCP_INSTANCE), *result.capture.of_type(GCP_TPU_VM)]:
        assert r.props["labels"]["auto-shutdown"] == "false"  # production default


def test_prod_plan_gcp_nodes_are_private_shielded_and_never_the_default_account(plan_stack):
    capture = plan_stack("prod").capture
    for vm in capture.of_type(GCP_INSTANCE):
        assert all("accessConfigs" not in nic for nic in vm.props["networkInterfaces"])
        assert vm.props["shieldedInstanceConfig"]["enableSecureBoot"] is True
        assert not vm.props["serviceAccount"]["email"].endswith("-compute@developer.gserviceaccount.com")
    for tpu in capture.of_type(GCP_TPU_VM):  # no queued slice: none runs as the default account
        assert tpu.props["networkConfig"]["enableExternalIps"] is False
        assert tpu.props["serviceAccount"]["email"].startswith(tpu.name.removesuffix("-tpu") + "-sa@")
        assert tpu.props["shieldedInstanceConfig"]["enableSecureBoot"] is True
    assert capture.of_type(GCP_TPU_QUEUED_RESOURCE) == []


def test_prod_plan_fleets_mount_the_filestore_cache(plan_stack):
    capture = plan_stack("prod").capture
    cache = capture.one("inference-infra:gcp:FilestoreModelCache").outputs["nfs_target"]
    qwen = next(t for t in capture.of_type(GCP_TPU_VM) if t.name == "qwen7b-tpu-tpu")
    for vm in [*capture.of_type(GCP_INSTANCE), qwen]:
        assert vm.props["metadata"][CACHE_METADATA_KEY] == cache
    fileshare = capture.one("gcp:filestore/instance:Instance").props["fileShares"]
    assert fileshare["nfsExportOptions"][0]["ipRanges"] == ["10.40.0.0/20"]


def test_prod_plan_exports_the_gcp_fleets(plan_stack):
    outputs = plan_stack("prod").capture.stack_outputs
    assert outputs["gcpGpuFleets"]["llama70b-h100"]["reservation"] == "llama70b-h100-reservation"
    assert outputs["tpuVms"]["qwen7b-tpu"]["queued"] is False
    assert outputs["gcpModelCache"].endswith(":/models")


def test_prod_plan_places_every_tpu_slice_where_google_offers_its_generation(plan_stack):
    """Issue #33 item 8: Google's TPU zone table (catalog/data/tpu_zones.csv) lists each slice's zone."""
    capture = plan_stack("prod").capture
    for vm in capture.of_type(GCP_TPU_VM):
        item = find_instance_type(vm.props["acceleratorType"], "gcp")
        assert vm.props["zone"] in tpu_zones(item.accelerator).zones, vm.name
    assert (
        next(v for v in capture.of_type(GCP_TPU_VM) if v.name == "qwen7b-tpu-tpu").props["zone"]
        == "us-central1-b"
    )


def test_prod_plan_pays_for_no_accelerator_that_serves_no_model(plan_stack):
    """Every GCP GPU fleet and TPU slice of the prod stack serves a pinned model (#33 item 8): its
    boot starts an engine, and its stack entry names the model and pins each folder's manifest."""
    config = yaml.safe_load((REPO / "Pulumi.prod.yaml").read_text())["config"]
    for key in ("inference-infra:gcpGpuFleets", "inference-infra:tpuVms"):
        for fleet in config[key]:
            assert fleet.get("model") or fleet.get("engines"), fleet["name"]
            assert fleet["models"], fleet["name"]
            assert set(fleet["manifestSha256"]) == set(fleet["models"]), fleet["name"]
    capture = plan_stack("prod").capture
    for vm in capture.of_type(GCP_TPU_VM):
        assert "inference-engine@" in str(vm.props["metadata"]), vm.name  # its engine units start


def test_dev_plan_registers_no_gcp_resources(plan_stack):
    assert [r.type for r in plan_stack("dev").capture if r.type.startswith("gcp:")] == []


# --- config errors, named by key, before anything is created -----------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {
                "inference-infra:tpuVms": [
                    {"name": "t", "acceleratorType": "v5litepod-8", "runtimeVersion": "tpu-ubuntu2204-base"}
                ]
            },
            r"inference-infra:tpuVms\[0\].runtimeVersion 'tpu-ubuntu2204-base' is not a TPU v5e runtime "
            r"\(it is the runtime for TPU v4\)",
        ),
        (
            {
                "inference-infra:gcpGpuFleets": [
                    {**FLEET, "machineType": "a3-highgpu-8g", "acceleratorCount": 4}
                ]
            },
            r"inference-infra:gcpGpuFleets\[0\].acceleratorCount 4 does not match a3-highgpu-8g",
        ),
        (
            {
                "inference-infra:gcpGpuFleets": [
                    {"name": "l4", "machineType": "g2-standard-8", "reserved": 2, "reservation": {"count": 1}}
                ]
            },
            r"inference-infra:gcpGpuFleets\[0\].reservation.count 1 must hold the whole fleet",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{**FLEET, "zone": "us-east1-b"}]},
            r"inference-infra:gcpGpuFleets\[0\].zone 'us-east1-b' must be in gcp:region 'us-central1'",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{**FLEET, "modelCache": True}]},
            r"inference-infra:gcpGpuFleets\[0\].modelCache True needs filestoreModelCache set",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{**FLEET, "models": ["gs://elsewhere/llama"]}]},
            r"inference-infra:gcpGpuFleets\[0\].models\[0\] 'gs://elsewhere/llama' is outside the model",
        ),
        (
            {
                "inference-infra:gcpGpuFleets": [FLEET],
                "inference-infra:tpuVms": [{"name": "l4", "acceleratorType": "v6e-1"}],
            },
            r"'l4' is used twice; fleet and TPU names must differ",
        ),
        (
            {"inference-infra:filestoreModelCache": {"tier": "BASIC_SSD", "capacityGib": 1024}},
            r"inference-infra:filestoreModelCache.capacityGib 1024 does not fit the BASIC_SSD tier",
        ),
        (
            {"inference-infra:tpuVms": [{"name": "t", "acceleratorType": "v5litepod-8", "queued": True}]},
            r"inference-infra:tpuVms\[0\].secureBoot True cannot be set on a queued resource",
        ),
        (
            {"inference-infra:gcpNetwork": {"cidr": "8.8.0.0/16"}, "inference-infra:gcpGpuFleets": [FLEET]},
            r"inference-infra:gcpNetwork.cidr '8.8.0.0/16' must be a private IPv4 range",
        ),
    ],
)
def test_gcp_stack_rejects_bad_config_by_key(tmp_path, extra, message):
    with pytest.raises(InputError, match=message):
        plan_config(tmp_path, {**BASE, **extra})


def test_gcp_stack_rejects_a_typo_in_a_fleet_key(tmp_path):
    fleet = {"name": "l4", "machineTyp": "g2-standard-8", "spot": 1}
    with pytest.raises(
        InputError, match=r"gcpGpuFleets\[0\].machineTyp is not a setting here \(did you mean 'machineType'"
    ):
        plan_config(tmp_path, {**BASE, "inference-infra:gcpGpuFleets": [fleet]})


def test_gcp_stack_needs_a_project(tmp_path):
    config = {k: v for k, v in BASE.items() if k != "gcp:project"}
    with pytest.raises(InputError, match=r"gcp:project \(unset\) is required when the stack uses GCP"):
        plan_config(tmp_path, {**config, "inference-infra:gcpGpuFleets": [FLEET]})


def test_gcp_stack_reports_every_problem_of_every_part_at_once(tmp_path):
    fleets = [{**FLEET, "zone": "us-east1-b"}, {**FLEET, "name": "h100", "machineType": "a3-highgpu-9g"}]
    with pytest.raises(InputError) as caught:
        plan_config(tmp_path, {**BASE, "inference-infra:gcpGpuFleets": fleets})
    message = str(caught.value)
    assert "2 problems" in message
    assert "inference-infra:gcpGpuFleets[0].zone 'us-east1-b'" in message
    assert "inference-infra:gcpGpuFleets[1].machineType 'a3-highgpu-9g'" in message


def test_gcp_stack_small_spot_fleet_plans_with_defaults(tmp_path):
    result = plan_config(tmp_path, {**BASE, "inference-infra:gcpGpuFleets": [FLEET]})
    (vm,) = result.capture.of_type(GCP_INSTANCE)
    assert vm.props["zone"] == "us-central1-a"
    assert vm.props["scheduling"]["provisioningModel"] == "SPOT"
    assert vm.props["labels"]["auto-shutdown"] == "true"  # a non-production stack
    assert vm.props["networkInterfaces"][0]["subnetwork"].endswith(
        result.capture.one("gcp:compute/subnetwork:Subnetwork").id.rsplit("/", 1)[-1]
    )


# --- the capacity planner in the GCP config ------------------------------------------------------

SMALL_MODEL = {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 8}


def test_prod_plan_says_which_slice_the_planner_chose(plan_stack):
    notes = plan_stack("prod").notes()
    (tpu,) = [n for n in notes if n.startswith("TpuVm 'qwen7b-tpu'")]
    assert "planner chose qwen2.5-7b (bf16 weights, bf16 KV cache, 32 x 8,192 tokens) -> v6e-4" in tpu
    # TPU factors are fitted on TPU points; what no TPU point constrains (host time) is NVIDIA's, and
    # the note says so
    assert "google-tpu throughput factors: fitted on 4 published vLLM TPU points" in tpu
    assert "host times borrowed from NVIDIA" in tpu
    assert "GCP GpuFleet 'llama70b-h100': a3-highgpu-8g checked: llama-3.1-70b fits" in " ".join(notes)


def test_gcp_fleet_without_machine_type_gets_the_planners_gpu(tmp_path):
    fleet = {"name": "auto", "spot": 1, "model": SMALL_MODEL}
    result = plan_config(tmp_path, {**BASE, "inference-infra:gcpGpuFleets": [fleet]})
    (vm,) = result.capture.of_type(GCP_INSTANCE)
    chosen = result.capture.stack_outputs["gcpGpuFleets"]["auto"]["machineType"]
    assert vm.props["machineType"] == chosen
    assert find_instance_type(chosen, "gcp").accelerator in {"l4", "a100-40gb", "a100-80gb", "h100-80gb"}
    assert any(n.startswith("GCP GpuFleet 'auto': planner chose llama-3.1-8b") for n in result.notes())


def test_gcp_tpu_without_slice_type_gets_the_planners_slice(tmp_path):
    # The planner picks among every generation (v6e-1 here), not the zone's: the zone is where v6e is.
    tpu = {"name": "auto-tpu", "spot": 1, "model": SMALL_MODEL, "zone": "us-central1-b"}
    result = plan_config(tmp_path, {**BASE, "inference-infra:tpuVms": [tpu]})
    slice_type = result.capture.one(GCP_TPU_VM).props["acceleratorType"]
    assert find_instance_type(slice_type, "gcp").accelerator.startswith("tpu-")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"inference-infra:gcpGpuFleets": [{**FLEET, "model": {**SMALL_MODEL, "name": "llama-3.1-70b"}}]},
            r"inference-infra:gcpGpuFleets\[0\].machineType 'g2-standard-8' cannot serve this model: .*GiB",
        ),
        (
            {
                "inference-infra:tpuVms": [
                    {
                        "name": "t",
                        "acceleratorType": "v5litepod-1",
                        "model": {**SMALL_MODEL, "name": "llama-3.1-70b"},
                    }
                ]
            },
            r"inference-infra:tpuVms\[0\].acceleratorType 'v5litepod-1' cannot serve this model",
        ),
        (
            {"inference-infra:gcpGpuFleets": [{"name": "bare", "spot": 1}]},
            r"inference-infra:gcpGpuFleets\[0\].machineType \(unset\) is required unless model is set",
        ),
    ],
)
def test_gcp_stack_rejects_models_that_do_not_fit_by_key(tmp_path, extra, message):
    with pytest.raises(InputError, match=message):
        plan_config(tmp_path, {**BASE, **extra})


def test_gcp_stack_refuses_a_model_on_a_multi_host_tpu_slice_by_key(tmp_path):
    tpu = {
        "name": "big",
        "acceleratorType": "v5litepod-16",
        "model": SMALL_MODEL,
        "models": ["gs://acme-models/qwen2.5-7b-instruct"],
    }
    with pytest.raises(InputError) as raised:
        plan_config(tmp_path, {**BASE, "inference-infra:tpuVms": [tpu]})
    message = str(raised.value)
    # The planner's servability check (components/planner/servable.py) names the slice to change.
    assert "inference-infra:tpuVms[0].acceleratorType 'v5litepod-16' cannot serve this model" in message
    assert "v5litepod-16 spans 4 hosts" in message
    assert "single-host slice (v5litepod-1, v5litepod-4, v5litepod-8)" in message


def test_gcp_stack_multi_host_tpu_slice_without_a_model_caches_the_weights(tmp_path):
    tpu = {
        "name": "cache",
        "acceleratorType": "v5litepod-16",
        "models": ["gs://acme-models/qwen2.5-7b-instruct"],
        "manifestSha256": pins("gs://acme-models/qwen2.5-7b-instruct"),
    }
    result = plan_config(tmp_path, {**BASE, "inference-infra:tpuVms": [tpu]})
    assert result.capture.one(GCP_TPU_VM).props["acceleratorType"] == "v5litepod-16"


def test_prod_gcp_fleets_admit_the_monitoring_cluster_to_metrics_ports_only(plan_stack):
    capture = plan_stack("prod").capture
    rules = {
        r.name: r.props
        for r in capture.of_type("gcp:compute/firewall:Firewall")
        if r.name.endswith("-metrics")
    }
    assert sorted(rules) == ["llama70b-h100-metrics", "qwen7b-tpu-metrics", "small-l4-metrics"]
    del rules["qwen7b-tpu-metrics"]  # engines only (test_observability_stack)
    for props in rules.values():
        assert props["sourceRanges"] == ["10.20.0.0/16"]
        assert props["direction"] == "INGRESS"
        (allow,) = props["allows"]
        assert allow["ports"][:2] == ["9400", "9100"]
        # every engine's metrics-only port (9000, or 9000-900N), never an API port (8000...)
        assert allow["ports"][2].startswith("9000")
    # Nothing but the load balancer's own rule reaches an API port (and the elastic pool's autohealing
    # probes, from Google's health-check ranges only).
    api = [
        r
        for r in capture.of_type("gcp:compute/firewall:Firewall")
        if "8000" in str(r.props.get("allows", []))
    ]
    assert sorted(r.name for r in api) == ["gcp-llm-to-engines", "small-l4-autohealing"]
    by_name = {r.name: r.props["sourceRanges"] for r in api}
    assert by_name["gcp-llm-to-engines"] == ["10.40.64.0/23", "35.191.0.0/16", "130.211.0.0/22"]
    assert by_name["small-l4-autohealing"] == ["35.191.0.0/16", "130.211.0.0/22"]


def test_prod_logs_every_read_and_write_of_the_gcp_model_bucket(plan_stack):
    capture = plan_stack("prod").capture
    audit = capture.one("gcp:projects/iAMAuditConfig:IAMAuditConfig").props
    assert audit["service"] == "storage.googleapis.com"
    assert audit["project"] == "acme-inference-prod"
    assert sorted(c["logType"] for c in audit["auditLogConfigs"]) == ["DATA_READ", "DATA_WRITE"]
    assert not any(c.get("exemptedMembers") for c in audit["auditLogConfigs"])


@pytest.mark.parametrize(
    ("tpu", "message"),
    [
        (
            {
                "name": "burst",
                "acceleratorType": "v5litepod-8",
                "queued": True,
                "secureBoot": False,
                "acceptDefaultServiceAccount": "burst pool that reads no bucket",
                "monitoringCidrBlocks": ["10.2.0.0/16"],
            },
            r"inference-infra:tpuVms\[0\].monitoringCidrBlocks \['10.2.0.0/16'\] cannot be set on a queued",
        ),
        (
            {"name": "open", "acceleratorType": "v5litepod-8", "monitoringCidrBlocks": ["0.0.0.0/0"]},
            r"inference-infra:tpuVms\[0\].monitoringCidrBlocks\[0\] '0.0.0.0/0' must be a private CIDR block",
        ),
        (
            {"name": "t", "acceleratorType": "v5litepod-8", "spot": 1, "queued": True},
            r"inference-infra:tpuVms\[0\].spot 1 is not offered here: a queued slice is on-demand",
        ),
    ],
)
def test_gcp_stack_rejects_tpu_settings_by_key(tmp_path, tpu, message):
    with pytest.raises(InputError, match=message):
        plan_config(tmp_path, {**BASE, "inference-infra:tpuVms": [tpu]})


@pytest.mark.parametrize(
    ("fleet", "message"),
    [
        (
            {**FLEET, "clientCidrBlocks": ["10.40.0.0/20"]},
            r"inference-infra:gcpGpuFleets\[0\].clientCidrBlocks \['10.40.0.0/20'\] are refused: only",
        ),
        (
            {**FLEET, "models": ["gs://acme-models/llama"]},
            r"inference-infra:gcpGpuFleets\[0\].manifestSha256\['gs://acme-models/llama'\] \(unset\) is req",
        ),
        (
            {**FLEET, "models": ["gs://acme-models/a b"]},
            r"inference-infra:gcpGpuFleets\[0\].models\[0\] 'gs://acme-models/a b' must be 'gs://<bucket>/<folder>'",
        ),
        (
            {**FLEET, "models": ["gs://acme-models/*"]},
            r"inference-infra:gcpGpuFleets\[0\].models\[0\] 'gs://acme-models/\*' must be",
        ),
        ({**FLEET, "tags": {"Team": "ml"}}, r"inference-infra:gcpGpuFleets\[0\].tags key 'Team'"),
        (
            {**FLEET, "reservation": {"count": 1}},
            r"inference-infra:gcpGpuFleets\[0\].reservation \{'count': 1\} cannot be used: Spot VMs",
        ),
    ],
)
def test_gcp_stack_rejects_fleet_settings_by_key(tmp_path, fleet, message):
    with pytest.raises(InputError, match=message):
        plan_config(tmp_path, {**BASE, "inference-infra:gcpGpuFleets": [fleet]})


def test_gcp_stack_names_a_missing_model_bucket_by_its_key(tmp_path):
    config = {k: v for k, v in BASE.items() if k != "inference-infra:gcpModelBucket"}
    fleet = {**FLEET, "models": ["gs://acme-models/llama"]}
    with pytest.raises(InputError, match=r"inference-infra:gcpModelBucket '' is required"):
        plan_config(tmp_path, {**config, "inference-infra:gcpGpuFleets": [fleet]})


def test_prod_plan_gcp_nodes_pull_engines_from_the_artifact_registry_mirror(plan_stack):
    capture = plan_stack("prod").capture
    mirror = "us-central1-docker.pkg.dev/acme-inference-prod/docker-hub/"
    scripts = [expanded(vm.props["metadata"]["startup-script"]) for vm in capture.of_type(GCP_INSTANCE)]
    scripts += [
        expanded(tpu.props["metadata"]["startup-script"])
        for tpu in capture.of_type("gcp:tpu/v2Vm:V2Vm")
        if tpu.name == "qwen7b-tpu-tpu"  # the slice that serves a model
    ]
    assert scripts
    for script in scripts:
        assert f"{mirror}vllm/" in script
        assert " vllm/vllm-" not in script  # no pull from Docker Hub itself
    grants = capture.of_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember")
    # one per node service account (2 GPU fleets, 1 direct TPU slice) and mirror (docker.io, nvcr.io,
    # quay.io: under egress.gcp named-hosts every registry a node pulls from is mirrored)
    assert sorted(g.props["role"] for g in grants) == ["roles/artifactregistry.reader"] * 9


# --- weights you can trust, authenticated engines (issue 23) -------------------------------------


def test_prod_pins_every_gcp_weights_folder(plan_stack):
    prod = yaml.safe_load((REPO / "Pulumi.prod.yaml").read_text())["config"]
    for node in [*prod["inference-infra:gcpGpuFleets"], *prod["inference-infra:tpuVms"]]:
        assert sorted(node.get("manifestSha256", {})) == sorted(node.get("models", [])), node["name"]


def test_prod_only_its_publishers_write_the_gcp_model_bucket(plan_stack):
    capture = plan_stack("prod").capture
    policy = capture.one("gcp:iam/denyPolicy:DenyPolicy").props
    rule = policy["rules"][0]["denyRule"]
    assert rule["deniedPrincipals"] == ["principalSet://goog/public:all"]
    assert rule["exceptionPrincipals"] == [
        "principal://iam.googleapis.com/projects/-/serviceAccounts/"
        "model-publisher@acme-inference-prod.iam.gserviceaccount.com"
    ]
    binding = capture.one("gcp:tags/locationTagBinding:LocationTagBinding").props
    assert binding["parent"] == "//storage.googleapis.com/projects/_/buckets/acme-inference-models"


def test_prod_gcp_engines_read_their_api_keys_from_secret_manager(plan_stack):
    capture = plan_stack("prod").capture
    secrets = sorted(
        g.props["secretId"] for g in capture.of_type("gcp:secretmanager/secretIamMember:SecretIamMember")
    )
    assert secrets == [
        f"projects/acme-inference-prod/secrets/inference-infra-{name}-api-key"
        for name in ("llama70b-h100", "qwen7b-tpu", "small-l4")
    ]


def test_gcp_stack_requires_publishers_in_production(tmp_path):
    fleet = {**FLEET, "models": ["gs://acme-models/llama"], "manifestSha256": pins("gs://acme-models/llama")}
    config = {**BASE, "inference-infra:environment": "production", "inference-infra:gcpGpuFleets": [fleet]}
    with pytest.raises(InputError, match=r"inference-infra:gcpModelPublishers \[\] must name who may write"):
        plan_config(tmp_path, config)


def test_gcp_stack_rejects_a_publisher_that_is_not_an_iam_member_by_key(tmp_path):
    config = {
        **BASE,
        "inference-infra:gcpModelPublishers": ["allUsers"],
        "inference-infra:gcpGpuFleets": [FLEET],
    }
    with pytest.raises(
        InputError, match=r"inference-infra:gcpModelPublishers\[0\] 'allUsers' must be an IAM"
    ):
        plan_config(tmp_path, config)


def test_gcp_stack_refuses_queued_tpu_slices_in_production_whatever_the_reason(tmp_path):
    tpu = {
        "name": "burst",
        "acceleratorType": "v5litepod-8",
        "queued": True,
        "secureBoot": False,
        "acceptDefaultServiceAccount": "burst capacity only; reads no bucket",
    }
    config = {**BASE, "inference-infra:environment": "prod", "inference-infra:tpuVms": [tpu]}
    with pytest.raises(InputError, match=r"inference-infra:tpuVms\[0\].queued True is refused in production"):
        plan_config(tmp_path, config)
    # Outside production the stated reason still admits one.
    config["inference-infra:environment"] = "staging"
    assert plan_config(tmp_path, config).capture.of_type(GCP_TPU_QUEUED_RESOURCE)
