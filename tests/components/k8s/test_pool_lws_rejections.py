"""hosts_per_replica: every bad value is refused before anything is registered, naming the input, the
value, what is allowed and why; the planner takes several hosts only when no single machine holds it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel
from inference_infra.components.k8s.pool_profile import TPU_INFERENCE_COMMIT, plan_pool
from inference_infra.components.k8s.serving_pool import KubernetesServingPool, validate_serving_pool
from inference_infra.components.planner.servable import MAX_REPLICA_HOSTS
from tests.components.k8s.lws_cases import BIG_MODEL, LWS_EKS
from tests.components.k8s.pool_cases import EKS, GKE_TPU
from tests.components.k8s.test_serving_pool_nodes import EKS_NODES


def _problems(args, name="big"):
    return [(p.input, p.value, p.allowed) for p in validate_serving_pool(name, args)]


def test_pool_lws_rejects_hosts_on_a_tpu_pool_with_the_pinned_engines_reason(plan_of):
    args = replace(GKE_TPU, hosts_per_replica=2)
    ((key, value, allowed),) = _problems(args)
    assert (key, value) == ("hosts_per_replica", 2)
    assert "must be 1 on a TPU pool" in allowed
    assert TPU_INFERENCE_COMMIT[:9] in allowed
    with pytest.raises(InputError, match="hosts_per_replica"):
        KubernetesServingPool("big", args)
    assert plan_of().custom == []


def test_pool_lws_rejects_hosts_on_a_neuron_pool():
    args = replace(EKS, accelerator=AcceleratorFamily.AWS_NEURON, hosts_per_replica=2)
    ((key, value, allowed),) = _problems(args)
    assert (key, value) == ("hosts_per_replica", 2)
    assert "must be 1 on aws-neuron pools" in allowed
    assert "vLLM 0.9.1 (Neuron)" in allowed


def test_pool_lws_rejects_more_hosts_than_the_bound(plan_of):
    args = replace(LWS_EKS, hosts_per_replica=MAX_REPLICA_HOSTS + 1)
    ((key, value, allowed),) = _problems(args)
    assert (key, value) == ("hosts_per_replica", 5)
    assert allowed.startswith(f"must be 1 to {MAX_REPLICA_HOSTS}")
    with pytest.raises(InputError, match=r"hosts_per_replica 5 must be 1 to 4"):
        KubernetesServingPool("big", args)
    assert plan_of().custom == []


@pytest.mark.parametrize("hosts", [0, -1])
def test_pool_lws_rejects_hosts_below_one(hosts):
    (problem,) = validate_serving_pool("big", replace(LWS_EKS, hosts_per_replica=hosts))
    assert problem.input == "hosts_per_replica"
    assert problem.value == hosts


def test_pool_lws_rejects_a_model_one_host_already_holds():
    # Allowed would mean paying for a second p5 and a pipeline hop per token to hold what one p5 holds:
    # refused, saying so (replicas, not hosts, add throughput).
    args = replace(LWS_EKS, model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16))
    ((key, value, allowed),) = _problems(args)
    assert (key, value) == ("machine", "p5.48xlarge")
    assert "p5.48xlarge holds it on 1 host: a replica over 2 would cost 1 more machine(s)" in allowed


def test_pool_lws_rejects_hosts_that_still_do_not_hold_it():
    args = replace(LWS_EKS, machine="g6e.12xlarge")  # 2 x 4 x L40S 48 GB for 405B in BF16
    ((key, value, allowed),) = _problems(args)
    assert (key, value) == ("machine", "g6e.12xlarge")
    assert "g6e.12xlarge x 2 hosts (PP=2)" in allowed
    assert "too small for llama-3.1-405b" in allowed


def test_pool_lws_rejects_engine_args_that_set_the_groups_flags():
    model = replace(
        BIG_MODEL, engine_args=("--distributed-executor-backend", "ray", "--data-parallel-size", "2")
    )
    ((key, value, allowed),) = _problems(replace(LWS_EKS, model=model))
    assert (key, value) == ("model.engine_args", "--distributed-executor-backend, --data-parallel-size")
    assert "are set by the pool for a replica over 2 hosts" in allowed


def test_pool_lws_rejects_engine_args_that_set_the_plans_stages_or_ranks_each_by_index():
    # The plan's own flags (serving/flags.MANAGED_OPTIONS): refused for every engine, one problem each.
    model = replace(BIG_MODEL, engine_args=("--pipeline-parallel-size", "4", "--headless"))
    problems = _problems(replace(LWS_EKS, model=model))
    assert [(k, v) for k, v, _ in problems] == [
        ("model.engine_args[0]", "--pipeline-parallel-size"),
        ("model.engine_args[2]", "--headless"),
    ]
    assert all("is set from the capacity plan" in allowed for _, _, allowed in problems)


def test_pool_lws_planner_spans_hosts_only_when_no_single_machine_holds_it():
    # Named machine, hosts left to the planner: 405B does not fit one p5, so a group of two.
    named = plan_pool("big", replace(LWS_EKS, hosts_per_replica=None))
    assert named.problems == ()
    assert (named.machine, named.hosts_per_replica) == ("p5.48xlarge", 2)
    # Nothing named: a single 8 x B200 host holds 405B at 8k x 32, so one host (no LeaderWorkerSet).
    picked = plan_pool("big", replace(LWS_EKS, machine=None, hosts_per_replica=None))
    assert picked.problems == ()
    assert picked.hosts_per_replica == 1
    # Traffic no single AWS machine holds (64 x 32k tokens of KV cache): the fewest hosts that do.
    heavy = replace(BIG_MODEL, context_tokens=32768, concurrency=64)
    spread = plan_pool("big", replace(LWS_EKS, model=heavy, machine=None, hosts_per_replica=None))
    assert spread.problems == ()
    assert spread.hosts_per_replica == 2
    assert any("2 x" in n and "per replica" in n for n in spread.notes)


def test_pool_lws_hosts_one_keeps_a_deployment():
    plan = plan_pool("big", replace(EKS, hosts_per_replica=1))
    assert plan.problems == ()
    assert plan.hosts_per_replica == 1
    assert plan.engines.pipeline_parallel == 1


def test_pool_lws_rejects_node_disks_too_small_for_the_weights(plan_of):
    # Every host fetches the whole folder: 756 GiB of weights into an emptyDir on each node's disk.
    args = replace(LWS_EKS, nodes=EKS_NODES)
    ((key, value, allowed),) = _problems(args)
    assert (key, value) == ("nodes.root_volume_gib", 200)
    assert allowed.startswith(
        "must be at least 894: each of the 1 pod(s) on a p5.48xlarge node fetches 834 GiB"
    )
    with pytest.raises(InputError, match=r"nodes\.root_volume_gib 200 must be at least 894"):
        KubernetesServingPool("big", args)
    assert plan_of().custom == []
    assert _problems(replace(args, nodes=replace(EKS_NODES, root_volume_gib=894))) == []
