"""The offline plan: run a stack under Pulumi's mock runtime, price it, check it.

No engine, cloud account or credentials: `plan(cwd, stack)` reads the project
and stack files, runs the program in-process, captures every resource with
the inputs the engine would see, prices accelerators from the catalog and
evaluates the policy pack over the result.
"""

from __future__ import annotations

import gc
import inspect
import os
import re
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inference_infra.components.errors import ConfigError, InputError, did_you_mean
from inference_infra.components.offline_plan.model import Capture, CapturedResource, scrub
from inference_infra.components.offline_plan.policy import (
    PolicyReport,
    evaluate_packs,
    pack_allowed,
    prepare_pack,
)
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.offline_plan.project import Project, load_project, load_stack, stack_name
from inference_infra.components.offline_plan.report import PlanResult, render_table
from inference_infra.components.planner.allowed import stack_pack_config
from inference_infra.components.pricing import CostReport

__all__ = [
    "Capture",
    "CapturedResource",
    "CostReport",
    "DataSourceError",
    "PlanResult",
    "PolicyReport",
    "ProgramError",
    "capture_stack",
    "plan",
    "render_table",
]

DEFAULT_POLICY_PACK = Path(__file__).resolve().parents[2] / "policy"


class ProgramError(InputError):
    """The stack program rejected its input or failed while running (CLI exit code 2)."""

    exit_code = 2


class DataSourceError(ProgramError):
    """The program failed after calling a data source with no offline answer (CLI exit code 4)."""

    exit_code = 4


def plan(
    cwd: Path,
    stack: str,
    *,
    policy_pack: Path | list[Path] | None = None,
    policy_config: Path | list[Path] | None = None,
) -> PlanResult:
    """Plan a stack offline. policy_pack: one pack folder or several; by default the project's
    own `policy/` when it holds PulumiPolicy.yaml, else the library's pack. policy_config: one
    config per pack, paired in order (see `pair_policy_configs`)."""
    project = load_project(cwd)
    packs = [policy_pack] if isinstance(policy_pack, Path) else list(policy_pack or [])
    configs = [policy_config] if isinstance(policy_config, Path) else list(policy_config or [])
    if not packs:
        own = project.root / "policy"
        if (own / "PulumiPolicy.yaml").is_file():
            packs = [own]
        elif (DEFAULT_POLICY_PACK / "PulumiPolicy.yaml").is_file():
            packs = [DEFAULT_POLICY_PACK]
    stack = stack_name(project, stack)  # org/name and org/project/name as Pulumi takes them
    runs = pair_policy_configs(project, stack, packs, configs)
    prepared = [prepare_pack(pack, config) for pack, config in runs]  # a bad config fails before the program
    with _fewer_collections():
        with stack_pack_config(pack_allowed(prepared)):  # the fleets' picks keep to the stack's own gate
            capture = _capture(project, stack)
        return PlanResult(capture, price_capture(capture), evaluate_packs(capture, runs, prepared))


# The youngest generation's allocation threshold while a plan runs (CPython's default is 700).
PLAN_GC_THRESHOLD = 20_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Fewer garbage collections while a plan runs. A plan allocates millions of short-lived objects
    (the provider modules' classes on first use, futures, protobuf values) over a heap of several
    hundred thousand long-lived ones, and each older-generation collection walks the whole heap:
    with CPython's default thresholds collection took about a third of the prod stack's first plan
    (2.0 of 6.4 s of CPU, 2026-12-02). What exists before the plan is frozen (never garbage for
    it; gc.freeze), the young generation collects every 20,000 allocations instead of 700, and both
    are restored after, so a process that plans many programs (the tests) frees what each left."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], PLAN_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def pair_policy_configs(
    project: Project, stack: str, packs: list[Path], configs: list[Path]
) -> list[tuple[Path, Path | None]]:
    """Each pack with its config, as `pulumi preview` pairs `--policy-pack-config` with `--policy-pack`:
    the first config with the first pack, and so on, and then there must be one config per pack
    (pulumi/pulumi v3.259.0, pkg/cmd/pulumi/operations/up.go:1014-1030, validatePolicyPackConfig).
    With no config given, a pack inside the project's own folder (the reference project's policy/)
    uses its `config/<stack>.json` when there is one; any other pack, such as the library's pack
    planning someone else's project, runs with its defaults."""
    if configs and len(configs) != len(packs):
        raise InputError(
            f"{len(configs)} --policy-config for {len(packs)} policy pack(s) "
            f"({', '.join(str(p) for p in packs) or 'none'}): give one --policy-config per --policy-pack, "
            "in the same order, or none (Pulumi pairs --policy-pack-config with --policy-pack the same way)."
        )
    if configs:
        return list(zip(packs, configs, strict=True))
    return [(pack, _default_policy_config(project, pack, stack)) for pack in packs]


def capture_stack(cwd: Path, stack: str) -> Capture:
    """Run a stack's program offline and capture what it registers, as `plan` does, without pricing
    it or evaluating policies (the monitoring commands read what a stack deploys from it)."""
    project = load_project(cwd)
    return _capture(project, stack_name(project, stack))


def _capture(project: Project, stack: str) -> Capture:
    from inference_infra.components.offline_plan.runtime import run_program

    stack_config = load_stack(project, stack)
    try:
        capture = run_program(
            project.program_dir,
            project=project.name,
            stack=stack,
            config=stack_config.values,
            secret_keys=list(stack_config.secret_keys),
            root=project.root,
            entry=project.entry,
        )
    except Exception as e:  # the program's own failure, reported as one paragraph
        partial = getattr(e, "partial_capture", None)
        unanswered = getattr(partial, "unmocked_invokes", [])
        error = _program_error(e, project.program_dir, stack_config.path.name)
        secrets = partial.secrets() if partial is not None else set()
        secrets |= {stack_config.values[k] for k in stack_config.secret_keys if stack_config.values.get(k)}
        if secrets:
            error = type(error)(scrub(str(error), secrets), getattr(error, "problems", ()))
        if unanswered:
            raise DataSourceError(
                f"{error} The program called data source(s) with no offline answer: "
                f"{', '.join(unanswered)}; their made-up result is the likely cause. Mock them in a "
                "test, or pass the value in through stack config."
            ) from e
        raise error from e
    capture.log.extend(("warning", w) for w in stack_config.warnings)
    capture.log.extend(
        ("warning", f"Pulumi.yaml: {w}") for w in project.install_layout().problems(project.root)
    )
    if errors := capture.errors():
        text = scrub(" ".join(errors), capture.secrets())
        raise ProgramError(f"{stack_config.path.name}: the program logged errors: {text}")
    return capture


def _default_policy_config(project: Project, pack: Path, stack: str) -> Path | None:
    """A pack's config/<stack>.json, for a pack that belongs to the project being planned."""
    pack = pack.resolve()
    if pack != project.root and project.root not in pack.parents:
        return None
    path = pack / "config" / f"{stack}.json"
    return path if path.is_file() else None


def _program_error(error: Exception, program_dir: Path, config_name: str) -> ProgramError:
    """One paragraph naming where the fault is: the stack file for config errors, else the
    program's file and line (the innermost frame in the program's folder)."""
    import pulumi

    if isinstance(error, ProgramError):
        return error
    if isinstance(error, (pulumi.ConfigMissingError, pulumi.ConfigTypeError)):
        return ProgramError(f"{config_name}: {error}")
    # A program may re-raise an input error as pulumi.RunError (for a clean `pulumi up`), as the
    # reference stack does; the error it wraps says what and where.
    cause = error.__context__ if isinstance(error, pulumi.RunError) else None
    if isinstance(cause, InputError):
        error = cause
    if isinstance(error, ConfigError):  # names the stack file and its keys: no program line
        text = str(error)
        return ProgramError(text if config_name in text else f"{config_name}: {text}", error.problems)
    from inference_infra.components.offline_plan.runtime import is_program_file

    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if is_program_file(f.filename, program_dir)
    ]
    where = (
        f"{os.path.relpath(frames[-1].filename, program_dir.parent)}:{frames[-1].lineno}" if frames else ""
    )
    if isinstance(error, InputError):
        return ProgramError(f"{where or config_name}: {error}", getattr(error, "problems", ()))
    if isinstance(error, pulumi.RunError):
        return ProgramError(f"{where or config_name}: {error}")
    if isinstance(error, ModuleNotFoundError) and error.name:
        return ProgramError(_missing_module(error.name, where, program_dir))
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        # Compiling fails before any frame of the program runs: the error itself says where.
        path = os.path.abspath(error.filename)
        shown = os.path.relpath(path, program_dir.parent) if Path(path).is_relative_to(program_dir) else path
        return ProgramError(
            f"{shown}:{error.lineno}: {type(error).__name__}: {error.msg}; the program does not compile."
        )
    hint = _keyword_hint(error) if isinstance(error, TypeError) else ""
    return ProgramError(
        f"the stack program failed{f' at {where}' if where else ''}: {type(error).__name__}: {error}"
        f"{hint}. Set INFERENCE_INFRA_DEBUG=1 to see the full traceback."
    )


_UNEXPECTED_KEYWORD = re.compile(r"(?P<callee>[\w.]+)\(\) got an unexpected keyword argument '(?P<word>\w+)'")


def _keyword_hint(error: TypeError) -> str:
    """' (did you mean x?)' for a mistyped keyword argument (`GpuFleetArgs(instance_typ=...)`, or a
    provider resource's `_internal_init`), from the parameters of the callable the message names,
    looked up where the call was made (the innermost frame: its locals, its globals, the modules
    those import, `self`'s class). '' when the callable cannot be found."""
    match = _UNEXPECTED_KEYWORD.search(str(error))
    tb = error.__traceback__
    if match is None or tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    first, *rest = match.group("callee").split(".")
    scopes: list[Any] = [frame.f_locals, frame.f_globals]
    scopes += [vars(m) for m in frame.f_globals.values() if inspect.ismodule(m)]
    found = next((scope[first] for scope in scopes if first in scope), None)
    if found is None and "self" in frame.f_locals:
        found = next((c for c in type(frame.f_locals["self"]).__mro__ if c.__name__ == first), None)
    for attribute in rest:
        found = getattr(found, attribute, None)
    try:
        parameters = inspect.signature(found).parameters.values() if callable(found) else []
    except (TypeError, ValueError):
        return ""
    names = [
        p.name
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("self", "cls")
    ]
    return did_you_mean(match.group("word"), names)


def _missing_module(module: str, where: str, program_dir: Path) -> str:
    """A package the program imports but this Python lacks, with the line that installs it."""
    import importlib.metadata
    import importlib.util
    import sys

    top = module.split(".")[0]
    at = f"{where}: " if where else ""
    if top != module and importlib.util.find_spec(top) is not None:
        try:
            version = f" {importlib.metadata.version(top)}"
        except importlib.metadata.PackageNotFoundError:
            version = ""
        return (
            f"{at}the program imports {module}, which the installed {top}{version} does not have; "
            f"the program likely needs another version of {top} (see its requirements)."
        )
    requirement, listed_in = _requirement_for(top, program_dir)
    where = (
        f"{at}the program imports {top}, which is not installed in the Python running the plan "
        f"({sys.executable})"
    )
    after = (
        " and plan again; the plan runs the program inside its own Python (the virtualenv Pulumi.yaml "
        "names, when it names one), so every package the program imports must be installed beside "
        "inference-infra."
    )
    if requirement:
        install = f"`{sys.executable} -m pip install '{requirement}'`"
        return f"{where} ({listed_in} lists {requirement}). Install it with {install}{after}"
    if top in _EXTRAS:  # a provider SDK the library installs, at the versions it supports
        extra = _EXTRAS[top]
        return (
            f"{where}. Install it with inference-infra's extra, which pins the versions the components "
            f"support: `{sys.executable} -m pip install 'inference-infra[{extra}]'` (or add the extra to the "
            f"inference-infra line of your requirements.txt){after}"
        )
    return (
        f"{where}, and no requirements.txt beside the program lists it. Add it with a pinned version "
        f"to {program_dir / 'requirements.txt'} (where `pulumi install` reads it) and install that: "
        f"`{sys.executable} -m pip install -r {program_dir / 'requirements.txt'}`{after}"
    )


# Modules the library's extras install (pyproject.toml [project.optional-dependencies]).
_EXTRAS = {
    "pulumi_aws": "aws",
    "boto3": "aws",
    "pulumi_gcp": "gcp",
    "pulumi_kubernetes": "k8s",
    "pulumi_random": "k8s",
}


def _requirement_for(module: str, program_dir: Path) -> tuple[str | None, str | None]:
    """The requirements.txt line (in the program's folder or its parents up to the project) naming
    the distribution that provides `module` (names compared as pip does: case, '-', '_', '.')."""
    import re

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    for folder in (program_dir, *program_dir.parents[:2]):
        path = folder / "requirements.txt"
        if not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            text = line.split("#", 1)[0].strip()
            name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text)
            if name and norm(name.group(0)) == norm(module):
                return text, path.name
    return None, None
