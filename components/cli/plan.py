"""`inference-infra plan`: the offline plan of a stack."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from inference_infra.components import input_size
from inference_infra.components.cli import app


@app.command()
@click.option(
    "--stack",
    "-s",
    default="dev",
    show_default=True,
    help="Stack name, or org/name or org/project/name as pulumi takes it: reads Pulumi.<name>.yaml.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as one JSON object.")
@click.option(
    "--wide",
    is_flag=True,
    help="Print full type tokens and every row's BASIS in full (the table fits 120 columns without it).",
)
@click.option(
    "--cwd", type=click.Path(path_type=Path), default=Path("."), help="Folder of the Pulumi project."
)
@click.option(
    "--policy-pack",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Policy pack folder; repeat for several (default: the project's policy/ when it holds "
    "PulumiPolicy.yaml, else the library's pack).",
)
@click.option(
    "--policy-config",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Policy config JSON in `pulumi preview --policy-pack-config` shape; repeat it, one per "
    "--policy-pack in the same order, as Pulumi pairs them (default: a pack inside the project uses "
    "its config/<stack>.json, any other pack its defaults).",
)
@click.option(
    "--usage-file",
    type=click.Path(path_type=Path),
    help="YAML/JSON of expected monthly quantities of usage-priced resources (bytes stored, requests, "
    "traffic): `resource_usage: {<resource name>: {<usage key>: <quantity>}}`; for an elastic pool, "
    "`hours_at_size: {<machines>: <hours per month>}` gives its expected cost.",
)
def plan(
    stack: str,
    as_json: bool,
    wide: bool,
    cwd: Path,
    policy_pack: tuple[Path, ...],
    policy_config: tuple[Path, ...],
    usage_file: Path | None = None,
) -> int:
    """Run a stack's program offline under Pulumi's mock runtime, price it, and check it
    against the policy pack. Exit 1 when a mandatory policy is violated."""
    from inference_infra.components.errors import InputError
    from inference_infra.components.offline_plan import plan as run_plan
    from inference_infra.components.offline_plan import render_table
    from inference_infra.components.offline_plan.project import load_project, program_python

    python = program_python(load_project(cwd))
    if python is not None:  # Pulumi.yaml names a virtualenv: the program runs there, as under pulumi up
        argv = ["plan", "--stack", stack, "--cwd", str(cwd)] + (["--json"] if as_json else [])
        argv += ["--wide"] if wide else []
        argv += [a for p in policy_pack for a in ("--policy-pack", str(p))]
        argv += [a for c in policy_config for a in ("--policy-config", str(c))]
        argv += ["--usage-file", str(usage_file)] if usage_file is not None else []
        return _plan_in_virtualenv(python, argv)
    for pack in policy_pack:
        if not pack.is_dir():
            raise InputError(f"--policy-pack {str(pack)!r} is not a folder; pass the policy pack's folder.")
    for config in policy_config:
        if not config.is_file():
            raise InputError(
                f"--policy-config {str(config)!r} does not exist; pass a policy config JSON file."
            )
        input_size.check_size(
            config, input_size.MAX_CONFIG_FILE_BYTES, "--policy-config"
        )  # before the plan runs
    usage = None
    if usage_file is not None:
        from inference_infra.components.pricing.usage import read_usage_file

        usage = read_usage_file(usage_file)
    try:
        result = run_plan(cwd, stack, policy_pack=list(policy_pack), policy_config=list(policy_config))
    except InputError:
        if os.environ.get("INFERENCE_INFRA_DEBUG"):
            import traceback

            traceback.print_exc()
        raise
    if usage is not None:
        from inference_infra.components.pricing import apply_usage_file

        apply_usage_file(result.cost, usage, where=f"--usage-file {str(usage_file)!r}")
    if as_json:
        json.dump(result.as_json(), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(result, wide=wide))
    return result.exit_code


def _plan_in_virtualenv(python: Path, argv: list[str]) -> int:
    """Run this plan again under the virtualenv's Python, activated as Pulumi activates it
    (VIRTUAL_ENV set, its bin first on PATH, PYTHONHOME unset); its exit code is the plan's."""
    import subprocess

    from inference_infra.components.errors import InputError
    from inference_infra.components.offline_plan.project import IN_VIRTUALENV

    venv = python.parent.parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHOME"}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    env[IN_VIRTUALENV] = "1"
    probe = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('inference_infra') else 9)"
    if subprocess.run([str(python), "-c", probe], env=env, check=False).returncode != 0:
        raise InputError(
            f"Pulumi.yaml names the virtualenv {venv}, where the program runs (as under `pulumi up`), but "
            "inference-infra is not installed there; add it to the program's requirements.txt with the "
            "extras your program needs (e.g. `inference-infra[aws]`, `inference-infra[all]`), run "
            f"`{python} -m pip install -r requirements.txt`, and plan again."
        )
    sys.stdout.flush()
    return subprocess.run(
        [str(python), "-m", "inference_infra.components.cli", *argv], env=env, check=False
    ).returncode
