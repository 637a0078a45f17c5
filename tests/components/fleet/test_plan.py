"""One fleet pipeline (issue #32): one FleetPlan type, one skeleton, the port rules once, one plan a fleet.

- every fleet on every cloud is planned into `components.fleet.plan.FleetPlan`; no other module of the
  library defines a fleet plan type (a class ending in `Plan` outside that module fails here unless it is
  the elastic `ScalingPlan` or a plan of something other than a fleet, listed below with why);
- a GCP fleet on serving port 22, 9100 or 9400 is refused by `inference-infra plan` (exit 2) with the
  message an AWS fleet gives;
- the reference stack plans each fleet exactly once (validation, deployment, endpoints and
  observability read the plan it keeps).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from inference_infra.components.aws.fleet_args import GPU_FLEET, AwsProfile
from inference_infra.components.cli import main
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan, serving_port_problems
from inference_infra.components.gcp.gpu_fleet import GcpGpuProfile, GpuFleetPlan, plan_gpu_fleet
from inference_infra.components.gcp.tpu_vm import GcpTpuProfile, TpuVmPlan, plan_tpu_vm
from inference_infra.components.offline_plan import plan

REPO = Path(__file__).resolve().parents[3]
PLAN_MODULE = REPO / "components" / "fleet" / "plan.py"
# Classes named *Plan that are not a fleet's plan, and why they may live elsewhere.
NOT_FLEET_PLANS = {
    "ScalingPlan": "components/fleet/elastic.py: an elastic pool's bounds, carried in FleetPlan.scaling",
    "OffHoursPlan": "an off-hours schedule's actions (components/fleet/off_hours.py)",
}


def _plan_classes() -> dict[str, list[str]]:
    """Every class named like a plan in the library's modules: name -> the files defining it."""
    found: dict[str, list[str]] = {}
    for folder in ("components", "infra"):
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and re.search(r"Plan$", node.name):
                    found.setdefault(node.name, []).append(str(path.relative_to(REPO)))
    return found


def test_a_fleet_plan_type_is_defined_only_in_components_fleet_plan():
    classes = _plan_classes()
    assert classes.pop("FleetPlan") == ["components/fleet/plan.py"]
    others = {name: files for name, files in classes.items() if name not in NOT_FLEET_PLANS}
    assert others == {}, f"a second plan type: {others}; plan every fleet into components/fleet/plan.py"


def test_the_old_plan_names_are_the_one_type_and_the_one_skeleton():
    assert GpuFleetPlan is FleetPlan
    assert TpuVmPlan is FleetPlan
    tree = ast.parse(PLAN_MODULE.read_text())
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("plan")] == [
        "plan_fleet"
    ]


def test_every_target_goes_through_the_skeleton(monkeypatch):
    seen: list[str] = []
    skeleton = fleet_plan.plan_fleet

    def counting(name, args, profile):
        seen.append(profile.name)
        return skeleton(name, args, profile)

    monkeypatch.setattr(fleet_plan, "plan_fleet", counting)
    from inference_infra.components.aws.fleet_args import GpuFleetArgs, plan_fleet
    from inference_infra.components.aws.network_args import SubnetRef
    from inference_infra.components.gcp.gpu_fleet_args import GpuFleetArgs as GcpArgs
    from inference_infra.components.gcp.tpu_vm_args import TpuVmArgs

    aws = plan_fleet(
        GPU_FLEET,
        GpuFleetArgs(
            instance_type="g5.xlarge",
            vpc_id="vpc-0a",
            subnets=[SubnetRef(id="subnet-0a", availability_zone="us-east-1a")],
            spot=1,
        ),
    )
    gcp = plan_gpu_fleet(
        "l4",
        GcpArgs(machine_type="g2-standard-8", spot=1, subnetwork="s"),
        project="p-1234",
        zone="us-central1-a",
    )
    tpu = plan_tpu_vm(
        "t",
        TpuVmArgs(accelerator_type="v5litepod-4", network="n", subnetwork="s"),
        project="p-1234",
        zone="us-west4-a",
    )
    assert seen == ["aws-gpu", "gcp-gpu", "gcp-tpu"]
    assert [type(p) for p in (aws, gcp, tpu)] == [FleetPlan] * 3
    assert (aws.machine, gcp.machine, tpu.machine) == ("g5.xlarge", "g2-standard-8", "v5litepod-4")
    assert isinstance(AwsProfile(GPU_FLEET), fleet_plan.FleetProfile)
    assert isinstance(GcpGpuProfile(None), fleet_plan.FleetProfile)
    assert isinstance(GcpTpuProfile(None), fleet_plan.FleetProfile)


@pytest.mark.parametrize("port", [22, 9100, 9400, 80, 65000])
def test_the_port_rule_is_one_message_for_every_fleet(port):
    (problem,) = serving_port_problems(port)
    assert problem.input == "serving_port"
    assert problem.value == port
    assert "1024..65535" in problem.allowed
    assert "leave 22, 9100 and 9400 free" in problem.allowed


def test_the_port_rule_checks_every_engine_and_metrics_port():
    assert serving_port_problems(8000) == []
    assert serving_port_problems(64535) == []  # its metrics-only port is 65535
    assert serving_port_problems(8399) == []  # metrics-only port 9399: free
    assert serving_port_problems(8100) != []  # metrics-only port 9100: node-exporter's
    assert serving_port_problems(8400) != []  # metrics-only port 9400: dcgm-exporter's
    assert serving_port_problems(64536) != []  # metrics-only port 65536: no such port


BASE = {
    "inference-infra:costCenter": "ml-platform",
    "inference-infra:owner": "ml@example.com",
}
GCP = {"gcp:project": "acme-test", "gcp:region": "us-central1"}
AWS = {
    "aws:region": "us-east-1",
    "inference-infra:awsNetwork": {
        "vpcId": "vpc-0abc",
        "subnets": [{"id": "subnet-0a", "availabilityZone": "us-east-1a"}],
    },
}


def _refused(tmp_path: Path, config: dict, capsys) -> str:
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {REPO / 'infra'}\n")
    (tmp_path / "Pulumi.test.yaml").write_text(yaml.safe_dump({"config": {**BASE, **config}}))
    assert main(["plan", "--cwd", str(tmp_path), "--stack", "test"]) == 2
    return " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("port", [22, 9400])
def test_a_gcp_fleet_on_a_reserved_port_exits_2_with_the_aws_message(tmp_path, capsys, port):
    gcp = {
        **GCP,
        "inference-infra:gcpGpuFleets": [
            {"name": "l4", "machineType": "g2-standard-8", "spot": 1, "servingPort": port}
        ],
    }
    aws = {
        **AWS,
        "inference-infra:awsGpuFleets": [
            {"name": "l4", "instanceType": "g5.xlarge", "spot": 1, "servingPort": port}
        ],
    }
    gcp_error = _refused(tmp_path, gcp, capsys)
    aws_error = _refused(tmp_path, aws, capsys)
    (rule,) = serving_port_problems(port)
    said = f"servingPort {port} {' '.join(rule.allowed.split())}"
    assert f"inference-infra:gcpGpuFleets[0].{said}" in gcp_error
    assert f"inference-infra:awsGpuFleets[0].{said}" in aws_error


def test_the_reference_stack_plans_each_fleet_once(monkeypatch):
    calls: Counter[str] = Counter()
    skeleton = fleet_plan.plan_fleet

    def counting(name, args, profile):
        calls[name] += 1
        return skeleton(name, args, profile)

    monkeypatch.setattr(fleet_plan, "plan_fleet", counting)
    for stack in ("prod", "dev"):
        calls.clear()
        result = plan(REPO, stack)
        config = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())["config"]
        fleets = [
            f["name"]
            for key in ("awsGpuFleets", "awsInferentiaFleets", "gcpGpuFleets", "tpuVms", "kubernetesPools")
            for f in config.get(f"inference-infra:{key}", [])
        ]
        assert fleets, stack
        assert dict(calls) == dict.fromkeys(fleets, 1), stack
        assert result.capture  # the stack was built from those plans


# --- item 3: the ScalingPlan carries what its consumers read ---------------------------------------


def _elastic_aws_plan(**elastic):
    from inference_infra.components.aws.fleet_args import plan_fleet
    from inference_infra.components.fleet import ElasticArgs
    from tests.components.fleet.serving_fleets import aws_args

    args = replace(
        aws_args(),
        elastic=ElasticArgs(**elastic),
        alarm_actions=["arn:aws:sns:us-east-1:123456789012:oncall"],
    )
    plan = plan_fleet(GPU_FLEET, args)
    assert plan.problems == ()
    return args, plan.scaling


def test_the_scaling_plan_carries_the_numbers_its_consumers_read():
    from inference_infra.components.fleet.elastic import decode_seconds_per_token
    from inference_infra.components.simulate.replay import Autoscaler

    args, scaling = _elastic_aws_plan(scale_in_cooldown_seconds=1200, target_utilisation=0.6)
    assert scaling.seconds_per_output_token == decode_seconds_per_token(args.model, "g6.xlarge") > 0
    assert scaling.target_utilisation == 0.6
    assert scaling.target_in_flight == round(scaling.in_flight_per_machine * 0.6, 2)
    assert (scaling.period_seconds, scaling.scale_out_datapoints) == (60, 3)
    assert scaling.scale_in_datapoints == 1200 // 60
    assert scaling.scale_in_threshold == round(scaling.target_in_flight * 0.8, 2)
    assert scaling.mean_request_seconds(100) == 100 * scaling.seconds_per_output_token
    scaler = Autoscaler.of(scaling)  # the replay's default scaler is the plan's
    assert (scaler.period_seconds, scaler.scale_out_periods, scaler.scale_in_headroom) == (60, 3, 0.8)


def test_the_scaler_renderers_do_not_call_back_into_the_planner():
    for module in ("components/aws/elastic_group.py", "components/gcp/elastic.py"):
        tree = ast.parse((REPO / module).read_text())
        imported = {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert "decode_seconds_per_token" not in imported, module
        assert not any(name.startswith("inference_infra.components.planner") for name in imported), module


def test_the_sha256_pattern_is_written_in_two_modules_only():
    """Image digests (components/images.py) and the node's own verifier (components/models/
    verify_weights.py, which runs alone on the node); everything else imports images.SHA256_HEX."""
    written = sorted(
        str(path.relative_to(REPO))
        for folder in ("components", "infra", "lambdas", "policy")
        for path in (REPO / folder).rglob("*.py")
        if re.search(r"\{64\}", path.read_text(encoding="utf-8"))
    )
    assert written == ["components/images.py", "components/models/verify_weights.py"]


# -- the skeleton's shared steps run once per plan, in plan.py, and no profile has its own ------------------

# The steps every fleet shares: plan_fleet runs each of them; a profile contributes only its specifics.
SHARED_STEPS = (
    "type_problems",  # the inputs' types and bounds, floors too (check_types' words; #32 item 8)
    "capacity_problems",  # the counts against the modes the target sells (#32 item 8)
    "served_model_problems",  # the served model's checks
    "choose_machine",  # the planner's pick or the configured machine's fit check
    "serving_port_problems",  # the port rules
    "plan_serving",  # engines, ports and cold start from the target's weight source
    "plan_scaling",  # an elastic pool's ScalingPlan
)
PROFILES = (AwsProfile, GcpGpuProfile, GcpTpuProfile)
PROFILE_MODULES = (
    "inference_infra.components.aws.fleet_args",
    "inference_infra.components.gcp.gpu_fleet",
    "inference_infra.components.gcp.tpu_vm",
    "inference_infra.components.gcp.fleet_common",
)


def _named_like_a_step(step: str) -> set[str]:
    """A step's name and its short forms (plan_serving: serving; served_model_problems: served_model)."""
    short = step.removeprefix("plan_").removeprefix("choose_").removesuffix("_problems")
    return {step, short, f"{short}_problems", f"plan_{short}"}


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.__name__)
def test_a_profile_has_no_method_named_like_a_shared_step(profile):
    own = {name for name in dir(profile) if not name.startswith("_")}
    named_like = set().union(*(_named_like_a_step(step) for step in SHARED_STEPS), {"plan", "plan_fleet"})
    assert own & named_like == set(), f"{profile.__name__} re-implements a shared step: {own & named_like}"
    for method in ("capacity_offer", "resolve", "reservation_problems", "weights", "input_problems", "boot"):
        assert callable(getattr(profile, method)), f"{profile.__name__} lacks {method}"


def test_no_profile_module_calls_a_shared_step():
    """The three planning bodies are gone: only components/fleet/plan.py calls the shared steps."""
    import importlib

    for module_name in PROFILE_MODULES:
        source = Path(importlib.import_module(module_name).__file__).read_text()
        calls = {
            node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
        }
        assert calls & set(SHARED_STEPS) == set(), f"{module_name} calls {sorted(calls & set(SHARED_STEPS))}"


def _count_shared_steps(monkeypatch) -> Counter:
    """Count every call of a shared step, wherever a module imported it from (but inside the steps)."""
    import sys

    from inference_infra.components import validation
    from inference_infra.components.fleet import capacity, elastic
    from inference_infra.components.serving import model

    originals = {
        "type_problems": validation.type_problems,
        "capacity_problems": capacity.capacity_problems,
        "served_model_problems": model.served_model_problems,
        "choose_machine": model.choose_machine,
        "serving_port_problems": fleet_plan.serving_port_problems,
        "plan_serving": model.plan_serving,
        "plan_scaling": elastic.plan_scaling,
    }
    calls: Counter = Counter()

    def counting(step, original):
        def count(*args, **kwargs):
            calls[step] += 1
            return original(*args, **kwargs)

        return count

    # The defining modules keep their own: plan_serving checks its model itself, inside the step.
    defining = {model.__name__, elastic.__name__, validation.__name__, capacity.__name__}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("inference_infra.") or module_name in defining:
            continue
        for step, original in originals.items():
            if getattr(module, step, None) is original:
                monkeypatch.setattr(module, step, counting(step, original))
    return calls


def test_each_shared_step_runs_once_per_plan_on_every_target(monkeypatch):
    from inference_infra.components.aws.fleet_args import plan_fleet
    from tests.components.fleet.serving_fleets import aws_args, gcp_args, tpu_args

    plans = {
        "aws-gpu": lambda: plan_fleet(GPU_FLEET, aws_args()),
        "gcp-gpu": lambda: plan_gpu_fleet("l4", gcp_args(), project="p-1234"),
        "gcp-tpu": lambda: plan_tpu_vm("t", tpu_args(zone=None), project="p-1234", zone="us-central1-a"),
    }
    calls = _count_shared_steps(monkeypatch)
    for target, plan_one in plans.items():
        calls.clear()
        planned = plan_one()
        assert planned.problems == (), (target, planned.problems)
        assert planned.serving is not None, target
        expected = Counter({step: 1 for step in SHARED_STEPS})
        if target == "gcp-tpu":  # TPU pools stay fixed: no elastic scaling
            expected["plan_scaling"] = 0
        else:
            assert planned.scaling is not None, target
        assert +calls == +expected, target
