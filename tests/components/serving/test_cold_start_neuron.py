"""A Neuron node's cold start says which case applies: precompiled artifacts from the model store, a compile
on the node (no set for its compile key), or a warm resume; the health-check grace follows the case."""

from __future__ import annotations

from inference_infra.components.serving.cold_start import (
    NEURON_COMPILE,
    NeuronCompile,
    WeightSource,
    cold_start,
    weights_gib,
    with_precompiled,
)
from inference_infra.components.serving.engines import EngineFamily


def _neuron(precompiled: bool):
    return cold_start(
        weights_gib=weights_gib("llama-3.1-8b"),
        source=WeightSource.S3,
        instance_type="inf2.8xlarge",
        family=EngineFamily.NEURON_VLLM,
        precompiled=precompiled,
    )


def test_cold_start_neuron_compiles_on_the_node_unless_precompiled():
    on_node, precompiled = _neuron(False), _neuron(True)
    assert on_node.neuron is NeuronCompile.ON_NODE
    assert precompiled.neuron is NeuronCompile.PRECOMPILED
    assert on_node.seconds - precompiled.seconds == NEURON_COMPILE.value
    assert "Neuron compile on the node" in [s.name for s in on_node.stages()]
    assert "Neuron compile on the node" not in [s.name for s in precompiled.stages()]
    # the grace covers the slowest compile: at least 40 more minutes than with precompiled artifacts
    assert on_node.grace_seconds() - precompiled.grace_seconds() >= 2400 - 60
    assert "Neuron compile on the node" in on_node.note()
    assert "compile-manifest" in on_node.note()
    assert "precompiled artifacts from the model store" in precompiled.note()


def test_cold_start_neuron_warm_resume_needs_no_compile():
    # A warm-pool machine keeps what it compiled or fetched on its root volume: no compile stage.
    on_node = _neuron(False)
    warm = on_node.warm_stages(boot_seconds=60, read_gib_s=0.5)
    assert "Neuron compile on the node" not in [s.name for s in warm]
    assert "warm resume, compiled artifacts on the machine's own disk" in warm[-1].figure.source
    assert on_node.warm_range_seconds(boot_seconds=60, read_gib_s=0.5)[1] < on_node.range_seconds()[1]


def test_cold_start_with_precompiled_leaves_other_engines_alone():
    gpu = cold_start(
        weights_gib=weights_gib("llama-3.1-8b"),
        source=WeightSource.S3,
        instance_type="g6e.xlarge",
        family=EngineFamily.NVIDIA_VLLM,
    )
    assert gpu.neuron is None
    assert with_precompiled(gpu, True) == gpu
    assert with_precompiled(_neuron(False), True).neuron is NeuronCompile.PRECOMPILED
    assert with_precompiled(_neuron(True), False).neuron is NeuronCompile.ON_NODE
