"""The import directions of issue #22: layers point one way.

- domain (catalog, planner, pricing, serving, monitoring, models, endpoints, fleet, resources, simulate,
  tagging, errors, validation, arguments, images, naming, limits, bounded_yaml, input_size): no cloud
  component, no tool, no infra, no provider SDK at module level;
- cloud components (components/aws, gcp, k8s): gcp imports nothing from aws and aws nothing from
  gcp; no component imports infra;
- tools (components/cli, components/offline_plan) on top: the CLI does not import infra;
- the policy pack (policy/): the domain only; importing it loads no offline-plan module and no
  provider SDK;
- the resource readers, the pack and the CLI load no provider SDK when imported;
- the reference stack (infra/) does not import components.serving (after the fleet work).

The static checks read every module's imports with `ast`: the module-level ones, and the ones
inside functions (deferred imports still point somewhere). The load checks import in a fresh
interpreter and look at sys.modules.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "inference_infra"
FOLDERS = ("components", "infra", "lambdas", "policy")
C = f"{PACKAGE}.components"

DOMAIN_PACKAGES = tuple(
    f"{C}.{name}"
    for name in (
        "catalog",
        "planner",
        "pricing",
        "serving",
        "monitoring",
        "models",
        "endpoints",
        "fleet",
        "resources",
        "simulate",
    )
)
DOMAIN_MODULES = tuple(
    f"{C}.{name}"
    for name in (
        "tagging",
        "errors",
        "validation",
        "arguments",
        "images",
        "advisories",
        "naming",
        "limits",
        "units",
        "bounded_yaml",
        "input_size",
        "function_source",
        "_lazy",
        "__init__",
    )
)
CLOUDS = (f"{C}.aws", f"{C}.gcp", f"{C}.k8s")
TOOLS = (f"{C}.cli", f"{C}.offline_plan")
HARNESS = f"{C}.offline_plan"
INFRA = f"{PACKAGE}.infra"
POLICY = f"{PACKAGE}.policy"
PROVIDER_SDKS = ("pulumi_aws", "pulumi_gcp", "pulumi_kubernetes")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module it imports (a package's submodule when `from package import submodule`)
    line: int
    deferred: bool  # inside a function: runs when called, not when the module is imported

    def __str__(self) -> str:
        where = " (inside a function)" if self.deferred else ""
        return f"{self.module}:{self.line} imports {self.target}{where}"


def _within(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@cache
def modules() -> dict[str, Path]:
    """Every module of the library by its installed name: components/x.py is inference_infra.components.x."""
    found = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join((PACKAGE, *parts))
            found[name.removesuffix(".__init__") if parts[-1] == "__init__" else name] = path
    return found


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    package = base if _is_package(module) else base[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module, self.depth, self.found = module, 0, []

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function  # noqa: N815

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append(Import(self.module, alias.name, node.lineno, self.depth > 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = _resolve(self.module, node)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            target = sub if sub in modules() else base
            self.found.append(Import(self.module, target, node.lineno, self.depth > 0))


@cache
def imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for name, path in modules().items():
        visitor = _Imports(name)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(visitor.found)
    return tuple(found)


def violations(
    source: Callable[[str], bool], target: Callable[[str], bool], *, deferred: bool = True
) -> list[str]:
    """Every import from a module `source` accepts of a module `target` accepts (deferred ones too
    unless deferred=False)."""
    return [
        str(i) for i in imports() if source(i.module) and target(i.target) and (deferred or not i.deferred)
    ]


def is_domain(name: str) -> bool:
    return _within(name, *DOMAIN_PACKAGES, *DOMAIN_MODULES) or name == C


def is_component(name: str) -> bool:
    return _within(name, *CLOUDS)


def is_library(name: str) -> bool:
    return _within(name, PACKAGE)


def is_provider_sdk(name: str) -> bool:
    return _within(name, *PROVIDER_SDKS)


def loaded_by(*statements: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running the import statements."""
    code = "; ".join([*statements, "import json, sys", "print(json.dumps(sorted(sys.modules)))"])
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


# --- the map itself ------------------------------------------------------------------------------


def test_layers_every_components_module_has_a_layer():
    """A new top-level package or module under components/ must be placed in a layer here."""
    placed = (*DOMAIN_PACKAGES, *DOMAIN_MODULES, *CLOUDS, *TOOLS)
    unplaced = [m for m in modules() if _within(m, C) and m != C and not _within(m, *placed)]
    assert unplaced == []


def test_layers_scan_sees_deferred_and_relative_imports():
    cli = [i for i in imports() if i.module == f"{C}.cli.plan" and i.target == HARNESS]
    assert cli
    assert all(i.deferred for i in cli)
    watchdog = f"{PACKAGE}.lambdas.idle_gpu_watchdog.watchdog"
    assert any(
        i.target == f"{PACKAGE}.lambdas.idle_gpu_watchdog.actions" for i in imports() if i.module == watchdog
    )


# --- the policy pack -----------------------------------------------------------------------------


def test_policy_pack_imports_only_the_domain():
    found = violations(
        lambda m: _within(m, POLICY), lambda t: is_library(t) and not is_domain(t) and not _within(t, POLICY)
    )
    assert found == [], "the policy pack uses the domain only"


def test_policy_pack_imports_no_provider_sdk():
    assert violations(lambda m: _within(m, POLICY), is_provider_sdk, deferred=False) == []


# What `pulumi preview --policy-pack policy` runs: the rules, and the pack's entry point (with
# PolicyPack stubbed: the real one starts the analyzer server and never returns).
PACK_ENTRY = (
    "import pulumi_policy",
    "pulumi_policy.PolicyPack = lambda **kwargs: None",
    "import runpy",
    f"runpy.run_path({str(ROOT / 'policy' / '__main__.py')!r})",
)


@pytest.mark.parametrize(
    "statements", [("import inference_infra.policy.rules",), PACK_ENTRY], ids=["rules", "__main__"]
)
def test_policy_pack_loads_no_offline_plan_and_no_provider_sdk(statements):
    loaded = loaded_by(*statements)
    assert f"{POLICY}.rules" in loaded
    assert sorted(m for m in loaded if _within(m, HARNESS)) == []
    assert sorted(m for m in loaded if is_provider_sdk(m)) == []


# --- components ----------------------------------------------------------------------------------


def test_layers_no_component_imports_infra():
    assert violations(lambda m: _within(m, C), lambda t: _within(t, INFRA)) == []


def test_layers_gcp_imports_nothing_from_aws():
    assert violations(lambda m: _within(m, f"{C}.gcp"), lambda t: _within(t, f"{C}.aws")) == []


def test_layers_aws_imports_nothing_from_gcp():
    assert violations(lambda m: _within(m, f"{C}.aws"), lambda t: _within(t, f"{C}.gcp")) == []


def test_layers_domain_imports_no_component_tool_or_infra():
    assert violations(is_domain, lambda t: is_component(t) or _within(t, *TOOLS, INFRA)) == []


def test_layers_domain_imports_no_provider_sdk_at_module_level():
    assert violations(is_domain, is_provider_sdk, deferred=False) == []


# --- tools ---------------------------------------------------------------------------------------


def test_layers_cli_does_not_import_infra():
    assert violations(lambda m: _within(m, f"{C}.cli"), lambda t: _within(t, INFRA)) == []


def _cli_modules() -> Iterator[str]:
    return (m for m in modules() if _within(m, f"{C}.cli"))


def _reader_modules() -> Iterator[str]:
    return (m for m in modules() if _within(m, f"{C}.resources"))


def test_layers_readers_and_cli_import_no_provider_sdk_at_module_level():
    readers_or_cli = {*_cli_modules(), *_reader_modules()}
    assert violations(lambda m: m in readers_or_cli, is_provider_sdk, deferred=False) == []


def test_layers_readers_and_cli_load_no_provider_sdk():
    importable = {*_reader_modules(), *_cli_modules()} - {f"{C}.cli.__main__"}  # that one runs the CLI
    loaded = loaded_by(*(f"import {m}" for m in sorted(importable)))
    assert sorted(m for m in loaded if is_provider_sdk(m)) == []


# --- the reference stack -------------------------------------------------------------------------


def test_layers_infra_does_not_import_serving():
    assert violations(lambda m: _within(m, INFRA), lambda t: _within(t, f"{C}.serving")) == []
