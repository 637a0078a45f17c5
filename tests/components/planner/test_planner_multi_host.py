"""A replica over several identical GPU hosts (fit.multi_host_fit): memory per pipeline stage, the price
of N machines, the stated pipeline penalty, the bound, and the one-host callers (VM fleets) unchanged."""

from __future__ import annotations

import math

import pytest

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    PriceModel,
    hourly_price,
    instance_type,
)
from inference_infra.components.planner import Assumptions, Precision, Traffic, model_spec
from inference_infra.components.planner.fit import fit, stage_share, stage_weight_share
from inference_infra.components.planner.servable import MAX_REPLICA_HOSTS, servable_problems
from inference_infra.components.planner.sizing import NothingFitsError, size
from inference_infra.components.planner.throughput import PIPELINE_EFFICIENCY, estimate
from inference_infra.components.planner.wiring import check_fit, resolve_instance_type

SPEC = model_spec("llama-3.1-405b")
TRAFFIC = Traffic(context_tokens=8192, concurrency=32)
P5 = instance_type("p5.48xlarge", Cloud.AWS)
GPU = {AcceleratorFamily.NVIDIA_GPU}


def test_multi_host_fit_splits_weights_and_kv_cache_over_the_stages():
    one = fit(SPEC, TRAFFIC, Precision(), Assumptions(), P5)
    two = fit(SPEC, TRAFFIC, Precision(), Assumptions(), P5, hosts=2)
    assert not one.fits  # 405B in BF16 (~755 GiB) is more than 8 x 80 GB
    assert two.fits
    assert two.hosts == 2
    assert two.pipeline_parallel == 2
    assert two.tensor_parallel == 8  # every GPU of a host: the largest degree the 128 heads allow
    assert two.replicas == 1
    assert two.sequences_per_replica == TRAFFIC.concurrency
    # Llama 3.1 405B has 126 layers: 63 per stage; the busiest stage also holds one vocabulary table.
    assert stage_share(SPEC, 2) == 63 / 126
    assert stage_share(SPEC, 3) == 42 / 126
    assert stage_share(SPEC, 4) == math.ceil(126 / 4) / 126
    table = SPEC.vocab_size * SPEC.hidden_size
    expected = ((SPEC.params - 2 * table) * 0.5 + table) / SPEC.params
    assert stage_weight_share(SPEC, 2) == pytest.approx(expected)
    whole = SPEC.params * 2 / 8 / 2**30  # BF16 weights over TP=8, one stage holding everything
    assert two.per_device.weights_gib == pytest.approx(whole * expected)
    assert two.per_device.total_gib <= two.ceiling_gib
    assert "PP=2 over 2 hosts" in two.describe()


def test_multi_host_fit_says_how_short_it_falls():
    small = instance_type("g6e.12xlarge", Cloud.AWS)  # 4 x L40S 48 GB: 2 hosts hold 384 GB
    layout = fit(SPEC, TRAFFIC, Precision(), Assumptions(), small, hosts=2)
    assert not layout.fits
    assert layout.problem.startswith("g6e.12xlarge x 2 hosts (PP=2)")
    assert "too small for llama-3.1-405b" in layout.problem


def test_size_of_one_host_refuses_what_only_several_hold():
    with pytest.raises(NothingFitsError):
        size(SPEC.name, TRAFFIC, candidates=[P5])


def test_size_replica_price_is_hosts_times_the_machine_and_throughput_the_stage_group_times_penalty():
    sizing = size(SPEC.name, TRAFFIC, candidates=[P5], hosts_per_replica=2, region="us-east-1")
    (option,) = sizing.options

    machine = hourly_price(P5, region="us-east-1", model=PriceModel.ON_DEMAND)
    assert option.hourly_usd == pytest.approx(2 * machine.hourly_usd)
    assert option.price.basis.startswith("2 machines x ")
    group = estimate(SPEC, TRAFFIC, Precision(), Assumptions(), option.fit)
    assert option.est_tokens_per_s == pytest.approx(group.tokens_per_s * PIPELINE_EFFICIENCY)
    assert "an assumption dated 2026-12-02" in option.throughput.efficiency_caveat
    assert option.as_json()["hosts_per_replica"] == 2
    assert "hosts_per_replica" not in size("llama-3.1-8b", TRAFFIC, candidates=[P5]).best.as_json()


def test_size_rejects_more_hosts_than_the_model_needs():
    # Llama 3.1 8B fits one p5: a replica over two would buy a machine and a pipeline stage for nothing.
    with pytest.raises(NothingFitsError, match="holds it on 1 host"):
        size("llama-3.1-8b", TRAFFIC, candidates=[P5], hosts_per_replica=2)


def test_servable_rejects_multi_host_replicas_beyond_the_bound_and_off_nvidia():
    five = fit(SPEC, TRAFFIC, Precision(), Assumptions(), P5, hosts=MAX_REPLICA_HOSTS + 1)
    four = fit(SPEC, TRAFFIC, Precision(), Assumptions(), P5, hosts=MAX_REPLICA_HOSTS)
    assert any(
        f"at most {MAX_REPLICA_HOSTS} hosts" in r for r in servable_problems(SPEC, Precision(), five, four)
    )
    trn = instance_type("trn1.32xlarge", Cloud.AWS)
    layout = fit(SPEC, TRAFFIC, Precision(), Assumptions(), trn, hosts=2)
    reasons = servable_problems(SPEC, Precision(), layout)
    assert any("serves a replica on one host" in r for r in reasons)


def test_check_fit_of_a_named_machine_over_hosts():
    assert check_fit(SPEC.name, TRAFFIC, "p5.48xlarge", cloud="aws", hosts_per_replica=2) == []
    (problem,) = check_fit(SPEC.name, TRAFFIC, "p5.48xlarge", cloud="aws")
    assert "too small" in problem.allowed


def test_resolve_takes_the_fewest_hosts_only_when_asked():
    # hosts_per_replica None (a Kubernetes GPU pool): one host when one holds it, else the fewest.
    auto = resolve_instance_type(
        instance_type_name="p5.48xlarge",
        model=SPEC.name,
        traffic=TRAFFIC,
        cloud="aws",
        families=GPU,
        hosts_per_replica=None,
        max_replica_hosts=MAX_REPLICA_HOSTS,
    )
    assert auto.problems == ()
    assert auto.hosts_per_replica == 2
    assert "TP=8 x PP=2 over 2 x p5.48xlarge per replica" in auto.note
    small = resolve_instance_type(
        instance_type_name="p5.48xlarge",
        model="llama-3.1-8b",
        traffic=TRAFFIC,
        cloud="aws",
        families=GPU,
        hosts_per_replica=None,
        max_replica_hosts=MAX_REPLICA_HOSTS,
    )
    assert small.problems == ()
    assert small.hosts_per_replica == 1
    # The default (every VM fleet): one host, and a model no single machine holds is a problem.
    vm = resolve_instance_type(
        instance_type_name="p5.48xlarge", model=SPEC.name, traffic=TRAFFIC, cloud="aws", families=GPU
    )
    assert vm.hosts_per_replica == 1
    assert vm.problems
    assert "too small" in vm.problems[0].allowed
