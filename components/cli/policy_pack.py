"""`inference-infra policy-pack init DIR`: a ready folder for `pulumi preview --policy-pack DIR`.

The library's own pack (`inference_infra/policy` in site-packages) cannot be handed to Pulumi as it
is: its requirements.txt installs the repository with `-e ..`, which inside site-packages names
site-packages. The written folder holds the pack's manifest, an entry point that builds the
library's policies, and a requirements.txt naming the installed distribution the way it was
installed (its PEP 610 `direct_url.json`: a git URL and commit, a path or a wheel; else the
version), so `pulumi install` in that folder, or `pulumi preview --policy-pack DIR`, installs the
same pack.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from inference_infra.components.cli import app

DISTRIBUTION = "inference-infra"

MANIFEST = """\
# The inference-infra policy pack, written by `inference-infra policy-pack init` ({version}).
# Use it beside your own packs: pulumi preview --policy-pack {folder} --policy-pack-config CONFIG.json
# (one --policy-pack-config per --policy-pack, in the same order). Its virtualenv, once:
# python3 -m venv venv && venv/bin/pip install -r requirements.txt
description: Cost tags, accelerator guardrails and budgets for AI inference infrastructure.
version: {version}
runtime:
  name: python
  options:
    virtualenv: venv
"""

ENTRY = '''\
"""The inference-infra policy pack, from the installed library (written by
`inference-infra policy-pack init`). Policy names, settings and enforcement:
docs/reference.md#policies in the inference-infra repository."""

from pulumi_policy import EnforcementLevel, PolicyPack

from inference_infra.policy.rules import POLICIES

PolicyPack(
    name="inference-infra",
    description="Cost tags, accelerator guardrails and budgets for AI inference infrastructure.",
    policies=list(POLICIES),
    enforcement_level=EnforcementLevel.ADVISORY,  # each policy sets its own level
)
'''


def installed_requirement() -> str:
    """A pip requirement that installs the running inference-infra again, never an editable one."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        from inference_infra.components.errors import InputError

        raise InputError(
            f"{DISTRIBUTION} is not installed in {sys.executable}, so there is no installed pack to point "
            "at; install it (pip install 'inference-infra @ git+<repository URL>') and run again."
        ) from None
    direct = dist.read_text("direct_url.json")
    if not direct:  # from an index
        return f"{DISTRIBUTION}=={dist.version}"
    info = json.loads(direct)
    url = info["url"]
    if vcs := info.get("vcs_info"):
        commit = vcs.get("commit_id") or vcs.get("requested_revision")
        return f"{DISTRIBUTION} @ {vcs['vcs']}+{url}{f'@{commit}' if commit else ''}"
    return f"{DISTRIBUTION} @ {url}"  # a folder (editable or not) or an archive, as a file:// URL


def pinned_note() -> str:
    """What requirements.txt pins, said out loud: a local checkout or archive path only installs on a
    machine that has that path (CI does not)."""
    from importlib.metadata import version

    requirement = installed_requirement()
    note = f"its requirements.txt pins pulumi-policy=={version('pulumi-policy')} and {requirement}"
    if " @ file:" in requirement:
        return (
            f"{note}, a path on this machine (inference-infra is installed from a local folder or archive); "
            "on another machine or in CI replace that line with a version or a git URL."
        )
    return f"{note}."


def requirements_text() -> str:
    from importlib.metadata import version

    return (
        "# What the pack imports: the Policy SDK and inference-infra (its policies need no provider SDK),\n"
        "# as installed where `inference-infra policy-pack init` ran.\n"
        f"pulumi-policy=={version('pulumi-policy')}\n"
        f"{installed_requirement()}\n"
    )


def write_pack(folder: Path, *, force: bool = False) -> list[Path]:
    """Write the pack's three files into folder; returns their paths."""
    from importlib.metadata import version

    from inference_infra.components.errors import InputError

    if folder.exists() and not folder.is_dir():
        raise InputError(f"policy-pack init: DIR {str(folder)!r} is a file; name a folder.")
    files = {
        "PulumiPolicy.yaml": MANIFEST.format(version=version(DISTRIBUTION), folder=folder.name),
        "__main__.py": ENTRY,
        "requirements.txt": requirements_text(),
    }
    existing = [name for name in files if (folder / name).exists()]
    if existing and not force:
        raise InputError(
            f"policy-pack init: {str(folder)!r} already holds {', '.join(existing)}; pass --force to "
            "overwrite them or name another folder."
        )
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
            written.append(folder / name)
    except OSError as e:
        raise InputError(
            f"policy-pack init: cannot write {str(e.filename or folder)!r} ({e.strerror}); name a folder you "
            "may write."
        ) from None
    return written


@app.group("policy-pack")
def policy_pack() -> None:
    """The library's CrossGuard policy pack as a folder Pulumi can run."""


@policy_pack.command("init")
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite the pack's files if DIR already has them.")
def init(folder: Path, force: bool) -> None:
    """Write a policy pack folder (PulumiPolicy.yaml, __main__.py, requirements.txt) that runs the
    library's policies: `pulumi preview --policy-pack DIR`, next to your own packs."""
    write_pack(folder, force=force)
    # The commands are for pasting into a shell: every path quoted for it (a space, '$' or a quote in DIR).
    pack, venv = shlex.quote(str(folder)), shlex.quote(f"{folder}/venv")
    pip, requirements = shlex.quote(f"{folder}/venv/bin/pip"), shlex.quote(f"{folder}/requirements.txt")
    sys.stderr.write(
        f"policy pack written to {folder}/; {pinned_note()} Make its virtualenv once: `python3 -m venv "
        f"{venv} && {pip} install -r {requirements}`; then `pulumi preview --policy-pack {pack}` (one "
        f"--policy-pack-config FILE.json per --policy-pack, in order); offline: "
        f"`inference-infra plan --policy-pack {pack}`\n"
    )
