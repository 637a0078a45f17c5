"""N1 GPU attach limits: sourced, consistent with the price catalog."""

from __future__ import annotations

import itertools

from inference_infra.components.catalog import gcp_guest_accelerator
from inference_infra.components.catalog.gcp_n1_gpus import N1_GPU_LIMITS, n1_gpu_limits


def test_every_n1_gpu_limit_is_priced_and_sourced():
    for row in N1_GPU_LIMITS:
        assert gcp_guest_accelerator(row.accelerator_type).accelerator_type == row.accelerator_type
        assert row.source.startswith("https://cloud.google.com/compute/docs/gpus")
        assert row.counts == tuple(sorted(row.shapes))


def test_more_gpus_never_allow_a_smaller_vm():
    for row in N1_GPU_LIMITS:
        shapes = [row.shapes[c] for c in row.counts]
        for small, large in itertools.pairwise(shapes):
            assert large.max_vcpus >= small.max_vcpus
            assert large.max_memory_gb >= small.max_memory_gb


def test_t4_attaches_one_two_or_four():
    assert n1_gpu_limits("nvidia-tesla-t4").counts == (1, 2, 4)
    assert n1_gpu_limits("nvidia-tesla-k80") is None
