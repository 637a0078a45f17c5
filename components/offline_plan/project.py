"""Reading a Pulumi project: Pulumi.yaml, Pulumi.<stack>.yaml, and their config.

Both files are read as YAML 1.2 (core schema), as Pulumi reads them: `off` and
`yes` stay strings. The project's `config:` declarations apply as Pulumi applies
them: a default fills a key the stack leaves unset, a declared type is checked,
and a declared key with no default must be set. Config reaches the program the
way the engine hands it over: every key fully qualified (`project:key`), every
value a string, objects and lists as JSON. Secure values cannot be decrypted
offline; they become a placeholder and are marked secret, so the program still
runs and the value is never printed. A key in a provider's namespace (`aws:`,
`gcp:`, `kubernetes:`) that the installed provider does not define is a warning
naming the nearest key it does.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from inference_infra.components import bounded_yaml, input_size
from inference_infra.components.errors import InputError, close_matches, did_you_mean
from inference_infra.components.offline_plan import yaml12

SECRET_PLACEHOLDER = "offline-plan-secret-placeholder"


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    program_dir: Path  # the folder the program runs in (its cwd), as Pulumi's getPwdMain gives it
    runtime: str
    defaults: Mapping[str, Any] = field(default_factory=dict)  # project-level config defaults
    declared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # key -> {type, default, ...}
    entry: str = "."  # what the language host runs in program_dir: "." (its __main__.py) or a file
    options: Mapping[str, Any] = field(default_factory=dict)  # runtime.options of Pulumi.yaml

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.root.glob("Pulumi.*.yaml"))

    def install_layout(self) -> InstallLayout:
        """Where `pulumi install` makes the virtualenv and which requirements file it reads."""
        return install_layout(self.root, self.program_dir, self.options)


@dataclass(frozen=True)
class InstallLayout:
    """What `pulumi install` does for a Python project, as Pulumi v3.259.0 does it (commit
    0ac56e876614aedf12771d73ef7e80959b8a6fd4):

    - pkg/engine/project.go:45-71 (getPwdMain): `main` is joined to the project root; a folder
      becomes the program's working directory (entry "."), a file's folder does (entry its name).
    - pkg/cmd/pulumi/install/install.go:178: the language host gets ProgramInfo(root, pwd, main).
    - sdk/python/cmd/pulumi-language-python/main.go:1369: InstallDependencies runs in
      `req.Info.ProgramDirectory` (the pwd above).
    - sdk/python/toolchain/pip.go:543-551: requirements.txt is read from that folder (no file: nothing
      is installed), and pip.go:499 runs `pip install -r requirements.txt` with that folder as its
      cwd, so a path inside the file (`-e ..`) is read from there.
    - sdk/python/toolchain/toolchain.go:140-167 (ResolveToolchain): with no `toolchain` option, a
      uv.lock or poetry.lock in the program's folder or above it picks uv or poetry, else pip; pip's
      `virtualenv` is relative to the project root (the folder of Pulumi.yaml; pip.go:583-591).
    """

    toolchain: str  # pip, poetry or uv
    virtualenv: Path | None  # None: Pulumi uses the Python on PATH
    requirements: Path  # the file pip reads (may not exist)
    pip_cwd: Path  # where pip runs, so where relative paths in the requirements resolve

    def problems(self, root: Path) -> list[str]:
        """Why `pulumi up` could not run the program as planned: the virtualenv Pulumi.yaml names is
        not there (the plan ran in its own Python instead), or `pulumi install` would build one that
        cannot run it (a requirements.txt above the program's folder, where pip never looks)."""
        venv_problems = self._virtualenv_problems()
        if self.toolchain != "pip" or self.requirements.is_file():
            return venv_problems
        folder = self.requirements.parent
        above = [f for f in folder.parents if f == root or root in f.parents]
        found = next((f / "requirements.txt" for f in above if (f / "requirements.txt").is_file()), None)
        if found is None:
            return venv_problems
        here = folder.relative_to(root)
        return [
            *venv_problems,
            f"`pulumi install` (pip toolchain) reads requirements.txt from the program's folder {here}/, "
            f"not {found.relative_to(root)}, so it would install nothing into the virtualenv; put the "
            f"requirements in {here}/requirements.txt (a path in it is read from that folder)",
        ]

    def _virtualenv_problems(self) -> list[str]:
        if self.virtualenv is None or self.toolchain == "poetry":
            return []
        python = self.virtualenv / "bin" / "python"
        if python.is_file():
            return []
        state = "does not exist" if not self.virtualenv.exists() else "is not a virtualenv (no bin/python)"
        return [
            f"runtime.options.virtualenv {self.virtualenv} {state}, so the plan ran the program in "
            f"{sys.executable}; `pulumi up` would refuse to run it. Make it: `python3 -m venv "
            f"{self.virtualenv} && {python} -m pip install -r {self.requirements}`"
        ]


def install_layout(root: Path, program_dir: Path, options: Mapping[str, Any]) -> InstallLayout:
    toolchain = str(options.get("toolchain") or "")
    if not toolchain:  # ResolveToolchain's Auto: searchup from the program's folder
        folders = (program_dir, *program_dir.parents)
        locks = (("uv.lock", "uv"), ("poetry.lock", "poetry"))
        toolchain = next((tool for lock, tool in locks if any((f / lock).is_file() for f in folders)), "pip")
    venv = options.get("virtualenv")
    venv_path = None if not venv else (Path(venv) if Path(venv).is_absolute() else root / str(venv))
    return InstallLayout(
        toolchain=toolchain,
        virtualenv=venv_path,
        requirements=program_dir / "requirements.txt",
        pip_cwd=program_dir,
    )


# Set in the plan that `plan` starts inside a project's virtualenv, so it never starts another.
IN_VIRTUALENV = "INFERENCE_INFRA_PLAN_IN_VIRTUALENV"


def program_python(project: Project) -> Path | None:
    """The virtualenv's Python that runs the program when Pulumi.yaml names one and it is not the
    Python running now (None: run here). As pulumi-language-python v3.259.0 does it
    (sdk/python/toolchain/pip.go): the path is relative to the project root (resolveVirtualEnvironmentPath,
    583-591), it must hold bin/python (IsVirtualEnv, 293; a folder that does not is ValidateVenv's
    error, 241-245: here the plan still runs, in this Python, with a warning saying so), and the
    program runs under that python with the virtualenv activated (Command, 178-193; toolchain.go
    ActivateVirtualEnv)."""
    layout = project.install_layout()
    venv = layout.virtualenv
    if venv is None or layout.toolchain == "poetry" or os.environ.get(IN_VIRTUALENV):
        return None
    python = venv / "bin" / "python"
    if Path(sys.prefix).resolve() == venv.resolve() or not python.is_file():
        return None  # not made yet: the plan runs here and warns (InstallLayout.problems)
    return python


@dataclass(frozen=True)
class StackConfig:
    name: str
    path: Path
    values: Mapping[str, str]  # fully qualified key -> engine string
    secret_keys: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def _read_yaml(path: Path, what: str) -> Any:
    """The YAML document of a project or stack file (`what`), refused unread when over its bound."""
    try:
        text = input_size.read_text(path, input_size.MAX_PROJECT_FILE_BYTES, what)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}.") from None
    except UnicodeDecodeError as e:
        raise InputError(
            f"{path.name} is not UTF-8 text (byte {e.start + 1} cannot be decoded); Pulumi reads its files "
            "as UTF-8."
        ) from None
    try:
        return yaml12.load(text)
    except bounded_yaml.ExcessiveYaml as e:
        raise InputError(f"{path.name} cannot be read: {e}. Fix the file and run again.") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(
            f"{path.name} is not valid YAML{where}: {problem}. Fix the file and run again."
        ) from None


def load_project(cwd: Path) -> Project:
    root = cwd.resolve()
    path = root / "Pulumi.yaml"
    if not path.is_file():
        alt = root / "Pulumi.yml"
        if alt.is_file():
            path = alt
        else:
            raise InputError(
                f"no Pulumi.yaml in {root}: plan runs a Pulumi project; pass its folder with --cwd DIR."
            )
    data = _read_yaml(path, "project file")
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        raise InputError(
            f"{path.name} must be a mapping with a 'name' (the project name); got {type(data).__name__}."
        )
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, Mapping) else runtime
    if runtime_name != "python":
        raise InputError(
            f"{path.name} runtime is {runtime_name!r}; plan runs Python programs only (runtime: python)."
        )
    # Pulumi's getPwdMain (pkg/engine/project.go:45-71 at v3.259.0): main is relative to the root;
    # a folder is the program's cwd and runs its __main__.py, a file runs in its own folder.
    main = data.get("main") or "."
    target = (root / str(main)).resolve()
    if target.is_file():
        program_dir, entry = target.parent, target.name
    else:
        program_dir, entry = target, "."
        if not (program_dir / "__main__.py").is_file():
            raise InputError(
                f"{path.name} main {main!r} has no __main__.py (looked in {program_dir}); "
                "main must name the folder of the Python program or its file."
            )
    defaults: dict[str, Any] = {}
    declared: dict[str, Mapping[str, Any]] = {}
    for key, spec in (data.get("config") or {}).items():
        qualified = key if ":" in key else f"{data['name']}:{key}"
        if isinstance(spec, Mapping) and ("default" in spec or "value" in spec):
            defaults[qualified] = spec.get("value", spec.get("default"))
        elif not isinstance(spec, Mapping):
            defaults[qualified] = spec
        if isinstance(spec, Mapping):
            if spec.get("type") is not None and spec["type"] not in _TYPES:
                raise InputError(
                    f"{path.name}: config {key!r} type {spec['type']!r} is not one Pulumi knows; "
                    f"allowed: {', '.join(_TYPES)}."
                )
            declared[qualified] = spec
    return Project(
        root=root,
        name=data["name"],
        program_dir=program_dir,
        runtime="python",
        defaults=defaults,
        declared=declared,
        entry=entry,
        options=dict(runtime.get("options") or {}) if isinstance(runtime, Mapping) else {},
    )


# A stack's name as Pulumi allows it: letters, digits, '-', '_' and '.'; it names the stack's file,
# so it never leaves the project's folder.
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def stack_name(project: Project, stack: str) -> str:
    """The stack's own name from what `--stack` was given, as `pulumi --stack` takes it: `name`,
    `org/name` or `org/project/name` (pulumi/pulumi v3.259.0, pkg/backend/httpstate/backend.go:1107,
    ParseStackReference: a missing org is the default one, a missing project the current one); the
    stack file is named by the name alone (sdk/go/common/workspace/paths.go:87, ProjectStackPath)."""
    parts = stack.split("/")
    bad = len(parts) > 3 or not all(_STACK_NAME.fullmatch(part) and part.strip(".") for part in parts)
    if bad:
        raise InputError(
            f"--stack {stack!r} is not a stack name: letters, digits, '-', '_' and '.', optionally "
            "qualified as org/name or org/project/name; its file is Pulumi.<name>.yaml in the project's "
            "folder."
        )
    if len(parts) == 3 and parts[1] != project.name:
        raise InputError(
            f"--stack {stack!r} names a stack of project {parts[1]!r}, but the Pulumi.yaml in "
            f"{project.root} is project {project.name!r}; pass {parts[0]}/{project.name}/{parts[2]} or "
            f"just {parts[2]}, or --cwd the other project's folder."
        )
    return parts[-1]


def load_stack(project: Project, stack: str) -> StackConfig:
    stack = stack_name(project, stack)
    path = project.root / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = project.stacks()
        hint = did_you_mean(stack, known)
        listed = ", ".join(known) if known else "none (no Pulumi.<stack>.yaml files)"
        raise InputError(
            f"unknown stack {stack!r}{hint}: there is no {path.name} in {project.root}; "
            f"stacks here: {listed}."
        )
    data = _read_yaml(path, "stack file") or {}
    if not isinstance(data, Mapping):
        raise InputError(
            f"{path.name} must be a mapping with a 'config:' section; got {type(data).__name__}."
        )
    raw = data.get("config") or {}
    if not isinstance(raw, Mapping):
        raise InputError(
            f"{path.name}: 'config' must be a mapping of keys to values; got {type(raw).__name__}."
        )
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    given = {(k if ":" in k else f"{project.name}:{k}"): v for k, v in raw.items()}
    _check_declared(project, given, path)
    merged = {**project.defaults, **given}
    for key, value in merged.items():
        encoded, secret = _engine_string(value)
        values[key] = encoded
        if secret or (project.declared.get(key) or {}).get("secret") is True:
            secret_keys.append(key)
    warnings = tuple(w for key in given if (w := _provider_key_warning(key, path)))
    return StackConfig(
        name=stack, path=path, values=values, secret_keys=tuple(secret_keys), warnings=warnings
    )


_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list}


def _check_declared(project: Project, given: Mapping[str, Any], path: Path) -> None:
    """Pulumi's checks of the project's config declarations against a stack's values."""
    problems = []
    for key, spec in project.declared.items():
        if key not in given:
            if "default" not in spec and "value" not in spec and spec.get("type") is not None:
                problems.append(f"{key} is declared in Pulumi.yaml with no default and is not set")
            continue
        value, kind = given[key], spec.get("type")
        if kind is None or _is_secure(value):
            continue
        if not _of_type(value, kind):
            problems.append(f"{key} {value!r} must be of type {kind} (declared in Pulumi.yaml)")
        elif kind == "array" and isinstance(spec.get("items"), Mapping):
            item_kind = str(spec["items"].get("type"))
            if item_kind in _TYPES and not all(_of_type(v, item_kind) for v in value):
                problems.append(f"{key} {value!r} must be an array of {item_kind}")
    if problems:
        raise InputError(f"{path.name}: {'; '.join(problems)}.")


def _of_type(value: Any, kind: str) -> bool:
    """Pulumi's own test (sdk/go/common/workspace/project.go, ValidateConfigValue): `pulumi config
    set n 2` writes the string "2", so an integer may be a string that parses as one (or a whole
    float), and a boolean may be the string "true" or "false"."""
    if kind == "integer":
        if isinstance(value, str):
            return re.fullmatch(r"[+-]?[0-9]+", value) is not None
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    return isinstance(value, _TYPES[kind])


_PROVIDERS = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}


# The keyword parameters of a generated `ProviderArgs.__init__(__self__, *, name: type = None, ...)`.
_PROVIDER_ARGS = re.compile(r"^class ProviderArgs:\n\s+def __init__\(__self__, \*,\n(.*?)\):$", re.M | re.S)
_PARAMETER = re.compile(r"^\s+([a-z_][a-z0-9_]*):", re.M)


@functools.cache
def provider_config_keys(namespace: str) -> frozenset[str] | None:
    """The config keys the installed provider SDK defines (its ProviderArgs, camelCase); None if absent.

    Read from the SDK's generated `provider.py` when the SDK is not imported yet: importing pulumi_aws
    or pulumi_gcp takes a tenth of a second or more, which a stack that is refused as it is read (a
    count over its bound) should not wait for. A file that does not read as generated is imported."""
    name = _PROVIDERS.get(namespace)
    if name is None:
        return None
    if name not in sys.modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.origin is None:
            return None
        source = Path(spec.origin).with_name("provider.py")
        found = _PROVIDER_ARGS.search(source.read_text()) if source.is_file() else None
        if found and (params := _PARAMETER.findall(found.group(1))):
            return frozenset(_camel(p) for p in params)
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    params = inspect.signature(module.ProviderArgs.__init__).parameters
    return frozenset(_camel(p) for p in params if p not in {"self", "__self__"})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _provider_key_warning(key: str, path: Path) -> str:
    namespace, _, name = key.partition(":")
    known = provider_config_keys(namespace) if re.fullmatch(r"[a-z]+", namespace) else None
    if known is None or name in known:
        return ""
    near = close_matches(name, known, limit=1)
    hint = f"; did you mean {namespace}:{near[0]}?" if near else ""
    return (
        f"{path.name}: {key} is not a setting of the installed {_PROVIDERS[namespace]} provider, "
        f"which ignores it{hint}"
    )


def _engine_string(value: Any) -> tuple[str, bool]:
    """A config value as the engine passes it to the program, and whether it is secret."""
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, str):
        return value, False
    if isinstance(value, bool):
        return ("true" if value else "false"), False
    if isinstance(value, (int, float)):
        return str(value), False
    if value is None:
        return "", False
    resolved, secret = _resolve_secure(value)
    return json.dumps(resolved), secret


def _is_secure(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def _resolve_secure(value: Any) -> tuple[Any, bool]:
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, Mapping):
        items = {k: _resolve_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        items = [_resolve_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False
