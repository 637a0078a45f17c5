"""The reference stack's AWS part: prod and dev plans, and config errors named by key."""

from __future__ import annotations

import json

import pytest
from pydantic.alias_generators import to_snake

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan
from inference_infra.infra import aws_stack
from inference_infra.infra.stack_file import parse_stack_settings

GPU = "inference-infra:aws:GpuFleet"
INFERENTIA = "inference-infra:aws:InferentiaFleet"
GROUP = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"

BASE = {
    "costCenter": "ml-platform",
    "owner": "ml-team@example.com",
    "awsNetwork": json.dumps(
        {"vpcId": "vpc-0abc", "subnets": [{"id": "subnet-0a", "availabilityZone": "us-east-1a"}]}
    ),
}


def _problems(**config: object) -> list[str]:
    raw = {**BASE, **{k: json.dumps(v) for k, v in config.items()}}
    settings = parse_stack_settings(raw, stack="dev")
    return [str(p) for p in aws_stack.validate(settings)]


def test_prod_stack_runs_every_aws_component(plan_stack):
    capture = plan_stack("prod").capture
    types = {r.type for r in capture.resources}
    assert {GPU, INFERENTIA, "inference-infra:aws:EfsModelCache", "inference-infra:aws:ModelStore"} <= types
    assert "inference-infra:aws:PrivateNetwork" not in types  # prod uses its existing VPC
    gateway = capture.one("aws:ec2/vpcEndpoint:VpcEndpoint", "models-s3-endpoint")
    assert gateway.props["routeTableIds"] == ["rtb-0a1b2c3d4e5f60718"]


def test_prod_stack_serves_70b_from_reserved_p5_capacity(plan_stack):
    result = plan_stack("prod")
    capture = result.capture
    reservation = capture.one("aws:ec2/capacityReservation:CapacityReservation")
    assert (reservation.props["instanceType"], reservation.props["instanceCount"]) == ("p5.48xlarge", 2)
    # Elastic (#25): a group between the 2 reserved machines and the peak of 3, reservation first.
    group = capture.one(GROUP, "llama-70b-asg").props
    assert (group["minSize"], group["maxSize"]) == (2, 3)
    spec = group["capacityReservationSpecification"]
    assert spec["capacityReservationPreference"] == "capacity-reservations-first"
    assert group["vpcZoneIdentifiers"] == ["subnet-0a1c0ffee0000001a"]  # the reservation's zone
    assert "warmPool" not in group  # S3 at 100 Gbit/s beats reading 131 GiB back from gp3


def test_prod_stack_small_model_pools_run_on_spot(plan_stack):
    capture = plan_stack("prod").capture
    # Elastic (#25): the on-demand machine is the group's base, spot above it, over the three zones.
    group = capture.one(GROUP, "llama-8b-asg").props
    assert (group["minSize"], group["maxSize"]) == (2, 7)
    distribution = group["mixedInstancesPolicy"]["instancesDistribution"]
    assert distribution["onDemandBaseCapacity"] == 1
    assert distribution["onDemandPercentageAboveBaseCapacity"] == 0
    assert group["capacityRebalance"] is True
    assert len(group["vpcZoneIdentifiers"]) == 3
    # The batch pool stays fixed: 2 spot machines.
    pool = capture.descendants(capture.one(GPU, "mistral-7b"))
    spot = [r for r in pool if r.type == INSTANCE and r.props["tags"]["Purchase"] == "spot"]
    assert len(spot) == 2


def test_prod_stack_lets_the_planner_choose_the_8b_pool_and_says_so(plan_stack):
    result = plan_stack("prod")
    capture = result.capture
    pool = capture.descendants(capture.one(GPU, "llama-8b"))
    # 6 spot + 1 on-demand: ranked at the blended rate (#35), where g6e.2xlarge's spot figure wins.
    assert {r.props["instanceType"] for r in pool if r.type == TEMPLATE} == {"g6e.2xlarge"}
    (note,) = [n for n in result.notes() if n.startswith("AWS GpuFleet 'llama-8b': planner")]
    chose = "planner chose llama-3.1-8b (bf16 weights, bf16 KV cache, 16 x 8,192 tokens) -> g6e.2xlarge"
    assert chose in note
    assert "/h blended (86% spot, 14% at the on-demand rate, by the fleet's counts)" in note
    assert capture.stack_outputs["awsFleets"]["llama-8b"]["instanceType"] == "g6e.2xlarge"


def test_prod_stack_checks_the_70b_model_fits_its_explicit_type(plan_stack):
    notes = plan_stack("prod").notes()
    assert (
        "AWS GpuFleet 'llama-70b': p5.48xlarge checked: llama-3.1-70b fits at TP=4, 68% of GPU memory"
        in notes
    )


def test_validate_rejects_a_model_that_does_not_fit_the_instance_type_with_memory_figures():
    model = {"name": "llama-3.1-70b", "contextTokens": 8192, "concurrency": 64}
    (problem,) = _problems(
        awsGpuFleets=[{"name": "big", "instanceType": "g5.xlarge", "model": model, "spot": 1}]
    )
    assert problem.startswith(
        "inference-infra:awsGpuFleets[0].instanceType 'g5.xlarge' cannot serve this model:"
    )
    assert "GiB" in problem
    assert "`inference-infra size --model llama-3.1-70b --quant bf16" in problem


def test_validate_chooses_only_neuron_machines_for_inferentia_pools():
    settings = parse_stack_settings(
        {
            **BASE,
            "awsInferentiaFleets": json.dumps(
                [
                    {
                        "name": "inf",
                        "model": {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4},
                        "onDemand": 1,
                    }
                ]
            ),
        },
        stack="dev",
    )
    (pool,) = aws_stack.planned_pools(settings)
    assert (pool.name, pool.accelerator, pool.nodes) == ("inf", "neuron", 1)
    assert pool.machine.startswith(("inf2.", "trn1"))
    assert pool.usd_per_million_tokens is not None  # the planner chose it


def test_validate_rejects_a_pool_with_neither_instance_type_nor_model():
    (problem,) = _problems(awsGpuFleets=[{"name": "bare", "spot": 1}])
    assert problem == (
        "inference-infra:awsGpuFleets[0].instanceType (unset) is required unless "
        "inference-infra:awsGpuFleets[0].model is set"
    )


def test_validate_rejects_a_model_nothing_fits_naming_the_model_key():
    model = {"name": "llama-3.1-405b", "contextTokens": 131072, "concurrency": 64}
    (problem,) = _problems(awsGpuFleets=[{"name": "huge", "model": model, "spot": 1}])
    assert problem.startswith("inference-infra:awsGpuFleets[0].model 'llama-3.1-405b' fits no aws machine")


def test_prod_stack_exports_the_watchdog_metrics(plan_stack):
    outputs = plan_stack("prod").capture.stack_outputs
    assert outputs["awsUtilizationMetrics"] == {
        "namespace": "CWAgent",
        "dimension": "InstanceId",
        "gpu": "nvidia_smi_utilization_gpu",
        "neuron": "neuroncore_utilization",
    }


def test_dev_stack_is_one_small_spot_gpu_in_a_private_network(plan_stack):
    capture = plan_stack("dev").capture
    assert capture.one("inference-infra:aws:PrivateNetwork") is not None
    # Elastic (#25): a group of 0..1 spot machines (nothing runs until traffic or a schedule asks).
    group = capture.one(GROUP).props
    # minSize 0 asked with working hours: one machine in them (back from zero, issue #38), 0 outside
    assert (group["minSize"], group["maxSize"], group["desiredCapacity"]) == (1, 1, 1)
    assert group["mixedInstancesPolicy"]["instancesDistribution"]["onDemandBaseCapacity"] == 0
    template = capture.one(TEMPLATE).props
    assert template["instanceType"] == "g6.xlarge"
    instance_tags = next(s for s in template["tagSpecifications"] if s["resourceType"] == "instance")
    assert instance_tags["tags"]["AutoShutdown"] == "true"


def test_aws_stack_accepts_a_valid_config():
    assert _problems(awsGpuFleets=[{"name": "serving", "instanceType": "g5.xlarge", "spot": 1}]) == []


def test_aws_stack_rejects_cpu_instance_type_naming_the_key():
    [problem] = _problems(awsGpuFleets=[{"name": "serving", "instanceType": "m5.xlarge", "spot": 1}])
    assert problem.startswith("inference-infra:awsGpuFleets[0].instanceType 'm5.xlarge' has no NVIDIA GPU")


def test_aws_stack_rejects_reservation_zone_mismatch_naming_the_key():
    fleet = {
        "name": "llama",
        "instanceType": "p5.48xlarge",
        "reserved": 1,
        "reservation": {"availabilityZone": "us-east-1c", "instanceCount": 1},
    }
    [problem] = _problems(awsGpuFleets=[fleet])
    assert problem.startswith(
        "inference-infra:awsGpuFleets[0].reservation.availabilityZone 'us-east-1c' has no subnet"
    )


def test_aws_stack_rejects_fleet_features_the_stack_lacks():
    fleet = {"name": "serving", "instanceType": "g5.xlarge", "spot": 1, "modelPrefix": "m", "efs": True}
    problems = _problems(awsGpuFleets=[fleet])
    assert "inference-infra:awsGpuFleets[0].modelPrefix 'm' needs modelStore in the stack" in problems
    assert "inference-infra:awsGpuFleets[0].efs True needs efsModelCache in the stack" in problems


def test_aws_stack_rejects_duplicate_fleet_names_across_kinds():
    gpu = {"name": "pool", "instanceType": "g5.xlarge", "spot": 1}
    neuron = {"name": "pool", "instanceType": "inf2.xlarge", "spot": 1}
    problems = _problems(awsGpuFleets=[gpu], awsInferentiaFleets=[neuron])
    assert any("'pool' must be unique across AWS fleets" in p for p in problems)


def test_aws_stack_rejects_a_network_with_both_vpc_and_create():
    network = {"vpcId": "vpc-0abc", "create": {"availabilityZones": ["us-east-1a"]}}
    problems = _problems(awsNetwork=network)
    assert problems == [
        "inference-infra:awsNetwork (unset) must set either vpcId with subnets, or create (not both)"
    ]


def test_plan_of_a_stack_with_a_bad_fleet_registers_nothing(pulumi_project):
    program = "import runpy\nrunpy.run_module('inference_infra.infra.__main__', run_name='__main__')\n"
    stack = """\
    config:
      aws:region: us-east-1
      inference-infra:costCenter: ml
      inference-infra:owner: team
      inference-infra:awsNetwork:
        vpcId: vpc-0abc
        subnets: [{id: subnet-0a, availabilityZone: us-east-1a}]
      inference-infra:awsGpuFleets:
        - name: serving
          instanceType: p5.48xlarge
          reserved: 3
          reservation: {availabilityZone: us-east-1a, instanceCount: 2}
    """
    folder = pulumi_project(program, {"bad": stack})
    with pytest.raises(InputError, match=r"awsGpuFleets\[0\].reserved 3 is more than the reservation's 2"):
        plan(folder, "bad")


def test_aws_stack_names_fleet_inputs_by_their_config_keys():
    fleet = {
        "name": "serving",
        "instanceType": "g5.xlarge",
        "spot": 1,
        "servingPort": 9100,
        "clientCidrBlocks": ["0.0.0.0/0"],
        "modelPrefix": "/meta-llama",
        "manifestSha256": "XYZ",
    }
    problems = _problems(awsGpuFleets=[fleet], modelStore={"bucketName": "models"})
    assert any(  # the one port rule of every fleet (components/serving/engines.py port_problems)
        p.startswith("inference-infra:awsGpuFleets[0].servingPort 9100 is an engine port")
        and "leave 22, 9100 and 9400 free" in p
        for p in problems
    )
    assert any(
        p.startswith("inference-infra:awsGpuFleets[0].clientCidrBlocks ['0.0.0.0/0'] are refused")
        for p in problems
    )
    assert any(
        p.startswith("inference-infra:awsGpuFleets[0].modelPrefix '/meta-llama' must be") for p in problems
    )
    assert any(
        p.startswith("inference-infra:awsGpuFleets[0].manifestSha256 'XYZ' must be 64 lower-case hex")
        for p in problems
    )


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("inferencePort", "servingPort", 9000),
        ("inferenceCidrBlocks", "clientCidrBlocks", ["10.0.0.0/16"]),
        ("inferenceSecurityGroupIds", "clientSecurityGroupIds", ["sg-0lb"]),
    ],
)
def test_aws_fleet_config_accepts_the_old_key_with_a_warning(old, new, value):
    fleet = {"name": "serving", "instanceType": "g5.xlarge", "spot": 1, old: value}
    raw = {**BASE, "awsGpuFleets": json.dumps([fleet])}
    settings = parse_stack_settings(raw, stack="dev")
    (config,) = settings.aws_gpu_fleets
    assert getattr(config, to_snake(new)) == value
    where = "inference-infra:awsGpuFleets[0]"
    assert settings.warnings == [
        f"Pulumi.dev.yaml: {where}.{old} is now {where}.{new}; the old key is accepted until the next "
        "release, rename it"
    ]
    problems = aws_stack.validate(settings)
    if new == "clientCidrBlocks":  # renamed, then refused: only a load balancer reaches the API ports
        assert [p.input for p in problems] == [f"{where}.clientCidrBlocks"]
        assert "only a load balancer reaches" in problems[0].allowed
    else:
        assert problems == []


def test_aws_fleet_config_rejects_an_old_key_next_to_its_new_one():
    fleet = {
        "name": "serving",
        "instanceType": "g5.xlarge",
        "spot": 1,
        "inferencePort": 9000,
        "servingPort": 1,
    }
    with pytest.raises(
        InputError, match=r"awsGpuFleets\[0\].inferencePort 9000 is the old name of .*servingPort"
    ):
        parse_stack_settings({**BASE, "awsGpuFleets": json.dumps([fleet])}, stack="dev")


def test_aws_stack_planned_pools_are_the_fleets_own_plan():
    model = {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4}
    fleet = {
        "name": "serving",
        "instanceType": "g6e.xlarge",
        "model": model,
        "onDemand": 1,
        "modelPrefix": "m",
        "manifestSha256": "abababababababababababababababababababababababababababababababab",
    }
    bare = {"name": "bare", "instanceType": "g5.xlarge", "spot": 1}
    raw = {
        **BASE,
        "awsGpuFleets": json.dumps([fleet, bare]),
        "modelStore": json.dumps({"bucketName": "models"}),
    }
    serving, plain = aws_stack.planned_pools(parse_stack_settings(raw, stack="dev"))
    assert (plain.name, plain.serving, plain.serves_model, plain.machine) == (
        "bare",
        None,
        False,
        "g5.xlarge",
    )
    assert serving.serving.ports == [8000]
    assert serving.serving.model == "llama-3.1-8b"
    assert serving.serving.cold_start.instance_type == "g6e.xlarge"
    assert (serving.latency, serving.usd_per_million_tokens) == ("interactive", None)  # type given


@pytest.mark.parametrize("module", ["aws_stack", "endpoints_stack"])
def test_stack_part_plans_no_serving_of_its_own(module):
    """The reference stack passes settings to the components: the fleets plan engines, ports, cold starts."""
    import ast
    from pathlib import Path

    source = Path(aws_stack.__file__).with_name(f"{module}.py").read_text()
    imported = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    assert not {m for m in imported if m.startswith("inference_infra.components.serving")}
    assert "inference_infra.components.planner.wiring" not in imported


def test_aws_stack_rejects_elastic_min_above_max_naming_the_key():
    fleet = {
        "name": "serving",
        "instanceType": "g6.xlarge",
        "onDemand": 4,
        "elastic": {"minSize": 5, "maxSize": 2},
    }
    problems = _problems(awsGpuFleets=[fleet])
    assert any(
        p.startswith("inference-infra:awsGpuFleets[0].elastic.minSize 5 gives a minimum") for p in problems
    )


def test_aws_stack_rejects_a_warm_pool_on_spot_naming_the_key():
    fleet = {
        "name": "serving",
        "instanceType": "g6.xlarge",
        "spot": 2,
        "model": {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4},
        "modelPrefix": "meta-llama/8b",
        "manifestSha256": "ab" * 32,
        "elastic": {"warmPoolSize": 1},
    }
    problems = _problems(awsGpuFleets=[fleet], modelStore={"bucketName": "models"})
    assert any(
        p.startswith("inference-infra:awsGpuFleets[0].elastic.warmPoolSize 1 is refused on a pool with spot")
        for p in problems
    ), problems


def test_stack_budget_is_the_policy_configs_max_hourly_usd():
    from pathlib import Path

    from inference_infra.infra.aws_stack import stack_budget_hourly_usd

    root = Path(__file__).resolve().parents[2]
    assert stack_budget_hourly_usd("prod", root) == 350.0
    assert stack_budget_hourly_usd("dev", root) == 5.0
    assert stack_budget_hourly_usd("no-such-stack", root) is None
