"""A Neuron node's precompiled artifacts: the unit and files that put them in place before the engines.

`neuron_artifact_files(...)` returns the node files (the script node/neuron_artifacts.py, this node's
compile key, the unit) and the command starting the unit, for the AWS bootstrap to add beside the
prefetch. The unit runs after the prefetch and before every engine (`Before=` each instance): it fetches
the set the pinned weights manifest indexes for the node's compile key (components/models/compiled.py,
components/serving/neuron_compile.py), verifies it with the weights' verifier and copies it into each
engine's compiled folder, or says that the engines compile on the node (log and the gauge
`inference_neuron_compile_on_node`). Pure: no Pulumi.
"""

from __future__ import annotations

import json

from inference_infra.components.monitoring.host_exporters import TEXTFILE_DIR
from inference_infra.components.serving.boot import NodeFile, sandbox
from inference_infra.components.serving.flags import EngineConfig
from inference_infra.components.serving.neuron_compile import neuron_compile_key
from inference_infra.components.serving.quoting import systemd_exec
from inference_infra.components.serving.units import EngineHost, compiled_dir, instance_name

UNIT = "inference-neuron-artifacts.service"
SCRIPT = "neuron_artifacts.py"
KEY_PATH = "/etc/inference-infra/neuron-compile-key.json"


def neuron_artifact_files(
    config: EngineConfig,
    host: EngineHost,
    *,
    source: str,
    manifest_sha256: str,
    lib: str,
    s5cmd: str,
    region: str,
    script: str,
    python: str = "/usr/bin/python3",
) -> tuple[list[NodeFile], list[list[str]]]:
    """(files, commands) of the precompiled-artifacts unit; `script` is the node script's text as written."""
    compiled = compiled_dir(config, host)
    command = [python, f"{lib}/{SCRIPT}", "--source", source, "--weights", host.model_dir]
    command += ["--manifest-sha256", manifest_sha256, "--key", KEY_PATH, "--compiled", compiled]
    command += ["--engines", str(config.engines), "--s5cmd", s5cmd, "--textfile-dir", TEXTFILE_DIR]
    engines = " ".join(instance_name(i) for i in range(config.engines))
    prefetch = host.prefetch_unit or ""
    lines = [
        "[Unit]",
        "Description=inference-infra: Neuron precompiled artifacts for the engines (or compile on the node)",
        "Wants=network-online.target",
        f"After=network-online.target {prefetch}".rstrip(),
        *([f"Requires={prefetch}"] if prefetch else []),
        f"Before={engines}",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        f"Environment=AWS_REGION={region}",
        f"ExecStartPre=+{systemd_exec(['/usr/bin/mkdir', '-p', compiled, TEXTFILE_DIR])}",
        f"ExecStart={systemd_exec(command)}",
        # Reads the verified weights, writes the compiled folder and its gauge only.
        *sandbox([compiled, TEXTFILE_DIR]),
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    key = json.dumps(neuron_compile_key(config), indent=1, sort_keys=True) + "\n"
    files = [
        NodeFile(f"{lib}/{SCRIPT}", script),
        NodeFile(KEY_PATH, key),
        NodeFile(f"/etc/systemd/system/{UNIT}", "\n".join(lines)),
    ]
    return files, [["systemctl", "enable", "--now", "--no-block", UNIT]]
