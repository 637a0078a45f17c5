import pytest

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    PriceModel,
    hourly_price,
    instance_type,
)
from inference_infra.components.catalog.spot import spot_row
from inference_infra.components.errors import InputError
from inference_infra.components.planner import (
    ModelSpec,
    NothingFitsError,
    Precision,
    Quantization,
    Traffic,
    size,
    usd_per_million_tokens,
)

OPTION_KEYS = {
    "cloud",
    "instance_type",
    "accelerator",
    "accelerators",
    "tensor_parallel",
    "hourly_usd",
    "est_tokens_per_s",
    "usd_per_million_tokens",
    "memory_utilization",
}
FP8 = Precision(weights=Quantization.FP8)


def test_usd_per_million_tokens_is_hourly_price_over_tokens_per_hour():
    assert usd_per_million_tokens(3.6, 1000) == pytest.approx(1.0)  # 3.6M tokens/h for $3.60
    assert usd_per_million_tokens(55.04, 2000) == pytest.approx(55.04 / 7.2)
    assert usd_per_million_tokens(1.0, 0) == float("inf")


def test_size_ranks_options_by_usd_per_million_tokens():
    sizing = size("llama-3.1-70b", Traffic(context_tokens=8192, concurrency=32), precision=FP8)
    costs = [o.usd_per_million_tokens for o in sizing.options]
    assert costs == sorted(costs)
    assert len(sizing.options) > 10
    assert sizing.best is sizing.options[0]
    assert {o.cloud for o in sizing.options} == {Cloud.AWS, Cloud.GCP}


def test_size_prices_each_option_from_the_catalog():
    sizing = size("llama-3.1-8b", Traffic(context_tokens=4096, concurrency=8), cloud="aws")
    for o in sizing.options:
        catalog = hourly_price(instance_type(o.instance_type, "aws"))
        assert o.hourly_usd == catalog.hourly_usd
        assert o.usd_per_million_tokens == pytest.approx(o.hourly_usd / (o.est_tokens_per_s * 3600) * 1e6)


def test_size_prices_spot_from_the_snapshot_by_type_and_region():
    traffic = Traffic(context_tokens=4096, concurrency=8)
    on_demand = {o.instance_type: o for o in size("llama-3.1-8b", traffic, cloud="aws").options}
    spot = size("llama-3.1-8b", traffic, cloud="aws", purchase=PriceModel.SPOT)
    for o in spot.options:
        row = spot_row("aws", o.instance_type, instance_type(o.instance_type, "aws").reference_region)
        expected = row.highest_usd if row else on_demand[o.instance_type].hourly_usd
        assert o.hourly_usd == pytest.approx(expected)
        assert "spot" in o.price.basis
    assert spot.best.usd_per_million_tokens < min(o.usd_per_million_tokens for o in on_demand.values())


def test_size_json_has_exactly_the_spec_shape():
    sizing = size("mixtral-8x7b", Traffic(context_tokens=4096, concurrency=16))
    doc = sizing.as_json()
    assert set(doc) == {"model", "memory", "options"}
    assert doc["model"] == "mixtral-8x7b"
    assert set(doc["memory"]) == {"weights_gib", "kv_cache_gib", "activation_gib", "total_gib"}
    assert doc["memory"]["kv_cache_gib"] == 8.0  # 2 x 32 x 8 x 128 x 2 B x 4,096 x 16
    for option in doc["options"]:
        assert set(option) == OPTION_KEYS
        assert option["cloud"] in {"aws", "gcp"}
        assert 0 < option["memory_utilization"] <= 0.9
    costs = [o["usd_per_million_tokens"] for o in doc["options"]]
    assert costs == sorted(costs)


def test_size_filters_by_cloud_and_family():
    traffic = Traffic(context_tokens=4096, concurrency=8)
    gcp = size("llama-3.1-8b", traffic, cloud="gcp")
    assert {o.cloud for o in gcp.options} == {Cloud.GCP}
    tpu = size("llama-3.1-8b", traffic, families={AcceleratorFamily.GOOGLE_TPU})
    assert {o.fit.hardware.device.family for o in tpu.options} == {AcceleratorFamily.GOOGLE_TPU}


def test_size_explains_every_option_with_memory_per_device_and_tp_degree():
    sizing = size("llama-3.1-70b", Traffic(context_tokens=4096, concurrency=16), precision=FP8, cloud="aws")
    for o in sizing.options:
        text = o.explanation()
        assert f"TP={o.fit.tensor_parallel}" in text
        assert f"per {o.fit.hardware.unit_name}:" in text
        assert f"({o.memory_utilization:.0%}; ceiling" in text
        assert "per million generated tokens" in text


def test_size_rejects_more_than_one_machine_can_hold_with_the_figures():
    with pytest.raises(NothingFitsError) as e:
        size("llama-3.1-405b", Traffic(context_tokens=131072, concurrency=64), cloud="aws")
    message = str(e.value)
    assert message.startswith("nothing in the aws catalog fits.")
    assert "756.0 GiB weights + 4032.0 GiB KV cache (63 GiB per sequence)" in message
    assert "Closest: p6-b200.48xlarge" in message
    assert "quantize the weights (--quant fp8 or int4)" in message
    assert isinstance(e.value, InputError)


def test_size_rejects_unknown_model_and_bad_traffic_together():
    with pytest.raises(InputError) as e:
        size("gpt-5", Traffic(context_tokens=0, concurrency=1), cloud="azure")
    assert [p.input for p in e.value.problems] == ["model", "context_tokens", "cloud"]
    assert "cloud 'azure' must be aws, gcp or any" in str(e.value)


def test_size_rejects_negative_host_and_step_times_by_name():
    from inference_infra.components.planner import Assumptions

    with pytest.raises(InputError) as e:
        size(
            "llama-3.1-8b",
            Traffic(context_tokens=4096, concurrency=8),
            cloud="aws",
            assumptions=Assumptions(step_overhead_ms=-1.0, sequence_overhead_us=-5),
        )
    assert [p.input for p in e.value.problems] == ["step_overhead_ms", "sequence_overhead_us"]
    assert "sequence_overhead_us" in str(e.value)
    assert "-5" in str(e.value)


def test_size_accepts_a_custom_model_spec():
    custom = ModelSpec(
        name="in-house-3b",
        layers=28,
        hidden_size=3072,
        attention_heads=24,
        kv_heads=8,
        head_dim=128,
        intermediate_size=8192,
        vocab_size=128256,
        max_context_tokens=32768,
    )
    sizing = size(custom, Traffic(context_tokens=8192, concurrency=4), cloud="aws")
    assert sizing.model is custom
    assert sizing.as_json()["model"] == "in-house-3b"
    assert sizing.best.fit.tensor_parallel == 1


def test_candidate_instances_leave_out_capacity_block_only_types():
    from inference_infra.components.planner.sizing import candidate_instances

    names = {i.name for i in candidate_instances("aws")}
    assert "p5e.48xlarge" not in names
    assert "p5en.48xlarge" in names
