"""The GPU/TPU boot script: rendered text, shellcheck, and real runs in a scratch root.

The runs execute the rendered script with bash, with stand-ins for the
commands that touch hardware or the network (mdadm, mkfs, mount, gcloud,
curl, apt-get, systemctl...). Each stand-in appends its argv to a log, so the
tests assert on what the script would have done on a real VM.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml

from inference_infra.components.gcp import startup
from inference_infra.components.gcp.startup import (
    CACHE_METADATA_KEY,
    StartupConfig,
    node_metadata,
    ops_agent_gpu_config,
    render_startup_script,
    validate_startup,
)
from inference_infra.components.models.manifest import VERIFIED_MARKER

STUB = textwrap.dedent(
    """\
    #!/bin/bash
    name="$(basename "$0")"
    # One write per call: the script runs downloads in parallel, and separate writes would interleave.
    line="$name"; for arg in "$@"; do line+=" $arg"; done
    printf '%s\n' "$line" >>"$STUB_LOG"
    case "$name" in
      curl)
        args=("$@")
        for ((i = 0; i < ${#args[@]}; i++)); do
          if [ "${args[i]}" = -o ]; then cp "${STUB_KEYS:-/dev/null}" "${args[i+1]}"; fi
        done
        case "$*" in *inference-infra-model-cache*) printf '%s' "${STUB_CACHE_TARGET:-}" ;; esac
        exit "${STUB_CURL_RC:-0}" ;;
      mountpoint) exit "${STUB_MOUNTED:-1}" ;;
      blkid | dpkg-query) exit 1 ;;
      mdadm)
        case "$*" in
          "--detail /dev/md0") exit 1 ;;
          "--detail --scan") echo "ARRAY /dev/md0 metadata=1.2 UUID=0" ;;
        esac ;;
      gcloud)
        echo "gcloud-env processes=$CLOUDSDK_STORAGE_PROCESS_COUNT" \\
          "threads=$CLOUDSDK_STORAGE_THREAD_COUNT" >>"$STUB_LOG"
        [ -n "${STUB_GCLOUD_FAIL:-}" ] && exit 1
        touch "${@: -1}/model.safetensors"
        printf '{"files": [{"path": "model.safetensors", "size": 0, "sha256": "%s"}]}' \\
          "${STUB_SHA:-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855}" \\
          >"${@: -1}/inference-manifest.json" ;;
      systemctl) exit "${STUB_SYSTEMCTL_RC:-0}" ;;
    esac
    exit 0
    """
)
COMMANDS = ("curl", "mountpoint", "blkid", "dpkg-query", "mdadm", "mkfs.ext4", "mount", "gcloud", "systemctl",
            "apt-get", "logger", "sleep", "docker")  # fmt: skip


class Sandbox:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "root"
        self.bin = tmp / "bin"
        self.log = tmp / "calls.log"
        self.bin.mkdir()
        (self.root / "dev/disk/by-id").mkdir(parents=True)
        stub = self.bin / "stub"
        stub.write_text(STUB)
        stub.chmod(0o755)
        for command in COMMANDS:
            (self.bin / command).symlink_to(stub)
        self.log.touch()

    def local_ssds(self, count: int) -> None:
        for i in range(count):
            (self.root / f"dev/disk/by-id/google-local-nvme-ssd-{i}").touch()

    def run(self, config: StartupConfig, **env: str) -> subprocess.CompletedProcess[str]:
        script = render_startup_script(
            StartupConfig(**{**config.__dict__, "root": str(self.root), "local_ssd_wait_seconds": 4})
        )
        path = self.root.parent / "startup.sh"
        path.write_text(script)
        environment = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "STUB_LOG": str(self.log),
            "TMPDIR": "/tmp",
            **env,
        }
        return subprocess.run(
            ["bash", str(path)], env=environment, capture_output=True, text=True, timeout=60, check=False
        )

    def calls(self, command: str | None = None) -> list[str]:
        lines = self.log.read_text().splitlines()
        return [line for line in lines if command is None or line.split(" ", 1)[0] == command]

    def models_env(self) -> str:
        return (self.root / "etc/inference-infra/models.env").read_text()


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


CONFIGS = {
    "bare": StartupConfig(ops_agent=False),
    "a3": StartupConfig(
        local_ssd_count=16,
        model_uris=("gs://m/llama",),
        model_cache=True,
        gpu_metrics=True,
        host_exporters=True,
        gpu_exporter=True,
    ),
    "g2-cache": StartupConfig(
        model_uris=("gs://m/a", "gs://m/b/"),
        model_cache=True,
        gpu_metrics=True,
        host_exporters=True,
        gpu_exporter=True,
    ),
    "tpu": StartupConfig(model_uris=("gs://m/gemma",), ops_agent=False),
}


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_startup_script_is_valid_bash(config, tmp_path):
    path = tmp_path / "s.sh"
    path.write_text(render_startup_script(config))
    syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_startup_script_passes_shellcheck(config, shellcheck):
    shellcheck(render_startup_script(config))


def test_startup_stripes_local_ssds_into_raid0_and_prefetches_there(sandbox):
    sandbox.local_ssds(4)
    result = sandbox.run(StartupConfig(local_ssd_count=4, model_uris=("gs://m/llama-70b",), ops_agent=False))
    assert result.returncode == 0, result.stderr
    devices = [str(sandbox.root / f"dev/disk/by-id/google-local-nvme-ssd-{i}") for i in range(4)]
    assert sandbox.calls("mdadm")[1] == " ".join(
        ["mdadm", "--create", "/dev/md0", "--level=0", "--raid-devices=4", "--run", *devices]
    )
    assert any(c.startswith("mkfs.ext4 ") and c.endswith(" /dev/md0") for c in sandbox.calls())
    ssd = sandbox.root / "mnt/local-ssd"
    assert f"mount -o discard,defaults,nofail /dev/md0 {ssd}" in sandbox.calls()
    assert f"gcloud storage rsync --recursive gs://m/llama-70b {ssd}/models/llama-70b" in sandbox.calls()
    assert "ARRAY /dev/md0" in (sandbox.root / "etc/mdadm/mdadm.conf").read_text()
    assert sandbox.models_env() == f"MODELS_DIR={ssd}/models\n"


def test_startup_formats_a_single_local_ssd_without_raid(sandbox):
    sandbox.local_ssds(1)
    result = sandbox.run(StartupConfig(local_ssd_count=1, ops_agent=False))
    assert result.returncode == 0, result.stderr
    assert sandbox.calls("mdadm") == []
    device = sandbox.root / "dev/disk/by-id/google-local-nvme-ssd-0"
    assert f"mount -o discard,defaults,nofail {device} {sandbox.root / 'mnt/local-ssd'}" in sandbox.calls()


def test_startup_leaves_a_mounted_local_ssd_alone_on_reboot(sandbox):
    sandbox.local_ssds(2)
    result = sandbox.run(StartupConfig(local_ssd_count=2, ops_agent=False), STUB_MOUNTED="0")
    assert result.returncode == 0, result.stderr
    assert not [c for c in sandbox.calls() if c.startswith(("mdadm", "mkfs.ext4", "mount "))]


def test_startup_rejects_missing_local_ssds(sandbox):
    sandbox.local_ssds(2)
    result = sandbox.run(StartupConfig(local_ssd_count=16, ops_agent=False))
    assert result.returncode != 0
    assert "expected 16 local SSDs, found 2" in result.stdout
    assert sandbox.calls("mdadm") == []


def test_startup_mounts_the_cache_read_only_on_serving_nodes_and_writes_nothing(sandbox):
    config = StartupConfig(model_uris=("gs://m/a",), model_cache=True, ops_agent=False)
    result = sandbox.run(config, STUB_CACHE_TARGET="10.0.0.2:/models")
    assert result.returncode == 0, result.stderr
    cache = sandbox.root / "mnt/model-cache"
    assert (
        f"mount -t nfs -o ro,hard,timeo=600,retrans=3,nconnect=8 10.0.0.2:/models {cache}" in sandbox.calls()
    )
    assert sandbox.calls("gcloud") == []
    assert not (cache / ".prefetch.lock").exists()
    assert sandbox.models_env() == f"MODELS_DIR={cache}/models\n"


def test_startup_mounts_the_cache_from_metadata_and_fills_it_once_on_the_writer(sandbox):
    config = StartupConfig(
        model_uris=("gs://m/a", "gs://m/b/"), model_cache=True, model_cache_writer=True, ops_agent=False
    )
    result = sandbox.run(config, STUB_CACHE_TARGET="10.0.0.2:/models")
    assert result.returncode == 0, result.stderr
    cache = sandbox.root / "mnt/model-cache"
    assert (
        f"mount -t nfs -o rw,hard,timeo=600,retrans=3,nconnect=8 10.0.0.2:/models {cache}" in sandbox.calls()
    )
    syncs = sandbox.calls("gcloud")
    assert f"gcloud storage rsync --recursive gs://m/a {cache}/models/a" in syncs
    assert f"gcloud storage rsync --recursive gs://m/b/ {cache}/models/b" in syncs
    assert (cache / ".prefetch.lock").exists()  # filled under the fleet-wide lock
    assert (cache / "models/b/model.safetensors").exists()
    assert sandbox.models_env() == f"MODELS_DIR={cache}/models\n"


def test_startup_marks_verified_models_for_the_serving_unit(sandbox):
    result = sandbox.run(StartupConfig(model_uris=("gs://m/a",), ops_agent=False))
    assert result.returncode == 0, result.stderr
    markers = list(sandbox.root.rglob(VERIFIED_MARKER))
    assert [p.parent.name for p in markers] == ["a"]


def test_startup_rejects_a_tampered_model_and_leaves_no_marker(sandbox):
    result = sandbox.run(StartupConfig(model_uris=("gs://m/a",), ops_agent=False), STUB_SHA="0" * 64)
    assert result.returncode != 0
    assert "weights verification failed:" in result.stdout + result.stderr
    assert "model.safetensors: sha256 differs from the manifest" in result.stdout + result.stderr
    assert not list(sandbox.root.rglob(VERIFIED_MARKER))


def test_startup_downloads_in_parallel_with_the_configured_concurrency(sandbox):
    config = StartupConfig(
        model_uris=("gs://m/a",), ops_agent=False, download_processes=32, download_threads=4
    )
    assert sandbox.run(config).returncode == 0
    assert "gcloud-env processes=32 threads=4" in sandbox.calls("gcloud-env")


def test_startup_prefers_local_ssd_over_the_cache_for_weights(sandbox):
    sandbox.local_ssds(2)
    config = StartupConfig(local_ssd_count=2, model_uris=("gs://m/a",), model_cache=True, ops_agent=False)
    result = sandbox.run(config, STUB_CACHE_TARGET="10.0.0.2:/models")
    assert result.returncode == 0, result.stderr
    assert sandbox.calls("gcloud")[0].endswith(f"{sandbox.root / 'mnt/local-ssd'}/models/a")
    assert any(c.startswith("mount -t nfs") for c in sandbox.calls())


def test_startup_without_local_ssd_or_cache_uses_the_boot_disk(sandbox):
    result = sandbox.run(StartupConfig(model_uris=("gs://m/gemma",), ops_agent=False))
    assert result.returncode == 0, result.stderr
    boot = sandbox.root / "var/lib/inference-infra/models"
    assert f"gcloud storage rsync --recursive gs://m/gemma {boot}/gemma" in sandbox.calls()
    assert sandbox.models_env() == f"MODELS_DIR={boot}\n"


def test_startup_fails_when_the_cache_metadata_is_empty(sandbox):
    result = sandbox.run(StartupConfig(model_cache=True, ops_agent=False), STUB_CACHE_TARGET="")
    assert result.returncode != 0
    assert f"instance metadata {CACHE_METADATA_KEY} is empty" in result.stdout
    assert not [c for c in sandbox.calls() if c.startswith("mount ")]


def test_startup_fails_when_a_model_download_fails(sandbox):
    result = sandbox.run(StartupConfig(model_uris=("gs://m/a",), ops_agent=False), STUB_GCLOUD_FAIL="1")
    assert result.returncode != 0
    assert "model prefetch into" in result.stdout
    assert not (sandbox.root / "etc/inference-infra/models.env").exists()


@pytest.fixture(scope="module")
def signing_keys(tmp_path_factory) -> dict[str, object]:
    """Two real OpenPGP keys (Google's stand-in and a rogue one) and a key file holding both."""
    home = Path(tempfile.mkdtemp(prefix="gpg-"))  # short: gpg-agent's socket path has a length limit
    gpg = ["gpg", "--homedir", str(home), "--batch", "--quiet"]
    fingerprints = {}
    for name in ("google", "rogue"):
        subprocess.run(
            [*gpg, "--passphrase", "", "--quick-gen-key", name, "ed25519", "sign", "never"], check=True
        )
        listing = subprocess.run(
            [*gpg, "--with-colons", "--list-keys", name], check=True, capture_output=True, text=True
        ).stdout
        fingerprints[name] = next(
            line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")
        )
    files = tmp_path_factory.mktemp("keys")
    both, rogue = files / "both.asc", files / "rogue.asc"
    both.write_bytes(subprocess.run([*gpg, "--armor", "--export"], check=True, capture_output=True).stdout)
    rogue.write_bytes(
        subprocess.run([*gpg, "--armor", "--export", "rogue"], check=True, capture_output=True).stdout
    )
    yield {"both.asc": both, "rogue.asc": rogue, **fingerprints}
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], check=False)
    shutil.rmtree(home, ignore_errors=True)


def _keyring_fingerprints(keyring: Path) -> list[str]:
    listing = subprocess.run(
        ["gpg", "--batch", "--with-colons", "--show-keys", str(keyring)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")]


def test_startup_installs_ops_agent_from_the_repository_trusting_only_pinned_keys(
    sandbox, signing_keys, monkeypatch
):
    monkeypatch.setattr(startup, "OPS_AGENT_KEY_FINGERPRINTS", (signing_keys["google"],))
    result = sandbox.run(StartupConfig(), STUB_KEYS=str(signing_keys["both.asc"]))
    assert result.returncode == 0, result.stderr
    keyring = sandbox.root / startup.OPS_AGENT_KEYRING.lstrip("/")
    assert _keyring_fingerprints(keyring) == [signing_keys["google"]]  # the rogue key was dropped
    codename = next(
        line.split("=", 1)[1].strip('"')
        for line in Path("/etc/os-release").read_text().splitlines()
        if line.startswith("VERSION_CODENAME=")
    )
    sources = (sandbox.root / startup.OPS_AGENT_SOURCES.lstrip("/")).read_text()
    assert sources == (
        f"deb [signed-by={startup.OPS_AGENT_KEYRING}] https://packages.cloud.google.com/apt "
        f"google-cloud-ops-agent-{codename}-2 main\n"
    )
    assert "apt-get install -y -qq google-cloud-ops-agent" in sandbox.calls("apt-get")
    assert not [c for c in sandbox.calls() if c.startswith("bash")]  # nothing downloaded is run


def test_startup_refuses_ops_agent_keys_it_does_not_pin(sandbox, signing_keys, monkeypatch):
    monkeypatch.setattr(startup, "OPS_AGENT_KEY_FINGERPRINTS", (signing_keys["google"],))
    result = sandbox.run(StartupConfig(model_uris=("gs://m/a",)), STUB_KEYS=str(signing_keys["rogue.asc"]))
    assert result.returncode == 0, result.stderr  # the node still serves; only its Ops Agent is missing
    assert "none of the pinned signing keys" in result.stdout
    assert "warning: Ops Agent setup failed" in result.stdout
    assert not (sandbox.root / startup.OPS_AGENT_KEYRING.lstrip("/")).exists()
    assert "apt-get install -y -qq google-cloud-ops-agent" not in sandbox.calls("apt-get")
    assert sandbox.models_env()


def test_startup_installs_ops_agent_with_the_dcgm_receiver(sandbox, signing_keys, monkeypatch):
    monkeypatch.setattr(startup, "OPS_AGENT_KEY_FINGERPRINTS", (signing_keys["google"],))
    result = sandbox.run(StartupConfig(gpu_metrics=True), STUB_KEYS=str(signing_keys["both.asc"]))
    assert result.returncode == 0, result.stderr
    assert "apt-get install -y -qq google-cloud-ops-agent" in sandbox.calls("apt-get")
    assert "apt-get install -y -qq datacenter-gpu-manager" in sandbox.calls()
    assert "systemctl enable --now nvidia-dcgm" in sandbox.calls()
    assert sandbox.calls("systemctl")[-1] == "systemctl restart google-cloud-ops-agent"
    written = (sandbox.root / "etc/google-cloud-ops-agent/config.yaml").read_text()
    assert yaml.safe_load(written) == yaml.safe_load(ops_agent_gpu_config())


def test_startup_keeps_booting_when_the_ops_agent_fails(sandbox):
    result = sandbox.run(StartupConfig(gpu_metrics=True), STUB_SYSTEMCTL_RC="1")
    assert result.returncode == 0, result.stderr
    assert "warning: Ops Agent setup failed" in result.stdout
    assert sandbox.models_env()


def test_ops_agent_config_adds_a_dcgm_pipeline():
    config = yaml.safe_load(ops_agent_gpu_config())
    assert config["metrics"]["receivers"]["dcgm"] == {"type": "dcgm", "receiver_version": 2}
    assert config["metrics"]["service"]["pipelines"]["dcgm"]["receivers"] == ["dcgm"]


def test_startup_quotes_model_uris_for_the_shell():
    script = render_startup_script(StartupConfig(model_uris=("gs://m/a b",)))
    assert "MODEL_URIS=('gs://m/a b')" in script


def test_node_metadata_blocks_project_keys_and_turns_on_os_login():
    metadata = node_metadata("#!/bin/bash", model_cache_nfs="10.0.0.2:/models")
    assert metadata["block-project-ssh-keys"] == "true"
    assert metadata["enable-oslogin"] == "TRUE"
    assert metadata["serial-port-enable"] == "FALSE"
    assert metadata[CACHE_METADATA_KEY] == "10.0.0.2:/models"
    assert CACHE_METADATA_KEY not in node_metadata("#!/bin/bash", model_cache_nfs=None)


def test_validate_startup_rejects_gpu_metrics_without_the_agent():
    problems = validate_startup(StartupConfig(gpu_metrics=True, ops_agent=False, download_threads=0))
    assert [p.input for p in problems] == ["gpu_metrics", "download_threads"]
    assert "needs the Ops Agent" in str(problems[0])


def test_startup_runs_the_host_exporters_and_publishes_the_verification_gauge(sandbox):
    config = StartupConfig(
        model_uris=("gs://m/llama",), ops_agent=False, host_exporters=True, gpu_exporter=True
    )
    result = sandbox.run(config)
    assert result.returncode == 0, result.stderr
    runs = sandbox.calls("docker")
    assert len(runs) == 2
    dcgm, node = runs
    assert "--name dcgm-exporter" in dcgm
    assert "--gpus all" in dcgm
    assert "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04@sha256:" in dcgm
    assert "--name node-exporter" in node
    assert "--collector.textfile.directory=/host/var/lib/node_exporter/textfile_collector" in node
    # The folder exists before the prefetch, so its verification gauge is there for the node exporter.
    gauge = sandbox.root / "var/lib/node_exporter/textfile_collector/inference_model_verification.prom"
    assert "inference_model_verification_failed" in gauge.read_text()


def test_startup_runs_no_exporters_unless_asked(sandbox):
    result = sandbox.run(StartupConfig(model_uris=("gs://m/gemma",), ops_agent=False))
    assert result.returncode == 0, result.stderr
    assert sandbox.calls("docker") == []
