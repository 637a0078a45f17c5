"""Policy packs as Pulumi pairs them, the reference configs for the reference project only, and
`inference-infra policy-pack init DIR`, a pack folder `pulumi preview --policy-pack DIR` can run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from inference_infra.components.cli import main
from inference_infra.components.cli.policy_pack import write_pack
from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan
from inference_infra.policy.rules import POLICIES

ROOT = Path(__file__).resolve().parents[3]
LIBRARY_PACK = ROOT / "policy"

GPU_PROGRAM = """
import pulumi
import pulumi_aws as aws

tags = {"CostCenter": "ml", "Environment": "dev", "Owner": "me@example.com", "AutoShutdown": "false"}
aws.ec2.Instance("gpu", instance_type="g5.xlarge", ami="ami-0123456789abcdef0", tags=tags,
                 metadata_options={"http_tokens": "required"}, associate_public_ip_address=False,
                 root_block_device={"encrypted": True})
"""


def _config(tmp_path: Path, name: str, settings: dict) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(settings))
    return path


def test_plan_pairs_policy_configs_with_packs_in_order(pulumi_project, tmp_path):
    folder = pulumi_project(GPU_PROGRAM)
    second = tmp_path / "second-pack"
    write_pack(second)
    tight = _config(tmp_path, "tight", {"accelerator-spend-budget": {"maxHourlyUsd": 0.5}})
    loose = _config(tmp_path, "loose", {"accelerator-spend-budget": {"maxHourlyUsd": 500}})
    result = plan(folder, "dev", policy_pack=[LIBRARY_PACK, second], policy_config=[tight, loose])
    assert [(p["path"], p["config"]) for p in result.policy.packs] == [
        (str(LIBRARY_PACK), str(tight)),
        (str(second), str(loose)),
    ]
    budget = [v for v in result.policy.violations if v.policy == "accelerator-spend-budget"]
    assert len(budget) == 1  # the tight config judged the first pack only
    assert "0.5" in budget[0].message


def test_plan_rejects_a_policy_config_count_that_does_not_match_the_packs(pulumi_project, tmp_path, capsys):
    folder = pulumi_project(GPU_PROGRAM)
    config = _config(tmp_path, "one", {})
    code = main(
        ["plan", "--cwd", str(folder), "--policy-pack", str(LIBRARY_PACK), "--policy-pack", str(LIBRARY_PACK),
         "--policy-config", str(config)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "1 --policy-config for 2 policy pack(s)" in " ".join(err.split())
    assert "Traceback" not in err


def test_plan_gives_the_reference_configs_to_the_reference_project_only(pulumi_project):
    outside = plan(pulumi_project(GPU_PROGRAM, name="outside"), "dev")  # a user's stack named dev
    assert outside.policy.packs == [
        {"name": "inference-infra@v0.1.0", "path": str(LIBRARY_PACK), "config": None}
    ]
    assert all("maxHourlyUsd" not in v.message for v in outside.policy.violations)
    reference = plan(ROOT, "dev")
    assert reference.policy.packs[0]["config"] == str(LIBRARY_PACK / "config" / "dev.json")


@pytest.fixture
def init_pack(tmp_path: Path) -> Path:
    folder = tmp_path / "inference-pack"
    assert main(["policy-pack", "init", str(folder)]) == 0
    return folder


def test_policy_pack_init_writes_a_python_pack_manifest(init_pack):
    manifest = yaml.safe_load((init_pack / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}}
    assert manifest["version"] == "0.1.0"
    compile((init_pack / "__main__.py").read_text(), "__main__.py", "exec")


def test_policy_pack_init_pins_an_installable_requirement(init_pack):
    lines = [
        line
        for line in (init_pack / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not any(line.startswith(("-e", "--editable")) for line in lines), lines
    requirements = {Requirement(line).name: Requirement(line) for line in lines}
    assert set(requirements) == {"pulumi-policy", "inference-infra"}
    assert str(requirements["pulumi-policy"].specifier).startswith("==")
    ours = requirements["inference-infra"]
    assert ours.url or str(ours.specifier).startswith("==")
    # pip, offline, from the pack's folder as Pulumi runs it: it resolves to this distribution
    report = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps",
         "--no-build-isolation", "--quiet", "--report", "-", "-r", "requirements.txt"],
        cwd=init_pack, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    would = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report.stdout)["install"]}
    assert would["inference-infra"] == "0.1.0"


def test_policy_pack_init_pack_runs_the_library_policies(init_pack, pulumi_project):
    folder = pulumi_project(GPU_PROGRAM)
    ours = plan(folder, "dev", policy_pack=init_pack).policy
    library = plan(folder, "dev", policy_pack=LIBRARY_PACK).policy
    assert ours.policies == library.policies == len(POLICIES)
    assert [v.policy for v in ours.violations] == [v.policy for v in library.violations]
    assert ours.packs[0]["name"] == "inference-infra@v0.1.0"


def test_policy_pack_init_rejects_a_folder_that_holds_a_pack(init_pack):
    with pytest.raises(
        InputError, match=r"already holds PulumiPolicy\.yaml, __main__\.py, requirements\.txt"
    ):
        write_pack(init_pack)
    write_pack(init_pack, force=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ('{"no-such-policy": "mandatory"}', "no-such-policy"),
    ],
)
def test_plan_checks_a_policy_config_before_the_program_runs(
    pulumi_project, tmp_path, capsys, text, expected
):
    folder = pulumi_project("raise RuntimeError('the program ran')\n")
    config = tmp_path / "bad.json"
    config.write_text(text)
    code = main(
        ["plan", "--cwd", str(folder), "--policy-pack", str(LIBRARY_PACK), "--policy-config", str(config)]
    )
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert expected in err
    assert "the program ran" not in err


@pytest.mark.parametrize(
    ("requirement", "local"),
    [("inference-infra @ file:///home/me/inference-infra", True), ("inference-infra==0.9.0", False)],
)
def test_policy_pack_init_says_what_its_requirements_pin(tmp_path, capsys, monkeypatch, requirement, local):
    from importlib.metadata import version

    from inference_infra.components.cli import policy_pack

    monkeypatch.setattr(policy_pack, "installed_requirement", lambda: requirement)
    assert main(["policy-pack", "init", str(tmp_path / "pack")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"pins pulumi-policy=={version('pulumi-policy')} and {requirement}" in err
    assert requirement in (tmp_path / "pack" / "requirements.txt").read_text()
    assert ("a path on this machine" in err) is local
    assert ("in CI replace that line with a version or a git URL" in err) is local
