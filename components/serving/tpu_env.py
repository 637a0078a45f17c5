"""A TPU engine container's environment: what libtpu, JAX and tpu-inference would ask the metadata server.

A TPU engine runs on a bridge network whose packets to the metadata server the node rejects (the GCP
boot script's `inference-metadata-block.service`), so it cannot fetch the node service account's token.
libtpu, JAX and vLLM's tpu-inference backend read the slice's description from that server unless the
environment gives it; `tpu_environment(TpuHost(...))` is that environment, for a single-host slice of
the catalog. It is the set GKE gives every TPU container, whose pods do not read the node's metadata
either: GKE's TPU device plugin (ai-on-gke/tpu-device-plugin 4626a9f, pkg/tpu/util/util.go:
`InitEnvs` sets TPU_SKIP_MDS_QUERY=true, TPU_RUNTIME_METRICS_PORTS, TPU_TOPOLOGY and
TPU_ACCELERATOR_TYPE; `addPodsliceOrSliceEnvs` the wrap, twist and bounds under both names;
`addSingleHostEnvs` TPU_WORKER_ID=0 and TPU_WORKER_HOSTNAMES=localhost; its util_test.go `TestInitEnvs`
lists the result per slice, e.g. "v5 lite podslice 2x4 topology, 8 chips per node"). Left out:
VBAR_CONTROL_SERVICE_URL (the socket of GKE's own node daemon) and ENABLE_ICI_RESILIENCY (v4/v5p cubes,
4x4x4 and up: never one host).

Who reads what (read 2026-11-25):

- JAX (jax-ml/jax cec06d1): `jax/_src/clusters/cloud_tpu_cluster.py:186` treats a set
  TPU_SKIP_MDS_QUERY (any value) as "not a GCE TPU cluster" and never asks for `agent-worker-number`;
  `:70-76` takes every tpu-env key from the environment first and asks the server only when it is
  missing; `jax/_src/cloud_tpu_init.py:84` sets TPU_SKIP_MDS_QUERY=1 itself on hosts without chips.
  One engine is one process: nothing calls `jax.distributed.initialize`.
- tpu-inference (vllm-project/tpu-inference b8692ff, 2026-08-22; the pinned image is vLLM
  0.29.1rc1.dev468, 2026-09-25): `tpu_inference/tpu_info.py:49-70` reads TPU_ACCELERATOR_TYPE, TPU_NAME
  and TPU_WORKER_ID (envs.py:221-228) and asks the metadata server (`:25-46`) only when one is unset;
  `__init__.py:76-80` logs all three at import, and `tpu_worker.py:70,282` need the accelerator type
  (`get_num_cores_per_chip`), so without it and without the server the engine would fail. It calls the
  server nowhere else (its other `computeMetadata` calls are in examples/ and CI scripts).
- libtpu (closed source) reads the same TPU_* variables GKE sets when TPU_SKIP_MDS_QUERY is set.
  torch_xla is not in the image (vllm/vllm-tpu runs tpu-inference's JAX backend).

Pure data: no Pulumi, no network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inference_infra.components.catalog import Cloud, find_instance_type

# Chips per host (and per process on a shared host) as libtpu's x,y,z bounds: the table of Google's
# run-multiple-processes guide (https://cloud.google.com/tpu/docs/run-multiple-processes) and of GKE's
# device plugin (pkg/tpu/util/util.go `getChipsPerDim`), which agree.
TPU_CHIP_BOUNDS = {1: "1,1,1", 2: "1,2,1", 4: "2,2,1", 8: "2,4,1"}
# libtpu's runtime metrics: one port per chip from 8431 (GKE's `acceleratorCountToMetricsPorts`). Inside
# each engine's own network namespace, so engines on one VM do not collide.
TPU_METRICS_FIRST_PORT = 8431
_NODE_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True, kw_only=True)
class TpuHost:
    """The TPU VM the engines run on: its slice (catalog name) and the name it is known by in logs."""

    accelerator_type: str  # the catalog's slice, e.g. "v5litepod-8"
    node_name: str  # tpu-inference logs it (TPU_NAME) instead of asking the metadata server


def tpu_host_problems(host: TpuHost) -> list[str]:
    """What keeps a TpuHost out of an engine's environment (each value reaches the unit's ExecStart=)."""
    problems = []
    item = find_instance_type(host.accelerator_type, Cloud.GCP)
    if item is None or not item.tpu_topology:
        problems.append(f"tpu.accelerator_type {host.accelerator_type!r} is not a TPU slice in the catalog")
    elif item.hosts != 1:
        problems.append(
            f"tpu.accelerator_type {host.accelerator_type!r} is a slice of {item.hosts} hosts; "
            "engines run on single-host slices only"
        )
    elif item.accelerator_count not in TPU_CHIP_BOUNDS:
        problems.append(
            f"tpu.accelerator_type {host.accelerator_type!r} has {item.accelerator_count} chips on its host; "
            f"the chip bounds are known for {sorted(TPU_CHIP_BOUNDS)}"
        )
    elif item.accelerator not in TPU_DEVICE_STYLE:
        problems.append(
            f"tpu.accelerator_type {host.accelerator_type!r} is a {item.accelerator} slice; its device nodes "
            f"are known for {sorted(TPU_DEVICE_STYLE)} only (an engine is never given the whole /dev)"
        )
    if not _NODE_NAME.fullmatch(host.node_name):
        problems.append(
            f"tpu.node_name {host.node_name!r} must be a GCP resource name (lower-case letters, digits, "
            "hyphens; 1-63 characters; starts with a letter)"
        )
    return problems


def tpu_environment(host: TpuHost) -> dict[str, str]:
    """The variables that replace the metadata server for an engine on `host`'s single-host slice."""
    problems = tpu_host_problems(host)
    if problems:
        raise ValueError("TPU environment: " + "; ".join(problems))
    item = find_instance_type(host.accelerator_type, Cloud.GCP)
    assert item is not None
    assert item.tpu_topology is not None
    chips = item.accelerator_count
    chip_bounds = TPU_CHIP_BOUNDS[chips]
    # One host: the host bounds are 1,1,1 and no axis wraps around (v5e/v6e wrap only an axis of 16
    # chips, v4/v5p only cubes of 4x4x4 and up: GKE's `wrapLitePod`, `wrapVersion`).
    host_bounds, wrap, twist = "1,1,1", "false,false,false", "false"
    return {
        "TPU_SKIP_MDS_QUERY": "true",  # GKE's value; JAX only checks that it is set
        "TPU_ACCELERATOR_TYPE": item.name,
        "TPU_TOPOLOGY": item.tpu_topology,
        "TPU_TOPOLOGY_WRAP": wrap,
        "WRAP": wrap,
        "TPU_TOPOLOGY_ALT": twist,
        "ALT": twist,
        "TPU_HOST_BOUNDS": host_bounds,
        "HOST_BOUNDS": host_bounds,
        "TPU_CHIPS_PER_HOST_BOUNDS": chip_bounds,
        "CHIPS_PER_HOST_BOUNDS": chip_bounds,
        "TPU_WORKER_ID": "0",
        "TPU_WORKER_HOSTNAMES": "localhost",
        "TPU_RUNTIME_METRICS_PORTS": ",".join(str(TPU_METRICS_FIRST_PORT + i) for i in range(chips)),
        "TPU_NAME": host.node_name,
    }


# The device nodes through which libtpu opens a host's chips, per generation. v5e, v5p and v6e chips are
# bound to vfio-pci: one IOMMU group per chip under /dev/vfio/<n> plus the VFIO container /dev/vfio/vfio;
# v4 (and v2/v3) chips are the accel driver's /dev/accel<n>. Sources, read 2026-12-02:
# AI-Hypercomputer/cloud-accelerator-diagnostics, tpu_info/tpu_info/device.py `chip_path` (v5e, v5p, v6e,
# 7x -> /dev/vfio/<index>, else /dev/accel<index>) and `get_actual_chips` (the IOMMU group of each chip);
# marin-community/marin PRs #3751 (v4 workers expose /dev/accelN) and #3858 (v5p/v6e need each
# /dev/vfio char device passed, `--device` takes no directory) that replaced `--privileged` with them.
# vfio-pci pins the DMA buffers it maps: the container needs a memlock limit that does not stop it
# (docker's default is the daemon's, 64 KiB on most hosts) and IPC_LOCK, as GKE's TPU pods get from
# containerd's unlimited LimitMEMLOCK.
TPU_DEVICE_STYLE = {"tpu-v4": "accel", "tpu-v5e": "vfio", "tpu-v5p": "vfio", "tpu-v6e": "vfio"}
VFIO_CONTAINER = "/dev/vfio/vfio"


def tpu_devices(host: TpuHost) -> list[str]:
    """The device nodes an engine on `host` needs (every chip of the host: TPU_VISIBLE_CHIPS picks)."""
    problems = tpu_host_problems(host)
    if problems:
        raise ValueError("TPU devices: " + "; ".join(problems))
    item = find_instance_type(host.accelerator_type, Cloud.GCP)
    assert item is not None
    style = TPU_DEVICE_STYLE[item.accelerator]
    chips = range(item.accelerator_count)
    if style == "vfio":
        return [VFIO_CONTAINER, *(f"/dev/vfio/{i}" for i in chips)]
    return [f"/dev/accel{i}" for i in chips]
