"""The exporters every accelerator VM runs for the stack's Prometheus, on AWS and on GCP alike.

dcgm-exporter (:9400, NVIDIA GPUs) and node exporter (:9100) run as containers
in the host's network namespace, pinned by digest (the pins and where their digests were read are in
components/images.py). The node exporter reads the textfile collector
directory, where the weight prefetch publishes its verification gauge
(`inference_model_verification`).
"""

from __future__ import annotations

from inference_infra.components.images import DCGM_EXPORTER, NODE_EXPORTER

DCGM_EXPORTER_IMAGE = DCGM_EXPORTER.reference
NODE_EXPORTER_IMAGE = NODE_EXPORTER.reference
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
