"""Bounds on counts before anything is planned, and stack-config errors that name the stack file.

A pool of 100,000 machines (a typo, or a hostile pull request) must be one exit-2 paragraph, not a
plan that takes the CI runner down: it is refused as the stack file is read, before a provider SDK
is imported, in well under a second and a few tens of MB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inference_infra.components.cli import main
from inference_infra.infra.config import MAX_MACHINES_PER_STACK

ROOT = Path(__file__).resolve().parents[2]
DEV = (ROOT / "Pulumi.dev.yaml").read_text()


def _project(tmp_path: Path, stack: str) -> Path:
    """The reference program with another stack file (the project's name keeps its config keys)."""
    (tmp_path / "Pulumi.yaml").write_text(f"name: inference-infra\nruntime: python\nmain: {ROOT / 'infra'}\n")
    (tmp_path / "Pulumi.bad.yaml").write_text(stack)
    return tmp_path


def _plan(capsys, folder: Path) -> tuple[int, str]:
    code = main(["plan", "--cwd", str(folder), "--stack", "bad"])
    return code, " ".join(capsys.readouterr().err.split())


MEASURE = """
import contextlib, io, json, sys, time


def peak_mib():  # VmHWM: this process's own peak RSS (ru_maxrss keeps a forking parent's)
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


# start-up that every plan of this project pays, whatever its counts
import inference_infra.components.offline_plan, inference_infra.infra.config, pulumi
from inference_infra.components.cli import main
started = time.perf_counter()
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["plan", "--cwd", sys.argv[1], "--stack", "bad"])
print(json.dumps({"code": code, "seconds": time.perf_counter() - started, "err": err.getvalue(),
                  "peak_mib": peak_mib(),
                  "aws_part": "inference_infra.infra.aws_stack" in sys.modules}))
"""


@pytest.mark.slow
def test_stack_rejects_a_pool_of_100000_in_under_a_second_and_300_mb(tmp_path):
    assert "      spot: 1\n" in DEV
    folder = _project(tmp_path, DEV.replace("      spot: 1\n", "      spot: 100000\n", 1))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI", "INFERENCE_INFRA"))}
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder)], capture_output=True, text=True, timeout=120, env=env,
        check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["code"] == 2
    assert " ".join(result["err"].split()) == (
        "inference-infra: invalid stack config in Pulumi.bad.yaml: inference-infra:awsGpuFleets[0].spot "
        "100000 must be at most 1,000 machines in one fleet (its maxMachines; raise it for a larger pool, "
        "up to 10,000)."
    )
    assert not result["aws_part"]  # refused as the stack file is read, before the AWS part plans anything
    assert result["seconds"] < 1.0
    assert result["peak_mib"] < 300


def test_stack_rejects_more_machines_than_the_stack_bound(capsys, tmp_path):
    fleets = "".join(
        f"    - name: pool-{i}\n      instanceType: g6.xlarge\n      spot: 1000\n      maxMachines: 1000\n"
        for i in range(MAX_MACHINES_PER_STACK // 1000 + 1)
    )
    stack = DEV.split("  inference-infra:awsGpuFleets:\n")[0] + "  inference-infra:awsGpuFleets:\n" + fleets
    code, err = _plan(capsys, _project(tmp_path, stack))
    assert code == 2
    assert (
        "the stack's fleets 11000 must have at most 10,000 machines in all (inference-infra:maxMachines"
        in err
    )


def test_stack_max_machines_raises_a_fleets_bound(capsys, tmp_path):
    stack = DEV.replace("      spot: 1\n", "      spot: 1001\n      maxMachines: 999\n", 1)
    code, err = _plan(capsys, _project(tmp_path, stack))
    assert code == 2
    assert "awsGpuFleets[0].spot 1001 must be at most 999 machines in one fleet" in err
    stack = DEV.replace("      spot: 1\n", "      maxMachines: 10001\n", 1)
    code, err = _plan(capsys, _project(tmp_path, stack))
    assert code == 2
    assert "awsGpuFleets[0].maxMachines" in err


def test_stack_config_error_names_the_stack_file_and_camel_case_keys(capsys, tmp_path):
    stack = DEV.replace(
        "      spot: 1\n", "      count: 3\n      capacityOrder: [spot]\n      maxSpot: 1\n", 1
    )
    code, err = _plan(capsys, _project(tmp_path, stack))
    assert code == 2
    assert err.startswith(
        "inference-infra: invalid stack config in Pulumi.bad.yaml: inference-infra:awsGpuFleets[0]"
    )
    assert "__main__.py" not in err
    assert "add on-demand to capacityOrder, raise maxSpot" in err  # not capacity_order, max_spot


def test_stack_fleet_error_has_no_follow_on_endpoint_error(capsys, tmp_path):
    code, err = _plan(
        capsys, _project(tmp_path, DEV.replace("instanceType: g6.xlarge", "instanceType: g6.xlarg"))
    )
    assert code == 2
    assert "close matches: g6.xlarge" in err
    assert "serves no model" not in err
    assert "problems" not in err  # one problem, not two
