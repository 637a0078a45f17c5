"""systemd units that run the engines under Docker, one unit per tensor-parallel group.

`engine_units(...)` returns `(file name, unit text)` pairs. Each unit:

- needs the weight prefetch (`Requires=` / `After=` its unit when the node has
  one) and refuses to start until the prefetch has verified the weights
  (`ExecStartPre=/usr/bin/test -f <weights>/.inference-verified`);
- runs the family's image pinned by digest, with the weights mounted
  read-only and the hub offline (`HF_HUB_OFFLINE=1`): it never downloads;
- owns its accelerator units (`--gpus "device=..."`, `NEURON_RT_VISIBLE_CORES`,
  `TPU_VISIBLE_CHIPS`) and its port (8000, 8001, ...);
- restarts on failure, with a start timeout sized for a model load.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from inference_infra.components.serving.engines import (
    PREFETCH_UNIT,
    VERIFIED_MARKER,
    EngineFamily,
    engine_image,
)
from inference_infra.components.serving.flags import EngineConfig, engine_args

DOCKER = "/usr/bin/docker"
CONTAINER_MODEL_DIR = "/models"


@dataclass(frozen=True, kw_only=True)
class EngineHost:
    """Where the engines run: the weights' folder on the node and what must run first."""

    model_dir: str  # host folder of the verified weights (systemd may expand ${VAR} from environment_file)
    prefetch_unit: str | None = PREFETCH_UNIT  # None: something else starts the engines after the prefetch
    environment_file: str | None = None  # e.g. the GCP boot script's models.env (MODELS_DIR=...)
    start_timeout_seconds: int = 1800


def unit_name(index: int) -> str:
    return f"inference-engine-{index}.service"


def container_name(index: int) -> str:
    return f"inference-engine-{index}"


def engine_units(config: EngineConfig, host: EngineHost) -> list[tuple[str, str]]:
    return [(unit_name(i), engine_unit(config, host, i)) for i in range(config.engines)]


def docker_command(config: EngineConfig, host: EngineHost, index: int) -> list[str]:
    image = engine_image(config.family)
    units = ",".join(str(u) for u in config.units_of(index))
    command = [
        DOCKER,
        "run",
        "--rm",
        "--name",
        container_name(index),
        "--network",
        "host",
        "--ipc",
        "host",
        "--env",
        "HF_HUB_OFFLINE=1",
        "--volume",
        f"{host.model_dir}:{CONTAINER_MODEL_DIR}:ro",
    ]
    if config.family is EngineFamily.NVIDIA_VLLM:
        command += ["--gpus", f'"device={units}"']
    elif config.family is EngineFamily.NEURON_VLLM:
        first, last = config.units_of(index)[0], config.units_of(index)[-1]
        command += ["--cap-add", "IPC_LOCK", "--env", f"NEURON_RT_VISIBLE_CORES={first}-{last}"]
        command += ["--device", "/dev/neuron0"]
    else:
        command += ["--privileged", "--env", f"TPU_VISIBLE_CHIPS={units}"]
    # The entrypoint is named, not inherited from the image: the same words start the server in every image.
    if config.family is EngineFamily.NEURON_VLLM:
        command += ["--entrypoint", "python3", image.reference, "-m", "vllm.entrypoints.openai.api_server"]
    else:
        command += ["--entrypoint", "vllm", image.reference, "serve"]
    command += engine_args(config, index, CONTAINER_MODEL_DIR)
    return command


def _systemd_join(words: list[str]) -> str:
    """Words joined for ExecStart=: plain words as they are, `"device=0,1"` single-quoted for docker."""
    return " ".join(f"'{w}'" if '"' in w else w for w in words)


def engine_unit(config: EngineConfig, host: EngineHost, index: int) -> str:
    port = config.ports[index]
    needs = ["docker.service"] + ([host.prefetch_unit] if host.prefetch_unit else [])
    marker = f"{host.model_dir.rstrip('/')}/{VERIFIED_MARKER}"
    lines = [
        "[Unit]",
        f"Description=inference-infra: {config.family.value} engine {index} serving {config.served_model_name}"
        f" on port {port}",
        "Wants=network-online.target",
        f"Requires={' '.join(needs)}",
        f"After=network-online.target {' '.join(needs)}",
        "",
        "[Service]",
        "Type=simple",
        "Environment=HF_HUB_OFFLINE=1",
    ]
    if host.environment_file:
        lines.append(f"EnvironmentFile={host.environment_file}")
    lines += [
        f"ExecStartPre=/usr/bin/test -f {marker}",
        f"ExecStartPre=-{DOCKER} rm --force {container_name(index)}",
        f"ExecStart={_systemd_join(docker_command(config, host, index))}",
        f"ExecStop={DOCKER} stop --time 30 {container_name(index)}",
        "Restart=on-failure",
        "RestartSec=30",
        f"TimeoutStartSec={host.start_timeout_seconds}",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def shell_words(unit_text: str) -> list[str]:
    """The ExecStart= command of a unit as words (tests and docs)."""
    line = next(x for x in unit_text.splitlines() if x.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))
