"""Bounds on counts before anything is planned, and stack-config errors that name the stack file.

A pool of 100,000 machines (a typo, or a hostile pull request) must be one exit-2 paragraph, not a
plan that takes the CI runner down: it is refused from the raw stack file (infra/stack_bounds.py),
before the typed config, the components or a provider SDK are imported, in about half a second for
the whole command and a few tens of MB.
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


started = time.perf_counter()  # the whole command: Pulumi's runtime, the harness, the program
from inference_infra.components.cli import main
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["plan", "--cwd", sys.argv[1], "--stack", "bad"])
heavy = ["inference_infra.infra.config", "inference_infra.infra.aws_stack", "pulumi_aws", "pulumi_gcp",
         "pydantic"]
print(json.dumps({"code": code, "seconds": time.perf_counter() - started, "cpu": time.process_time(),
                  "err": err.getvalue(),
                  "peak_mib": peak_mib(), "imported": [m for m in heavy if m in sys.modules]}))
"""


def _measured(folder: Path) -> dict:
    """`plan --stack bad` on `folder` in a fresh interpreter: code, stderr, CPU seconds, peak MiB and
    which heavy modules it imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI", "INFERENCE_INFRA"))}
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder)], capture_output=True, text=True, timeout=300, env=env,
        check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.slow
def test_stack_rejects_a_pool_of_100000_in_under_a_second_and_300_mb(tmp_path):
    assert "      spot: 1\n" in DEV
    folder = _project(tmp_path, DEV.replace("      spot: 1\n", "      spot: 100000\n", 1))
    result = _measured(folder)
    assert result["code"] == 2
    assert " ".join(result["err"].split()) == (
        "inference-infra: invalid stack config in Pulumi.bad.yaml: inference-infra:awsGpuFleets[0].spot "
        "100000 must be at most 1,000 machines in one fleet (its maxMachines; raise it for a larger pool, "
        "up to 10,000)."
    )
    # refused from the raw stack file: before the typed config, the components or a provider SDK load
    assert result["imported"] == []
    # CPU seconds of the whole process (interpreter start-up included): wall time on a shared CI
    # runner measures its other work too (benchmarks/plan_scale.py prints the wall figures)
    assert result["cpu"] < 1.0, result
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
        "the stack's fleets and Kubernetes pools 11000 must have at most 10,000 machines in all "
        "(inference-infra:maxMachines" in err
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


def _raw(stack_text: str) -> dict[str, str]:
    """A stack file's inference-infra keys as the engine hands them to the program."""
    import yaml

    config = yaml.safe_load(stack_text)["config"]
    prefix = "inference-infra:"
    return {
        k[len(prefix) :]: v if isinstance(v, str) else json.dumps(v)
        for k, v in config.items()
        if k.startswith(prefix) and not (isinstance(v, dict) and "secure" in v)
    }


OVER_BOUNDS = {
    "a pool of 100,000": DEV.replace("      spot: 1\n", "      spot: 100000\n", 1),
    "count over a lowered maxMachines": DEV.replace(
        "      spot: 1\n", "      count: 1001\n      capacityOrder: [spot]\n      maxMachines: 999\n", 1
    ),
    "the stack's bound": DEV.replace(
        "  inference-infra:awsGpuFleets:\n",
        "  inference-infra:maxMachines: 1\n  inference-infra:awsGpuFleets:\n",
        1,
    ).replace("      spot: 1\n", "      spot: 2\n", 1),
}


@pytest.mark.parametrize("stack", OVER_BOUNDS.values(), ids=OVER_BOUNDS.keys())
def test_stack_bounds_raw_check_refuses_as_the_typed_config_does(stack):
    from inference_infra.components.errors import ConfigError
    from inference_infra.infra.stack_bounds import refuse_machines_over_bounds
    from inference_infra.infra.stack_file import parse_stack_settings

    raw = _raw(stack)
    with pytest.raises(ConfigError) as early:
        refuse_machines_over_bounds(raw, stack="bad")
    with pytest.raises(ConfigError) as typed:
        parse_stack_settings(raw, stack="bad")
    assert str(early.value) == str(typed.value)
    assert str(early.value).startswith("invalid stack config in Pulumi.bad.yaml: ")


LEFT_TO_THE_TYPED_CONFIG = {
    "a count that is not a number": ("      spot: 1\n", "      spot: lots\n"),
    "a negative count": ("      spot: 1\n", "      spot: -100000\n"),
    "maxMachines above its ceiling": ("      spot: 1\n", "      spot: 100000\n      maxMachines: 100001\n"),
    "maxMachines that is not a number": ("      spot: 1\n", "      spot: 100000\n      maxMachines: many\n"),
}


@pytest.mark.parametrize("change", LEFT_TO_THE_TYPED_CONFIG.values(), ids=LEFT_TO_THE_TYPED_CONFIG.keys())
def test_stack_bounds_raw_check_leaves_values_it_cannot_read_to_the_typed_config(change):
    """The early check refuses only counts it reads for certain; the typed config names the rest."""
    from inference_infra.components.errors import ConfigError
    from inference_infra.infra.stack_bounds import refuse_machines_over_bounds
    from inference_infra.infra.stack_file import parse_stack_settings

    raw = _raw(DEV.replace(*change, 1))
    refuse_machines_over_bounds(raw, stack="bad")  # no error: not read as a count over a bound
    with pytest.raises(ConfigError, match=r"awsGpuFleets\[0\]"):
        parse_stack_settings(raw, stack="bad")


def test_stack_bounds_raw_check_passes_the_reference_stacks():
    from inference_infra.infra.stack_bounds import decode, raw_fleet_machines, refuse_machines_over_bounds

    for name in ("dev", "prod"):
        raw = _raw((ROOT / f"Pulumi.{name}.yaml").read_text())
        refuse_machines_over_bounds(raw, stack=name)
        assert raw_fleet_machines(decode(raw))  # every fleet's counts are read, none skipped silently


HOSTILE_FILES = {
    "an alias bomb": (
        "config:\n  a0: &a0 ["
        + ", ".join(['"lol"'] * 10)
        + "]\n"
        + "".join(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10))
        + "  inference-infra:extraTags: *a9\n",
        "Pulumi.bad.yaml cannot be read: the document stands for more than 1,000,000 values",
    ),
    "an alias to itself": (
        "config:\n  inference-infra:extraTags: &a [*a]\n",
        "an alias to a value that contains it",
    ),
    "nesting too deep": (
        "config:\n  inference-infra:endpoints: " + "[" * 20_000 + "]" * 20_000 + "\n",
        "nested too deeply",
    ),
}


@pytest.mark.parametrize(("text", "expected"), HOSTILE_FILES.values(), ids=HOSTILE_FILES.keys())
def test_stack_file_that_would_exhaust_the_plan_is_one_exit_2_paragraph(capsys, tmp_path, text, expected):
    code, err = _plan(capsys, _project(tmp_path, text))
    assert code == 2
    assert expected in err
    assert "Traceback" not in err


def test_stack_file_that_is_not_utf8_is_one_exit_2_paragraph(capsys, tmp_path):
    folder = _project(tmp_path, "")
    (folder / "Pulumi.bad.yaml").write_bytes(b"config:\n  inference-infra:owner: \xff\xfe\n")
    code, err = _plan(capsys, folder)
    assert code == 2
    assert "Pulumi.bad.yaml is not UTF-8 text (byte 34 cannot be decoded)" in err


def test_policy_config_nested_too_deeply_is_one_exit_2_paragraph(capsys, tmp_path):
    folder = _project(tmp_path, DEV)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code = main(["plan", "--cwd", str(folder), "--stack", "bad", "--policy-config", str(deep)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "is nested too deeply to read" in err


def test_stack_list_longer_than_its_bound_is_refused_before_the_typed_config(tmp_path):
    """10,000 endpoints (each a load balancer the plan would build) are one exit-2 paragraph. (100,000
    are a file over the stack file's size bound, refused before it is parsed: tests/components/
    test_input_size.py.)"""
    endpoints = "  inference-infra:endpoints:\n" + "    - {name: e, pools: [p]}\n" * 10_000
    folder = _project(tmp_path, DEV.split("  inference-infra:endpoints:\n")[0] + endpoints)
    result = _measured(folder)
    assert result["code"] == 2
    assert " ".join(result["err"].split()) == (
        "inference-infra: invalid stack config in Pulumi.bad.yaml: inference-infra:endpoints has 10000 "
        "entries; a list or map in a stack file has at most 100."
    )
    assert result["imported"] == []


def test_stack_map_longer_than_its_bound_is_refused_by_the_typed_config_too():
    from inference_infra.components.errors import ConfigError
    from inference_infra.infra.stack_file import parse_stack_settings

    raw = _raw(DEV)
    raw["extraTags"] = json.dumps({f"k{i}": "v" for i in range(101)})
    with pytest.raises(
        ConfigError,
        match=r"inference-infra:extraTags has 101 entries; a list or map in a stack file has at most 100",
    ):
        parse_stack_settings(raw, stack="bad")
    raw["extraTags"] = json.dumps({f"K{i}": "v" for i in range(100)})
    with pytest.raises(ConfigError) as error:  # within the bound; AWS's 50 tags on a resource is not
        parse_stack_settings(raw, stack="bad")
    assert "has at most 100" not in str(error.value)
    assert "are too many: AWS allows 50 on a resource" in str(error.value)


def test_stack_file_schema_bounds_every_list_and_map():
    from inference_infra.infra.stack_file import stack_file_schema

    text = json.dumps(stack_file_schema())
    assert text.count('"type": "array"') == text.count('"maxItems": 100')
    assert '"maxProperties": 100' in text
