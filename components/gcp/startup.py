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
4. Model prefetch: copies each `gs://` model folder with `gcloud storage
   rsync`, all folders at once and each with parallel, sliced downloads, to
   the fastest place the node has: local SSD, else the shared Filestore
   cache (filled once per fleet under a lock), else the boot disk.
5. Writes `/etc/inference-infra/models.env` (`MODELS_DIR=...`) for the
   serving unit.

`root` prefixes every path the script touches, so tests run the real script
in a scratch directory with stand-in commands.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import yaml

from inference_infra.components.errors import Problem
from inference_infra.components.gcp.mirrors import mirror_problems, mirrored, registry_hosts, unmirrored_hosts
from inference_infra.components.models.manifest import MANIFEST_NAME, VERIFIED_MARKER
from inference_infra.components.monitoring.host_exporters import (
    DCGM_EXPORTER_IMAGE,
    NODE_EXPORTER_IMAGE,
    TEXTFILE_DIR,
    exporter_command,
)
from inference_infra.components.serving import EngineConfig, EngineHost, engine_image, engine_units

CACHE_METADATA_KEY = "inference-infra-model-cache"
LOCAL_SSD_MOUNT = "/mnt/local-ssd"
MODEL_CACHE_MOUNT = "/mnt/model-cache"
BOOT_DISK_MODELS = "/var/lib/inference-infra/models"
MODELS_ENV = "/etc/inference-infra/models.env"
OPS_AGENT_CONFIG = "/etc/google-cloud-ops-agent/config.yaml"
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
# `gcloud` (docker-credential-gcloud, shipped with the Google Cloud CLI the images already run for
# `gcloud storage`), which answers with the node service account's token from the metadata server.
# The serving unit reads DOCKER_CONFIG from models.env, so no HOME is needed.
DOCKER_CONFIG_DIR = "/etc/inference-infra/docker"


@dataclass(frozen=True, kw_only=True)
class StartupConfig:
    local_ssd_count: int = 0  # NVMe local SSDs the machine has (bundled + added)
    model_uris: tuple[str, ...] = ()  # gs://bucket/folder, one per model
    model_cache: bool = False  # mount the Filestore share named in the instance metadata
    # Serving nodes mount the shared cache read-only (its export is READ_ONLY, ROOT_SQUASH for them);
    # only the cache's named writer (a host in FilestoreModelCacheArgs.writer_ranges) mounts it
    # read-write and fills it from Cloud Storage.
    model_cache_writer: bool = False
    allow_pickle: bool = False  # accept .bin/.pt/.pth/.pkl weights (they run code when loaded)
    ops_agent: bool = True
    gpu_metrics: bool = False  # DCGM receiver (needs ops_agent)
    download_processes: int = 16  # gcloud storage/process_count
    download_threads: int = 8  # gcloud storage/thread_count
    local_ssd_wait_seconds: int = 120
    root: str = ""  # prefix of every path (tests); empty on real machines
    engines: EngineConfig | None = None  # serve model_uris[0] once prefetched (components/serving)
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
    for name in ("download_processes", "download_threads"):
        value = getattr(config, name)
        if not 1 <= value <= 256:
            problems.append(Problem(name, value, "must be between 1 and 256"))
    problems += mirror_problems(config.image_mirrors)
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


def exporter_steps(config: StartupConfig) -> list[str]:
    """Bash that starts the host exporters, each image from its mirror when its registry has one."""
    if not config.host_exporters:
        return []
    docker = 'DOCKER_CONFIG="$DOCKER_CONFIG_DIR" ' if registry_hosts(config.image_mirrors) else ""
    lines = []
    runs = [("node-exporter", NODE_EXPORTER_IMAGE, False)]
    if config.gpu_exporter:
        runs.insert(0, ("dcgm-exporter", DCGM_EXPORTER_IMAGE, True))
    for name, image, gpus in runs:
        words = exporter_command(name, mirrored(image, config.image_mirrors), gpus=gpus)
        lines.append(f'{docker}{shlex.join(words)} >/dev/null || log "warning: {name} did not start"')
    return lines


def ops_agent_gpu_config() -> str:
    """Ops Agent configuration adding the DCGM receiver to the built-in pipelines.

    The agent merges this with its defaults, which already collect NVML GPU
    metrics (agent.googleapis.com/gpu/*) on GPU VMs.
    """
    config = {
        "metrics": {
            "receivers": {"dcgm": {"type": "dcgm", "receiver_version": 2}},
            "service": {"pipelines": {"dcgm": {"receivers": ["dcgm"]}}},
        }
    }
    return yaml.safe_dump(config, sort_keys=False)


def engine_steps(config: StartupConfig) -> list[str]:
    """Bash that installs the engines' units (their weights: model_uris[0] under MODELS_DIR) and starts them.

    The prefetch runs in this script, so the units need no prefetch unit: they start here, after it,
    and refuse to start until the weights carry the verified marker.
    """
    if config.engines is None or not config.model_uris:
        return []
    folder = config.model_uris[0].rstrip("/").rsplit("/", 1)[-1]
    # The same digest, from the Artifact Registry mirror when the image's registry has one.
    image = mirrored(engine_image(config.engines.family).reference, config.image_mirrors)
    host = EngineHost(
        model_dir=f"${{MODELS_DIR}}/{folder}", prefetch_unit=None, environment_file=MODELS_ENV, image=image
    )
    units = engine_units(config.engines, host)
    lines = ['mkdir -p "$ROOT/etc/systemd/system" "$ROOT/etc/inference-infra"']
    for path, text in units.files():
        lines += [f"cat >\"$ROOT\"{shlex.quote(path)} <<'ENGINE_FILE'", text.rstrip("\n"), "ENGINE_FILE"]
    lines += ["systemctl daemon-reload", f"systemctl enable --now --no-block {' '.join(units.instances)}"]
    return lines


def render_startup_script(config: StartupConfig) -> str:
    """The startup script for config (see the module docstring for what it does)."""
    q = shlex.quote
    uris = " ".join(q(u) for u in config.model_uris)
    steps = []
    if config.host_exporters:  # before the prefetch, which publishes its verification gauge there
        steps.append(f'mkdir -p "$ROOT"{q(TEXTFILE_DIR)}')
    if config.ops_agent:
        steps.append('setup_ops_agent || log "warning: Ops Agent setup failed; node metrics will be missing"')
    if config.local_ssd_count:
        steps.append("setup_local_ssd")
        steps.append('MODELS_DIR="$LOCAL_SSD_MOUNT/models"')
    if config.model_cache:
        steps.append("mount_model_cache")
        if not config.local_ssd_count:
            steps.append('MODELS_DIR="$CACHE_MOUNT/models"')
    if config.model_uris:
        if config.model_cache and not config.local_ssd_count:
            if config.model_cache_writer:
                steps.append("prefetch_into_shared_cache")
            else:
                steps.append(
                    'log "serving the weights from the read-only model cache (filled by its writer)"'
                )
        else:
            steps.append('prefetch_models "$MODELS_DIR"')
            steps.append('verify_models "$MODELS_DIR"')
    steps.append("write_models_env")
    if registry_hosts(config.image_mirrors) and (
        config.host_exporters or (config.engines is not None and config.model_uris)
    ):
        steps.append("configure_registry_auth")
    steps += exporter_steps(config)
    steps += engine_steps(config)
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
        local_ssd_count=config.local_ssd_count,
        wait_seconds=config.local_ssd_wait_seconds,
        local_ssd_mount=q(LOCAL_SSD_MOUNT),
        cache_mount=q(MODEL_CACHE_MOUNT),
        cache_access="rw" if config.model_cache_writer else "ro",
        boot_models=q(BOOT_DISK_MODELS),
        models_env=q(MODELS_ENV),
        ops_config_path=q(OPS_AGENT_CONFIG),
        raid_device=q(RAID_DEVICE),
        cache_key=q(CACHE_METADATA_KEY),
        model_uris=uris,
        processes=config.download_processes,
        threads=config.download_threads,
        gpu_metrics="true" if config.gpu_metrics else "false",
        ops_config=ops_agent_gpu_config().rstrip("\n"),
        steps="\n".join(steps),
        verifier=_VERIFIER.rstrip("\n"),
        marker=q(VERIFIED_MARKER),
        manifest_name=q(MANIFEST_NAME),
        allow_pickle=int(config.allow_pickle),
        textfile_dir=q(TEXTFILE_DIR),
        package_downloads="true" if config.package_downloads else "false",
        docker_config=q(DOCKER_CONFIG_DIR),
        registry_hosts=" ".join(q(h) for h in registry_hosts(config.image_mirrors)),
    )


# Runs on the node (python3 of the image, standard library only): checks one model directory against
# its manifest; prints one line naming the first bad file and exits 1, or exits 0.
_VERIFIER = """\
import hashlib, json, os, sys
root, allow_pickle, manifest_name, marker = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
def bad(path, reason):
    print(f"weights verification failed: {os.path.join(root, path)}: {reason}")
    sys.exit(1)
try:
    with open(os.path.join(root, manifest_name)) as f:
        files = json.load(f)["files"]
except (OSError, ValueError, KeyError):
    bad(manifest_name, "missing or unreadable beside the weights")
listed = set()
for item in files:
    path = str(item["path"])
    listed.add(path)
    if path.startswith("/") or ".." in path.split("/"):
        bad(path, "path outside the model directory")
    if path.lower().endswith((".bin", ".pt", ".pth", ".pkl")) and not allow_pickle:
        bad(path, "pickle format refused (set allow_pickle on the fleet)")
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        bad(path, "missing")
    if os.path.getsize(full) != item["size"]:
        bad(path, "size differs from the manifest")
    sha = hashlib.sha256()
    with open(full, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 23), b""):
            sha.update(chunk)
    if sha.hexdigest() != item["sha256"]:
        bad(path, "sha256 differs from the manifest")
for base, _, names in os.walk(root):
    for name in names:
        path = os.path.relpath(os.path.join(base, name), root)
        if path not in listed and name not in (manifest_name, marker, ".prefetch.lock"):
            bad(path, "not in the manifest")
"""


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
set -euo pipefail
shopt -s nullglob

ROOT={root}
LOCAL_SSD_COUNT={local_ssd_count}
LOCAL_SSD_WAIT_SECONDS={wait_seconds}
LOCAL_SSD_MOUNT="$ROOT"{local_ssd_mount}
CACHE_MOUNT="$ROOT"{cache_mount}
MODELS_DIR="$ROOT"{boot_models}
MODELS_ENV="$ROOT"{models_env}
DEVICE_DIR="$ROOT/dev/disk/by-id"
RAID_DEVICE={raid_device}
GPU_METRICS={gpu_metrics}
PACKAGE_DOWNLOADS={package_downloads}
DOCKER_CONFIG_DIR={docker_config}
REGISTRY_HOSTS=({registry_hosts})
MODEL_URIS=({model_uris})
# Parallel, sliced downloads for every `gcloud storage` call below.
export CLOUDSDK_STORAGE_PROCESS_COUNT={processes}
export CLOUDSDK_STORAGE_THREAD_COUNT={threads}
export CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_THRESHOLD=100M
export CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_MAX_COMPONENTS=16

log() {{
  echo "inference-infra-startup: $*"
  logger -t inference-infra-startup -- "$*" 2>/dev/null || true
}}

metadata() {{
  curl -sSf --max-time 10 -H 'Metadata-Flavor: Google' \\
    "http://metadata.google.internal/computeMetadata/v1/instance/attributes/$1" 2>/dev/null || true
}}

ensure_package() {{  # ensure_package <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$PACKAGE_DOWNLOADS" != true ]; then
    log "$2 is not on this image and the network allows no package downloads (egress endpoints-only);" \
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
    mkdir -p "$(dirname "$ROOT"{ops_config_path})"
    cat >"$ROOT"{ops_config_path} <<'OPS_AGENT_CONFIG'
{ops_config}
OPS_AGENT_CONFIG
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

prefetch_models() {{  # prefetch_models <destination folder>
  local dest="$1" uri name pids=() failed=0
  for uri in "${{MODEL_URIS[@]}}"; do
    name="${{uri%/}}"
    name="${{name##*/}}"
    mkdir -p "$dest/$name"
    gcloud storage rsync --recursive "$uri" "$dest/$name" &
    pids+=("$!")
  done
  for pid in "${{pids[@]}}"; do
    wait "$pid" || failed=1
  done
  if [ "$failed" -ne 0 ]; then
    log "model prefetch into $dest failed"
    return 1
  fi
  log "prefetched ${{#MODEL_URIS[@]}} model(s) into $dest"
}}

verify_models() {{  # verify_models <destination folder>: every model against its manifest, then the marker
  local dest="$1" uri name failed=0
  for uri in "${{MODEL_URIS[@]}}"; do
    name="${{uri%/}}"
    name="${{name##*/}}"
    rm -f "$dest/$name"/{marker}
    if python3 - "$dest/$name" {allow_pickle} {manifest_name} {marker} <<'PY'
{verifier}
PY
    then
      date -u +%Y-%m-%dT%H:%M:%SZ >"$dest/$name"/{marker}
    else
      failed=1
    fi
  done
  if [ -d "$ROOT"{textfile_dir} ]; then
    printf 'inference_model_verification_failed %s\\n' "$failed" \
      >"$ROOT"{textfile_dir}/inference_model_verification.prom
  fi
  if [ "$failed" -ne 0 ]; then
    log "model verification failed; the weights in $dest will not be served"
    return 1
  fi
  log "verified ${{#MODEL_URIS[@]}} model(s) in $dest against their manifests"
}}

prefetch_into_shared_cache() {{
  # One node of the fleet copies; the others wait on the lock, then find nothing left to copy.
  mkdir -p "$MODELS_DIR"
  (
    flock -w 7200 9
    prefetch_models "$MODELS_DIR"
    verify_models "$MODELS_DIR"
  ) 9>"$CACHE_MOUNT/.prefetch.lock"
}}

write_models_env() {{
  mkdir -p "$MODELS_DIR" "$(dirname "$MODELS_ENV")"
  printf 'MODELS_DIR=%s\\n' "$MODELS_DIR" >"$MODELS_ENV"
}}

configure_registry_auth() {{  # docker pulls from the Artifact Registry mirrors with the node's identity
  local host first=1
  mkdir -p "$ROOT$DOCKER_CONFIG_DIR"
  {{
    printf '{{"credHelpers": {{'
    for host in "${{REGISTRY_HOSTS[@]}}"; do
      [ "$first" -eq 1 ] || printf ', '
      printf '"%s": "gcloud"' "$host"
      first=0
    done
    printf '}}}}\\n'
  }} >"$ROOT$DOCKER_CONFIG_DIR/config.json"
  chmod 0600 "$ROOT$DOCKER_CONFIG_DIR/config.json"
  printf 'DOCKER_CONFIG=%s\\n' "$DOCKER_CONFIG_DIR" >>"$MODELS_ENV"
  command -v docker-credential-gcloud >/dev/null 2>&1 ||
    log "warning: docker-credential-gcloud (Google Cloud CLI) is missing; image pulls will be refused"
  log "docker pulls from ${{REGISTRY_HOSTS[*]}} as the node's service account"
}}

{steps}
log "startup complete; MODELS_DIR=$MODELS_DIR"
"""
