"""The node boot's shared pieces (components/serving/boot.py) and what every engine container is denied.

#32 item 2: one sandbox definition for every node unit, written in one module. #33 item 2: no engine is
ever `--privileged`; a TPU engine gets its chips' device nodes per generation (tpu_env.py), IPC_LOCK and
an unlimited memlock, and Docker's default seccomp profile. #33 item 9: the API key comes from a
mounted 0400 file, not the container's environment; a private IPC namespace with a bounded /dev/shm.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.catalog.gcp import GCP_TPU_SLICES
from inference_infra.components.planner import Traffic
from inference_infra.components.planner.precision import Precision, Quantization
from inference_infra.components.serving import EngineFamily, EngineHost, engine_units, plan_engines
from inference_infra.components.serving.boot import sandbox
from inference_infra.components.serving.tpu_env import (
    TPU_CHIP_BOUNDS,
    TPU_DEVICE_STYLE,
    TpuHost,
    tpu_devices,
    tpu_host_problems,
)
from inference_infra.components.serving.units import (
    API_KEY_FILE,
    CONTAINER_API_KEY_FILE,
    SHM_SIZE,
    exec_words,
    instance_command,
)

REPOSITORY = Path(__file__).resolve().parents[3]
HOST = EngineHost(model_dir="/opt/models/weights")
KEYED = replace(
    HOST, api_key_command=("/usr/local/lib/inference-infra/engine-api-key.sh", "ssm", "/x", "us-east-1")
)
# Every single-host TPU slice of the catalog an engine can run on (its chips fit the known bounds).
TPU_SLICES = sorted(
    item.name for item in GCP_TPU_SLICES if item.hosts == 1 and item.accelerator_count in TPU_CHIP_BOUNDS
)


def _tpu_units(slice_name: str, host: EngineHost = HOST):
    item = find_instance_type(slice_name, Cloud.GCP)
    assert item is not None
    config = plan_engines(
        model="qwen2.5-7b",
        traffic=Traffic(context_tokens=4096, concurrency=8),
        precision=Precision(weights=Quantization.FP8),  # fits every single-host slice, one chip too
        instance_type_name=slice_name,
        cloud="gcp",
    )
    return engine_units(config, replace(host, tpu=TpuHost(accelerator_type=slice_name, node_name="serving")))


def _setting(text: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in text.splitlines() if line.startswith(f"{key}=")]


def test_protect_system_strict_is_written_in_one_module_of_the_tree():
    holders = []
    for folder in ("components", "infra", "lambdas", "policy"):
        for path in (REPOSITORY / folder).rglob("*.py"):
            if "ProtectSystem=strict" in path.read_text():
                holders.append(path.relative_to(REPOSITORY).as_posix())
    assert holders == ["components/serving/boot.py"]


def test_sandbox_takes_only_its_arguments_as_differences():
    plain = sandbox()
    assert plain[0] == "ProtectSystem=strict"
    assert {"CapabilityBoundingSet=", "NoNewPrivileges=yes", "PrivateDevices=yes", "ProtectHome=yes"} <= set(
        plain
    )
    assert sandbox(["/a", "/b"])[1:3] == ["ReadWritePaths=/a", "ReadWritePaths=/b"]
    assert "ReadWritePaths=-/a" in sandbox(["/a"], optional_writable=True)
    assert "MemoryDenyWriteExecute=yes" in sandbox(no_writable_code=True)
    assert "MemoryDenyWriteExecute=yes" not in plain
    with pytest.raises(ValueError, match="sandbox home 'no'"):
        sandbox(home="no")


@pytest.mark.parametrize("family", list(EngineFamily))
def test_every_engine_template_carries_the_node_sandbox(family):
    units = _tpu_units("v5litepod-4") if family is EngineFamily.TPU_VLLM else None
    if units is None:
        machine = "p5.48xlarge" if family is EngineFamily.NVIDIA_VLLM else "inf2.8xlarge"
        config = plan_engines(
            model="llama-3.1-8b",
            traffic=Traffic(context_tokens=4096, concurrency=8),
            precision=None,
            instance_type_name=machine,
            cloud="aws",
        )
        units = engine_units(config, HOST)
    lines = set(units.template.splitlines())
    writable = [
        line.removeprefix("ReadWritePaths=")
        for line in units.template.splitlines()
        if line.startswith("ReadWritePaths=")
    ]
    expected = sandbox(writable, home="read-only")
    assert set(expected) <= lines
    assert set(sandbox(families=("AF_INET", "AF_INET6"), no_writable_code=True)) <= set(
        units.metrics_template.splitlines()
    )


def test_the_tpu_slices_cover_every_generation_with_device_nodes():
    generations = {find_instance_type(name, Cloud.GCP).accelerator for name in TPU_SLICES}  # type: ignore[union-attr]
    assert generations == {"tpu-v5e", "tpu-v6e", "tpu-v5p"} | ({"tpu-v4"} & generations)
    assert generations <= set(TPU_DEVICE_STYLE)


@pytest.mark.parametrize("slice_name", TPU_SLICES)
def test_tpu_engines_are_unprivileged_with_their_chips_per_generation(slice_name):
    units = _tpu_units(slice_name)
    item = find_instance_type(slice_name, Cloud.GCP)
    assert item is not None
    chips = item.accelerator_count
    words = instance_command(units, 0)
    assert "--privileged" not in words
    assert not any("seccomp" in w or "apparmor" in w or w.startswith("--cap-add=ALL") for w in words)
    assert not any(w == "--security-opt" for w in words)  # Docker's default seccomp profile and AppArmor
    assert words[words.index("--cap-add") + 1] == "IPC_LOCK"
    assert words.count("--cap-add") == 1
    assert words[words.index("--ulimit") + 1] == "memlock=-1:-1"
    devices = [w.removeprefix("--device=") for w in words if w.startswith("--device")]
    if TPU_DEVICE_STYLE[item.accelerator] == "vfio":  # v5e, v5p, v6e: vfio-pci
        assert devices == ["/dev/vfio/vfio", *(f"/dev/vfio/{i}" for i in range(chips))]
    else:  # v4: the accel driver
        assert devices == [f"/dev/accel{i}" for i in range(chips)]
    assert "/dev" not in [w.split(":")[0] for w in words if w.startswith("/dev")]  # never all of /dev


def test_tpu_device_nodes_per_generation():
    assert tpu_devices(TpuHost(accelerator_type="v6e-4", node_name="n")) == [
        "/dev/vfio/vfio",
        "/dev/vfio/0",
        "/dev/vfio/1",
        "/dev/vfio/2",
        "/dev/vfio/3",
    ]
    # v5p-8 is 4 chips on one host (the TensorCore count names it); vfio-pci, as tpu-info's chip_path says.
    assert tpu_devices(TpuHost(accelerator_type="v5p-8", node_name="n"))[0] == "/dev/vfio/vfio"
    assert len(tpu_devices(TpuHost(accelerator_type="v5p-8", node_name="n"))) == 5


def test_a_tpu_generation_without_known_device_nodes_is_refused(monkeypatch):
    monkeypatch.delitem(TPU_DEVICE_STYLE, "tpu-v6e")
    problems = tpu_host_problems(TpuHost(accelerator_type="v6e-8", node_name="n"))
    assert problems == [
        "tpu.accelerator_type 'v6e-8' is a tpu-v6e slice; its device nodes are known for "
        "['tpu-v4', 'tpu-v5e', 'tpu-v5p'] only (an engine is never given the whole /dev)"
    ]
    with pytest.raises(ValueError, match="is a tpu-v6e slice"):
        _tpu_units("v6e-8")


@pytest.mark.parametrize("family", list(EngineFamily))
def test_engines_get_a_private_ipc_namespace_with_a_bounded_shm(family):
    if family is EngineFamily.TPU_VLLM:
        units = _tpu_units("v5litepod-8")
    else:
        machine = "g6e.12xlarge" if family is EngineFamily.NVIDIA_VLLM else "inf2.48xlarge"
        config = plan_engines(
            model="llama-3.1-8b",
            traffic=Traffic(context_tokens=4096, concurrency=8),
            precision=None,
            instance_type_name=machine,
            cloud="aws",
        )
        units = engine_units(config, HOST)
    words = instance_command(units, 0)
    assert words[words.index("--ipc") + 1] == "private"
    assert words[words.index("--shm-size") + 1] == SHM_SIZE == "10g"
    assert "host" not in [words[i + 1] for i, w in enumerate(words) if w in ("--ipc", "--pid", "--uts")]


@pytest.mark.parametrize("family", list(EngineFamily))
def test_the_api_key_is_a_mounted_file_exported_to_the_server_alone(family):
    if family is EngineFamily.TPU_VLLM:
        units = _tpu_units("v5litepod-4", KEYED)
    else:
        machine = "g6e.xlarge" if family is EngineFamily.NVIDIA_VLLM else "inf2.8xlarge"
        config = plan_engines(
            model="llama-3.1-8b",
            traffic=Traffic(context_tokens=4096, concurrency=8),
            precision=None,
            instance_type_name=machine,
            cloud="aws",
        )
        units = engine_units(config, KEYED)
    words = instance_command(units, 0)
    assert "--env-file" not in words  # docker inspect would show every variable of it
    assert not any(v.startswith("VLLM_API_KEY") for f, v in itertools.pairwise(words) if f == "--env")
    assert f"/run/inference-engine-0/api-key:{CONTAINER_API_KEY_FILE}:ro" in words
    assert words[words.index("--entrypoint") + 1] == "/bin/sh"
    script = words[words.index("-c") + 1]
    # systemd passes the script's $ through ($$ in the unit), so the shell, not systemd, expands it.
    assert script == (
        f'VLLM_API_KEY="$(cat {CONTAINER_API_KEY_FILE})" && [ -n "$VLLM_API_KEY" ] && export VLLM_API_KEY && '
        'exec "$@"'
    )
    server = words[words.index("-c") + 3 :]
    if family is EngineFamily.NEURON_VLLM:
        assert server[:3] == ["python", "-m", "vllm.entrypoints.openai.api_server"]
    else:
        assert server[:2] == ["vllm", "serve"]
    assert "--api-key" not in words
    fetch = [p for p in _setting(units.template, "ExecStartPre") if "engine-api-key.sh" in p]
    assert exec_words(fetch[0], 0, {})[-1] == API_KEY_FILE.replace("%i", "0")


def test_the_api_key_script_runs_the_server_with_the_key_only_in_its_environment(tmp_path):
    import subprocess

    key = tmp_path / "key"
    key.write_text("sk-0123456789abcdef\n")
    key.chmod(0o400)
    script = f'VLLM_API_KEY="$(cat {key})" && [ -n "$VLLM_API_KEY" ] && export VLLM_API_KEY && exec "$@"'
    done = subprocess.run(
        [
            "/bin/sh",
            "-c",
            script,
            "engine",
            "/bin/sh",
            "-c",
            'printf "%s|%s" "$VLLM_API_KEY" "$1"',
            "x",
            "arg",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "sk-0123456789abcdef|arg"
    empty = tmp_path / "empty"
    empty.write_text("")
    refused = subprocess.run(
        ["/bin/sh", "-c", script.replace(str(key), str(empty)), "engine", "/bin/true"],
        capture_output=True,
        check=False,
    )
    assert refused.returncode != 0  # no key, no server: an engine never starts open by accident


def test_start_checks_run_as_root_before_the_engine():
    check = ("/usr/sbin/iptables", "--wait", "--check", "DOCKER-USER", "--jump", "REJECT")
    units = _tpu_units("v5litepod-4", replace(HOST, start_checks=(check,)))
    pre = _setting(units.template, "ExecStartPre")
    assert "+/usr/sbin/iptables --wait --check DOCKER-USER --jump REJECT" in pre
    with pytest.raises(ValueError, match="start_checks"):
        _tpu_units("v5litepod-4", replace(HOST, start_checks=(("iptables", "-L"),)))


def test_the_weights_units_of_both_clouds_carry_the_node_sandbox():
    # #32 item 2: the AWS prefetch and serving-load units and the GCP weights unit take it from sandbox().
    from inference_infra.components.aws import bootstrap as aws_boot
    from inference_infra.components.gcp import startup as gcp_boot

    pin = "ab" * 32
    spec = aws_boot.NodeBootstrap(
        accelerator=aws_boot.AcceleratorKind.NVIDIA,
        region="us-east-1",
        local_nvme_disks=1,
        prefetch=aws_boot.ModelPrefetch(bucket="acme-models", prefix="m", directory="m", manifest_sha256=pin),
    )
    prefetch = aws_boot._prefetch_unit(spec).splitlines()
    assert set(sandbox(["/opt/models/m", "/var/lib/node_exporter/textfile_collector"])) <= set(prefetch)
    config = gcp_boot.StartupConfig(model_uris=("gs://models/a",), manifest_sha256={"gs://models/a": pin})
    weights = gcp_boot.weights_unit(config).splitlines()
    expected = sandbox(
        [gcp_boot.models_dir(config)],
        families=("AF_UNIX", "AF_INET", "AF_INET6"),
        no_writable_code=True,
        optional_writable=True,
    )
    assert set(expected) <= set(weights)
    for lines in (prefetch, weights):
        assert [line for line in lines if line.startswith("ProtectSystem=")] == ["ProtectSystem=strict"]


# -- the whole boot as one list (#32 item 2): built by node_boot, only rendered by the two renderers --------

PIN = "ab" * 32


def _aws_spec():
    from inference_infra.components.aws import bootstrap as aws_boot

    return aws_boot.NodeBootstrap(
        accelerator=aws_boot.AcceleratorKind.NVIDIA,
        region="us-east-1",
        local_nvme_disks=2,
        efs=aws_boot.EfsMount(file_system_id="fs-0123", access_point_id="fsap-0123"),
        prefetch=aws_boot.ModelPrefetch(bucket="acme-models", prefix="m", directory="m", manifest_sha256=PIN),
        image_mirrors={"nvcr.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/nvcr"},
    )


def _gcp_config():
    from inference_infra.components.gcp import startup as gcp_boot

    uri = "gs://models/a"
    return gcp_boot.StartupConfig(
        model_uris=(uri,),
        manifest_sha256={uri: PIN},
        local_ssd_count=2,
        host_exporters=True,
        gpu_exporter=True,
        image_mirrors={"nvcr.io": "us-docker.pkg.dev/p/nvcr"},
    )


def test_the_aws_cloud_config_is_its_node_boot_and_nothing_else():
    """Every write_files entry is a NodeFile of node_boot, every runcmd entry after the one package
    install a BootStep, every fstab entry a mount, in the list's order."""
    import yaml

    from inference_infra.components.aws import bootstrap as aws_boot

    spec = _aws_spec()
    boot = aws_boot.node_boot(spec)
    document = yaml.safe_load(aws_boot.render_user_data(spec))
    assert [(f["path"], f["permissions"], f["content"]) for f in document["write_files"]] == [
        (f.path, f.mode, f.text) for f in boot.files
    ]
    assert document["runcmd"] == [
        [*aws_boot.DNF_INSTALL, *boot.packages],
        *([str(w) for w in step.argv] for step in boot.steps),
    ]
    assert document["mounts"] == [list(m) for m in boot.mounts]
    assert set(document) == {"package_update", "mounts", "write_files", "runcmd"}


def test_the_gcp_script_is_its_node_boot_after_the_functions():
    from inference_infra.components.gcp import startup as gcp_boot

    config = _gcp_config()
    boot = gcp_boot.node_boot(config)
    script = gcp_boot.render_startup_script(config)
    body = script.split("check_registry_auth() {", 1)[1].split("\n}\n", 1)[1].strip().splitlines()
    expected = [gcp_boot.shell_line(s) for s in boot.prepare]
    expected += [gcp_boot.write_file_line(f.path, f.mode, f.text) for f in boot.files]
    expected += [gcp_boot.shell_line(s) for s in boot.steps]
    assert body == [*expected, f'log "{boot.done}"']


def test_one_node_file_more_is_one_entry_in_the_list_on_both_clouds():
    """Adding a file to a node's boot is one NodeFile in the list (the renderers need no change)."""
    import dataclasses

    import yaml

    from inference_infra.components.aws import bootstrap as aws_boot
    from inference_infra.components.gcp import startup as gcp_boot
    from inference_infra.components.serving.boot import NodeFile

    extra = NodeFile("/etc/inference-infra/extra.json", '{"a": 1}\n', "0600")
    aws = aws_boot.node_boot(_aws_spec())
    document = yaml.safe_load(aws_boot.cloud_config(dataclasses.replace(aws, files=(*aws.files, extra))))
    assert document["write_files"][-1] == {
        "path": extra.path,
        "owner": "root:root",
        "permissions": "0600",
        "content": extra.text,
    }
    config = _gcp_config()
    gcp = gcp_boot.node_boot(config)
    before = gcp_boot.startup_script(gcp, config)
    after = gcp_boot.startup_script(dataclasses.replace(gcp, files=(*gcp.files, extra)), config)
    added = [line for line in after.splitlines() if line not in before.splitlines()]
    assert added == [gcp_boot.write_file_line(extra.path, extra.mode, extra.text)]


def test_a_boot_step_is_one_quoted_shell_line():
    from inference_infra.components.gcp.startup import shell_line
    from inference_infra.components.serving.boot import BootStep, NodePath, exporter_step

    assert (
        shell_line(BootStep(("mkdir", "-p", NodePath("/var/lib/a b")))) == "mkdir -p \"$ROOT\"'/var/lib/a b'"
    )
    assert shell_line(BootStep(("start_weights", "/mnt/x; rm -rf /"))) == "start_weights '/mnt/x; rm -rf /'"
    step = exporter_step("node-exporter", "quay.io/p/n@sha256:" + PIN, gpus=False, docker_config="/etc/d")
    line = shell_line(step)
    assert line.startswith("DOCKER_CONFIG=/etc/d docker run ")
    assert line.endswith(' >/dev/null || log "warning: node-exporter did not start"')
    with pytest.raises(ValueError, match="log text"):
        shell_line(BootStep(("true",), warning='done" ; reboot ; "'))


def test_cloud_init_runs_a_step_as_a_list_of_words():
    from inference_infra.components.aws.bootstrap import _argv
    from inference_infra.components.serving.boot import BootStep, NodePath

    assert _argv(BootStep(("mkdir", "-p", NodePath("/var/lib/x")))) == ["mkdir", "-p", "/var/lib/x"]
    assert type(_argv(BootStep((NodePath("/x"),)))[0]) is str  # yaml's safe dumper writes str only
    assert _argv(BootStep(("docker", "run"), environment={"DOCKER_CONFIG": "/etc/d"})) == [
        "env",
        "DOCKER_CONFIG=/etc/d",
        "docker",
        "run",
    ]
