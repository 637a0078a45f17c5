"""The boot script of GPU and TPU VMs, rendered by a pure function.

`render_startup_script(StartupConfig(...))` returns a bash script for the
`startup-script` metadata key. Compute Engine runs it as root at every boot
(also after a Spot VM is stopped and started again, when its local SSDs come
back empty), so every step is idempotent:

1. Ops Agent with GPU metrics (optional): installs the agent; NVML GPU
   metrics are collected by default, and the DCGM receiver adds per-GPU
   health and profiling metrics once DCGM runs. A failure here is logged and
   does not stop the node from serving.
2. Local SSDs: waits for the expected NVMe local SSDs, stripes them into one
   RAID0 array (mdadm) when there are several, formats ext4 and mounts it at
   `/mnt/local-ssd`.
3. Model cache: mounts the Filestore share named in the instance metadata key
   `inference-infra-model-cache` (`<ip>:/<share>`) at `/mnt/model-cache`.
4. Files: writes every file the node runs or reads (the shared weights verifier,
   the weights fetcher, their configuration, the systemd units, the Ops Agent
   and Docker configuration) from base64 blobs. Nothing in the script is a
   heredoc or a value spliced into a command: a blob has no delimiter its
   content could end, and every other word is a constant of this module or a
   value quoted with `shlex.quote` after the components allow-listed it.
5. Weights: starts `inference-weights.service` (`components/gcp/node/gcs_weights.py`,
   sandboxed) and waits for it: each `gs://` folder is fetched by its pinned
   manifest into `<models dir>/<folder>/<manifest sha256>/` on the fastest
   place the node has (local SSD, else the shared Filestore cache, which only
   its writer fills and serving nodes wait for, else the boot disk) and
   verified there.
6. Engines: installs their units, which require and are bound to the weights
   unit (they stop when it fails or stops) and to the metadata block (the
   engines run on a Docker bridge network whose packets to the metadata server
   the node rejects; TPU engines get the slice's description as environment),
   and starts them.

`root` prefixes every path the script touches, so tests run the real script
in a scratch directory with stand-in commands.
"""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import pulumi
import yaml

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.gcp.elastic import ops_agent_prometheus
from inference_infra.components.gcp.mirrors import mirror_problems, mirrored, registry_hosts, unmirrored_hosts
from inference_infra.components.gcp.names import (
    FOLDER_RULE,
    folder_name,
    folder_of,
    is_model_folder_uri,
    name_problems,
)
from inference_infra.components.models.manifest import VERIFIER_FILE, is_pinned_digest, verifier_source
from inference_infra.components.monitoring.host_exporters import (
    DCGM_EXPORTER_IMAGE,
    NODE_EXPORTER_IMAGE,
    TEXTFILE_DIR,
)
from inference_infra.components.serving import (
    EngineConfig,
    EngineFamily,
    EngineHost,
    engine_image,
    engine_units,
)
from inference_infra.components.serving.boot import (
    IP_FAMILIES,
    BootStep,
    NodeBoot,
    NodeFile,
    NodePath,
    credential_helpers,
    exporter_step,
    sandbox,
    textfile_folder,
)
from inference_infra.components.serving.quoting import systemd_exec
from inference_infra.components.serving.tpu_env import TpuHost, tpu_host_problems
from inference_infra.components.serving.units import TEMPLATE_UNIT, network_of

CACHE_METADATA_KEY = "inference-infra-model-cache"
LOCAL_SSD_MOUNT = "/mnt/local-ssd"
MODEL_CACHE_MOUNT = "/mnt/model-cache"
BOOT_DISK_MODELS = "/var/lib/inference-infra/models"
MODELS_ENV = "/etc/inference-infra/models.env"
OPS_AGENT_CONFIG = "/etc/google-cloud-ops-agent/config.yaml"
# The node's own programs: the shared verifier and the GCP weights fetcher, side by side (the fetcher
# imports the verifier from its folder), and the fetcher's configuration.
NODE_BIN = "/opt/inference-infra/bin"
FETCHER_FILE = "gcs_weights.py"
SECRET_FILE = "gcp_secret.py"  # writes the engines' API key from Secret Manager (components/gcp/node)
WEIGHTS_CONFIG = "/etc/inference-infra/weights.json"
WEIGHTS_UNIT = "inference-weights.service"
UNIT_DIR = "/etc/systemd/system"
# Binds every engine to the weights unit: an engine stops when the weights unit fails or stops.
ENGINE_DROP_IN = f"{UNIT_DIR}/{TEMPLATE_UNIT}.d/10-weights.conf"
PYTHON = "/usr/bin/python3"
METADATA_BLOCK_UNIT = "inference-metadata-block.service"
METADATA_ADDRESS = "169.254.169.254/32"  # the metadata server (metadata.google.internal)
IPTABLES = "/usr/sbin/iptables"
# The Ops Agent comes from Google's signed apt repository, not from a downloaded installer script: the
# boot script fetches Google's published keys, keeps only the keys pinned here (by full fingerprint), and
# apt then trusts only those for that repository. If Google rotates to a key not listed here, the Ops
# Agent is not installed (the boot logs a warning and goes on serving) until this list is updated.
OPS_AGENT_KEYS_URL = "https://packages.cloud.google.com/apt/doc/apt-key.gpg"
OPS_AGENT_REPO = "https://packages.cloud.google.com/apt"
OPS_AGENT_MAJOR = "2"  # the repository suite google-cloud-ops-agent-<codename>-2: major version 2 only
OPS_AGENT_KEY_FINGERPRINTS = (
    # "Rapture Automatic Signing Key (cloud-rapture-signing-key-2022-03-07-08_01_01.pub)", created 2022-05-21
    "A362B822F6DEDC652817EA46B53DC80D13EDEF05",
    # "Artifact Registry Repository Signer <artifact-registry-repository-signer@google.com>", 2021-05-04
    "35BAA0B33E9EB396F59CA838C0BA5CE6DC6315A3",
)
# Source of both fingerprints (read 2026-11-23): `gpg --show-keys` / yum import output of
# packages.cloud.google.com's key file quoted in public install logs; see components/gcp/README.md.
OPS_AGENT_KEYRING = "/usr/share/keyrings/inference-infra-google-cloud-ops-agent.gpg"
OPS_AGENT_SOURCES = "/etc/apt/sources.list.d/google-cloud-ops-agent.list"
RAID_DEVICE = "/dev/md0"
# The packages the boot installs when the image lacks them (and the network allows downloads).
OPS_AGENT_PACKAGE = "google-cloud-ops-agent"
BOOT_PACKAGES = (OPS_AGENT_PACKAGE, "nfs-common", "mdadm")
# Docker's configuration for the engines when images come from Artifact Registry: credHelpers name
# `gcloud` (docker-credential-gcloud, shipped with the Google Cloud CLI of the images), which answers
# with the node service account's token from the metadata server. The serving unit reads DOCKER_CONFIG
# from models.env, so no HOME is needed.
DOCKER_CONFIG_DIR = "/etc/inference-infra/docker"
# How long a serving node waits for the shared cache's writer to publish a model.
CACHE_WAIT_SECONDS = 7200


@dataclass(frozen=True, kw_only=True)
class StartupConfig:
    local_ssd_count: int = 0  # NVMe local SSDs the machine has (bundled + added)
    model_uris: tuple[str, ...] = ()  # gs://bucket/folder, one per model (allow-listed: names.py)
    # Folder URI -> the pinned SHA-256 of its inference-manifest.json (GcsWeights.manifest_sha256).
    manifest_sha256: Mapping[str, str] = field(default_factory=dict)
    model_cache: bool = False  # mount the Filestore share named in the instance metadata
    # Serving nodes mount the shared cache read-only (its export is READ_ONLY, ROOT_SQUASH for them) and
    # wait for its writer to publish each pinned model; only the cache's named writer (a host in
    # FilestoreModelCacheArgs.writer_ranges) mounts it read-write and fills it from Cloud Storage.
    model_cache_writer: bool = False
    allow_code: bool = False  # accept .py and pickle files (they run code when loaded)
    ops_agent: bool = True
    gpu_metrics: bool = False  # DCGM receiver (needs ops_agent)
    download_connections: int = 32  # parallel ranged reads across the model's objects
    download_slice_mib: int = 64  # objects larger than this come in slices of this size
    local_ssd_wait_seconds: int = 120
    root: str = ""  # prefix of every path the script touches (tests); empty on real machines
    engines: EngineConfig | None = None  # serve model_uris[0] once verified (components/serving)
    # Upstream registry host -> LOCATION-docker.pkg.dev/PROJECT/REPOSITORY (components/gcp/mirrors.py):
    # every image the node runs is pulled from there by the same digest.
    image_mirrors: Mapping[str, str] = field(default_factory=dict)
    # False on networks without internet egress (endpoints-only): a package the image lacks is an error
    # in the boot log naming it, never an apt download (which could only time out).
    package_downloads: bool = True
    # Run the host exporters the stack's Prometheus scrapes (components/monitoring/host_exporters.py):
    # node exporter (:9100), and dcgm-exporter (:9400) when gpu_exporter. GPU fleets run both.
    host_exporters: bool = False
    gpu_exporter: bool = False
    # Secret Manager secret version of the engines' API key (projects/P/secrets/S/versions/V): fetched at
    # each engine start into a 0400 file of the engine's runtime folder, never into metadata or a unit.
    api_key_secret: str | None = None
    # TPU VMs: the slice, which the engine containers get as environment (components/serving/tpu_env.py)
    # because they cannot reach the metadata server. Required with TPU engines.
    tpu: TpuHost | None = None
    # Elastic pools (components/gcp/elastic.py): the managed instance group's name. The Ops Agent then
    # also scrapes the engines' metrics-only ports and writes their load to Cloud Monitoring, labelled
    # with it, for the autoscaler. Needs gpu_metrics (the agent's configuration is written with it).
    engine_load_pool: str | None = None

    def pinned(self, uri: str) -> str:
        wanted = uri.rstrip("/")
        return next((v.lower() for k, v in self.manifest_sha256.items() if k.rstrip("/") == wanted), "")


def models_dir(config: StartupConfig) -> str:
    """Where the node keeps its models: local SSD, else the shared cache, else the boot disk."""
    if config.local_ssd_count:
        return f"{LOCAL_SSD_MOUNT}/models"
    if config.model_cache:
        return f"{MODEL_CACHE_MOUNT}/models"
    return BOOT_DISK_MODELS


def reads_shared_cache(config: StartupConfig) -> bool:
    """A serving node that takes its weights from the shared cache, which it may not write."""
    return config.model_cache and not config.local_ssd_count and not config.model_cache_writer


def model_dir(config: StartupConfig, uri: str) -> str:
    """The verified copy of one folder on the node: <models dir>/<folder>/<pinned manifest sha256>."""
    return f"{models_dir(config)}/{folder_name(uri)}/{config.pinned(uri)}"


def node_metadata(startup_script: str, *, model_cache_nfs: pulumi.Input[str] | None) -> dict[str, Any]:
    """Instance metadata of every GPU/TPU node: OS Login only, no project SSH keys, no serial port."""
    metadata: dict[str, Any] = {
        "enable-oslogin": "TRUE",
        "block-project-ssh-keys": "true",
        "serial-port-enable": "FALSE",
        "startup-script": startup_script,
    }
    if model_cache_nfs is not None:
        metadata[CACHE_METADATA_KEY] = model_cache_nfs
    return metadata


def validate_startup(config: StartupConfig) -> list[Problem]:
    problems = []
    if config.local_ssd_count < 0:
        problems.append(Problem("local_ssd_count", config.local_ssd_count, "must be 0 or more"))
    if config.gpu_metrics and not config.ops_agent:
        problems.append(Problem("gpu_metrics", True, "needs the Ops Agent (ops_agent=True)"))
    if config.engine_load_pool is not None:
        if not (config.gpu_metrics and config.ops_agent and config.engines is not None):
            problems.append(
                Problem(
                    "engine_load_pool",
                    config.engine_load_pool,
                    "needs the Ops Agent with its configuration (ops_agent and gpu_metrics) and engines",
                )
            )
        problems += name_problems("engine_load_pool", config.engine_load_pool, max_length=63)
    for name, low, high in (("download_connections", 1, 256), ("download_slice_mib", 8, 1024)):
        value = getattr(config, name)
        if not low <= value <= high:
            problems.append(Problem(name, value, f"must be between {low} and {high}"))
    problems += mirror_problems(config.image_mirrors)
    if config.engines is not None and config.engines.family is EngineFamily.TPU_VLLM and config.tpu is None:
        problems.append(
            Problem(
                "tpu",
                None,
                "must name the TPU VM's slice for TPU engines: they run on a bridge network without the "
                "metadata server and get the slice's description as environment",
            )
        )
    if config.tpu is not None:
        problems += [Problem("tpu", config.tpu.accelerator_type, p) for p in tpu_host_problems(config.tpu)]
    return problems


def folder_problems(config: StartupConfig) -> list[Problem]:
    """Each folder allow-listed and pinned (the components check their inputs first; the renderer again)."""
    problems = []
    for i, uri in enumerate(config.model_uris):
        if not is_model_folder_uri(uri):
            problems.append(Problem(f"model_uris[{i}]", uri, FOLDER_RULE))
        if not is_pinned_digest(config.pinned(uri)):
            problems.append(
                Problem(f"manifest_sha256[{uri!r}]", config.pinned(uri) or None, "must be 64 hex digits")
            )
    return problems


def pulled_images(config: StartupConfig) -> list[str]:
    """The upstream references of every image the node runs (before mirroring)."""
    images = []
    if config.host_exporters:
        images += ([DCGM_EXPORTER_IMAGE] if config.gpu_exporter else []) + [NODE_EXPORTER_IMAGE]
    if config.engines is not None and config.model_uris:
        images.append(engine_image(config.engines.family).reference)
    return images


def offline_problems(config: StartupConfig, preinstalled: Collection[str]) -> list[Problem]:
    """What the boot would download from the internet, which a node without internet egress cannot.

    Each problem names the input that covers it: `image_mirrors` (an Artifact Registry mirror of the
    image's registry), `preinstalled_packages` (the image carries the package), `ops_agent` (off).
    Weights (`gcloud storage`), logs and metrics go to Google APIs, which such a network still reaches.
    """
    problems = []
    if config.ops_agent and OPS_AGENT_PACKAGE not in preinstalled:
        problems.append(
            Problem(
                "ops_agent",
                True,
                "needs the Ops Agent, which comes from packages.cloud.google.com and a node without internet "
                f"egress cannot download: list {OPS_AGENT_PACKAGE} among the preinstalled packages if the "
                "image has it, or turn the Ops Agent off (no GPU metrics in Cloud Monitoring then; the "
                "engines' /metrics stay)",
            )
        )
    by_host: dict[str, list[str]] = {}
    for image in pulled_images(config):
        for host in unmirrored_hosts([image], config.image_mirrors):
            by_host.setdefault(host, []).append(_image_role(image))
    for host, roles in sorted(by_host.items()):
        problems.append(
            Problem(
                "image_mirrors",
                dict(config.image_mirrors),
                f"has no mirror of {host}, the registry of {' and '.join(roles)}; a node without internet "
                f"egress pulls only from Artifact Registry: map {host} to an Artifact Registry repository "
                "(LOCATION-docker.pkg.dev/PROJECT/REPOSITORY)",
            )
        )
    if config.model_cache and "nfs-common" not in preinstalled:
        problems.append(
            Problem(
                "preinstalled_packages",
                sorted(preinstalled),
                "must list nfs-common, which mounts the Filestore cache and which a node without internet "
                "egress cannot install from the Ubuntu archive: use an image that has it and list it, or "
                "drop the model cache",
            )
        )
    if config.local_ssd_count > 1 and "mdadm" not in preinstalled:
        problems.append(
            Problem(
                "preinstalled_packages",
                sorted(preinstalled),
                f"must list mdadm, which stripes its {config.local_ssd_count} local SSDs and which a node "
                "without internet egress cannot install from the Ubuntu archive: use an image that has it "
                "and list it",
            )
        )
    return problems


def _image_role(image: str) -> str:
    if image == DCGM_EXPORTER_IMAGE:
        return f"its GPU exporter {image}"
    if image == NODE_EXPORTER_IMAGE:
        return f"its node exporter {image}"
    return f"its engine image {image}"


def exporter_steps(config: StartupConfig) -> list[BootStep]:
    """The host exporters' containers, each image from its mirror when its registry has one."""
    if not config.host_exporters:
        return []
    docker_config = DOCKER_CONFIG_DIR if registry_hosts(config.image_mirrors) else None
    runs = [("node-exporter", NODE_EXPORTER_IMAGE, False)]
    if config.gpu_exporter:
        runs.insert(0, ("dcgm-exporter", DCGM_EXPORTER_IMAGE, True))
    return [
        exporter_step(name, mirrored(image, config.image_mirrors), gpus=gpus, docker_config=docker_config)
        for name, image, gpus in runs
    ]


def ops_agent_gpu_config(config: StartupConfig | None = None) -> str:
    """Ops Agent configuration adding the DCGM receiver to the built-in pipelines.

    The agent merges this with its defaults, which already collect NVML GPU
    metrics (agent.googleapis.com/gpu/*) on GPU VMs. An elastic pool's node
    (`engine_load_pool`) adds the Prometheus receiver of its engines' load.
    """
    receivers: dict[str, Any] = {"dcgm": {"type": "dcgm", "receiver_version": 2}}
    pipelines: dict[str, Any] = {"dcgm": {"receivers": ["dcgm"]}}
    if config is not None and config.engine_load_pool is not None and config.engines is not None:
        scrape = ops_agent_prometheus(config.engines, config.engine_load_pool)
        receivers.update(scrape["receivers"])
        pipelines.update(scrape["pipelines"])
    agent = {"metrics": {"receivers": receivers, "service": {"pipelines": pipelines}}}
    return yaml.safe_dump(agent, sort_keys=False)


def node_source(name: str) -> str:
    """A program the node runs (components/gcp/node/), as shipped."""
    return resources.files("inference_infra.components.gcp.node").joinpath(name).read_text()


def fetcher_source() -> str:
    """The weights fetcher the node runs (components/gcp/node/gcs_weights.py), as shipped."""
    return node_source(FETCHER_FILE)


def weights_config(config: StartupConfig) -> dict[str, Any]:
    """The fetcher's configuration (JSON on the node): what to fetch or wait for, and where."""
    reader = reads_shared_cache(config)
    return {
        "models_dir": models_dir(config),
        "mode": "wait" if reader else "fetch",
        "lock": config.model_cache and not config.local_ssd_count and config.model_cache_writer,
        "allow_code": config.allow_code,
        "textfile_dir": TEXTFILE_DIR if config.host_exporters else None,
        "wait_seconds": CACHE_WAIT_SECONDS,
        "connections": config.download_connections,
        "slice_mib": config.download_slice_mib,
        "models": [
            {
                "bucket": uri.removeprefix("gs://").split("/", 1)[0],
                "prefix": folder_of(uri),
                "folder": folder_name(uri),
                "manifest_sha256": config.pinned(uri),
            }
            for uri in config.model_uris
        ],
    }


def weights_unit(config: StartupConfig) -> str:
    """The sandboxed oneshot unit that fetches and verifies every model (or waits for the cache's writer).

    Root, because the cache's writer fills an NFS share exported with NO_ROOT_SQUASH to root only; but
    with no capabilities, no new privileges, the whole file system read-only except the models folder
    and the metrics folder, private /tmp, no devices, no kernel or cgroup knobs, and IP sockets only.
    """
    writable = [models_dir(config)] + ([TEXTFILE_DIR] if config.host_exporters else [])
    timeout = CACHE_WAIT_SECONDS + 3600
    lines = [
        "[Unit]",
        "Description=inference-infra: model weights fetched by their pinned manifests and verified",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        f"ExecStart={PYTHON} {NODE_BIN}/{FETCHER_FILE} --config {WEIGHTS_CONFIG}",
        f"TimeoutStartSec={timeout}",
        "UMask=0022",
        # The one node sandbox (components/serving/boot.py); the fetcher is plain Python: no writable code.
        *sandbox(writable, families=("AF_UNIX", *IP_FAMILIES), no_writable_code=True, optional_writable=True),
        "",
    ]
    return "\n".join(lines)


def engine_drop_in(config: StartupConfig) -> str:
    """Every engine bound to the weights unit (started after it, stopped when it fails or stops) and,
    on a bridge network, to the metadata block (it starts only once containers cannot reach the server)."""
    needs = [WEIGHTS_UNIT] + ([METADATA_BLOCK_UNIT] if blocks_metadata(config) else [])
    return f"[Unit]\nBindsTo={' '.join(needs)}\nAfter={' '.join(needs)}\n"


def engine_host(config: StartupConfig) -> EngineHost:
    """Where the engines run on this node: the first folder's verified copy, from the mirror when one."""
    assert config.engines is not None
    uri = config.model_uris[0]
    return EngineHost(
        model_dir=model_dir(config, uri),
        prefetch_unit=WEIGHTS_UNIT,
        environment_file=MODELS_ENV,
        # The same digest, from the Artifact Registry mirror when the image's registry has one.
        image=mirrored(engine_image(config.engines.family).reference, config.image_mirrors),
        manifest_sha256=config.pinned(uri),
        tpu=config.tpu,
        # On their bridge network (the only one here) the engines fail to start when the metadata reject
        # is missing (flushed since the block unit ran): checked at every start, not only at boot.
        start_checks=(metadata_rule_check(),),
        api_key_command=(
            (PYTHON, f"{NODE_BIN}/{SECRET_FILE}", "--secret", config.api_key_secret)
            if config.api_key_secret
            else None
        ),
    )


def metadata_rule() -> list[str]:
    """The DOCKER-USER rule that rejects bridge containers' packets to the metadata server."""
    return ["DOCKER-USER", "--destination", METADATA_ADDRESS, "--jump", "REJECT"]


def metadata_rule_check() -> tuple[str, ...]:
    """`iptables --check` of the rule: exit 0 when it is there, 1 when not (the engine then fails)."""
    return (IPTABLES, "--wait", "--check", *metadata_rule())


def blocks_metadata(config: StartupConfig) -> bool:
    """Engines on a bridge network (GPU and TPU VMs): the node rejects their packets to the metadata server.

    TPU engines get the slice's description as environment instead (components/serving/tpu_env.py).
    """
    return serves(config) and network_of(config.engines, engine_host(config)) == "bridge"  # type: ignore[arg-type]


def metadata_block_unit() -> str:
    """Docker's DOCKER-USER chain (FORWARD path of every bridge container) rejects 169.254.169.254.

    metadata.google.internal resolves to that address; the node's own processes (host network: the
    weights unit, the Ops Agent, the exporters) are not forwarded and keep it. Idempotent: the rule is
    deleted when present and inserted again at the top, every time the unit starts.
    """
    rule = metadata_rule()
    lines = [
        "[Unit]",
        "Description=inference-infra: engine containers cannot reach the metadata server",
        "Requires=docker.service",
        "After=docker.service",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        # Removed first when there ("-": absent is fine), then inserted at the top: one rule, every start.
        f"ExecStartPre=-{systemd_exec([IPTABLES, '--wait', '--delete', *rule])}",
        f"ExecStart={systemd_exec([IPTABLES, '--wait', '--insert', *rule])}",
        "",
    ]
    return "\n".join(lines)


def serves(config: StartupConfig) -> bool:
    return config.engines is not None and bool(config.model_uris)


def models_env(config: StartupConfig) -> str:
    """/etc/inference-infra/models.env: what the engine units read (MODELS_DIR, DOCKER_CONFIG)."""
    text = f"MODELS_DIR={models_dir(config)}\n"
    if registry_hosts(config.image_mirrors):
        text += f"DOCKER_CONFIG={DOCKER_CONFIG_DIR}\n"
    return text


def node_boot(config: StartupConfig) -> NodeBoot:
    """The node's whole boot as one list (components/serving/boot.py): what it prepares (agent, disks,
    mounts, folders), every file it writes and every command it runs after them, in order. The one
    place the GCP boot is listed: `render_startup_script` only renders it into the script."""
    models = models_dir(config)
    prepare = []
    if config.host_exporters:  # before the weights unit, which publishes its verification gauge there
        prepare.append(textfile_folder())
    if config.ops_agent:
        prepare.append(
            BootStep(("setup_ops_agent",), warning="Ops Agent setup failed; node metrics will be missing")
        )
    if config.local_ssd_count:
        prepare.append(BootStep(("setup_local_ssd",)))
    if config.model_cache:
        prepare.append(BootStep(("mount_model_cache",)))
    if config.model_uris and not reads_shared_cache(config):
        prepare.append(BootStep(("mkdir", "-p", NodePath(models))))
    steps = []
    if pulls_from_mirrors(config):
        steps.append(BootStep(("check_registry_auth",)))
    steps += exporter_steps(config)
    if config.model_uris:
        steps += [BootStep(("systemctl", "daemon-reload")), BootStep(("start_weights", models))]
    instances = engine_instances(config)
    if instances:
        # Started here at every boot, after the mounts, never by systemd on its own: a unit enabled at
        # boot could start before this script has mounted the local SSD or the cache.
        steps += [
            BootStep(("systemctl", "disable", "--quiet", *instances)),
            BootStep(("systemctl", "start", "--no-block", *instances)),
        ]
    return NodeBoot(
        prepare=tuple(prepare),
        files=tuple(node_files(config)),
        steps=tuple(steps),
        done=f"startup complete; models in {models}",
    )


def pulls_from_mirrors(config: StartupConfig) -> bool:
    """The node pulls images (exporters or engines) from Artifact Registry mirrors."""
    return bool(registry_hosts(config.image_mirrors)) and (config.host_exporters or serves(config))


def node_files(config: StartupConfig) -> list[NodeFile]:
    """Every file the boot writes, in the order it writes them."""
    files = [NodeFile(MODELS_ENV, models_env(config))]
    if config.model_uris:
        files += [
            NodeFile(f"{NODE_BIN}/{VERIFIER_FILE}", verifier_source()),
            NodeFile(f"{NODE_BIN}/{FETCHER_FILE}", fetcher_source()),
            NodeFile(WEIGHTS_CONFIG, json.dumps(weights_config(config), indent=2, sort_keys=True) + "\n"),
            NodeFile(f"{UNIT_DIR}/{WEIGHTS_UNIT}", weights_unit(config)),
        ]
    if pulls_from_mirrors(config):
        hosts = registry_hosts(config.image_mirrors)
        files.append(credential_helpers(f"{DOCKER_CONFIG_DIR}/config.json", hosts, "gcloud"))
    if serves(config):
        assert config.engines is not None
        units = engine_units(config.engines, engine_host(config))
        files += units.files(UNIT_DIR)
        files.append(NodeFile(ENGINE_DROP_IN, engine_drop_in(config)))
        if config.api_key_secret:
            files.append(NodeFile(f"{NODE_BIN}/{SECRET_FILE}", node_source(SECRET_FILE)))
        if blocks_metadata(config):
            files.append(NodeFile(f"{UNIT_DIR}/{METADATA_BLOCK_UNIT}", metadata_block_unit()))
    return files


def engine_instances(config: StartupConfig) -> list[str]:
    """The engines and their metrics-only ports, started by the boot after the weights unit."""
    if not serves(config):
        return []
    assert config.engines is not None
    return list(engine_units(config.engines, engine_host(config)).instances)


def write_file_line(path: str, mode: str, text: str) -> str:
    """One bash line writing a file from a base64 blob: no content can end it or reach the shell."""
    blob = base64.b64encode(text.encode()).decode()
    return f"write_file {mode} {shlex.quote(path)} '{blob}'"


def shell_line(step: BootStep) -> str:
    """One bash line of a step: every word quoted (a NodePath below "$ROOT"); a warning logged on failure."""
    q = shlex.quote
    words = " ".join(f'"$ROOT"{q(w)}' if isinstance(w, NodePath) else q(w) for w in step.argv)
    line = "".join(f"{name}={q(value)} " for name, value in (step.environment or {}).items()) + words
    if step.quiet:
        line += " >/dev/null"
    if step.warning is not None:
        line += f" || log {_log_text('warning: ' + step.warning)}"
    return line


def _log_text(text: str) -> str:
    """A log message in double quotes (the script's own texts: no quote, $, backquote or backslash)."""
    if any(c in text for c in '"$`\\\n'):
        raise ValueError(f"log text {text!r} must hold no quote, $, backquote, backslash or newline")
    return f'"{text}"'


def render_startup_script(config: StartupConfig) -> str:
    """The startup script for config (see the module docstring for what it does)."""
    raise_if_invalid("StartupConfig", folder_problems(config))
    return startup_script(node_boot(config), config)


def startup_script(boot: NodeBoot, config: StartupConfig) -> str:
    """A NodeBoot as the startup script: its preparation, files and steps as shell lines after the
    script's functions (which read the config's settings: disks, cache, Ops Agent, package downloads)."""
    q = shlex.quote
    lines = [shell_line(step) for step in boot.prepare]
    lines += [write_file_line(f.path, f.mode, f.text) for f in boot.files]
    lines += [shell_line(step) for step in boot.steps]
    lines.append(f"log {_log_text(boot.done)}")
    return _TEMPLATE.format(
        install_ops_agent=(
            _INSTALL_OPS_AGENT.format(
                ops_keys_url=q(OPS_AGENT_KEYS_URL),
                ops_repo=q(OPS_AGENT_REPO),
                ops_major=q(OPS_AGENT_MAJOR),
                ops_keyring=q(OPS_AGENT_KEYRING),
                ops_sources=q(OPS_AGENT_SOURCES),
                ops_fingerprints=" ".join(q(f) for f in OPS_AGENT_KEY_FINGERPRINTS),
            )
            if config.package_downloads
            else _NO_OPS_AGENT_DOWNLOAD.format()
        ),
        root=q(config.root),
        local_ssd_count=int(config.local_ssd_count),
        wait_seconds=int(config.local_ssd_wait_seconds),
        local_ssd_mount=q(LOCAL_SSD_MOUNT),
        cache_mount=q(MODEL_CACHE_MOUNT),
        cache_access="rw" if config.model_cache_writer else "ro",
        ops_config_line=write_file_line(OPS_AGENT_CONFIG, "0644", ops_agent_gpu_config(config)),
        raid_device=q(RAID_DEVICE),
        cache_key=q(CACHE_METADATA_KEY),
        gpu_metrics="true" if config.gpu_metrics else "false",
        steps="\n".join(lines),
        package_downloads="true" if config.package_downloads else "false",
        weights_unit=q(WEIGHTS_UNIT),
    )


# Without package downloads (egress endpoints-only) the script names no download host at all.
_NO_OPS_AGENT_DOWNLOAD = """\
install_ops_agent() {{
  log "google-cloud-ops-agent is not on this image and the network allows no package downloads" \\
    "(egress endpoints-only); use an image that has it"
  return 1
}}"""

_INSTALL_OPS_AGENT = """\
OPS_AGENT_KEY_FINGERPRINTS=({ops_fingerprints})

install_ops_agent() {{  # from Google's apt repository, trusting only the pinned signing keys
  local home codename
  home="$(mktemp -d)"
  curl -sSfL --retry 3 --max-time 60 -o "$home/keys" {ops_keys_url} || return 1
  gpg --homedir "$home" --batch --quiet --import "$home/keys" 2>/dev/null || return 1
  mkdir -p "$(dirname "$ROOT"{ops_keyring})"
  # Only the pinned keys leave the scratch keyring: a key the download adds is never trusted.
  gpg --homedir "$home" --batch --quiet --export "${{OPS_AGENT_KEY_FINGERPRINTS[@]}}" \
    >"$ROOT"{ops_keyring} 2>/dev/null
  rm -rf "$home"
  if [ ! -s "$ROOT"{ops_keyring} ]; then
    log "Ops Agent: none of the pinned signing keys (${{OPS_AGENT_KEY_FINGERPRINTS[*]}}) is in" \
      {ops_keys_url}"; not installing"
    rm -f "$ROOT"{ops_keyring}
    return 1
  fi
  codename="$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release | tr -d '"')"
  [ -n "$codename" ] || return 1
  mkdir -p "$(dirname "$ROOT"{ops_sources})"
  printf 'deb [signed-by=%s] %s google-cloud-ops-agent-%s-%s main\n' \
    {ops_keyring} {ops_repo} "$codename" {ops_major} >"$ROOT"{ops_sources}
  apt-get update -qq || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq google-cloud-ops-agent || return 1
}}"""


_TEMPLATE = """\
#!/bin/bash
# Rendered by inference-infra (components/gcp/startup.py); runs as root at every boot.
# Every file it writes comes from a base64 blob (write_file): no heredoc, no value spliced into a command.
set -euo pipefail
shopt -s nullglob

ROOT={root}
LOCAL_SSD_COUNT={local_ssd_count}
LOCAL_SSD_WAIT_SECONDS={wait_seconds}
LOCAL_SSD_MOUNT="$ROOT"{local_ssd_mount}
CACHE_MOUNT="$ROOT"{cache_mount}
DEVICE_DIR="$ROOT/dev/disk/by-id"
RAID_DEVICE={raid_device}
GPU_METRICS={gpu_metrics}
PACKAGE_DOWNLOADS={package_downloads}

log() {{
  echo "inference-infra-startup: $*"
  logger -t inference-infra-startup -- "$*" 2>/dev/null || true
}}

write_file() {{  # write_file <octal mode> <absolute path> <base64 text>
  mkdir -p "$(dirname "$ROOT$2")"
  printf '%s' "$3" | base64 -d >"$ROOT$2.partial"
  chmod "$1" "$ROOT$2.partial"
  mv -f "$ROOT$2.partial" "$ROOT$2"
}}

metadata() {{
  curl -sSf --max-time 10 -H 'Metadata-Flavor: Google' \\
    "http://metadata.google.internal/computeMetadata/v1/instance/attributes/$1" 2>/dev/null || true
}}

ensure_package() {{  # ensure_package <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$PACKAGE_DOWNLOADS" != true ]; then
    log "$2 is not on this image and the network allows no package downloads (egress endpoints-only);" \\
      "use an image that has it"
    return 1
  fi
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2"
}}

{install_ops_agent}
setup_ops_agent() {{
  if ! dpkg-query -W google-cloud-ops-agent >/dev/null 2>&1; then
    install_ops_agent || return 1
  fi
  if [ "$GPU_METRICS" = true ]; then
    if ! command -v nv-hostengine >/dev/null 2>&1; then
      ensure_package nv-hostengine datacenter-gpu-manager || log "warning: no DCGM; NVML metrics only"
    fi
    systemctl enable --now nvidia-dcgm || log "warning: DCGM is not running; NVML metrics only"
    {ops_config_line}
  fi
  systemctl restart google-cloud-ops-agent || return 1
}}

setup_local_ssd() {{
  local devices=() waited=0 target
  while :; do
    devices=("$DEVICE_DIR"/google-local-nvme-ssd-*)
    [ "${{#devices[@]}}" -ge "$LOCAL_SSD_COUNT" ] && break
    if [ "$waited" -ge "$LOCAL_SSD_WAIT_SECONDS" ]; then
      log "expected $LOCAL_SSD_COUNT local SSDs, found ${{#devices[@]}}"
      return 1
    fi
    sleep 2
    waited=$((waited + 2))
  done
  mkdir -p "$LOCAL_SSD_MOUNT"
  if mountpoint -q "$LOCAL_SSD_MOUNT"; then
    return 0
  fi
  if [ "${{#devices[@]}}" -eq 1 ]; then
    target="${{devices[0]}}"
  else
    ensure_package mdadm mdadm
    target="$RAID_DEVICE"
    if ! mdadm --detail "$target" >/dev/null 2>&1; then
      # A stopped Spot VM comes back with blank local SSDs: build the array again.
      mdadm --create "$target" --level=0 --raid-devices="${{#devices[@]}}" --run "${{devices[@]}}"
      mkdir -p "$ROOT/etc/mdadm"
      mdadm --detail --scan >"$ROOT/etc/mdadm/mdadm.conf"
    fi
  fi
  if ! blkid "$target" >/dev/null 2>&1; then
    mkfs.ext4 -F -q -m 0 -E lazy_itable_init=1,lazy_journal_init=1 "$target"
  fi
  mount -o discard,defaults,nofail "$target" "$LOCAL_SSD_MOUNT"
  log "local SSD: ${{#devices[@]}} disk(s) mounted at $LOCAL_SSD_MOUNT"
}}

mount_model_cache() {{
  local share
  share="$(metadata {cache_key})"
  if [ -z "$share" ]; then
    log "instance metadata {cache_key} is empty; cannot mount the model cache"
    return 1
  fi
  ensure_package mount.nfs nfs-common
  mkdir -p "$CACHE_MOUNT"
  if ! mountpoint -q "$CACHE_MOUNT"; then
    mount -t nfs -o {cache_access},hard,timeo=600,retrans=3,nconnect=8 "$share" "$CACHE_MOUNT"
  fi
  log "model cache $share mounted at $CACHE_MOUNT"
}}

start_weights() {{  # start_weights <models dir>: fetch or wait for every model, verify, and report
  if ! systemctl start {weights_unit}; then
    log "model weights were not verified in $1 (journalctl -u {weights_unit}); the engines will not start"
    return 1
  fi
  log "model weights verified in $1 against their pinned manifests"
}}

check_registry_auth() {{  # docker pulls from the Artifact Registry mirrors with the node's identity
  command -v docker-credential-gcloud >/dev/null 2>&1 ||
    log "warning: docker-credential-gcloud (Google Cloud CLI) is missing; image pulls will be refused"
}}

{steps}
"""
