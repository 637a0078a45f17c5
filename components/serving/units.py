"""The engines' systemd units: one template unit, one instance per tensor-parallel group.

`engine_units(config, host)` returns `EngineUnits`: the template
`inference-engine@.service`, the metrics-only proxy `inference-engine-metrics@.service` and
its script, and per engine an environment file (`/etc/inference-infra/engine-<i>.env`: its
ports and accelerator units); the node starts `inference-engine@0.service`, ... and
`inference-engine-metrics@0.service`, ... One template keeps the user data small on nodes
with many groups. Each engine instance:

- needs the weight prefetch (`Requires=` / `After=` its unit when the node has one) and refuses to
  start until the weights carry the verified marker, holding the pinned manifest digest when the
  host names one (`ExecStartPre=/usr/bin/grep -qxF <sha256> <weights>/.inference-verified`);
- runs the family's image pinned by digest (pulled first, outside the unit's sandbox), with the
  weights mounted read-only and the hub offline (`HF_HUB_OFFLINE=1`): it never downloads;
- on a bridge network with its API port published, so the container cannot reach the instance
  metadata service (AWS: IMDSv2 with a hop limit of 1 answers the host only; GCP: the boot script's
  iptables rule rejects what Docker forwards there). A TPU engine gets the slice's description
  the metadata server would have given libtpu, JAX and tpu-inference as environment instead
  (`TPU_SKIP_MDS_QUERY` and the rest: tpu_env.py);
- with an API key, when the host says how to fetch it: `ExecStartPre=` runs the fetch command, which
  writes the bare key to `/run/inference-engine-<i>/api-key` (0400, removed when the engine stops);
  that file is mounted read-only into the container and a two-line entrypoint exports it as
  `VLLM_API_KEY` before it execs the server (vLLM reads the variable when `--api-key` is absent:
  vllm/entrypoints/openai/api_server.py, `args.api_key or [envs.VLLM_API_KEY]`). The key is thus
  in no command line (`ps`), no container configuration (`docker inspect` shows neither `--env`
  nor `--env-file` values of it), no user data, metadata or unit;
- in a private IPC namespace with a bounded /dev/shm (`--shm-size`, SHM_SIZE below), not the host's;
- checks before each start what the host says must hold (`EngineHost.start_checks`, e.g. GCP's
  metadata reject rule): the engine fails rather than start without it;
- TPU engines unprivileged: the host's chips passed as devices per generation (tpu_env.py
  `tpu_devices`), IPC_LOCK and an unlimited memlock for vfio's pinned buffers, Docker's default
  seccomp profile; no engine is ever `--privileged`;
- on Neuron, compiles into a writable folder of the node (NEURON_COMPILED_ARTIFACTS, inside the unit's
  ReadWritePaths and keyed by the weights, image and flags), never into the read-only weights;
- owns its accelerator units (`CUDA_VISIBLE_DEVICES`, `NEURON_RT_VISIBLE_CORES`,
  `TPU_VISIBLE_CHIPS`) and its port (8000, 8001, ...);
- restarts on failure, with a start timeout sized for a model load.

Every word of a command line is quoted for systemd (quoting.py); the words that keep `%i` or
`${ENGINE_*}` on purpose are `Template`s.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from importlib import resources

from inference_infra.components.models.manifest import is_pinned_digest
from inference_infra.components.serving.boot import IP_FAMILIES, NodeFile, sandbox
from inference_infra.components.serving.engines import (
    PREFETCH_UNIT,
    VERIFIED_MARKER,
    EngineFamily,
    engine_image,
)
from inference_infra.components.serving.flags import EngineConfig, engine_args
from inference_infra.components.serving.quoting import (
    ABSOLUTE_PATH_RULE,
    Template,
    absolute_path_ok,
    systemd_exec,
    systemd_value,
)
from inference_infra.components.serving.tpu_env import (
    TPU_CHIP_BOUNDS,
    TpuHost,
    tpu_devices,
    tpu_environment,
    tpu_host_problems,
)

DOCKER = "/usr/bin/docker"
CONTAINER_MODEL_DIR = "/models"
TEMPLATE_UNIT = "inference-engine@.service"
ENV_DIR = "/etc/inference-infra"
METRICS_UNIT = "inference-engine-metrics@.service"
# Beside the engines' environment files: every node that writes the units has this folder.
METRICS_PROXY = f"{ENV_DIR}/engine_metrics_proxy.py"
PYTHON = "/usr/bin/python3"
API_KEY_VARIABLE = "VLLM_API_KEY"  # vLLM reads it when --api-key is not given (vllm/envs.py)
RUNTIME_DIRECTORY = (
    "inference-engine-%i"  # /run/inference-engine-<i>: systemd makes it 0700, removes it on stop
)
API_KEY_FILE = f"/run/{RUNTIME_DIRECTORY}/api-key"  # the bare key, 0400 (the fetch command writes it)
CONTAINER_API_KEY_FILE = "/run/secrets/vllm-api-key"
# The container's entrypoint when the engine has a key: the key from the mounted file into the server's
# environment only (not the container's configuration), then the server itself ("$@": `vllm serve ...`,
# or the Neuron server command). $(...) drops the trailing newline; an empty or missing file stops it.
API_KEY_ENTRYPOINT = "/bin/sh"
API_KEY_SCRIPT = (
    f'{API_KEY_VARIABLE}="$(cat {CONTAINER_API_KEY_FILE})" && [ -n "${API_KEY_VARIABLE}" ] && '
    f'export {API_KEY_VARIABLE} && exec "$@"'
)
# The engine's /dev/shm in its own IPC namespace. vLLM shares tensors between its processes through
# shared memory (PyTorch), most of all under tensor parallelism; vLLM's Docker guide says to give the
# container either the host's IPC namespace or a --shm-size, and its tensor-parallel example uses
# `--shm-size=10.24gb` (docs.vllm.ai, deployment/docker, read 2026-12-02). /dev/shm is a tmpfs: the size
# is a ceiling, memory is used only for what the engine writes there.
SHM_SIZE = "10g"
# Neuron: vLLM 0.9.1's NxD loader compiles into $NEURON_COMPILED_ARTIFACTS when it is set, else into
# <weights>/neuron-compiled-artifacts/<hash> (aws-neuron/upstreaming-to-vllm dd417b3,
# vllm/model_executor/model_loader/neuronx_distributed.py:168-180, and :349, :535 for the other Neuron
# model classes; tag 2.24.0 :226-237), which is read-only here. NxDI writes model.pt, neuron_config.json
# and weights/ there (neuronx-distributed-inference v0.5.9230, models/application_base.py:39,206,220).
NEURON_COMPILED_DEFAULT = "/var/cache/inference-infra/neuron-compiled"  # root volume: survives stop/start
CONTAINER_COMPILED_DIR = "/var/cache/neuron-compiled"
# A host folder the units may name: absolute, or under a ${VARIABLE} of the environment file (GCP).
_MODEL_DIR = re.compile(r"^(\$\{[A-Z][A-Z0-9_]*\})?(/[A-Za-z0-9_][A-Za-z0-9._-]*)+$")
# The Neuron DLC's entrypoint runs its arguments as a command; these start vLLM's OpenAI server with the
# image's python (conda's, first on the image's PATH), the way AWS's Neuron vLLM guides start it.
NEURON_SERVER_COMMAND = ("python", "-m", "vllm.entrypoints.openai.api_server")


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
    # The pinned manifest digest: the engines start only when the verified marker holds it.
    manifest_sha256: str | None = None
    # Fetches the engines' API key: run before each start with the key file's path appended; it writes
    # the bare key there (mode 0400). None: no key (only for hosts nobody else can reach).
    api_key_command: tuple[str, ...] | None = None
    # Commands that must succeed, as root, before each start (e.g. the metadata reject rule is there).
    start_checks: tuple[tuple[str, ...], ...] = ()
    # "bridge" (published ports; the instance metadata out of reach) or "host". None: bridge.
    network: str | None = None
    # TPU engines: the VM's slice, whose description the container gets as environment (tpu_env.py)
    # instead of asking the metadata server. Required for TPU engines on a bridge network.
    tpu: TpuHost | None = None
    # Neuron: the host folder compiled artifacts go to (one subfolder per weights/image/flags key).
    neuron_compiled_dir: str = NEURON_COMPILED_DEFAULT
    # More host folders the engine unit may write (its sandbox is read-only elsewhere).
    read_write_paths: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class EngineUnits:
    template: str  # the text of inference-engine@.service
    environments: dict[str, str]  # path of each engine's environment file -> its text
    instances: list[
        str
    ]  # what to enable: inference-engine@0.service, ..., inference-engine-metrics@0.service, ...
    metrics_template: str = ""  # the text of inference-engine-metrics@.service
    scripts: dict[str, str] = field(default_factory=dict)  # node path -> text (the metrics proxy)

    @property
    def engine_instances(self) -> list[str]:
        return [i for i in self.instances if i.startswith("inference-engine@")]

    def files(self, unit_dir: str = "/etc/systemd/system") -> list[NodeFile]:
        """The engines' part of the node boot, which AWS writes as cloud-init and GCP as its script."""
        units = [NodeFile(f"{unit_dir}/{TEMPLATE_UNIT}", self.template)]
        if self.metrics_template:
            units.append(NodeFile(f"{unit_dir}/{METRICS_UNIT}", self.metrics_template))
        rest = [*self.environments.items(), *self.scripts.items()]
        return [*units, *(NodeFile(path, text) for path, text in rest)]


def instance_name(index: int) -> str:
    return f"inference-engine@{index}.service"


def metrics_instance_name(index: int) -> str:
    return f"inference-engine-metrics@{index}.service"


def environment_path(index: int | str) -> str:
    return f"{ENV_DIR}/engine-{index}.env"


# Several processes on one TPU VM each see a sub-mesh of chips and talk to libtpu on their own port
# (https://cloud.google.com/tpu/docs/run-multiple-processes: TPU_CHIPS_PER_PROCESS_BOUNDS, TPU_PROCESS_BOUNDS,
# TPU_PROCESS_PORT, TPU_PROCESS_ADDRESSES, TPU_VISIBLE_CHIPS). Each engine is a mesh of one process of its
# own (TPU_PROCESS_BOUNDS=1,1,1, its own address only), as tpu-inference isolates its data-parallel
# ranks (tpu_inference/worker/tpu_worker.py:270-308, b8692ff): engines never talk to each other, so each
# in its own container's network namespace works the same.
TPU_FIRST_PROCESS_PORT = 8476


def engine_environment(config: EngineConfig, index: int) -> str:
    units = config.units_of(index)
    text = (
        f"ENGINE_PORT={config.ports[index]}\n"
        f"ENGINE_METRICS_PORT={config.metrics_ports[index]}\n"
        f"ENGINE_DEVICES={','.join(str(u) for u in units)}\n"
        f"ENGINE_CORES={units[0]}-{units[-1]}\n"
    )
    if config.family is EngineFamily.TPU_VLLM and config.engines > 1:
        bounds = TPU_CHIP_BOUNDS.get(config.tensor_parallel, f"1,{config.tensor_parallel},1")
        text += f"ENGINE_TPU_BOUNDS={bounds}\nENGINE_TPU_PORT={TPU_FIRST_PROCESS_PORT + index}\n"
    return text


def host_problems(config: EngineConfig, host: EngineHost) -> list[str]:
    """What keeps a host's settings out of a unit (each reaches ExecStart= or a sandbox setting)."""
    problems = []
    if not _MODEL_DIR.fullmatch(host.model_dir) or ".." in host.model_dir.split("/"):
        problems.append(f"model_dir {host.model_dir!r} {ABSOLUTE_PATH_RULE} (it may start with ${{VAR}})")
    if host.manifest_sha256 is not None and not is_pinned_digest(host.manifest_sha256):
        problems.append(f"manifest_sha256 {host.manifest_sha256!r} must be 64 lower-case hex digits")
    if host.network not in (None, "bridge", "host"):
        problems.append(f"network {host.network!r} must be 'bridge' or 'host'")
    elif config.family is EngineFamily.TPU_VLLM and host.tpu is None:
        problems.append(
            "tpu must name the TPU VM's slice: a TPU engine is given its chips' device nodes (never "
            "--privileged), and on a bridge network, where it cannot ask the metadata server, the slice's "
            "description as environment"
        )
    if host.tpu is not None:
        problems += tpu_host_problems(host.tpu)
    for path in (host.neuron_compiled_dir, *host.read_write_paths):
        if not absolute_path_ok(path):
            problems.append(f"path {path!r} {ABSOLUTE_PATH_RULE}")
    if host.api_key_command is not None and not host.api_key_command:
        problems.append("api_key_command must name a command")
    for check in host.start_checks:
        if not check or not absolute_path_ok(check[0]):
            problems.append(f"start_checks {check!r} must each start with an absolute program path")
    return problems


def engine_units(config: EngineConfig, host: EngineHost) -> EngineUnits:
    problems = host_problems(config, host)
    if problems:
        raise ValueError("engine units: " + "; ".join(problems))
    return EngineUnits(
        template=engine_template(config, host),
        environments={environment_path(i): engine_environment(config, i) for i in range(config.engines)},
        instances=[instance_name(i) for i in range(config.engines)]
        + [metrics_instance_name(i) for i in range(config.engines)],
        metrics_template=metrics_template(),
        scripts={METRICS_PROXY: metrics_proxy_source()},
    )


def network_of(config: EngineConfig, host: EngineHost) -> str:
    """The engine container's network: bridge (every family) unless the host says otherwise."""
    return host.network or "bridge"


def compiled_key(config: EngineConfig, host: EngineHost) -> str:
    """What Neuron compiled artifacts depend on: the weights (manifest digest), the image and the flags."""
    image = host.image or engine_image(config.family).reference
    basis = "\n".join([host.manifest_sha256 or host.model_dir, image, *engine_args(config, 0, "/models")])
    return hashlib.sha256(basis.encode()).hexdigest()[:16]


def compiled_dir(config: EngineConfig, host: EngineHost) -> str:
    """The host folder of this configuration's Neuron compiled artifacts (engine %i's are below it)."""
    return f"{host.neuron_compiled_dir.rstrip('/')}/{compiled_key(config, host)}"


def docker_command(config: EngineConfig, host: EngineHost) -> list[str]:
    """The template's `docker run` words; systemd fills ${ENGINE_*} from the instance's environment file."""
    image = host.image or engine_image(config.family).reference
    command = [
        DOCKER,
        "run",
        "--rm",
        "--name",
        Template("inference-engine-%i"),
        "--network",
        network_of(config, host),
    ]
    if network_of(config, host) == "bridge":
        command += ["--publish", Template("${ENGINE_PORT}:${ENGINE_PORT}")]
    command += [
        "--ipc",
        "private",
        "--shm-size",
        SHM_SIZE,
        "--env",
        "HF_HUB_OFFLINE=1",
        "--volume",
        Template(f"{host.model_dir}:{CONTAINER_MODEL_DIR}:ro"),
    ]
    if host.api_key_command is not None:
        command += ["--volume", Template(f"{API_KEY_FILE}:{CONTAINER_API_KEY_FILE}:ro")]
    if config.family is EngineFamily.NVIDIA_VLLM:
        command += ["--gpus", "all", "--env", Template("CUDA_VISIBLE_DEVICES=${ENGINE_DEVICES}")]
    elif config.family is EngineFamily.NEURON_VLLM:
        command += ["--cap-add", "IPC_LOCK", "--env", Template("NEURON_RT_VISIBLE_CORES=${ENGINE_CORES}")]
        command += [f"--device=/dev/neuron{i}" for i in range(config.devices_per_node)]
        command += [
            "--volume",
            Template(f"{compiled_dir(config, host)}/%i:{CONTAINER_COMPILED_DIR}:rw"),
            "--env",
            f"NEURON_COMPILED_ARTIFACTS={CONTAINER_COMPILED_DIR}",
        ]
    else:
        # No --privileged: the chips' device nodes only, IPC_LOCK and memlock for vfio's pinned DMA buffers,
        # Docker's default seccomp profile and capability set otherwise (tpu_env.py TPU_DEVICE_STYLE).
        command += ["--cap-add", "IPC_LOCK", "--ulimit", "memlock=-1:-1"]
        if host.tpu is not None:
            command += [f"--device={device}" for device in tpu_devices(host.tpu)]
        command += ["--env", Template("TPU_VISIBLE_CHIPS=${ENGINE_DEVICES}")]
        if host.tpu is not None and network_of(config, host) == "bridge":
            for name, value in tpu_environment(host.tpu).items():
                command += ["--env", f"{name}={value}"]
        if config.engines > 1:
            for variable in (
                "TPU_CHIPS_PER_PROCESS_BOUNDS=${ENGINE_TPU_BOUNDS}",
                "TPU_PROCESS_BOUNDS=1,1,1",
                "TPU_PROCESS_PORT=${ENGINE_TPU_PORT}",
                "TPU_PROCESS_ADDRESSES=localhost:${ENGINE_TPU_PORT}",
            ):
                command += ["--env", Template(variable)]
    if config.family is EngineFamily.NEURON_VLLM:
        # The Neuron DLC's own start (aws-neuron/deep-learning-containers, tag 2.25.0,
        # docker/vllm/inference/0.9.1/Dockerfile.neuronx):
        # ENTRYPOINT ["python", "/usr/local/bin/vllm_entrypoint.py"], a wrapper that runs its arguments
        # (`subprocess.check_call(sys.argv[1:])`), CMD ["/bin/bash"]. The unit keeps that entrypoint and gives
        # it the server as the command. The image's HEALTHCHECK curls localhost:8080/ping (TorchServe /
        # SageMaker), which this server does not listen on: the load balancer checks /health on the engine's
        # port instead, so Docker's check is off.
        command += ["--no-healthcheck"]
        server = list(NEURON_SERVER_COMMAND)
    else:
        # vllm/vllm-openai's entrypoint is `vllm serve`; the TPU image's /entrypoint.sh execs its arguments
        # (vllm-project/tpu-inference docker/entrypoint.sh). Naming `vllm serve` starts the server in both.
        server = ["vllm", "serve"]
    if host.api_key_command is not None:
        # The key file into the server's environment, then the server (API_KEY_SCRIPT: a plain word, so
        # systemd passes its $ through as written); "engine" is the shell's $0.
        command += ["--entrypoint", API_KEY_ENTRYPOINT, image, "-c", API_KEY_SCRIPT, "engine", *server]
    elif config.family is EngineFamily.NEURON_VLLM:
        command += [image, *server]
    else:
        command += ["--entrypoint", server[0], image, *server[1:]]
    args = engine_args(config, 0, CONTAINER_MODEL_DIR, port="${ENGINE_PORT}")
    return command + [Template(a) if a == "${ENGINE_PORT}" else a for a in args]


def engine_template(config: EngineConfig, host: EngineHost) -> str:
    needs = ["docker.service"] + ([host.prefetch_unit] if host.prefetch_unit else [])
    marker = Template(f"{host.model_dir.rstrip('/')}/{VERIFIED_MARKER}")
    image = host.image or engine_image(config.family).reference
    environment = [f"EnvironmentFile={host.environment_file}"] if host.environment_file else []
    writable = list(host.read_write_paths)
    # "-": a registry that does not answer must not stop a restart when the image is already here.
    before = [f"ExecStartPre=-+{systemd_exec([DOCKER, 'pull', '--quiet', image])}"]
    if config.family is EngineFamily.NEURON_VLLM:
        compiled = compiled_dir(config, host)
        writable.append(compiled)
        before += [
            # Other keys' artifacts are for weights, images or flags this node no longer runs.
            "ExecStartPre=+" + systemd_exec(["/usr/bin/mkdir", "-p", Template(f"{compiled}/%i")]),
            "ExecStartPre=+"
            + systemd_exec(
                [
                    "/usr/bin/find",
                    host.neuron_compiled_dir,
                    "-mindepth",
                    "1",
                    "-maxdepth",
                    "1",
                    "!",
                    "-name",
                    compiled_key(config, host),
                    "-exec",
                    "rm",
                    "-rf",
                    "{}",
                    "+",
                ]
            ),
        ]
    if host.manifest_sha256 is not None:
        check = ["/usr/bin/grep", "--quiet", "--line-regexp", "--fixed-strings", host.manifest_sha256, marker]
    else:
        check = ["/usr/bin/test", "-f", marker]
    before.append(f"ExecStartPre={systemd_exec(check)}")
    # "+": a check may read what the sandbox hides (e.g. the firewall's rules, which need CAP_NET_ADMIN).
    before += [f"ExecStartPre=+{systemd_exec(list(check))}" for check in host.start_checks]
    if host.api_key_command is not None:
        before.append(f"ExecStartPre={systemd_exec([*host.api_key_command, Template(API_KEY_FILE)])}")
    served = systemd_value(config.served_model_name)
    lines = [
        "[Unit]",
        f"Description=inference-infra: {config.family.value} engine %i serving {served}",
        "Wants=network-online.target",
        f"Requires={' '.join(needs)}",
        f"After=network-online.target {' '.join(needs)}",
        "",
        "[Service]",
        "Type=simple",
        "Environment=HF_HUB_OFFLINE=1",
        *environment,
        f"EnvironmentFile={environment_path('%i')}",
        # The docker client runs read-only but for its own runtime folder (the API key) and, on Neuron,
        # the compiled artifacts; the image is pulled before, outside this sandbox (registry helpers).
        *sandbox(writable, home="read-only"),
        f"RuntimeDirectory={RUNTIME_DIRECTORY}",
        "RuntimeDirectoryMode=0700",
        *before,
        f"ExecStartPre=-{systemd_exec([DOCKER, 'rm', '--force', Template('inference-engine-%i')])}",
        f"ExecStart={systemd_exec(docker_command(config, host))}",
        f"ExecStop={systemd_exec([DOCKER, 'stop', '--time', '30', Template('inference-engine-%i')])}",
        "Restart=on-failure",
        "RestartSec=30",
        f"TimeoutStartSec={host.start_timeout_seconds}",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def metrics_template() -> str:
    """The metrics-only port of engine %i: GET /metrics relayed from its API port, nothing else."""
    command = [PYTHON, METRICS_PROXY, "--listen", Template("${ENGINE_METRICS_PORT}")]
    command += ["--upstream", Template("${ENGINE_PORT}")]
    lines = [
        "[Unit]",
        "Description=inference-infra: metrics-only port of engine %i (GET /metrics)",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        f"EnvironmentFile={environment_path('%i')}",
        f"ExecStart={systemd_exec(command)}",
        "DynamicUser=yes",
        *sandbox(families=IP_FAMILIES, no_writable_code=True),
        "Restart=always",
        "RestartSec=5",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def metrics_proxy_source() -> str:
    """The metrics proxy's script, as the node runs it (stdlib only)."""
    return resources.files("inference_infra.components.serving").joinpath("metrics_proxy.py").read_text()


def exec_words(line: str, index: int, values: dict[str, str]) -> list[str]:
    """An ExecStart= value as systemd runs it: specifiers, then quoted words, then ${VAR} (tests, docs).

    The subset of systemd.service(5)'s command-line rules the units use: %i and %%, double quotes
    with \\ and \" escapes, ${NAME} and $$.
    """
    line = re.sub(
        r"%(.)", lambda m: "%" if m.group(1) == "%" else str(index) if m.group(1) == "i" else m.group(0), line
    )
    words, word, quoted, escaped, started = [], [], False, False, False
    for c in line:
        if escaped:
            word.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            quoted, started = not quoted, True
        elif c == " " and not quoted:
            if word or started:
                words.append("".join(word))
            word, started = [], False
        else:
            word.append(c)
    if word or started:
        words.append("".join(word))
    expand = re.compile(r"\$\$|\$\{(\w+)\}")
    return [
        expand.sub(lambda m: "$" if m.group(0) == "$$" else values.get(m.group(1), m.group(0)), w)
        for w in words
    ]


def instance_command(units: EngineUnits, index: int, environment: dict[str, str] | None = None) -> list[str]:
    """Instance `index`'s ExecStart= as words, with %i and ${VAR} filled in (tests and docs)."""
    values = dict(line.split("=", 1) for line in units.environments[environment_path(index)].splitlines())
    values.update(environment or {})
    line = next(x for x in units.template.splitlines() if x.startswith("ExecStart="))
    return exec_words(line.removeprefix("ExecStart="), index, values)
