"""The replay's service times are the planner's step model, and a pool is planned as a fleet plans it."""

from __future__ import annotations

import pytest

from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.errors import InputError
from inference_infra.components.fleet.elastic import ElasticArgs, plan_scaling
from inference_infra.components.monitoring.serving import BUDGETS, Latency
from inference_infra.components.planner import Assumptions, Traffic, fit, model_spec
from inference_infra.components.planner.throughput import decode_step_seconds, first_token_seconds
from inference_infra.components.serving.cold_start import WeightSource
from inference_infra.components.serving.model import ServedModel, plan_serving
from inference_infra.components.simulate import ServiceModel, Trace, build_pool, mean_context_tokens

MODEL = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
TRACE = Trace.of([(0.0, 1000, 100), (1.0, 2000, 300)])


def test_service_model_uses_the_planners_steps():
    service = ServiceModel(MODEL, "g6e.xlarge", 1200.0)
    spec, assumptions = model_spec("llama-3.1-8b"), Assumptions()
    layout = fit(spec, MODEL.traffic(), MODEL.precision(), assumptions, find_instance_type("g6e.xlarge"))
    assert service.tpot_seconds == decode_step_seconds(
        spec, MODEL.precision(), assumptions, layout, layout.sequences_per_replica, 1200.0
    )
    traffic = Traffic(context_tokens=8192, concurrency=16, prompt_tokens=1024, output_tokens=1)
    assert service.prefill_seconds(1017) == first_token_seconds(
        spec, traffic, MODEL.precision(), assumptions, layout
    )
    assert service.service_seconds(1024, 101) == pytest.approx(
        service.prefill_seconds(1024) + 100 * service.tpot_seconds
    )
    assert service.slots == 16


def test_service_model_rejects_a_machine_too_small():
    with pytest.raises(InputError, match=r"does not fit g6\.xlarge"):
        ServiceModel(MODEL, "g6.xlarge", 1200.0)


def test_build_pool_plans_like_the_fleet():
    pool = build_pool(name="p", model=MODEL, machine="g6e.xlarge", peak=8, trace=TRACE, latency="batch")
    serving, _ = plan_serving(MODEL, machine="g6e.xlarge", cloud=Cloud.AWS, source=WeightSource.S3)
    assert pool.plan == plan_scaling(
        ElasticArgs(), peak=8, serving=serving, model=MODEL, machine="g6e.xlarge"
    )
    assert pool.cold_start_seconds == serving.cold_start.seconds
    assert pool.ttft_target_seconds == BUDGETS[Latency.BATCH].ttft_p99_seconds
    assert pool.usd_per_hour == 1.861  # the catalog's on-demand price, us-east-1
    assert pool.service.mean_context_tokens == mean_context_tokens(TRACE) == (1050 + 2150) / 2


def test_build_pool_rejects_bad_elastic_inputs_and_unknown_machines():
    with pytest.raises(InputError, match=r"elastic\.min_size"):
        build_pool(
            name="p", model=MODEL, machine="g6e.xlarge", peak=2, trace=TRACE, elastic=ElasticArgs(min_size=5)
        )
    with pytest.raises(InputError, match=r"machine 'g9\.huge' is not in the accelerator catalog"):
        build_pool(name="p", model=MODEL, machine="g9.huge", peak=2, trace=TRACE)
    with pytest.raises(InputError, match="latency 'fast' must be interactive or batch"):
        build_pool(name="p", model=MODEL, machine="g6e.xlarge", peak=2, trace=TRACE, latency="fast")


def test_service_model_prefill_is_bounded_by_the_engines_token_budget():
    from inference_infra.components.planner.engine import served_engine

    service = ServiceModel(MODEL, "g6e.xlarge", 1200.0)
    device = service.layout.hardware.device
    assert service.step_budget_tokens == served_engine(device.family).budget(device, 8192)
    # a step carries the budget less one token for each of the other 15 sequences decoding beside it
    room = service.step_budget_tokens - 15
    whole = room // 16 * 16
    assert service.prefill_tokens_per_s == pytest.approx(whole / service.prefill_seconds(whole))
    # a long prompt occupies its engine for P / rate; never longer than its own first-token time
    assert service.prefill_lane_seconds(4000) == pytest.approx(4000 / service.prefill_tokens_per_s)
    assert service.prefill_lane_seconds(4000) <= service.prefill_seconds(4000) * 1.01
    assert service.engines == service.layout.replicas == 1


def test_multi_host_service_is_the_k8s_pools_group_plan():
    # A LeaderWorkerSet pool's replayed "machine" is its group: the slots are the --max-num-seqs the pool
    # renders for its one engine over both hosts; its decode step (decode alone, prefill replayed apart)
    # is at most the plan's per-sequence decode over the hosts (a chunked round, prefill included).
    from inference_infra.components.fleet.elastic import decode_seconds_per_token
    from inference_infra.components.k8s.pool_profile import plan_pool
    from tests.components.k8s.lws_cases import LWS_EKS

    plan = plan_pool("big", LWS_EKS)
    assert plan.problems == ()
    model = LWS_EKS.model
    service = ServiceModel(model, plan.machine, model.context_tokens, plan.hosts_per_replica)
    assert (service.hosts, plan.hosts_per_replica) == (2, 2)
    assert service.slots == plan.engines.max_num_seqs * plan.engines.engines == 32
    assert service.layout.tensor_parallel == plan.engines.tensor_parallel == 8
    planned = decode_seconds_per_token(model, plan.machine, plan.hosts_per_replica)
    assert 0 < service.tpot_seconds <= planned
