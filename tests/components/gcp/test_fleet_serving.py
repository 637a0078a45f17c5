"""GCP fleets plan their own serving: engines from the model, ports from serving_port, cold start, notes."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.gpu_fleet import GpuFleet, GpuFleetArgs, plan_gpu_fleet
from inference_infra.components.gcp.tpu_vm import TpuVm, TpuVmArgs
from inference_infra.components.resources import GCP_INSTANCE, GCP_TPU_VM
from inference_infra.components.serving import WeightSource
from tests.components.gcp.helpers import expanded, pin, pinned_weights

SUBNET = "projects/test-project/regions/us-central1/subnetworks/gpu"
NETWORK = "projects/test-project/global/networks/gpu"
FIREWALL = "gcp:compute/firewall:Firewall"
LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8)
LLAMA_70B = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64)
QWEN_7B = ServedModel(name="qwen2.5-7b", context_tokens=4096, concurrency=8)
WEIGHTS = pinned_weights("models", ["gs://models/llama-3.1-8b-instruct", "gs://models/mistral-7b"])


def fleet(**overrides) -> GpuFleetArgs:
    base = {
        "machine_type": "g2-standard-8",
        "zone": "us-central1-a",
        "subnetwork": SUBNET,
        "network": NETWORK,
        "spot": 1,
        "model": LLAMA_8B,
        "weights": WEIGHTS,
    }
    return GpuFleetArgs(**{**base, **overrides})


def tpu(**overrides) -> TpuVmArgs:
    base = {
        "zone": "us-central1-a",
        "network": NETWORK,
        "subnetwork": SUBNET,
        "accelerator_type": "v5litepod-4",
        "model": QWEN_7B,
        "weights": pinned_weights("models", ["gs://models/qwen2.5-7b-instruct"]),
    }
    return TpuVmArgs(**{**base, **overrides})


def script_of(capture, type_token=GCP_INSTANCE) -> str:
    return expanded(capture.of_type(type_token)[0].props["metadata"]["startup-script"])


def notes(capture) -> list[str]:
    return [m for s, m in capture.log if s == "info"]


# --- GPU fleets --------------------------------------------------------------------------------


def test_gpu_fleet_with_a_model_runs_its_engines_from_the_first_weights_folder(plan_of):
    l4 = GpuFleet("l4", fleet())
    capture = plan_of()
    assert l4.engines is not None
    assert l4.serving is not None
    assert l4.engines.served_model_name == "llama-3.1-8b"
    assert l4.engines.ports == [8000]
    script = script_of(capture)
    assert "inference-engine@0.service" in script
    assert "systemctl start --no-block inference-engine@0.service" in script
    # The first folder is served, from its directory named by the pinned manifest digest.
    assert f"/models/llama-3.1-8b-instruct/{pin('gs://models/llama-3.1-8b-instruct')}:/models:ro" in script
    assert "vllm/vllm-openai@sha256:" in script


def test_gpu_fleet_serving_port_moves_every_engine_port_and_firewall(plan_of):
    h100 = GpuFleet(
        "h100",
        fleet(
            machine_type="a3-highgpu-8g",
            model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8),
            serving_port=9000,
            monitoring_cidr_blocks=["10.8.0.0/14"],
        ),
    )
    capture = plan_of()
    assert h100.engines is not None
    ports = h100.engines.ports
    assert ports[0] == 9000
    assert len(ports) == h100.engines.engines > 1
    assert [r.name for r in capture.of_type(FIREWALL)] == ["h100-metrics"]  # no rule opens the API
    metrics = capture.one(FIREWALL, "h100-metrics").props["allows"][0]["ports"]
    # The monitoring cluster reaches the exporters and each engine's metrics-only port, never the API.
    assert metrics == ["9400", "9100", f"10000-{ports[-1] + 1000}"]
    assert f"ENGINE_PORT={ports[-1]}" in script_of(capture)


def test_gpu_fleet_exposes_its_cold_start_and_logs_it(plan_of):
    l4 = GpuFleet("l4", fleet())
    capture = plan_of()
    assert l4.cold_start is not None
    assert l4.cold_start.source is WeightSource.GCS
    assert l4.serving is not None
    assert l4.serving.grace_seconds() > 0
    said = notes(capture)
    assert any(n.startswith("GCP GpuFleet 'l4': g2-standard-8 checked: llama-3.1-8b fits") for n in said)
    assert any(n.startswith("cold start of GCP GpuFleet 'l4' ~") and "from gcs" in n for n in said)


def test_gpu_fleet_without_a_machine_type_gets_the_planners_pick(plan_of):
    auto = GpuFleet("auto", fleet(machine_type=None))
    capture = plan_of()
    vm = capture.one(GCP_INSTANCE)
    assert vm.props["machineType"] == auto.machine_type
    assert capture.one("inference-infra:gcp:GpuFleet").outputs["machine_type"] == auto.machine_type
    assert any(n.startswith("GCP GpuFleet 'auto': planner chose llama-3.1-8b") for n in notes(capture))


def test_gpu_fleet_model_without_weights_runs_no_engine_and_says_so(plan_of):
    l4 = GpuFleet("l4", fleet(weights=None))
    capture = plan_of()
    assert l4.serving is None
    assert l4.engines is None
    assert "inference-engine@" not in script_of(capture)
    assert any("no engine runs: give weights=GcsWeights" in n for n in notes(capture))


def test_gpu_fleet_rejects_a_model_that_does_not_fit_its_machine(plan_of):
    with pytest.raises(InputError, match=r"machine_type 'g2-standard-8' cannot serve this model: .*GiB"):
        GpuFleet("l4", fleet(model=LLAMA_70B))
    assert plan_of().of_type(GCP_INSTANCE) == []


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            ServedModel(name="llama-3.1-8b", context_tokens=0, concurrency=8),
            r"model.context_tokens 0 must be at least 1",
        ),
        (
            ServedModel(name="no-such-model", context_tokens=4096, concurrency=8),
            r"model.name 'no-such-model'",
        ),
        (
            ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8, engine_args=["--port=1"]),
            r"model.engine_args",
        ),
    ],
)
def test_gpu_fleet_rejects_a_model_it_cannot_serve_by_input(plan_of, model, message):
    with pytest.raises(InputError, match=message):
        GpuFleet("l4", fleet(model=model))


def test_gpu_fleet_rejects_a_missing_machine_type_without_a_model(plan_of):
    with pytest.raises(InputError, match=r"machine_type \(unset\) is required unless model is set"):
        GpuFleet("l4", fleet(machine_type=None, model=None))


def test_gpu_fleet_logs_that_it_runs_without_the_ops_agent(plan_of):
    GpuFleet("l4", fleet(ops_agent=False))
    assert any("'l4': ops_agent False: no Ops Agent" in n for n in notes(plan_of()))


def test_plan_gpu_fleet_is_pure_and_matches_the_component(plan_of):
    plan = plan_gpu_fleet("l4", fleet(), project="test-project", zone=None)
    assert plan.problems == ()
    built = GpuFleet("l4", fleet())
    assert plan.engines == built.engines
    assert plan.machine_type == built.machine_type == "g2-standard-8"


# --- TPU VMs -----------------------------------------------------------------------------------


def test_tpu_vm_plans_its_engines_on_serving_port(plan_of):
    # 8200: the metrics-only port (9200) stays clear of node-exporter's 9100, the one port rule of every fleet
    qwen = TpuVm("qwen", tpu(serving_port=8200, monitoring_cidr_blocks=["10.8.0.0/14"]))
    capture = plan_of()
    assert qwen.engines is not None
    assert qwen.engines.ports[0] == 8200
    assert "vllm/vllm-tpu@sha256:" in script_of(capture, GCP_TPU_VM)
    rule = capture.one(FIREWALL, "qwen-metrics").props
    assert rule["allows"] == [{"protocol": "tcp", "ports": [_span(qwen.engines.metrics_ports)]}]
    assert qwen.engines.metrics_ports[0] == 9200
    assert rule["sourceRanges"] == ["10.8.0.0/14"]
    assert any(n.startswith("cold start of TpuVm 'qwen' ~") for n in notes(capture))


def _span(ports: list[int]) -> str:
    return str(ports[0]) if len(ports) == 1 else f"{ports[0]}-{ports[-1]}"


def test_tpu_vm_without_a_slice_gets_the_planners_single_host_pick(plan_of):
    auto = TpuVm("auto", tpu(accelerator_type=None, spot=1))
    capture = plan_of()
    assert capture.one(GCP_TPU_VM).props["acceleratorType"] == auto.accelerator_type
    assert any(n.startswith("TpuVm 'auto': planner chose qwen2.5-7b") for n in notes(capture))


def test_tpu_vm_rejects_client_cidr_blocks(plan_of):
    with pytest.raises(InputError, match=r"client_cidr_blocks \['10.40.0.0/20'\] are refused"):
        TpuVm("qwen", tpu(client_cidr_blocks=["10.40.0.0/20"]))


def test_tpu_vm_without_engines_opens_no_ports(plan_of):
    TpuVm("cache", tpu(model=None, monitoring_cidr_blocks=["10.8.0.0/14"]))
    assert plan_of().of_type(FIREWALL) == []


def test_tpu_vm_metrics_rule_keeps_the_reference_stacks_resource(plan_of, monkeypatch):
    """The rule was made at the stack's top before 0.2.0: an alias keeps it through the reparenting."""
    import pulumi
    import pulumi_gcp

    seen = []
    original = pulumi_gcp.compute.Firewall

    def spy(name, *args, opts=None, **kwargs):
        seen.append((name, opts))
        return original(name, *args, opts=opts, **kwargs)

    monkeypatch.setattr(pulumi_gcp.compute, "Firewall", spy)
    TpuVm("qwen", tpu(monitoring_cidr_blocks=["10.8.0.0/14"]))
    plan_of()
    ((name, opts),) = seen
    assert name == "qwen-metrics"
    assert [a.parent for a in opts.aliases] == [pulumi.ROOT_STACK_RESOURCE]


def test_tpu_vm_rejects_public_monitoring_cidr_blocks(plan_of):
    with pytest.raises(InputError, match=r"monitoring_cidr_blocks\[0\] '0.0.0.0/0' must be a private CIDR"):
        TpuVm("qwen", tpu(monitoring_cidr_blocks=["0.0.0.0/0"]))


# --- the engines' API key -------------------------------------------------------------------------

SECRET_MEMBER = "gcp:secretmanager/secretIamMember:SecretIamMember"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


def test_gpu_fleet_engines_read_their_api_key_from_the_fleets_own_secret_by_default(plan_of):
    GpuFleet("l4", fleet())
    capture = plan_of()
    grant = capture.one(SECRET_MEMBER).props
    assert grant["secretId"] == "projects/test-project/secrets/inference-infra-l4-api-key"
    assert grant["role"] == "roles/secretmanager.secretAccessor"
    vm = capture.of_type(GCP_INSTANCE)[0].props
    assert CLOUD_PLATFORM in vm["serviceAccount"]["scopes"]  # Secret Manager takes no narrower scope
    assert "--secret inference-infra-l4-api-key/versions/latest" in script_of(capture)
    assert not [k for k in vm["metadata"] if "key" in k.lower() and k != "block-project-ssh-keys"]


def test_tpu_vm_engines_read_a_named_secret_of_another_project(plan_of):
    TpuVm("qwen", tpu(api_key_secret="projects/shared-secrets/secrets/llm-key/versions/4"))
    capture = plan_of()
    assert capture.one(SECRET_MEMBER).props["secretId"] == "projects/shared-secrets/secrets/llm-key"
    assert "--secret projects/shared-secrets/secrets/llm-key/versions/4" in script_of(capture, GCP_TPU_VM)


def test_gpu_fleet_without_engines_reads_no_secret_and_keeps_narrow_scopes(plan_of):
    GpuFleet("l4", fleet(model=None, machine_type="g2-standard-8"))
    capture = plan_of()
    assert capture.of_type(SECRET_MEMBER) == []
    assert CLOUD_PLATFORM not in capture.of_type(GCP_INSTANCE)[0].props["serviceAccount"]["scopes"]


@pytest.mark.parametrize("secret", ["has space", "projects/x/secrets/k", "k/versions/0", "k;rm -rf /", "*"])
def test_gpu_fleet_rejects_an_api_key_secret_that_is_not_a_secret_name(secret):
    problems = plan_gpu_fleet("l4", fleet(api_key_secret=secret), project="test-project").problems
    assert [p.input for p in problems] == ["api_key_secret"]
    assert "must be a Secret Manager secret" in problems[0].allowed
