"""The engines' systemd units: one template unit, one instance per tensor-parallel group.

`engine_units(config, host)` returns `EngineUnits`: the template
`inference-engine@.service` and, per engine, an environment file
(`/etc/inference-infra/engine-<i>.env`: its port and accelerator units); the
node starts `inference-engine@0.service`, `inference-engine@1.service`, ...
One template keeps the user data small on nodes with many groups. Each
instance:

- needs the weight prefetch (`Requires=` / `After=` its unit when the node has
  one) and refuses to start until the prefetch has verified the weights
  (`ExecStartPre=/usr/bin/test -f <weights>/.inference-verified`);
- runs the family's image pinned by digest, with the weights mounted
  read-only and the hub offline (`HF_HUB_OFFLINE=1`): it never downloads;
- owns its accelerator units (`CUDA_VISIBLE_DEVICES`, `NEURON_RT_VISIBLE_CORES`,
  `TPU_VISIBLE_CHIPS`) and its port (8000, 8001, ...);
- restarts on failure, with a start timeout sized for a model load.
"""

from __future__ import annotations

import re
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
TEMPLATE_UNIT = "inference-engine@.service"
# The Neuron DLC's entrypoint runs its arguments as a command; these start vLLM's OpenAI server with the
# image's python (conda's, first on the image's PATH), the way AWS's Neuron vLLM guides start it.
NEURON_SERVER_COMMAND = ("python", "-m", "vllm.entrypoints.openai.api_server")
ENV_DIR = "/etc/inference-infra"


@dataclass(frozen=True, kw_only=True)
class EngineHost:
    """Where the engines run: the weights' folder on the node and what must run first."""

    model_dir: str  # host folder of the verified weights (systemd may expand ${VAR} from environment_file)
    prefetch_unit: str | None = PREFETCH_UNIT  # None: something else starts the engines after the prefetch
    environment_file: str | None = None  # e.g. the GCP boot script's models.env (MODELS_DIR=...)
    start_timeout_seconds: int = 1800
    # The image to run, when the node pulls the pinned one from a private mirror (the same digest under
    # another registry: components/aws/mirrors.py); None runs the family's pinned upstream reference.
    image: str | None = None


@dataclass(frozen=True)
class EngineUnits:
    template: str  # the text of inference-engine@.service
    environments: dict[str, str]  # path of each engine's environment file -> its text
    instances: list[str]  # inference-engine@0.service, ...

    def files(self, unit_dir: str = "/etc/systemd/system") -> list[tuple[str, str]]:
        return [(f"{unit_dir}/{TEMPLATE_UNIT}", self.template), *self.environments.items()]


def instance_name(index: int) -> str:
    return f"inference-engine@{index}.service"


def environment_path(index: int | str) -> str:
    return f"{ENV_DIR}/engine-{index}.env"


# Several processes on one TPU VM each see a sub-mesh of chips and talk to libtpu on their own port
# (https://cloud.google.com/tpu/docs/run-multiple-processes: TPU_CHIPS_PER_PROCESS_BOUNDS, TPU_PROCESS_BOUNDS,
# TPU_PROCESS_PORT, TPU_PROCESS_ADDRESSES, TPU_VISIBLE_CHIPS).
TPU_CHIP_BOUNDS = {1: "1,1,1", 2: "1,2,1", 4: "2,2,1", 8: "2,4,1"}
TPU_FIRST_PROCESS_PORT = 8476


def engine_environment(config: EngineConfig, index: int) -> str:
    units = config.units_of(index)
    text = (
        f"ENGINE_PORT={config.ports[index]}\n"
        f"ENGINE_DEVICES={','.join(str(u) for u in units)}\n"
        f"ENGINE_CORES={units[0]}-{units[-1]}\n"
    )
    if config.family is EngineFamily.TPU_VLLM and config.engines > 1:
        bounds = TPU_CHIP_BOUNDS.get(config.tensor_parallel, f"1,{config.tensor_parallel},1")
        text += f"ENGINE_TPU_BOUNDS={bounds}\nENGINE_TPU_PORT={TPU_FIRST_PROCESS_PORT + index}\n"
    return text


def engine_units(config: EngineConfig, host: EngineHost) -> EngineUnits:
    return EngineUnits(
        template=engine_template(config, host),
        environments={environment_path(i): engine_environment(config, i) for i in range(config.engines)},
        instances=[instance_name(i) for i in range(config.engines)],
    )


def docker_command(config: EngineConfig, host: EngineHost) -> list[str]:
    """The template's `docker run` words; systemd fills ${ENGINE_*} from the instance's environment file."""
    image = host.image or engine_image(config.family).reference
    command = [
        DOCKER,
        "run",
        "--rm",
        "--name",
        "inference-engine-%i",
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
        command += ["--gpus", "all", "--env", "CUDA_VISIBLE_DEVICES=${ENGINE_DEVICES}"]
    elif config.family is EngineFamily.NEURON_VLLM:
        command += ["--cap-add", "IPC_LOCK", "--env", "NEURON_RT_VISIBLE_CORES=${ENGINE_CORES}"]
        command += [f"--device=/dev/neuron{i}" for i in range(config.devices_per_node)]
    else:
        command += ["--privileged", "--env", "TPU_VISIBLE_CHIPS=${ENGINE_DEVICES}"]
        if config.engines > 1:
            for variable in (
                "TPU_CHIPS_PER_PROCESS_BOUNDS=${ENGINE_TPU_BOUNDS}",
                "TPU_PROCESS_BOUNDS=1,1,1",
                "TPU_PROCESS_PORT=${ENGINE_TPU_PORT}",
                "TPU_PROCESS_ADDRESSES=localhost:${ENGINE_TPU_PORT}",
            ):
                command += ["--env", variable]
    if config.family is EngineFamily.NEURON_VLLM:
        # The Neuron DLC's own start (aws-neuron/deep-learning-containers, tag 2.25.0,
        # docker/vllm/inference/0.9.1/Dockerfile.neuronx):
        # ENTRYPOINT ["python", "/usr/local/bin/vllm_entrypoint.py"], a wrapper that runs its arguments
        # (`subprocess.check_call(sys.argv[1:])`), CMD ["/bin/bash"]. The unit keeps that entrypoint and gives
        # it the server as the command. The image's HEALTHCHECK curls localhost:8080/ping (TorchServe /
        # SageMaker), which this server does not listen on: the load balancer checks /health on the engine's
        # port instead, so Docker's check is off.
        command += ["--no-healthcheck", image, *NEURON_SERVER_COMMAND]
    else:
        # vllm/vllm-openai's entrypoint is `vllm serve`; the TPU image's /entrypoint.sh execs its arguments
        # (vllm-project/tpu-inference docker/entrypoint.sh). Naming `vllm serve` starts the server in both.
        command += ["--entrypoint", "vllm", image, "serve"]
    return command + engine_args(config, 0, CONTAINER_MODEL_DIR, port="${ENGINE_PORT}")


def engine_template(config: EngineConfig, host: EngineHost) -> str:
    needs = ["docker.service"] + ([host.prefetch_unit] if host.prefetch_unit else [])
    marker = f"{host.model_dir.rstrip('/')}/{VERIFIED_MARKER}"
    environment = [f"EnvironmentFile={host.environment_file}"] if host.environment_file else []
    lines = [
        "[Unit]",
        f"Description=inference-infra: {config.family.value} engine %i serving {config.served_model_name}",
        "Wants=network-online.target",
        f"Requires={' '.join(needs)}",
        f"After=network-online.target {' '.join(needs)}",
        "",
        "[Service]",
        "Type=simple",
        "Environment=HF_HUB_OFFLINE=1",
        *environment,
        f"EnvironmentFile={environment_path('%i')}",
        f"ExecStartPre=/usr/bin/test -f {marker}",
        f"ExecStartPre=-{DOCKER} rm --force inference-engine-%i",
        f"ExecStart={' '.join(docker_command(config, host))}",
        f"ExecStop={DOCKER} stop --time 30 inference-engine-%i",
        "Restart=on-failure",
        "RestartSec=30",
        f"TimeoutStartSec={host.start_timeout_seconds}",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def instance_command(units: EngineUnits, index: int, environment: dict[str, str] | None = None) -> list[str]:
    """Instance `index`'s ExecStart= as words, with %i and ${VAR} filled in (tests and docs)."""
    values = dict(line.split("=", 1) for line in units.environments[environment_path(index)].splitlines())
    values.update(environment or {})
    line = next(x for x in units.template.splitlines() if x.startswith("ExecStart="))
    line = line.removeprefix("ExecStart=").replace("%i", str(index))
    line = re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), line)
    return shlex.split(line)
