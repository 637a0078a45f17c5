"""The node's load signal (node/serving_load.py): vLLM's gauges summed per machine, published per group."""

from __future__ import annotations

from inference_infra.components.aws.node import serving_load as sl

# vLLM 0.28's exposition of the two gauges (V1 engine: labels engine and model_name), with neighbours.
ENGINE_0 = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="llama-3.1-8b"} 12.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="llama-3.1-8b"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="llama-3.1-8b"} 0.81
vllm:num_requests_waiting_by_reason{engine="0",model_name="llama-3.1-8b",reason="capacity"} 40.0
"""
# vLLM 0.9.1 (Neuron): model_name only, a timestamp after the value.
ENGINE_1 = """\
vllm:num_requests_running{model_name="llama-3.1-8b"} 4 1732550400000
vllm:num_requests_waiting{model_name="llama-3.1-8b"} 0
"""


def test_in_flight_sums_running_and_waiting():
    assert sl.in_flight(ENGINE_0) == 15.0
    assert sl.in_flight(ENGINE_1) == 4.0


def test_in_flight_none_without_the_gauges():
    assert sl.in_flight("# nothing here\nprocess_cpu_seconds_total 1.0\n") is None


def test_machine_load_sums_the_engines():
    texts = {8000: ENGINE_0, 8001: ENGINE_1}
    assert sl.machine_load([8000, 8001], texts.get) == 19.0


def test_machine_load_publishes_nothing_while_an_engine_is_down():
    texts = {8000: ENGINE_0}
    assert sl.machine_load([8000, 8001], texts.get) is None


def test_put_command_is_the_groups_metric():
    command = sl.put_command("/usr/bin/aws", "llama-8b-asg-1a2b", 19.0, "us-east-1")
    assert command[1:3] == ["cloudwatch", "put-metric-data"]
    at = {command[i]: command[i + 1] for i in range(3, len(command) - 1, 2)}
    assert at["--namespace"] == "InferenceInfra/Serving"
    assert at["--metric-name"] == "InFlightRequests"
    assert at["--dimensions"] == "AutoScalingGroupName=llama-8b-asg-1a2b"
    assert at["--value"] == "19"


def test_complete_command_continues_the_launch():
    command = sl.complete_command("aws", "launch-verified", "g", "i-0abc", "us-east-1")
    assert command[-2:] == ["--lifecycle-action-result", "CONTINUE"]
    assert "--instance-id" in command


def test_launch_step_keeps_the_hook_open_until_the_engines_answer():
    # issue #38 item 6: a warm-pool machine is stopped (the hook completed) only after its engines
    # loaded once; on Neuron that is after the compile, whose artifacts stay on the root volume.
    step = sl.launch_step
    assert step(loaded=False, elapsed_seconds=10, deadline_seconds=600, state=sl.HEARTBEAT) == sl.HEARTBEAT
    assert step(loaded=True, elapsed_seconds=500, deadline_seconds=600, state=sl.HEARTBEAT) == sl.COMPLETE
    assert step(loaded=True, elapsed_seconds=560, deadline_seconds=600, state=sl.COMPLETE) == sl.DONE
    # Not loaded by the deadline: no more heartbeats; the hook's ABANDON replaces the machine.
    assert step(loaded=False, elapsed_seconds=600, deadline_seconds=600, state=sl.HEARTBEAT) == sl.GIVE_UP
    assert step(loaded=True, elapsed_seconds=700, deadline_seconds=600, state=sl.GIVE_UP) == sl.COMPLETE


def test_heartbeat_command_names_the_hook_group_and_instance():
    command = sl.heartbeat_command("aws", "launch-verified", "g", "i-0abc", "us-east-1")
    assert command[1:3] == ["autoscaling", "record-lifecycle-action-heartbeat"]
    at = {command[i]: command[i + 1] for i in range(3, len(command) - 1, 2)}
    assert at == {
        "--region": "us-east-1",
        "--lifecycle-hook-name": "launch-verified",
        "--auto-scaling-group-name": "g",
        "--instance-id": "i-0abc",
    }
