"""The environment that replaces the metadata server in a TPU engine container (serving/tpu_env.py)."""

from __future__ import annotations

import math

import pytest

from inference_infra.components.catalog.gcp import GCP_TPU_SLICES
from inference_infra.components.serving.tpu_env import TpuHost, tpu_environment, tpu_host_problems

# What GKE's TPU device plugin gives a container that holds every chip of a single-host node: its
# TestInitEnvs cases (ai-on-gke/tpu-device-plugin 4626a9f, pkg/tpu/util/util_test.go, read 2026-11-25),
# less VBAR_CONTROL_SERVICE_URL (GKE's node daemon socket). TPU_NAME is ours (tpu-inference's log line).
GKE = {
    # "v5 lite podslice 1x1 topology, 1 chip per node"
    "v5litepod-1": {"topology": "1x1", "chips": "1,1,1", "ports": "8431"},
    # "v5 lite podslice 2x2 topology, 4 chips per node"
    "v5litepod-4": {"topology": "2x2", "chips": "2,2,1", "ports": "8431,8432,8433,8434"},
    # "v5 lite podslice 2x4 topology, 8 chips per node"
    "v5litepod-8": {
        "topology": "2x4",
        "chips": "2,4,1",
        "ports": ",".join(str(p) for p in range(8431, 8439)),
    },
    # "v4 podslice 2x2x1"
    "v4-8": {"topology": "2x2x1", "chips": "2,2,1", "ports": "8431,8432,8433,8434"},
}


@pytest.mark.parametrize("slice_name", sorted(GKE))
def test_tpu_environment_is_what_gke_gives_a_single_host_tpu_container(slice_name):
    gke = GKE[slice_name]
    expected = {
        "TPU_SKIP_MDS_QUERY": "true",
        "TPU_ACCELERATOR_TYPE": slice_name,
        "TPU_TOPOLOGY": gke["topology"],
        "TPU_TOPOLOGY_WRAP": "false,false,false",
        "WRAP": "false,false,false",
        "TPU_TOPOLOGY_ALT": "false",
        "ALT": "false",
        "TPU_HOST_BOUNDS": "1,1,1",
        "HOST_BOUNDS": "1,1,1",
        "TPU_CHIPS_PER_HOST_BOUNDS": gke["chips"],
        "CHIPS_PER_HOST_BOUNDS": gke["chips"],
        "TPU_WORKER_ID": "0",
        "TPU_WORKER_HOSTNAMES": "localhost",
        "TPU_RUNTIME_METRICS_PORTS": gke["ports"],
        "TPU_NAME": "qwen7b-tpu",
    }
    assert tpu_environment(TpuHost(accelerator_type=slice_name, node_name="qwen7b-tpu")) == expected


@pytest.mark.parametrize("item", [s for s in GCP_TPU_SLICES if s.hosts == 1], ids=lambda s: s.name)
def test_tpu_environment_describes_every_single_host_slice_of_the_catalog(item):
    environment = tpu_environment(TpuHost(accelerator_type=item.name, node_name="a"))
    chips = [int(n) for n in environment["TPU_CHIPS_PER_HOST_BOUNDS"].split(",")]
    topology = [int(n) for n in environment["TPU_TOPOLOGY"].split("x")]
    assert math.prod(chips) == math.prod(topology) == item.accelerator_count
    assert len(environment["TPU_RUNTIME_METRICS_PORTS"].split(",")) == item.accelerator_count


def test_tpu_environment_rejects_a_multi_host_slice():
    with pytest.raises(ValueError, match="'v6e-16' is a slice of 4 hosts"):
        tpu_environment(TpuHost(accelerator_type="v6e-16", node_name="a"))


@pytest.mark.parametrize(
    ("host", "problem"),
    [
        (TpuHost(accelerator_type="g2-standard-8", node_name="a"), "is not a TPU slice in the catalog"),
        (TpuHost(accelerator_type="v5litepod-4", node_name="a b\nExecStart=/bin/sh"), "tpu.node_name"),
        (TpuHost(accelerator_type="v5litepod-4", node_name=""), "tpu.node_name"),
    ],
)
def test_tpu_host_problems_rejects_values_that_cannot_reach_a_unit(host, problem):
    assert any(problem in p for p in tpu_host_problems(host))
