"""Every option `size --json` returns on the savings benchmark's scenarios builds a fleet plan with no
problem: the planner and the fleets share one notion of what is servable (issue #37)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from inference_infra.components.aws import S3Weights
from inference_infra.components.aws.fleet_args import FleetArgs, plan_fleet
from inference_infra.components.aws.gpu_fleet import GPU_FLEET
from inference_infra.components.aws.inferentia_fleet import INFERENTIA_FLEET
from inference_infra.components.aws.network import SubnetRef
from inference_infra.components.catalog import AcceleratorFamily, Cloud, accelerator, instance_type
from inference_infra.components.catalog.placements import gpu_machine_zones, tpu_zones
from inference_infra.components.cli import main
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.gpu_fleet import GpuFleetArgs, plan_gpu_fleet
from inference_infra.components.gcp.tpu_vm import TpuVmArgs, plan_tpu_vm
from inference_infra.components.planner import Quantization
from tests.components.gcp.helpers import pinned_weights

ROOT = Path(__file__).resolve().parents[3]
NETWORK = "projects/test-project/global/networks/serving"
S3 = S3Weights(bucket_name="acme-models", prefix="models/served", manifest_sha256="ab" * 32)
GCS = pinned_weights("models", ["gs://models/served"])


def _scenarios():
    spec = importlib.util.spec_from_file_location(
        "planner_vs_rules", ROOT / "benchmarks" / "planner_vs_rules.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("planner_vs_rules", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.SCENARIOS


SCENARIOS = _scenarios()


def _size_json(s, capsys) -> dict:
    argv = ["size", "--model", s.model, "--quant", s.quant, "--context", str(s.context)]
    code = main([*argv, "--concurrency", str(s.concurrency), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _zone(offered) -> str:
    """A zone that offers the machine, us-central1's first (the fleet refuses a zone that does not: the
    planner picks a machine, the user a zone that has it; TPU v4 is only in us-central2)."""
    zones = list(offered.zones) if offered else ["us-central1-a"]
    return min(zones, key=lambda z: (not z.startswith("us-central1-"), z))


def _subnet(zone: str) -> str:
    return f"projects/test-project/regions/{zone.rsplit('-', 1)[0]}/subnetworks/serving"


def _fleet_problems(option: dict, model: ServedModel) -> list:
    name, cloud = option["instance_type"], Cloud(option["cloud"])
    item = instance_type(name, cloud)
    family = accelerator(item.accelerator).family
    if cloud is Cloud.GCP and family is AcceleratorFamily.GOOGLE_TPU:
        args = TpuVmArgs(
            accelerator_type=name,
            zone=(zone := _zone(tpu_zones(item.accelerator))),
            network=NETWORK,
            subnetwork=_subnet(zone),
            model=model,
            weights=GCS,
        )
        return list(plan_tpu_vm("served", args, project="test-project").problems)
    if cloud is Cloud.GCP:
        args = GpuFleetArgs(
            machine_type=name,
            zone=(zone := _zone(gpu_machine_zones(name, "us-central1"))),
            network=NETWORK,
            subnetwork=_subnet(zone),
            on_demand=1,
            model=model,
            weights=GCS,
        )
        return list(plan_gpu_fleet("served", args, project="test-project").problems)
    kind = INFERENTIA_FLEET if family is AcceleratorFamily.AWS_NEURON else GPU_FLEET
    args = FleetArgs(
        instance_type=name,
        vpc_id="vpc-0test",
        subnets=[SubnetRef(id="subnet-0a", availability_zone="us-east-1a")],
        on_demand=1,
        model=model,
        weights=S3,
        client_security_group_ids=["sg-0lb"],
    )
    return list(plan_fleet(kind, args).problems)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.label.replace(" ", "-"))
def test_every_option_size_returns_builds_a_fleet_plan_without_problems(scenario, capsys):
    doc = _size_json(scenario, capsys)
    assert doc["options"], scenario.label
    model = ServedModel(
        name=scenario.model,
        context_tokens=scenario.context,
        concurrency=scenario.concurrency,
        quantization=Quantization(scenario.quant),
    )
    refused = {o["instance_type"]: _fleet_problems(o, model) for o in doc["options"]}
    assert {k: v for k, v in refused.items() if v} == {}
