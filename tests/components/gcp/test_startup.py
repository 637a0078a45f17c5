"""The GPU/TPU boot script: rendered text, shellcheck, and real runs in a scratch root.

The runs execute the rendered script with bash, with stand-ins for the
commands that touch hardware or the network (mdadm, mkfs, mount, gcloud,
curl, apt-get, systemctl...). Each stand-in appends its argv to a log, so the
tests assert on what the script would have done on a real VM.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml

from inference_infra.components.errors import InputError
from inference_infra.components.gcp import startup
from inference_infra.components.gcp.startup import (
    CACHE_METADATA_KEY,
    WEIGHTS_CONFIG,
    WEIGHTS_UNIT,
    StartupConfig,
    node_metadata,
    ops_agent_gpu_config,
    render_startup_script,
    validate_startup,
)
from inference_infra.components.models.manifest import VERIFIED_MARKER
from tests.components.gcp.helpers import FakeGcs, files_of, pins

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
      systemctl)
        # The weights unit runs its real program, its paths under the scratch root, Cloud Storage on
        # loopback (what systemd would run on the node).
        if [ "$*" = "start inference-weights.service" ] && [ -n "${STUB_GCS:-}" ]; then
          /usr/bin/python3 "$STUB_WEIGHTS_RUNNER" "$STUB_ROOT" "$STUB_GCS" || exit 1
        fi
        exit "${STUB_SYSTEMCTL_RC:-0}" ;;
    esac
    exit 0
    """
)
# Runs the weights unit's program as the unit would, with the configuration the boot wrote, its
# folders moved under the scratch root and Cloud Storage and the metadata server on loopback.
WEIGHTS_RUNNER = textwrap.dedent(
    """\
    import json, subprocess, sys
    root, url = sys.argv[1], sys.argv[2]
    with open(root + "/etc/inference-infra/weights.json") as f:
        config = json.load(f)
    config["models_dir"] = root + config["models_dir"]
    if config["textfile_dir"]:
        config["textfile_dir"] = root + config["textfile_dir"]
    config.update(storage_url=url, metadata_url=url, wait_seconds=0, backoff_seconds=0)
    with open(root + "/../weights-test.json", "w") as f:
        json.dump(config, f)
    sys.exit(subprocess.call(
        ["/usr/bin/python3", root + "/opt/inference-infra/bin/gcs_weights.py", "--config", f.name]
    ))
    """
)
COMMANDS = ("curl", "mountpoint", "blkid", "dpkg-query", "mdadm", "mkfs.ext4", "mount", "systemctl",
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

    def run(
        self, config: StartupConfig, gcs: FakeGcs | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        script = render_startup_script(
            StartupConfig(**{**config.__dict__, "root": str(self.root), "local_ssd_wait_seconds": 4})
        )
        path = self.root.parent / "startup.sh"
        path.write_text(script)
        runner = self.root.parent / "weights_runner.py"
        runner.write_text(WEIGHTS_RUNNER)
        environment = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "STUB_LOG": str(self.log),
            "STUB_ROOT": str(self.root),
            "STUB_WEIGHTS_RUNNER": str(runner),
            "STUB_GCS": gcs.url if gcs is not None else "",
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


def weights(*folders: str, bucket: str = "models") -> dict[str, object]:
    """StartupConfig inputs for folders of the bucket, each pinned (stand-in digests)."""
    uris = tuple(f"gs://{bucket}/{f}" for f in folders)
    return {"model_uris": uris, "manifest_sha256": pins(*uris)}


CONFIGS = {
    "bare": StartupConfig(ops_agent=False),
    "a3": StartupConfig(
        local_ssd_count=16,
        **weights("llama"),
        model_cache=True,
        gpu_metrics=True,
        host_exporters=True,
        gpu_exporter=True,
    ),
    "g2-cache": StartupConfig(
        **weights("a", "org/b/"),
        model_cache=True,
        gpu_metrics=True,
        host_exporters=True,
        gpu_exporter=True,
    ),
    "tpu": StartupConfig(**weights("gemma"), ops_agent=False),
}
SHARDS = {"config.json": b'{"architectures": ["LlamaForCausalLM"]}', "model.safetensors": b"\0" * 4096}


@pytest.fixture
def gcs():
    with FakeGcs() as fake:
        yield fake


def published(gcs: FakeGcs, *folders: str) -> StartupConfig:
    """Each folder published in the fake bucket with its manifest; the config pins their real digests."""
    uris = tuple(f"gs://models/{f}" for f in folders)
    digests = {
        uri: gcs.publish("models", folder.strip("/"), SHARDS)
        for uri, folder in zip(uris, folders, strict=True)
    }
    return StartupConfig(model_uris=uris, manifest_sha256=digests, ops_agent=False)


def with_(config: StartupConfig, **changes: object) -> StartupConfig:
    return StartupConfig(**{**config.__dict__, **changes})


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_startup_script_is_valid_bash(config, tmp_path):
    path = tmp_path / "s.sh"
    path.write_text(render_startup_script(config))
    syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_startup_script_passes_shellcheck(config, shellcheck):
    shellcheck(render_startup_script(config))


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_startup_script_writes_every_file_from_a_blob_and_has_no_heredoc(config):
    script = render_startup_script(config)
    assert "<<" not in script
    lines = [line for line in script.splitlines() if "write_file " in line and "() {" not in line]
    assert len(lines) == len(files_of(script))
    for path, text in files_of(script).items():
        assert path.startswith("/")
        assert text not in script or len(text) < 40  # a file's text is only ever in its blob


def test_startup_stripes_local_ssds_into_raid0_and_fetches_there(sandbox, gcs):
    sandbox.local_ssds(4)
    config = with_(published(gcs, "llama-70b"), local_ssd_count=4)
    result = sandbox.run(config, gcs)
    assert result.returncode == 0, result.stderr
    devices = [str(sandbox.root / f"dev/disk/by-id/google-local-nvme-ssd-{i}") for i in range(4)]
    assert sandbox.calls("mdadm")[1] == " ".join(
        ["mdadm", "--create", "/dev/md0", "--level=0", "--raid-devices=4", "--run", *devices]
    )
    assert any(c.startswith("mkfs.ext4 ") and c.endswith(" /dev/md0") for c in sandbox.calls())
    ssd = sandbox.root / "mnt/local-ssd"
    assert f"mount -o discard,defaults,nofail /dev/md0 {ssd}" in sandbox.calls()
    sha = config.pinned("gs://models/llama-70b")
    assert (ssd / "models/llama-70b" / sha / VERIFIED_MARKER).read_text() == f"{sha}\n"
    assert "ARRAY /dev/md0" in (sandbox.root / "etc/mdadm/mdadm.conf").read_text()
    assert sandbox.models_env() == "MODELS_DIR=/mnt/local-ssd/models\n"


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


def test_startup_serving_node_mounts_the_cache_read_only_and_waits_for_its_writer(sandbox, gcs):
    config = with_(published(gcs, "a"), model_cache=True)
    gcs.requests.clear()
    result = sandbox.run(config, gcs, STUB_CACHE_TARGET="10.0.0.2:/models")
    cache = sandbox.root / "mnt/model-cache"
    assert (
        f"mount -t nfs -o ro,hard,timeo=600,retrans=3,nconnect=8 10.0.0.2:/models {cache}" in sandbox.calls()
    )
    # Nothing published yet: the weights unit fails, so do the boot and (bound to it) the engines.
    assert result.returncode != 0
    assert "has not published it" in result.stderr
    assert gcs.requests == []  # a serving node never downloads into the shared cache
    assert not (cache / ".prefetch.lock").exists()
    assert json.loads(files_of(render_startup_script(config))[WEIGHTS_CONFIG])["mode"] == "wait"


def test_startup_writer_fills_the_cache_under_the_lock_then_readers_find_it(sandbox, gcs, tmp_path):
    config = with_(published(gcs, "a", "org/b/"), model_cache=True, model_cache_writer=True)
    result = sandbox.run(config, gcs, STUB_CACHE_TARGET="10.0.0.2:/models")
    assert result.returncode == 0, result.stderr
    cache = sandbox.root / "mnt/model-cache"
    assert (
        f"mount -t nfs -o rw,hard,timeo=600,retrans=3,nconnect=8 10.0.0.2:/models {cache}" in sandbox.calls()
    )
    assert (cache / "models/.prefetch.lock").exists()  # filled under the fleet-wide lock
    for uri in config.model_uris:
        sha = config.pinned(uri)
        assert (cache / "models" / uri.rstrip("/").rsplit("/", 1)[-1] / sha / "model.safetensors").exists()
    (tmp_path / "reader").mkdir()
    reader = Sandbox(tmp_path / "reader")
    reader.root = sandbox.root  # the same share, seen by a serving node
    gcs.requests.clear()
    read = reader.run(with_(config, model_cache_writer=False), gcs, STUB_CACHE_TARGET="10.0.0.2:/models")
    assert read.returncode == 0, read.stderr
    assert gcs.requests == []


def test_startup_rejects_a_tampered_model_and_leaves_no_marker(sandbox, gcs):
    config = published(gcs, "a")
    gcs.objects[("models", "a/model.safetensors")] = b"\1" * 4096  # replaced after the manifest was pinned
    result = sandbox.run(config, gcs)
    assert result.returncode != 0
    assert "weights verification failed:" in result.stderr
    assert "model.safetensors: sha256" in result.stderr
    assert "model weights were not verified" in result.stdout
    assert not list(sandbox.root.rglob(VERIFIED_MARKER))


def test_startup_rejects_a_manifest_that_is_not_the_pinned_one(sandbox, gcs):
    config = published(gcs, "a")
    gcs.publish("models", "a", {**SHARDS, "extra.safetensors": b"x"})  # a new manifest, not pinned
    result = sandbox.run(config, gcs)
    assert result.returncode != 0
    assert "(the manifest changed since it was pinned)" in result.stderr
    assert [name for name, _ in gcs.requests[-1:]] == ["a/inference-manifest.json"]


def test_startup_without_local_ssd_or_cache_uses_the_boot_disk(sandbox, gcs):
    config = published(gcs, "gemma")
    result = sandbox.run(config, gcs)
    assert result.returncode == 0, result.stderr
    sha = config.pinned("gs://models/gemma")
    assert (sandbox.root / "var/lib/inference-infra/models/gemma" / sha / VERIFIED_MARKER).exists()
    assert sandbox.models_env() == "MODELS_DIR=/var/lib/inference-infra/models\n"


def test_startup_fails_when_the_cache_metadata_is_empty(sandbox):
    result = sandbox.run(StartupConfig(model_cache=True, ops_agent=False), STUB_CACHE_TARGET="")
    assert result.returncode != 0
    assert f"instance metadata {CACHE_METADATA_KEY} is empty" in result.stdout
    assert not [c for c in sandbox.calls() if c.startswith("mount ")]


def test_startup_weights_config_carries_the_download_concurrency():
    config = StartupConfig(**weights("a"), download_connections=64, download_slice_mib=128)
    written = json.loads(files_of(render_startup_script(config))[WEIGHTS_CONFIG])
    assert (written["connections"], written["slice_mib"]) == (64, 128)


def test_startup_rejects_an_unpinned_or_unlisted_folder_before_rendering():
    with pytest.raises(InputError, match=r"manifest_sha256\['gs://models/a'\] \(unset\) must be 64 hex"):
        render_startup_script(StartupConfig(model_uris=("gs://models/a",)))
    with pytest.raises(
        InputError, match=r"model_uris\[0\] 'gs://models/a b' must be 'gs://<bucket>/<folder>'"
    ):
        render_startup_script(StartupConfig(**weights("a b")))


def test_weights_unit_is_sandboxed_and_writes_only_the_models_and_metrics_folders(systemd_verify):
    config = StartupConfig(**weights("a"), local_ssd_count=2, host_exporters=True)
    unit = files_of(render_startup_script(config))[f"/etc/systemd/system/{WEIGHTS_UNIT}"]
    settings = [line for line in unit.splitlines() if "=" in line]
    for expected in (
        "ProtectSystem=strict",
        "ReadWritePaths=-/mnt/local-ssd/models",
        "ReadWritePaths=-/var/lib/node_exporter/textfile_collector",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        "PrivateTmp=yes",
        "ProtectHome=yes",
    ):
        assert expected in settings
    assert [s for s in settings if s.startswith("ReadWritePaths=")] == [
        "ReadWritePaths=-/mnt/local-ssd/models",
        "ReadWritePaths=-/var/lib/node_exporter/textfile_collector",
    ]
    verified = systemd_verify({WEIGHTS_UNIT: unit}, binaries=["/usr/bin/python3"], stub_units=[])
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr == ""


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
    result = sandbox.run(StartupConfig(**weights("a")), STUB_KEYS=str(signing_keys["rogue.asc"]))
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


def test_node_metadata_blocks_project_keys_and_turns_on_os_login():
    metadata = node_metadata("#!/bin/bash", model_cache_nfs="10.0.0.2:/models")
    assert metadata["block-project-ssh-keys"] == "true"
    assert metadata["enable-oslogin"] == "TRUE"
    assert metadata["serial-port-enable"] == "FALSE"
    assert metadata[CACHE_METADATA_KEY] == "10.0.0.2:/models"
    assert CACHE_METADATA_KEY not in node_metadata("#!/bin/bash", model_cache_nfs=None)


def test_validate_startup_rejects_gpu_metrics_without_the_agent():
    problems = validate_startup(StartupConfig(gpu_metrics=True, ops_agent=False, download_connections=0))
    assert [p.input for p in problems] == ["gpu_metrics", "download_connections"]
    assert "needs the Ops Agent" in str(problems[0])


def test_startup_runs_the_host_exporters_and_publishes_the_verification_gauge(sandbox, gcs):
    config = with_(published(gcs, "llama"), host_exporters=True, gpu_exporter=True)
    result = sandbox.run(config, gcs)
    assert result.returncode == 0, result.stderr
    runs = sandbox.calls("docker")
    assert len(runs) == 2
    dcgm, node = runs
    assert "--name dcgm-exporter" in dcgm
    assert "--gpus all" in dcgm
    assert "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04@sha256:" in dcgm
    assert "--name node-exporter" in node
    assert "--collector.textfile.directory=/host/var/lib/node_exporter/textfile_collector" in node
    # The folder exists before the weights unit, so its verification gauge is there for the node exporter.
    gauges = list((sandbox.root / "var/lib/node_exporter/textfile_collector").glob("*.prom"))
    assert len(gauges) == 1
    assert "inference_model_verification_failed{directory=" in gauges[0].read_text()
    assert gauges[0].read_text().endswith("} 0\n")


def test_startup_runs_no_exporters_unless_asked(sandbox, gcs):
    result = sandbox.run(published(gcs, "gemma"), gcs)
    assert result.returncode == 0, result.stderr
    assert sandbox.calls("docker") == []


def test_weights_unit_exposure_by_systemds_own_measure(tmp_path):
    """`systemd-analyze security --offline` scores the unit's exposure (0 best, 10 worst); the weights
    unit has the network and two writable folders, nothing else."""
    config = StartupConfig(**weights("a"), local_ssd_count=2, host_exporters=True)
    unit = tmp_path / WEIGHTS_UNIT
    unit.write_text(files_of(render_startup_script(config))[f"/etc/systemd/system/{WEIGHTS_UNIT}"])
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", str(unit)],
        capture_output=True,
        text=True,
        check=False,
    )
    score = float(re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout).group(1))
    assert score <= 4.5, result.stdout
