"""The exporters every accelerator VM runs for the stack's Prometheus, on AWS and on GCP alike.

dcgm-exporter (:9400, NVIDIA GPUs) and node exporter (:9100) run as containers
in the host's network namespace, pinned by digest. The node exporter reads the
textfile collector directory, where the weight prefetch publishes its
verification gauge (`inference_model_verification`).

Digests read from public pins of the same tag, 2026-11-23:
- dcgm-exporter 4.4.1-4.6.0-ubuntu22.04: a Dockerfile `FROM nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-
  ubuntu22.04@sha256:b7a4...3101` in a public repository (no public pin of 4.4.2-4.7.1 was found, so the
  host exporter moved back to the newest tag with one; its metrics are the same DCGM fields).
- node-exporter v1.8.2: the multi-arch index digest pinned by several public repositories
  (quay.io/prometheus/node-exporter and prom/node-exporter carry the same index).
"""

from __future__ import annotations

DCGM_EXPORTER_IMAGE = (
    "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04"
    "@sha256:b7a4241c608253aa829041cc3575ea57082491251a4a626bcdddc68eaf9a3101"
)
NODE_EXPORTER_IMAGE = (
    "quay.io/prometheus/node-exporter:v1.8.2"
    "@sha256:4032c6d5bfd752342c3e631c2f1de93ba6b86c41db6b167b9a35372c139e7706"
)
DCGM_EXPORTER_PORT = 9400
NODE_EXPORTER_PORT = 9100
# node exporter's textfile collector: the prefetch writes inference_model_verification.prom here.
TEXTFILE_DIR = "/var/lib/node_exporter/textfile_collector"


def exporter_command(name: str, image: str, *, gpus: bool) -> list[str]:
    """`docker run` words for one exporter: dcgm-exporter (gpus=True) or the node exporter."""
    command = [
        "docker",
        "run",
        "--detach",
        "--restart",
        "unless-stopped",
        "--name",
        name,
        "--network",
        "host",
    ]
    if gpus:
        # dcgm-exporter listens on :9400 in the host's network namespace; profiling metrics need SYS_ADMIN.
        return [*command, "--gpus", "all", "--cap-add", "SYS_ADMIN", image]
    return [
        *command,
        "--pid",
        "host",
        "--volume",
        "/:/host:ro,rslave",
        image,
        "--path.rootfs=/host",
        f"--web.listen-address=:{NODE_EXPORTER_PORT}",
        f"--collector.textfile.directory=/host{TEXTFILE_DIR}",
    ]
