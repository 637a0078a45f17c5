"""The servability check (planner/servable.py): what a fleet's pinned engine refuses, and how size,
the fleets' machine choice and the allowed-types policy use it (issues #37, #35 items 3 and 5)."""

from __future__ import annotations

import itertools
import json

import pytest

from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    PriceModel,
    accelerator,
    hourly_price,
    instance_type,
)
from inference_infra.components.cli import main
from inference_infra.components.errors import InputError
from inference_infra.components.planner import (
    Assumptions,
    Precision,
    Quantization,
    Traffic,
    choose_instance_type,
    fit,
    model_spec,
    resolve_instance_type,
    size,
)
from inference_infra.components.planner.allowed import DEFAULT_ALLOWED_TYPES, allowed, allowed_patterns
from inference_infra.components.planner.servable import (
    ENGINE_SUPPORT,
    RENDERED_KV,
    format_problem,
    hosts_problem,
    parallelism_problem,
    rendered_kv_cache_dtype,
    servable_problems,
    weight_format_problem,
)
from inference_infra.components.serving.engines import IMAGES, engine_family
from inference_infra.components.serving.flags import _KV_CACHE_DTYPE, engine_args, option_table, plan_engines

Q = Quantization
ISSUE = Traffic(context_tokens=8192, concurrency=64)  # issue #37's example
FP8 = Precision(weights=Q.FP8)


def device(key: str):
    return accelerator(key)


# --- the table against the pins and the rendered flags --------------------------------------------


def test_engine_support_names_the_pinned_engine_versions():
    for family, support in ENGINE_SUPPORT.items():
        assert support.engine_version == IMAGES[engine_family(family)].engine_version
        assert support.source
        assert support.as_of.isoformat() == "2026-12-02"


def test_engine_support_kv_formats_are_options_of_the_pinned_engines():
    for family, support in ENGINE_SUPPORT.items():
        table = option_table(engine_family(family))
        _, choices = table.options["--kv-cache-dtype"]
        assert set(support.kv_cache_dtypes) <= set(choices), family


def test_rendered_kv_cache_dtype_is_what_the_fleet_renders():
    assert dict(RENDERED_KV) == _KV_CACHE_DTYPE
    for weights, kv in itertools.product(Q, [None, *Q]):
        precision = Precision(weights=weights, kv_cache=kv)
        expected = rendered_kv_cache_dtype(precision)
        if expected is None:
            continue  # fp32 beside narrower weights: the fleet refuses it (validate_engine)
        config = plan_engines(
            model="llama-3.1-8b",
            traffic=Traffic(context_tokens=2048, concurrency=1),
            precision=precision,
            instance_type_name="p5.48xlarge",
            cloud="aws",
        )
        args = engine_args(config, 0, "/models")
        assert args[args.index("--kv-cache-dtype") + 1] == expected


# --- formats -------------------------------------------------------------------------------------------


def test_servable_tpu_takes_fp8_int8_int4_weights_and_fp8_kv():
    # tpu-inference 0.29.0 TpuPlatform.supported_quantization: fp8, compressed-tensors, auto_awq, ...
    v6e = device("tpu-v6e")
    for weights in (Q.BF16, Q.FP8, Q.INT8, Q.INT4):
        assert weight_format_problem(v6e, weights) is None
    assert format_problem(v6e, Precision(weights=Q.BF16, kv_cache=Q.FP8)) is None


def test_servable_rejects_int8_and_int4_kv_caches_on_tpu():
    for kv in (Q.INT8, Q.INT4):
        why = format_problem(device("tpu-v6e"), Precision(weights=Q.BF16, kv_cache=kv))
        assert why is not None
        assert f"--kv-cache-dtype {kv.value}_per_token_head" in why
        assert "to_jax_dtype" in why


def test_servable_rejects_quantized_weights_on_neuron():
    # The fleet renders --quantization fp8 (or leaves int8/int4 to the checkpoint's method); vLLM 0.9.1's
    # NeuronPlatform accepts only neuron_quant and fbgemm_fp8.
    inf2 = device("inferentia2")
    for weights in (Q.FP8, Q.INT8, Q.INT4):
        why = weight_format_problem(inf2, weights)
        assert why is not None
        assert "neuron_quant, fbgemm_fp8" in why
    assert weight_format_problem(inf2, Q.BF16) is None
    assert format_problem(inf2, Precision(weights=Q.BF16, kv_cache=Q.FP8)) is None
    assert "refuses --kv-cache-dtype float16" in format_problem(
        inf2, Precision(weights=Q.BF16, kv_cache=Q.FP16)
    )


def test_servable_rejects_bf16_on_the_t4_and_takes_fp16_and_fp8():
    t4 = device("t4")
    assert "compute capability 7.5; bfloat16 needs 8.0" in weight_format_problem(t4, Q.BF16)
    assert weight_format_problem(t4, Q.FP16) is None
    assert weight_format_problem(t4, Q.FP8) is None  # vLLM 0.28.0's FP8 Marlin runs from 7.5
    assert weight_format_problem(device("a100-80gb"), Q.BF16) is None


def test_servable_rejects_an_fp32_cache_beside_narrower_weights():
    why = format_problem(device("h100-80gb"), Precision(weights=Q.BF16, kv_cache=Q.FP32))
    assert why is not None
    assert "no fp32 cache" in why


# --- hosts and parallelism -----------------------------------------------------------------------------


def test_servable_rejects_a_multi_host_slice_and_names_the_single_host_ones():
    why = hosts_problem(instance_type("v6e-16", "gcp"), AcceleratorFamily.GOOGLE_TPU)
    assert why is not None
    assert "v6e-16 spans 4 hosts" in why
    assert "multi_host_engine_problem" in why
    assert "v6e-8" in why.split("single-host slice")[1]
    assert hosts_problem(instance_type("v6e-8", "gcp"), AcceleratorFamily.GOOGLE_TPU) is None


def test_servable_rejects_a_degree_the_engine_does_not_accept():
    spec, p5 = model_spec("llama-3.1-70b"), instance_type("p5.48xlarge", "aws")
    assert "does not divide" in parallelism_problem(spec, 3, p5, 8)
    assert "more than the 4 devices of one host" in parallelism_problem(
        spec, 8, instance_type("v5litepod-16", "gcp"), 16
    )
    assert parallelism_problem(spec, 8, p5, 8) is None


def test_servable_problems_include_the_memory_reason():
    spec = model_spec("llama-3.1-405b")
    layout = fit(spec, ISSUE, Precision(), Assumptions(), instance_type("g6.xlarge", "aws"))
    assert any("too small" in p for p in servable_problems(spec, Precision(), layout))


# --- size: only servable options by default, --all adds the rest with why ------------------------------


def test_size_no_longer_ranks_the_multi_host_slice_of_issue_37():
    sizing = size("llama-3.1-70b", ISSUE, precision=FP8, cloud="gcp")
    assert all(instance_type(o.instance_type, "gcp").hosts == 1 for o in sizing.options)
    refused = {r.instance_type: r for r in sizing.refused}
    assert refused["v6e-16"].option is not None  # it holds the model: the figures are kept for --all
    assert any("spans 4 hosts" in why for why in refused["v6e-16"].reasons)


def test_size_json_all_lists_the_refused_machines_with_why(capsys):
    argv = ["size", "--model", "llama-3.1-70b", "--quant", "fp8", "--context", "8192", "--concurrency", "64"]
    assert main([*argv, "--cloud", "gcp", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "refused" not in plain
    assert "v6e-16" not in {o["instance_type"] for o in plain["options"]}
    assert main([*argv, "--cloud", "gcp", "--json", "--all"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["options"] == plain["options"]
    by_name = {r["instance_type"]: r for r in doc["refused"]}
    assert set(by_name) & {o["instance_type"] for o in doc["options"]} == set()
    assert by_name["v6e-16"]["usd_per_million_tokens"] > 0
    assert "spans 4 hosts" in by_name["v6e-16"]["refused_because"][0]
    small = by_name["g2-standard-4"]  # one L4: too small, no figures
    assert small["usd_per_million_tokens"] is None
    assert "too small" in small["refused_because"][-1]


def test_size_text_all_marks_each_refused_machine(capsys):
    argv = ["size", "--model", "llama-3.1-70b", "--quant", "fp8", "--context", "8192", "--concurrency", "64"]
    assert main([*argv, "--cloud", "gcp"]) == 0
    text = capsys.readouterr().out
    assert "v6e-16" not in text
    assert "(--all lists them with why)" in text
    assert main([*argv, "--cloud", "gcp", "--all"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Refused (a fleet would not serve the model on these):" in text
    assert "gcp v6e-16 (16 x TPU v6e; $8.296/1M tok, TP=4): v6e-16 spans 4 hosts" in text


def test_size_reports_when_every_machine_that_holds_it_is_refused():
    with pytest.raises(InputError, match="hold it but a fleet would refuse them") as raised:
        size("llama-3.1-405b", Traffic(context_tokens=4096, concurrency=4), cloud="gcp")
    assert [p.input for p in raised.value.problems] == ["model"]


# --- region and market (#35 item 3) ------------------------------------------------------------------


def test_size_prices_in_the_region_and_leaves_out_what_the_catalog_lacks_there():
    sizing = size("llama-3.1-8b", Traffic(context_tokens=4096, concurrency=8), cloud="gcp", region="us-east5")
    assert sizing.notes
    assert sizing.notes[0].startswith("the catalog has no us-east5 price for ")
    assert sizing.options
    assert all(o.price.basis.endswith(" us-east5") for o in sizing.options)
    lacking = [r for r in sizing.refused if any("no us-east5 price" in why for why in r.reasons)]
    assert lacking
    assert all("us-east5" not in r.fit.hardware.instance.hourly_usd for r in lacking)


def test_size_says_first_when_the_catalog_prices_nothing_in_the_region(capsys):
    argv = ["size", "--model", "llama-3.1-8b", "--context", "4096", "--concurrency", "8", "--cloud", "gcp"]
    assert main([*argv, "--region", "europe-west4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("Note: the catalog prices none of the ")
    assert "in europe-west4 (it prices us-central1," in out
    assert "(reference; no europe-west4 price in the catalog)" in out  # each option's basis, as the plan's


def test_size_rejects_an_unknown_region(capsys):
    code = main(
        ["size", "--model", "llama-3.1-8b", "--context", "4096", "--concurrency", "8", "--region", "mars-1"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "region 'mars-1'" in err
    assert "us-central1" in err
    assert "Traceback" not in err


def test_choose_instance_type_prices_the_pick_where_and_how_the_fleet_runs():
    choice = choose_instance_type(
        "llama-3.1-8b",
        Traffic(context_tokens=4096, concurrency=8),
        "gcp",
        purchase=PriceModel.SPOT,
        families={AcceleratorFamily.NVIDIA_GPU},
        region="us-east4",
    )
    basis = choice.option.price.basis
    assert basis.endswith(" us-east4")
    assert basis in choice.summary()
    assert "spot" in basis
    assert (
        basis
        == hourly_price(
            instance_type(choice.instance_type, "gcp"), region="us-east4", model=PriceModel.SPOT
        ).basis
    )


def test_choose_instance_type_says_when_it_does_not_know_the_region():
    choice = choose_instance_type(
        "llama-3.1-8b", Traffic(context_tokens=4096, concurrency=8), "gcp", region="mars-1"
    )
    assert "mars-1 is not a region the catalog knows" in choice.summary()


# --- allowed types (#35 item 5) ------------------------------------------------------------------------


def test_allowed_patterns_read_the_policys_default():
    assert allowed_patterns("dev") == (("@one-accelerator",), "*")
    # Production by the library's rule (a name starting with prod or prd): the @production entry.
    for production in ("prod", "production-eu", "prd"):
        assert allowed_patterns(production) == (("*",), "@production")
    assert allowed_patterns("preprod") == (("@one-accelerator",), "*")
    assert allowed("v5litepod-1", DEFAULT_ALLOWED_TYPES["*"])
    assert not allowed("v6e-4", DEFAULT_ALLOWED_TYPES["*"])


def test_a_pick_keeps_to_the_types_the_pack_allows_in_the_environment():
    traffic = Traffic(context_tokens=8192, concurrency=16)
    anywhere = choose_instance_type("llama-3.1-8b", traffic, "aws", families={AcceleratorFamily.NVIDIA_GPU})
    assert not anywhere.instance_type.startswith("g5.")
    g5_only = {"dev": ["g5.*"], "*": ["@one-accelerator"]}
    dev = choose_instance_type(
        "llama-3.1-8b",
        traffic,
        "aws",
        families={AcceleratorFamily.NVIDIA_GPU},
        environment="dev",
        allowed_types=g5_only,
    )
    assert dev.instance_type.startswith("g5.")
    assert "among the machines allowed in environment 'dev' (allowedTypes['dev'])" in dev.summary()
    prod = choose_instance_type(
        "llama-3.1-8b", traffic, "aws", families={AcceleratorFamily.NVIDIA_GPU}, environment="prod"
    )
    assert prod.instance_type == anywhere.instance_type  # prod allows "*": no restriction, no note
    assert "allowed" not in prod.summary()


def test_a_tpu_pick_in_dev_says_why_it_lies_outside_the_default_pack():
    # Issue #35: a TpuVm with no type picked a 4-chip slice that the dev pack refuses, and nothing said so.
    found = resolve_instance_type(
        instance_type_name=None,
        model="llama-3.1-8b",
        traffic=Traffic(context_tokens=8192, concurrency=32),
        cloud=Cloud.GCP,
        families={AcceleratorFamily.GOOGLE_TPU},
        environment="dev",
    )
    assert found.instance_type == "v5litepod-4"
    assert (
        "no machine allowed-accelerator-types allows in environment 'dev' (allowedTypes['*'])" in found.note
    )
    assert "widen allowedTypes['*'] in the policy config (e.g. add 'v5litepod-4')" in found.note


def test_a_pick_outside_the_allowed_types_says_why():
    found = resolve_instance_type(
        instance_type_name=None,
        model="llama-3.1-70b",
        traffic=Traffic(context_tokens=8192, concurrency=16),
        cloud=Cloud.AWS,
        families={AcceleratorFamily.NVIDIA_GPU},
        environment="dev",
    )
    assert found.instance_type is not None
    assert not found.problems
    assert "no machine allowed-accelerator-types allows in environment 'dev'" in found.note
    assert f"widen allowedTypes['*'] in the policy config (e.g. add '{found.instance_type}')" in found.note


# --- the fleets' machine choice (components/serving/model.py) -----------------------------------------


@pytest.fixture
def stack_config():
    from pulumi.runtime import config as pulumi_config

    def set_config(values: dict[str, str]) -> None:
        pulumi_config.set_all_config(values, [])

    yield set_config
    pulumi_config.set_all_config({}, [])


def test_choose_machine_prices_an_aws_pick_in_the_providers_region(stack_config):
    from inference_infra.components.fleet import ServedModel
    from inference_infra.components.serving.model import choose_machine

    stack_config({"aws:region": "us-west-2"})
    model = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
    found = choose_machine(model, None, cloud=Cloud.AWS, family=AcceleratorFamily.NVIDIA_GPU, spot_only=True)
    assert found.choice is not None
    basis = found.choice.option.price.basis
    assert basis.endswith(" us-west-2")
    assert "spot" in basis
    assert basis in found.note


def test_choose_machine_keeps_to_the_environments_allowed_types():
    from inference_infra.components.fleet import ServedModel
    from inference_infra.components.serving.model import choose_machine

    model = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=16)
    found = choose_machine(
        model, None, cloud=Cloud.GCP, family=AcceleratorFamily.GOOGLE_TPU, environment="dev"
    )
    assert "no machine allowed-accelerator-types allows in environment 'dev'" in found.note
    assert not found.problems


def test_a_spot_pick_without_a_spot_figure_says_it_is_ranked_at_on_demand():
    # Issue #35: a europe-west4 fleet was picked at us-central1's spot rate and billed on-demand.
    choice = choose_instance_type(
        "llama-3.1-8b",
        Traffic(context_tokens=8192, concurrency=16),
        "gcp",
        purchase=PriceModel.SPOT,
        families={AcceleratorFamily.NVIDIA_GPU},
        region="europe-west4",
    )
    on_demand = hourly_price(instance_type(choice.instance_type, "gcp"), region="europe-west4")
    assert choice.option.hourly_usd == on_demand.hourly_usd
    assert "/h spot, at the on-demand rate (no spot figure)" in choice.summary()
    assert "no europe-west4 price in the catalog" in choice.summary()
