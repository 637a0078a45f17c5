"""A Neuron node's boot puts its precompiled artifacts in place before the engines start (the unit the
bootstrap adds beside the prefetch), and the plan's cold start and health-check grace follow the case the
fleet declares (precompiled, or a compile on every new machine). Every rendered unit of these boots also
passes systemd-analyze verify and every script shellcheck / py_compile in test_rendered_boots.py."""

from __future__ import annotations

import dataclasses
import json

import yaml

from inference_infra.components.aws import InferentiaFleet, InferentiaFleetArgs, S3Weights
from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.neuron_artifacts import KEY_PATH, UNIT
from inference_infra.components.aws.node_services import S3, boot_calls
from inference_infra.components.fleet import ElasticArgs, ServedModel
from inference_infra.components.serving.cold_start import NeuronCompile
from inference_infra.components.serving.neuron_compile import neuron_compile_key
from inference_infra.components.serving.units import instance_name

from .test_rendered_boots import GPU, NEURON

GROUP = "aws:autoscaling/group:Group"
PIN = "ab" * 32


def _document(spec) -> dict:
    return yaml.safe_load(boot.render_user_data(spec))


def _files(document) -> dict[str, str]:
    return {f["path"]: f["content"] for f in document["write_files"]}


def test_neuron_boot_fetches_artifacts_after_the_prefetch_and_before_every_engine():
    document = _document(NEURON)
    files = _files(document)
    unit = files[f"/etc/systemd/system/{UNIT}"]
    lines = unit.splitlines()
    assert "Requires=inference-model-prefetch.service" in lines
    assert "After=network-online.target inference-model-prefetch.service" in lines
    before = next(line for line in lines if line.startswith("Before=")).removeprefix("Before=").split()
    assert before == [instance_name(i) for i in range(NEURON.engines.engines)]
    # the key on the node is the plan's compile key of these engines
    assert json.loads(files[KEY_PATH]) == neuron_compile_key(NEURON.engines)
    # the set goes where each engine mounts $NEURON_COMPILED_ARTIFACTS from
    compiled = next(w for w in unit.split() if w.startswith("/var/cache/inference-infra/neuron-compiled/"))
    template = files["/etc/systemd/system/inference-engine@.service"]
    assert f"{compiled}/%i:/var/cache/neuron-compiled:rw" in template
    # started before the engines, in the same boot
    started = [" ".join(c) for c in document["runcmd"]]
    unit_at = next(i for i, c in enumerate(started) if UNIT in c)
    engines_at = next(i for i, c in enumerate(started) if "inference-engine@0.service" in c)
    assert unit_at < engines_at
    # its reads are S3's (the gateway endpoint), like the prefetch's
    assert any("Neuron precompiled artifacts" in why for why in boot_calls(boot.render_user_data(NEURON))[S3])


def test_gpu_boot_has_no_neuron_artifacts_unit():
    paths = _files(_document(GPU))
    assert f"/etc/systemd/system/{UNIT}" not in paths
    assert KEY_PATH not in paths


def test_neuron_boot_keys_differ_with_the_tensor_parallel_degree():
    other = dataclasses.replace(
        NEURON, engines=dataclasses.replace(NEURON.engines, tensor_parallel=4, engines=6)
    )
    assert json.loads(_files(_document(other))[KEY_PATH])["tensor_parallel_size"] == 4
    assert _files(_document(other))[KEY_PATH] != _files(_document(NEURON))[KEY_PATH]


def _pool(fleet_args, *, precompiled: bool) -> InferentiaFleet:
    return InferentiaFleet(
        "inf2-llama-8b",
        fleet_args(
            InferentiaFleetArgs,
            instance_type="inf2.8xlarge",
            spot=0,
            on_demand=2,
            model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=4),
            weights=S3Weights(
                bucket_name="acme-models",
                prefix="meta/8b",
                manifest_sha256=PIN,
                neuron_precompiled=precompiled,
            ),
            elastic=ElasticArgs(min_size=1),
        ),
    )


def test_neuron_pool_grace_follows_the_compile_case(plan_of, fleet_args):
    compiling = _pool(fleet_args, precompiled=False)
    grace_compiling = plan_of(compiling).one(GROUP).props["healthCheckGracePeriod"]
    assert compiling.cold_start.neuron is NeuronCompile.ON_NODE
    assert grace_compiling == compiling.cold_start.grace_seconds()


def test_neuron_pool_with_precompiled_artifacts_has_the_shorter_grace(plan_of, fleet_args):
    precompiled = _pool(fleet_args, precompiled=True)
    grace = plan_of(precompiled).one(GROUP).props["healthCheckGracePeriod"]
    assert precompiled.cold_start.neuron is NeuronCompile.PRECOMPILED
    assert grace == precompiled.cold_start.grace_seconds()
    compiling = dataclasses.replace(precompiled.cold_start, neuron=NeuronCompile.ON_NODE)
    assert grace < compiling.grace_seconds()
    assert "precompiled artifacts from the model store" in precompiled.cold_start.note()
