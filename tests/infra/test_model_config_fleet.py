"""A fleet's `model:` may name a checkpoint's config.json (relative to the project), not only a preset."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan

PROGRAM = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"
STACK = """\
config:
  aws:region: us-east-1
  inference-infra:costCenter: ml
  inference-infra:owner: team
  inference-infra:autoShutdown: false
  inference-infra:awsNetwork:
    vpcId: vpc-0abc
    subnets: [{id: subnet-0a, availabilityZone: us-east-1a}]
  inference-infra:awsGpuFleets:
    - name: ranker
      instanceType: g6e.xlarge
      model: {name: models/ranker/config.json, contextTokens: 4096, concurrency: 4}
      onDemand: 1
"""
CONFIG = {
    "_name_or_path": "acme/ranker-8b",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 8192,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
}


def _project(pulumi_project, config):
    folder = pulumi_project(PROGRAM, {"prod": STACK})
    (folder / "models" / "ranker").mkdir(parents=True)
    (folder / "models" / "ranker" / "config.json").write_text(json.dumps(config))
    return folder


def test_fleet_model_names_a_config_json_in_the_project(pulumi_project):
    result = plan(_project(pulumi_project, CONFIG), "prod")
    fleets = [r for r in result.capture.resources if r.type == "inference-infra:aws:GpuFleet"]
    assert [f.name for f in fleets] == ["ranker"]
    assert any("acme/ranker-8b fits" in note for note in result.notes()), result.notes()


def test_fleet_model_config_missing_a_field_names_it_and_the_file(pulumi_project):
    broken = {k: v for k, v in CONFIG.items() if k != "num_hidden_layers"}
    with pytest.raises(
        InputError, match=r"num_hidden_layers \(unset\) must be a positive whole number in .*"
    ):
        plan(_project(pulumi_project, broken), "prod")
