"""Throughput depends on prompt and output lengths (`size --prompt-tokens/--output-tokens`)."""

from __future__ import annotations

import json

from inference_infra.components.cli import main
from inference_infra.components.planner import Traffic, size, validate_traffic

BASE = [
    "size",
    "--model",
    "llama-3.1-8b",
    "--context",
    "8192",
    "--concurrency",
    "16",
    "--cloud",
    "aws",
    "--json",
]


def _tps(traffic: Traffic) -> dict[str, float]:
    return {
        o.instance_type: o.throughput.tokens_per_s for o in size("llama-3.1-8b", traffic, cloud="aws").options
    }


def test_traffic_prompt_tokens_defaults_to_context_minus_output():
    assert Traffic(context_tokens=8192, concurrency=1, output_tokens=1024).prompt == 7168
    assert Traffic(context_tokens=8192, concurrency=1, output_tokens=1024, prompt_tokens=128).prompt == 128


def test_estimate_falls_as_the_prompt_grows_and_rises_with_longer_outputs():
    short = _tps(Traffic(context_tokens=8192, concurrency=16, output_tokens=512, prompt_tokens=128))
    long = _tps(Traffic(context_tokens=8192, concurrency=16, output_tokens=512, prompt_tokens=7000))
    chatty = _tps(Traffic(context_tokens=8192, concurrency=16, output_tokens=4096, prompt_tokens=1024))
    terse = _tps(Traffic(context_tokens=8192, concurrency=16, output_tokens=64, prompt_tokens=1024))
    neuron = {m for m in short if m.startswith(("inf2", "trn1"))}
    assert neuron
    for machine in short:
        assert short[machine] > long[machine]
    for machine in neuron:
        # prompts are encoded in steps of their own on Neuron: a longer output spreads that cost
        assert chatty[machine] > terse[machine]


def test_validate_traffic_rejects_a_prompt_that_leaves_no_room_for_the_output():
    (problem,) = validate_traffic(
        Traffic(context_tokens=4096, concurrency=1, output_tokens=512, prompt_tokens=4000)
    )
    assert problem.input == "prompt_tokens"
    assert "3584" in problem.allowed


def test_size_cli_prompt_tokens_changes_the_estimate_and_rejects_too_long(capsys):
    assert main([*BASE, "--prompt-tokens", "128", "--output-tokens", "512"]) == 0
    short = {
        o["instance_type"]: o["est_tokens_per_s"] for o in json.loads(capsys.readouterr().out)["options"]
    }
    assert main([*BASE, "--prompt-tokens", "7000", "--output-tokens", "512"]) == 0
    long = {o["instance_type"]: o["est_tokens_per_s"] for o in json.loads(capsys.readouterr().out)["options"]}
    assert all(short[k] > long[k] for k in long)
    assert main([*BASE, "--prompt-tokens", "8000", "--output-tokens", "512"]) == 2
    assert "--prompt-tokens 8000" in capsys.readouterr().err
