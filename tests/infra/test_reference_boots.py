"""Every boot the prod and dev reference stacks render, read by the programs that run it (#23 Proof).

AWS launch templates: `cloud-init schema` accepts the user data; cloud-init's own runcmd script passes
`bash -n` and shellcheck; every script it writes passes shellcheck (bash) or compiles (Python); every
unit passes `systemd-analyze verify`. GCP VMs and TPU slices: the startup script passes `bash -n` and
shellcheck, every file it writes likewise, and its units (with their drop-ins) pass systemd-analyze verify.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from inference_infra.components.aws.bootstrap import decode_user_data
from tests.components.conftest import systemd_verify  # noqa: F401 (the fixture, for this folder)
from tests.components.gcp.helpers import files_of

STACKS = ("prod", "dev")
SYSTEM_PYTHON = "/usr/bin/python3"  # cloud-init's own interpreter, with its cloudinit package
UNITS = "/etc/systemd/system/"
STUBS = ["docker.service", "amazon-cloudwatch-agent.service", "google-cloud-ops-agent.service"]


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is a system dependency (.ci/system-deps)"
    return path


def _boots(capture) -> dict[str, tuple[str, str]]:
    """name -> (kind, text): AWS user data (cloud-config) and GCP startup scripts."""
    boots = {}
    for resource in capture.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        if resource.props.get("userData"):
            boots[resource.name] = ("cloud-config", decode_user_data(resource.props["userData"]))
    for kind in ("gcp:compute/instance:Instance", "gcp:tpu/v2Vm:V2Vm"):
        for resource in capture.of_type(kind):
            script = (resource.props.get("metadata") or {}).get("startup-script")
            if script:
                boots[resource.name] = ("startup-script", script)
    return boots


def _shellcheck(text: str, path: Path, shell: str = "bash") -> str:
    path.write_text(text)
    if subprocess.run(["bash", "-n", str(path)], capture_output=True, check=False).returncode:
        return f"{path.name}: bash -n fails"
    checked = subprocess.run(
        [_tool("shellcheck"), "-s", shell, str(path)], capture_output=True, text=True, check=False
    )
    return checked.stdout if checked.returncode else ""


def _written_files_problems(files: dict[str, str], scratch: Path) -> list[str]:
    problems = []
    for path, text in files.items():
        target = scratch / Path(path).name
        if path.endswith(".sh"):
            if found := _shellcheck(text, target):
                problems.append(f"{path}: {found}")
        elif path.endswith(".py"):
            target.write_text(text)
            result = subprocess.run(
                [sys.executable, "-m", "py_compile", str(target)], capture_output=True, text=True, check=False
            )
            if result.returncode:
                problems.append(f"{path}: {result.stderr}")
    return problems


def _verify_units(verify, files: dict[str, str]) -> subprocess.CompletedProcess[str] | None:
    units = {p.removeprefix(UNITS): t for p, t in files.items() if p.startswith(UNITS) and p.count("/") == 4}
    if not units:
        return None
    drop_ins = {p: t for p, t in files.items() if p.startswith(UNITS) and p.count("/") > 4}
    instances = {name.replace("@.", "@0."): name for name in units if name.endswith("@.service")}
    binaries = set()
    for text in [*units.values(), *drop_ins.values()]:
        for line in text.splitlines():
            if re.match(r"^Exec(Start|StartPre|StartPost|Stop|StopPost)=", line):
                binaries.add(line.split("=", 1)[1].lstrip("-+@!:").split(" ", 1)[0])
    extra = {p: t for p, t in files.items() if p.startswith("/etc/inference-infra/")}
    return verify(
        units,
        binaries=sorted(binaries - {"/usr/bin/true"}),
        stub_units=[s for s in STUBS if s not in units],
        instances=instances,
        extra_files={**extra, **drop_ins},
    )


@pytest.mark.parametrize("stack", STACKS)
def test_reference_boots_pass_cloud_init_shellcheck_and_systemd_verify(
    plan_stack,
    stack,
    tmp_path,
    systemd_verify,  # noqa: F811
):
    boots = _boots(plan_stack(stack).capture)
    assert boots, stack
    problems, checked = [], []
    for name, (kind, text) in boots.items():
        scratch = tmp_path / name
        scratch.mkdir()
        if kind == "cloud-config":
            (scratch / "user-data.yaml").write_text(text)
            schema = subprocess.run(
                [_tool("cloud-init"), "schema", "--config-file", str(scratch / "user-data.yaml")],
                capture_output=True,
                text=True,
                check=False,
            )
            if schema.returncode:
                problems.append(f"{name}: cloud-init schema: {schema.stdout}{schema.stderr}")
            document = yaml.safe_load(text)
            (scratch / "runcmd.yaml").write_text(yaml.safe_dump(document["runcmd"]))
            program = (
                "import sys, yaml; from cloudinit.util import shellify; "
                "sys.stdout.write(shellify(yaml.safe_load(open(sys.argv[1]))))"
            )
            made = subprocess.run(
                [SYSTEM_PYTHON, "-c", program, str(scratch / "runcmd.yaml")],
                capture_output=True,
                text=True,
                check=False,
            )
            assert made.returncode == 0, made.stderr
            if found := _shellcheck(made.stdout, scratch / "runcmd.sh", shell="sh"):
                problems.append(f"{name}: runcmd: {found}")
            files = {f["path"]: f["content"] for f in document.get("write_files", [])}
        else:
            if found := _shellcheck(text, scratch / "startup.sh"):
                problems.append(f"{name}: startup-script: {found}")
            files = files_of(text)
        problems += [f"{name}: {p}" for p in _written_files_problems(files, scratch)]
        verified = _verify_units(systemd_verify, files)
        if verified is None:
            assert "inference-engine@" not in text, name  # only a node without engines writes no unit
            continue
        if verified.returncode or verified.stderr:
            problems.append(f"{name}: systemd-analyze verify: {verified.stderr}")
        checked.append(name)
        shutil.rmtree(tmp_path / "root", ignore_errors=True)  # the next node's scratch root
    assert problems == [], "\n".join(problems)
    assert checked, stack


def _files(kind: str, text: str) -> dict[str, str]:
    if kind == "cloud-config":
        document = yaml.safe_load(text)
        files = {f["path"]: f["content"] for f in document.get("write_files", [])}
        files["<runcmd>"] = "\n".join(" ".join(command) for command in document["runcmd"])
        return files
    return {"<startup-script>": text, **files_of(text)}


@pytest.mark.parametrize("stack", STACKS)
def test_reference_boots_run_no_privileged_container_and_keep_the_key_out_of_docker_inspect(
    plan_stack, stack
):
    # #33 items 2 and 9, over every unit and script each node of the plan writes or runs.
    boots = _boots(plan_stack(stack).capture)
    engines, problems = 0, []
    for name, (kind, text) in boots.items():
        for path, content in _files(kind, text).items():
            for word in (
                "--privileged",
                "--ipc host",
                "--ipc=host",
                "--env-file",
                "seccomp=unconfined",
            ):
                if word in content:
                    problems.append(f"{name}: {path} holds {word!r}")
            if not path.endswith("/inference-engine@.service"):
                continue
            engines += 1
            start = next(line for line in content.splitlines() if line.startswith("ExecStart="))
            if (
                "--pid host" in start or "--network host" in start
            ):  # the host exporters have them, engines never
                problems.append(f"{name}: {path} shares a host namespace")
            if "--ipc private --shm-size" not in start:
                problems.append(f"{name}: {path} has no private IPC namespace with a bounded /dev/shm")
            if "vllm-tpu" in start and not re.search(r"--device=/dev/(vfio/vfio|accel0) ", start):
                problems.append(f"{name}: {path} runs a TPU engine without its chips' device nodes")
            if "api-key" in content and "/run/secrets/vllm-api-key:ro" not in start:
                problems.append(f"{name}: {path} fetches a key but does not mount it read-only")
    assert problems == [], "\n".join(problems)
    assert engines, stack
