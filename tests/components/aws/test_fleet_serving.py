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
    # Ranked at the fleet's blended rate (6 of 7 on spot), not on-demand (#35): g6e.2xlarge's spot
    # figure ($1.0895/h) undercuts g6e.xlarge's ($1.1975/h) by more than its dearer on-demand hour adds
    # for the one on-demand machine (same L40S, same throughput): $1.254 against $1.292 per hour.
    assert fleet.instance_type == "g6e.2xlarge"
    assert {i.props["instanceType"] for i in capture.of_type(INSTANCE)} == {"g6e.2xlarge"}
    notes = [message for _, message in capture.log]
    assert any(
        n.startswith("AWS GpuFleet 'small': planner chose llama-3.1-8b")
        and "/h blended (86% spot, 14% at the on-demand rate, by the fleet's counts)" in n
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
    with pytest.raises(
        InputError,
        match=r"serving_port 9399 puts the node's 2 engines on ports 9399\.\.9400 .* leave 22, 9100 and 9400",
    ):
        GpuFleet("serving", _args(fleet_args, serving_port=9399))


def test_gpu_fleet_rejects_a_privileged_serving_port_naming_it(fleet_args):
    with pytest.raises(InputError, match=r"serving_port 80 is an engine port, .* must lie in 1024\.\.65535"):
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
        pytest.raises(InputError, match=r"engines .* give model \(the component plans the engines\)"),
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


# -- #23: pinned manifest, hostile prefixes and names, API key, alarm, metrics-only ports ---------------

import json  # noqa: E402

from inference_infra.components.aws.bootstrap import VERIFICATION_METRIC, VERIFICATION_NAMESPACE  # noqa: E402


def _node_policy(capture, name: str = "serving") -> dict:
    policy = capture.one("aws:iam/rolePolicy:RolePolicy", f"{name}-node").props["policy"]
    return {s["Sid"]: s for s in json.loads(policy)["Statement"]}


def test_gpu_fleet_renders_the_pinned_manifest_digest_onto_the_node(plan_of, fleet_args):
    user_data = yaml.safe_load(_user_data(plan_of(GpuFleet("serving", _args(fleet_args)))))
    units = {f["path"]: f["content"] for f in user_data["write_files"]}
    prefetch = units["/etc/systemd/system/inference-model-prefetch.service"]
    assert f"--manifest-sha256 {PIN}" in prefetch
    assert "--fleet serving" in prefetch
    engine = units["/etc/systemd/system/inference-engine@.service"]
    assert f"--fixed-strings {PIN} /opt/models/meta-llama-70b/.inference-verified" in engine


def test_gpu_fleet_rejects_prefetch_without_a_pinned_manifest(fleet_args):
    weights = S3Weights(bucket_name="acme-models", prefix="meta-llama/70b")
    with pytest.raises(InputError, match=r"weights.manifest_sha256 \(unset\) is required with prefetch"):
        GpuFleet("serving", _args(fleet_args, weights=weights))


def test_gpu_fleet_accepts_read_only_weights_without_a_pin(plan_of, fleet_args):
    weights = S3Weights(bucket_name="acme-models", prefix="meta-llama/70b", prefetch=False)
    plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs, weights=weights)))


@pytest.mark.parametrize(
    "prefix", ["meta-llama/*", "a b", "models/../other", "x\nExecStartPre=/bin/sh", "100%", "$(id)", "/abs"]
)
def test_gpu_fleet_rejects_hostile_weight_prefixes(fleet_args, prefix):
    weights = S3Weights(bucket_name="acme-models", prefix=prefix, manifest_sha256=PIN)
    with pytest.raises(InputError, match=r"weights.prefix .* must be '/'-separated segments"):
        GpuFleet("serving", _args(fleet_args, weights=weights))


def test_gpu_fleet_rejects_a_malformed_pin(fleet_args):
    weights = S3Weights(bucket_name="acme-models", prefix="m", manifest_sha256="ABC")
    with pytest.raises(InputError, match=r"weights.manifest_sha256 'ABC' must be 64 lower-case hex digits"):
        GpuFleet("serving", _args(fleet_args, weights=weights))


@pytest.mark.parametrize("name", ["a b", "x\ny", "llama%i", "../x"])
def test_gpu_fleet_rejects_names_that_cannot_reach_a_node(fleet_args, name):
    with pytest.raises(InputError, match=r"name .* must be 1-63 letters"):
        GpuFleet(name, _args(fleet_args))


def test_gpu_fleet_opens_metrics_only_ports_to_monitoring_and_api_ports_to_load_balancers(
    plan_of, fleet_args
):
    capture = plan_of(GpuFleet("serving", _args(fleet_args, monitoring_security_group_ids=["sg-0prom"])))
    rules = {
        (r.props["fromPort"], r.props["toPort"], r.props["referencedSecurityGroupId"])
        for r in capture.of_type(INGRESS)
    }
    assert rules == {
        (8000, 8001, "sg-0lb"),  # the engines' API: the load balancer
        (9400, 9400, "sg-0prom"),
        (9100, 9100, "sg-0prom"),
        (9000, 9001, "sg-0prom"),  # GET /metrics only (the node's proxy), never the API
    }


def test_gpu_fleet_reads_its_default_api_key_from_its_own_parameter_path(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", _args(fleet_args)))
    user_data = _user_data(capture)
    assert "engine-api-key.sh ssm /inference-infra/serving/api-key us-east-1" in user_data
    assert "EngineApiKey" not in _node_policy(capture)  # FleetParameters already grants the path


def test_gpu_fleet_reads_a_secrets_manager_api_key_with_its_own_grant(plan_of, fleet_args):
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:llm-key-AbCdEf"
    key = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
    capture = plan_of(GpuFleet("serving", _args(fleet_args, api_key=secret, api_key_kms_key=key)))
    statements = _node_policy(capture)
    assert statements["EngineApiKey"]["Action"] == "secretsmanager:GetSecretValue"
    assert statements["EngineApiKey"]["Resource"] == secret
    assert statements["EngineApiKeyDecrypt"]["Resource"] == key
    assert f"engine-api-key.sh secretsmanager {secret} us-east-1" in _user_data(capture)


def test_gpu_fleet_reads_another_ssm_api_key_with_its_own_grant(plan_of, fleet_args):
    # a parameter name is granted in the stack's own region and account (the mock's), never `*:*`
    capture = plan_of(GpuFleet("serving", _args(fleet_args, api_key="/shared/llm/api-key")))
    resource = _node_policy(capture)["EngineApiKey"]["Resource"]
    assert resource == "arn:aws:ssm:us-east-1:123456789012:parameter/shared/llm/api-key"


def test_gpu_fleet_keeps_an_ssm_api_key_arn_of_another_region_as_given(plan_of, fleet_args):
    arn = "arn:aws:ssm:eu-west-1:210987654321:parameter/shared/llm/api-key"
    capture = plan_of(GpuFleet("serving", _args(fleet_args, api_key=arn)))
    assert _node_policy(capture)["EngineApiKey"]["Resource"] == arn


@pytest.mark.parametrize(
    "key",
    [
        "sk-plain-secret-value",
        "arn:aws:s3:::bucket/key",
        "/path with space",
        # wildcards would widen the grant back to every region/account or parameter
        "arn:aws:ssm:*:*:parameter/shared/llm/api-key",
        "arn:aws:ssm:us-east-1:123456789012:parameter/shared/*",
        "/shared/*",
    ],
)
def test_gpu_fleet_rejects_an_api_key_that_is_not_a_secret_reference(fleet_args, key):
    with pytest.raises(InputError, match=r"api_key .* must be an SSM parameter"):
        GpuFleet("serving", _args(fleet_args, api_key=key))


def test_gpu_fleet_user_data_never_holds_an_api_key_value(plan_of, fleet_args):
    user_data = _user_data(plan_of(GpuFleet("serving", _args(fleet_args))))
    assert "--api-key" not in user_data
    assert (
        'VLLM_API_KEY=\\"$$(cat /run/secrets/vllm-api-key)' in user_data
    )  # read in the container, never a value


def test_gpu_fleet_alarms_when_a_node_refuses_its_weights(plan_of, fleet_args):
    topic = "arn:aws:sns:us-east-1:123456789012:ml-oncall"
    capture = plan_of(GpuFleet("serving", _args(fleet_args, alarm_actions=[topic])))
    alarm = capture.one("aws:cloudwatch/metricAlarm:MetricAlarm", "serving-model-verification").props
    assert (alarm["namespace"], alarm["metricName"]) == (VERIFICATION_NAMESPACE, VERIFICATION_METRIC)
    assert alarm["dimensions"] == {"Fleet": "serving"}
    assert (alarm["statistic"], alarm["threshold"], alarm["comparisonOperator"]) == (
        "Maximum",
        1,
        "GreaterThanOrEqualToThreshold",
    )
    assert alarm["alarmActions"] == [topic]
    namespaces = _node_policy(capture)["CloudWatchAgentMetrics"]["Condition"]["StringEquals"]
    assert VERIFICATION_NAMESPACE in namespaces["cloudwatch:namespace"]  # the node may publish it


def test_gpu_fleet_without_prefetch_has_no_verification_alarm(plan_of, fleet_args):
    capture = plan_of(GpuFleet("serving", fleet_args(GpuFleetArgs)))
    assert capture.of_type("aws:cloudwatch/metricAlarm:MetricAlarm") == []


def test_gpu_fleet_lets_the_verifier_accept_code_only_with_a_reason(plan_of, fleet_args):
    model = ServedModel(
        name="llama-3.1-70b",
        context_tokens=8192,
        concurrency=64,
        engine_args=["--trust-remote-code"],
        engine_args_reasons={"--trust-remote-code": "vendor modeling code reviewed in SEC-123"},
    )

    def prefetch_start(capture, name: str) -> str:
        document = yaml.safe_load(decode_user_data(capture.one(TEMPLATE, f"{name}-lt").props["userData"]))
        unit = next(
            f["content"] for f in document["write_files"] if f["path"].endswith("model-prefetch.service")
        )
        return next(line for line in unit.splitlines() if line.startswith("ExecStart="))

    assert prefetch_start(plan_of(GpuFleet("serving", _args(fleet_args, model=model))), "serving").endswith(
        " --allow-code"
    )
    assert "--allow-code" not in prefetch_start(plan_of(GpuFleet("plain", _args(fleet_args))), "plain")


def test_inferentia_fleet_compiles_into_a_writable_folder(plan_of, fleet_args):
    args = fleet_args(
        InferentiaFleetArgs,
        instance_type="inf2.8xlarge",
        model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=4),
        weights=S3Weights(bucket_name="acme-models", prefix="neuron/8b", manifest_sha256=PIN),
    )
    user_data = yaml.safe_load(_user_data(plan_of(InferentiaFleet("inf", args))))
    engine = next(
        f["content"] for f in user_data["write_files"] if f["path"].endswith("inference-engine@.service")
    )
    [writable] = [line.split("=", 1)[1] for line in engine.splitlines() if line.startswith("ReadWritePaths=")]
    assert f"--volume {writable}/%i:/var/cache/neuron-compiled:rw" in engine
    assert "--volume /opt/models/neuron-8b:/models:ro" in engine
