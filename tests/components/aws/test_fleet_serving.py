"""A fleet plans its own serving: the planner's machine, engines and ports in user data, cold start, notes."""

from __future__ import annotations

import pytest
import yaml

from inference_infra.components.aws import (
    GpuFleet,
    GpuFleetArgs,
    InferentiaFleet,
    InferentiaFleetArgs,
    S3Weights,
)
from inference_infra.components.aws.bootstrap import decode_user_data
from inference_infra.components.aws.fleet_args import planned_serving, validate_fleet
from inference_infra.components.aws.gpu_fleet import GPU_FLEET
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import CapacityMode, ServedModel
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines

PIN = "ab" * 32  # a pinned manifest digest

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
WEIGHTS = S3Weights(bucket_name="acme-models", prefix="meta-llama/70b", manifest_sha256=PIN)
LLAMA_70B = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64)
LLAMA_8B = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)


def _args(fleet_args, **overrides):
    values = {
        "instance_type": "p5.48xlarge",
        "model": LLAMA_70B,
        "weights": WEIGHTS,
        "client_security_group_ids": ["sg-0lb"],
    }
    return fleet_args(GpuFleetArgs, **(values | overrides))


def _user_data(capture) -> str:
    return decode_user_data(capture.one(TEMPLATE).props["userData"])


def test_gpu_fleet_plans_its_engines_from_model_and_weights(plan_of, fleet_args):
    fleet = GpuFleet("serving", _args(fleet_args))
    plan_of(fleet)
    assert fleet.instance_type == "p5.48xlarge"
    assert fleet.serving is not None
    assert fleet.serving.ports == [8000, 8001]  # TP=4 on 8 H100s: two engines per node
    assert fleet.engines is fleet.serving.engines
    assert fleet.engines.tensor_parallel == 4
    assert fleet.cold_start is fleet.serving.cold_start
    assert fleet.cold_start.instance_type == "p5.48xlarge"


def test_gpu_fleet_starts_its_planned_engines_from_user_data(plan_of, fleet_args):
    user_data = _user_data(plan_of(GpuFleet("serving", _args(fleet_args))))
    assert "inference-engine@.service" in user_data
    assert [
        "systemctl",
        "enable",
        "--now",
        "--no-block",
        "inference-engine@0.service",
        "inference-engine@1.service",
        "inference-engine-metrics@0.service",
        "inference-engine-metrics@1.service",
    ] in yaml.safe_load(user_data)["runcmd"]
    assert "--tensor-parallel-size 4" in user_data
    assert "ENGINE_PORT=8000" in user_data
    assert "ENGINE_PORT=8001" in user_data


def test_gpu_fleet_engines_use_its_serving_port(plan_of, fleet_args):
    fleet = GpuFleet("serving", _args(fleet_args, serving_port=9000))
    capture = plan_of(fleet)
    assert fleet.serving.ports == [9000, 9001]
    user_data = _user_data(capture)
    assert "ENGINE_PORT=9000" in user_data
    assert "ENGINE_PORT=9001" in user_data
    [rule] = [r.props for r in capture.of_type(INGRESS)]
    assert (rule["fromPort"], rule["toPort"], rule["referencedSecurityGroupId"]) == (9000, 9001, "sg-0lb")


def test_gpu_fleet_logs_its_planner_and_cold_start_notes(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _args(fleet_args)))
    notes = [message for _, message in capture.log]
    assert (
        "AWS GpuFleet 'serving': p5.48xlarge checked: llama-3.1-70b fits at TP=4, 68% of GPU memory" in notes
    )
    [cold] = [n for n in notes if n.startswith("cold start of AWS GpuFleet 'serving'")]
    assert "GiB" in cold
    assert "health-check grace" in cold


def test_gpu_fleet_lets_the_planner_choose_its_machine(plan_of, fleet_args):
    fleet = GpuFleet("small", _args(fleet_args, instance_type=None, model=LLAMA_8B, spot=6, on_demand=1))
    capture = plan_of(fleet)
    assert fleet.instance_type == "g6e.xlarge"
    assert {i.props["instanceType"] for i in capture.of_type(INSTANCE)} == {"g6e.xlarge"}
    notes = [message for _, message in capture.log]
    assert any(
        n.startswith("AWS GpuFleet 'small': planner chose llama-3.1-8b") and "/h on-demand" in n
        for n in notes
    )


def test_gpu_fleet_of_spot_machines_only_is_planned_at_spot_prices(plan_of, fleet_args):
    fleet = GpuFleet("small", _args(fleet_args, instance_type=None, model=LLAMA_8B, spot=2))
    capture = plan_of(fleet)
    notes = [message for _, message in capture.log]
    assert any(n.startswith("AWS GpuFleet 'small': planner chose") and "/h spot" in n for n in notes)
    assert {i.props["instanceType"] for i in capture.of_type(INSTANCE)} == {fleet.instance_type}


def test_inferentia_fleet_lets_the_planner_choose_a_neuron_machine(plan_of, fleet_args):
    args = fleet_args(
        InferentiaFleetArgs,
        instance_type=None,
        model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=4),
        weights=S3Weights(bucket_name="acme-models", prefix="neuron/8b", manifest_sha256=PIN),
        spot=0,
        on_demand=1,
    )
    fleet = InferentiaFleet("neuron", args)
    plan_of(fleet)
    assert fleet.instance_type.startswith(("inf2.", "trn1"))
    assert fleet.serving is not None
    assert fleet.neuron_cores >= fleet.engines.tensor_parallel


def test_gpu_fleet_with_a_model_and_no_weights_sizes_but_serves_nothing(plan_of, fleet_args):
    args = _args(fleet_args, instance_type=None, model=LLAMA_8B, weights=None, spot=0, on_demand=1)
    fleet = GpuFleet("sized", args)
    user_data = _user_data(plan_of(fleet))
    assert fleet.instance_type == "g6e.xlarge"
    assert (fleet.serving, fleet.engines, fleet.cold_start) == (None, None, None)
    assert "inference-engine" not in user_data


def test_planned_serving_at_validation_time_is_what_the_fleet_plans(plan_of, fleet_args):
    placeholders = _args(
        fleet_args,
        vpc_id="planned",
        weights=S3Weights(bucket_name="planned", prefix="m", manifest_sha256=PIN),
    )
    expected = planned_serving(GPU_FLEET, placeholders)
    fleet = GpuFleet("serving", _args(fleet_args))
    plan_of(fleet)
    assert expected == fleet.serving


def test_validate_fleet_names_inputs_with_the_callers_keys(fleet_args):
    args = _args(fleet_args, instance_type=None, model=None)
    assert [str(p) for p in validate_fleet(GPU_FLEET, args, key=lambda i: f"cfg.{i}")] == [
        "cfg.instance_type (unset) is required unless cfg.model is set"
    ]


def test_gpu_fleet_rejects_a_model_that_does_not_fit_its_instance_type(fleet_args):
    with pytest.raises(InputError, match=r"instance_type 'g5.xlarge' cannot serve this model: .*GiB"):
        GpuFleet("serving", _args(fleet_args, instance_type="g5.xlarge"))


def test_gpu_fleet_rejects_a_model_nothing_fits(fleet_args):
    huge = ServedModel(name="llama-3.1-405b", context_tokens=131072, concurrency=64)
    with pytest.raises(InputError, match=r"model 'llama-3.1-405b' fits no aws machine"):
        GpuFleet("serving", _args(fleet_args, instance_type=None, model=huge))


def test_gpu_fleet_rejects_an_unknown_model_naming_the_key(fleet_args):
    with pytest.raises(InputError, match=r"model\.name 'llama-9.9-1b'"):
        GpuFleet(
            "serving",
            _args(fleet_args, model=ServedModel(name="llama-9.9-1b", context_tokens=1, concurrency=1)),
        )


def test_gpu_fleet_rejects_flags_the_plan_sets(fleet_args):
    model = ServedModel(
        name="llama-3.1-70b", context_tokens=8192, concurrency=64, engine_args=["--port", "9000"]
    )
    with pytest.raises(InputError, match=r"model\.engine_args\[0\] '--port' is set from the capacity plan"):
        GpuFleet("serving", _args(fleet_args, model=model))


def test_gpu_fleet_rejects_an_unknown_engine_argument(fleet_args):
    model = ServedModel(
        name="llama-3.1-70b", context_tokens=8192, concurrency=64, engine_args=["--max-batch-size", "8"]
    )
    with pytest.raises(InputError, match=r"model\.engine_args\[0\] '--max-batch-size' is not an option"):
        GpuFleet("serving", _args(fleet_args, model=model))


def test_gpu_fleet_rejects_engine_ports_over_reserved_ports(fleet_args):
    with pytest.raises(InputError, match=r"serving_port 9399 engine ports 9399\.\.9400 must not include"):
        GpuFleet("serving", _args(fleet_args, serving_port=9399))


def test_gpu_fleet_rejects_a_privileged_serving_port_naming_it(fleet_args):
    with pytest.raises(InputError, match=r"serving_port 80 must leave room for 2 engine ports"):
        GpuFleet("serving", _args(fleet_args, serving_port=80))


def test_gpu_fleet_rejects_neither_instance_type_nor_model(fleet_args):
    with pytest.raises(InputError, match=r"instance_type \(unset\) is required unless model is set"):
        GpuFleet("serving", _args(fleet_args, instance_type=None, model=None))


def test_gpu_fleet_rejects_preemptible_with_the_reason(fleet_args):
    with pytest.raises(
        InputError,
        match=r"preemptible 1 is not offered here: preemptible is GCP's older spare capacity; AWS sells "
        r"spare capacity as spot \(use spot\); this fleet buys reserved, spot, on-demand",
    ):
        GpuFleet("serving", fleet_args(GpuFleetArgs, spot=0, preemptible=1))


def test_gpu_fleet_rejects_preemptible_in_the_capacity_order(fleet_args):
    order = [CapacityMode.PREEMPTIBLE, CapacityMode.ON_DEMAND]
    args = fleet_args(GpuFleetArgs, spot=0, count=2, capacity_order=order)
    with pytest.raises(InputError, match=r"capacity_order\[0\] 'preemptible' is not offered here"):
        GpuFleet("serving", args)


# -- the previous release's engines= input -----------------------------------------------------------

ENGINES_DEPRECATED = r"GpuFleetArgs\(engines=\.\.\.\) is deprecated"


def _engines(**overrides):
    return plan_engines(
        model="llama-3.1-70b",
        traffic=Traffic(context_tokens=8192, concurrency=64),
        precision=None,
        instance_type_name="p5.48xlarge",
        cloud="aws",
        **overrides,
    )


def test_gpu_fleet_engines_input_still_works_and_warns(plan_of, fleet_args):
    with pytest.warns(
        DeprecationWarning, match=r"GpuFleetArgs\(engines=\.\.\.\) is deprecated .* use model="
    ):
        args = _args(fleet_args, model=None, engines=_engines())
    fleet = GpuFleet("serving", args)
    capture = plan_of(fleet)
    assert fleet.engines == _engines()
    assert fleet.serving is not None
    assert fleet.serving.cold_start.instance_type == "p5.48xlarge"
    assert "--tensor-parallel-size 4" in _user_data(capture)
    [rule] = [r.props for r in capture.of_type(INGRESS)]
    assert (rule["fromPort"], rule["toPort"]) == (8000, 8001)


def test_gpu_fleet_rejects_engines_without_prefetched_weights(fleet_args):
    with (
        pytest.warns(DeprecationWarning, match=ENGINES_DEPRECATED),
        pytest.raises(InputError, match=r"engines 'llama-3\.1-70b' need weights"),
    ):
        GpuFleet("serving", _args(fleet_args, model=None, weights=None, engines=_engines()))


def test_gpu_fleet_rejects_engines_and_model_together(fleet_args):
    with (
        pytest.warns(DeprecationWarning, match=ENGINES_DEPRECATED),
        pytest.raises(InputError, match=r"engines .* is replaced by model"),
    ):
        GpuFleet("serving", _args(fleet_args, engines=_engines()))


def test_gpu_fleet_rejects_engines_on_another_port(fleet_args):
    with (
        pytest.warns(DeprecationWarning, match=ENGINES_DEPRECATED),
        pytest.raises(InputError, match=r"engines\.first_port 9000 must be serving_port 8000"),
    ):
        GpuFleet("serving", _args(fleet_args, model=None, engines=_engines(first_port=9000)))


def test_gpu_fleet_rejects_an_unknown_argument_of_given_engines(fleet_args):
    engines = _engines(extra_args=["--max-batch-size", "8"])
    with (
        pytest.warns(DeprecationWarning, match=ENGINES_DEPRECATED),
        pytest.raises(InputError, match=r"engines\.engine_args\[0\] '--max-batch-size' is not an option"),
    ):
        GpuFleet("serving", _args(fleet_args, model=None, engines=engines))
