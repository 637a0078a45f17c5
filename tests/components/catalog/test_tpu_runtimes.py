"""The TPU software table: every generation covered, sourced, and the checks it drives."""

from __future__ import annotations

import re

import pytest

from inference_infra.components.catalog import AcceleratorFamily, accelerator, instance_types
from inference_infra.components.catalog.tpu_runtimes import (
    TPU_SOFTWARE,
    generations_of_runtime,
    runtime_problem,
    tpu_software,
    tpu_software_by_generation,
)
from inference_infra.components.resources import tpu_slice_name

V5E = tpu_software_by_generation("v5e")
V4 = tpu_software_by_generation("v4")


def test_every_catalog_tpu_has_a_software_row():
    tpu_keys = {
        i.accelerator
        for i in instance_types("gcp")
        if accelerator(i.accelerator).family is AcceleratorFamily.GOOGLE_TPU
    }
    assert tpu_keys <= {s.accelerator for s in TPU_SOFTWARE}
    for key in tpu_keys:
        assert tpu_software(key) is not None


@pytest.mark.parametrize("software", TPU_SOFTWARE, ids=lambda s: s.generation)
def test_tpu_software_rows_are_sourced_and_self_consistent(software):
    for part in software.source.split(" ; "):
        assert re.fullmatch(r"https://cloud\.google\.com/tpu/docs/\S+", part)
    assert software.runtimes, "a generation needs a default runtime"
    assert software.data_disk_types
    assert generations_of_runtime(software.default_runtime) == [software.generation]
    assert runtime_problem(software, software.default_runtime, multi_host=False) is None


@pytest.mark.parametrize("software", TPU_SOFTWARE, ids=lambda s: s.generation)
def test_tpu_config_types_match_the_inventory(software):
    """acceleratorConfig.type names the same slices the catalog lists (the inventory reads them back)."""
    slices = [i for i in instance_types("gcp") if i.accelerator == software.accelerator]
    assert slices
    for item in slices:
        assert tpu_slice_name(software.config_type, item.tpu_topology) == item.name


@pytest.mark.parametrize(
    ("runtime", "multi_host", "fits"),
    [
        ("v2-alpha-tpuv5-lite", False, True),
        ("tpu-vm-tf-2.15.0-pjrt", False, True),
        ("tpu-vm-tf-2.18.0-pod-pjrt", True, True),
        ("tpu-vm-tf-2.16.1-se", False, False),  # v5e runs TensorFlow through PJRT only
        ("tpu-vm-tf-2.14.1", False, False),  # older than the first v5e TensorFlow
        ("tpu-ubuntu2204-base", False, False),  # the v4 image
        ("v2-alpha-tpuv6e", False, False),
    ],
)
def test_v5e_runtimes(runtime, multi_host, fits):
    assert (runtime_problem(V5E, runtime, multi_host=multi_host) is None) is fits


@pytest.mark.parametrize(
    ("runtime", "fits"),
    [
        ("tpu-ubuntu2204-base", True),
        ("tpu-vm-v4-base", True),
        ("tpu-vm-tf-2.9.1-v4", True),
        ("tpu-vm-tf-2.10.0-v4", True),
        ("tpu-vm-tf-2.10.1-v4", False),  # from 2.10.1 v4 uses the plain names
        ("tpu-vm-tf-2.12.0", True),
        ("tpu-vm-tf-2.16.1-se", True),
        ("tpu-vm-tf-2.16.1", False),  # 2.15+ needs -pjrt or -se
        ("v2-alpha-tpuv5", False),
    ],
)
def test_v4_runtimes(runtime, fits):
    assert (runtime_problem(V4, runtime, multi_host=False) is None) is fits


def test_runtime_problem_names_the_generation_a_runtime_is_for():
    message = runtime_problem(V5E, "tpu-ubuntu2204-base", multi_host=False)
    assert message.startswith(
        "is not a TPU v5e runtime (it is the runtime for TPU v4); allowed: 'v2-alpha-tpuv5-lite'"
    )
    assert "tpu-vm-tf-X.Y.Z[-pod]-pjrt (TensorFlow >= 2.15.0)" in message
