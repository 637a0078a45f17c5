import pytest

from inference_infra.components.catalog import AcceleratorFamily, Cloud, PriceModel
from inference_infra.components.errors import InputError
from inference_infra.components.planner import (
    NothingFitsError,
    Precision,
    Quantization,
    Traffic,
    check_fit,
    choose_instance_type,
    resolve_instance_type,
    size,
)

TRAFFIC = Traffic(context_tokens=8192, concurrency=16)
FP8 = Precision(weights=Quantization.FP8)


def test_choose_instance_type_picks_the_cheapest_fitting_machine_on_the_cloud():
    choice = choose_instance_type("llama-3.1-70b", TRAFFIC, "aws", precision=FP8)
    ranked = size("llama-3.1-70b", TRAFFIC, cloud="aws", precision=FP8).options
    assert choice.cloud is Cloud.AWS
    assert choice.instance_type == ranked[0].instance_type
    assert choice.summary().startswith(
        f"llama-3.1-70b (fp8 weights, bf16 KV cache, 16 x 8,192 tokens) -> {ranked[0].instance_type}: TP="
    )
    assert f"; cheapest of {len(ranked)} a fleet can serve)" in choice.summary()
    assert f"({ranked[0].price.basis};" in choice.summary()  # the price basis the plan's cost table states


def test_choose_instance_type_keeps_to_the_fleets_accelerator_family():
    gpu = choose_instance_type(
        "llama-3.1-8b", TRAFFIC, "aws", PriceModel.SPOT, families={AcceleratorFamily.NVIDIA_GPU}
    )
    assert gpu.option.fit.hardware.device.family is AcceleratorFamily.NVIDIA_GPU
    assert gpu.option.purchase is PriceModel.SPOT
    neuron = choose_instance_type("llama-3.1-8b", TRAFFIC, "aws", families={AcceleratorFamily.AWS_NEURON})
    assert neuron.instance_type.startswith(("inf2.", "trn1"))
    tpu = choose_instance_type("llama-3.1-8b", TRAFFIC, "gcp", families={AcceleratorFamily.GOOGLE_TPU})
    assert tpu.instance_type.startswith("v")


def test_choose_instance_type_rejects_when_nothing_fits():
    with pytest.raises(NothingFitsError, match="nothing in the gcp catalog fits"):
        choose_instance_type(
            "llama-3.1-405b",
            Traffic(context_tokens=131072, concurrency=64),
            "gcp",
            families={AcceleratorFamily.NVIDIA_GPU},
        )


def test_check_fit_accepts_a_machine_that_holds_the_model():
    assert check_fit("llama-3.1-70b", TRAFFIC, "p5.48xlarge", precision=FP8) == []
    assert check_fit("llama-3.1-8b", TRAFFIC, "inf2.48xlarge", cloud="aws") == []


def test_check_fit_rejects_a_machine_that_is_too_small_with_memory_figures():
    problems = check_fit(
        "llama-3.1-70b", TRAFFIC, "g5.12xlarge", input_name="inference-infra:awsGpuFleets[0].instanceType"
    )
    assert len(problems) == 1
    message = str(problems[0])
    assert message.startswith(
        "inference-infra:awsGpuFleets[0].instanceType 'g5.12xlarge' cannot serve this model: g5.12xlarge"
        " (4 x NVIDIA A10G 24GB) is too small for llama-3.1-70b with bf16 weights, bf16 KV cache"
    )
    assert "each GPU needs 32.9 GiB weights + 10.0 GiB KV cache" in message
    assert "over the 21.6 GiB ceiling (90% of 24 GiB)" in message
    assert (
        "`inference-infra size --model llama-3.1-70b --quant bf16 --kv-quant bf16 --context 8192" in message
    )


def test_check_fit_rejects_an_unsupported_format_on_the_device():
    problems = check_fit(
        "llama-3.1-8b", TRAFFIC, "inf2.xlarge", precision=Precision(weights=Quantization.INT4)
    )
    assert len(problems) == 1
    assert "not int4" in str(problems[0])


def test_check_fit_rejects_unknown_instance_type_with_close_matches():
    problems = check_fit("llama-3.1-8b", TRAFFIC, "p5.48xlarg", cloud="aws")
    assert [p.input for p in problems] == ["instance_type"]
    assert "close matches: p5.48xlarge" in str(problems[0])


def test_check_fit_reports_unknown_model_and_bad_traffic_as_problems():
    problems = check_fit("llama-9", Traffic(context_tokens=1024, concurrency=0), "p5.48xlarge")
    assert [p.input for p in problems] == ["model", "concurrency"]


def test_choose_instance_type_rejects_bad_input():
    with pytest.raises(
        InputError, match=r"model 'lama-3\.1-8b' is not a model preset; did you mean llama-3\.1-8b"
    ):
        choose_instance_type("lama-3.1-8b", TRAFFIC, "aws")


def test_resolve_instance_type_chooses_when_only_a_model_is_given():
    r = resolve_instance_type(
        instance_type_name=None,
        model="llama-3.1-8b",
        traffic=TRAFFIC,
        cloud="gcp",
        families={AcceleratorFamily.NVIDIA_GPU},
    )
    assert r.problems == ()
    assert r.choice is not None
    assert r.instance_type == r.choice.instance_type
    assert r.note.startswith(
        f"planner chose llama-3.1-8b (bf16 weights, bf16 KV cache, 16 x 8,192 tokens) -> {r.instance_type}"
    )


def test_resolve_instance_type_checks_an_explicit_type_against_the_model():
    ok = resolve_instance_type(
        instance_type_name="p5.48xlarge", model="llama-3.1-70b", traffic=TRAFFIC, cloud="aws", precision=FP8
    )
    assert (ok.instance_type, ok.problems, ok.choice) == ("p5.48xlarge", (), None)
    assert ok.note == "p5.48xlarge checked: llama-3.1-70b fits at TP=2, 50% of GPU memory"
    bad = resolve_instance_type(
        instance_type_name="g5.xlarge",
        model="llama-3.1-70b",
        traffic=TRAFFIC,
        cloud="aws",
        instance_type_key="inference-infra:awsGpuFleets[1].instanceType",
    )
    assert [p.input for p in bad.problems] == ["inference-infra:awsGpuFleets[1].instanceType"]
    assert "each GPU needs 131.4 GiB weights + 40.0 GiB KV cache (16 sequences)" in str(bad.problems[0])


def test_resolve_instance_type_passes_an_explicit_type_through_without_a_model():
    r = resolve_instance_type(instance_type_name="g6.xlarge", model=None, traffic=None, cloud="aws")
    assert (r.instance_type, r.problems, r.note) == ("g6.xlarge", (), "")


def test_resolve_instance_type_rejects_neither_type_nor_model():
    r = resolve_instance_type(
        instance_type_name=None, model=None, traffic=None, cloud="aws", instance_type_key="gpu.instanceType"
    )
    assert [str(p) for p in r.problems] == ["gpu.instanceType (unset) is required unless model is set"]


def test_resolve_instance_type_names_the_config_keys_of_bad_model_settings():
    r = resolve_instance_type(
        instance_type_name=None,
        model="llama-3.1-8b",
        traffic=Traffic(context_tokens=1024, concurrency=0, output_tokens=4096),
        cloud="aws",
        model_key="fleet.model",
    )
    assert [p.input for p in r.problems] == ["fleet.model.concurrency", "fleet.model.outputTokens"]
    assert r.instance_type is None


def test_resolve_instance_type_rejects_a_model_no_fleet_machine_holds():
    r = resolve_instance_type(
        instance_type_name=None,
        model="llama-3.1-405b",
        traffic=Traffic(context_tokens=8192, concurrency=4),
        cloud="aws",
        families={AcceleratorFamily.AWS_NEURON},
        precision=Precision(weights=Quantization.INT4),
    )
    assert [p.input for p in r.problems] == ["model"]
    assert "fits no aws machine this fleet can use: nothing in the aws catalog fits" in str(r.problems[0])
    assert "not int4" in str(r.problems[0])


def test_resolve_instance_type_never_picks_a_multi_host_slice_for_a_served_model():
    # 405B needs a pod slice, which the pinned vLLM TPU build cannot serve: with or without max_hosts the
    # planner refuses, and says why (servable.py's hosts check, the one the TpuVm applies).
    for max_hosts in (None, 1):
        found = resolve_instance_type(
            instance_type_name=None,
            model="llama-3.1-405b",
            traffic=Traffic(context_tokens=4096, concurrency=4),
            cloud=Cloud.GCP,
            families={AcceleratorFamily.GOOGLE_TPU},
            max_hosts=max_hosts,
        )
        assert found.instance_type is None
        assert [p.input for p in found.problems] == ["model"]
        assert "fits no gcp machine" in found.problems[0].allowed
