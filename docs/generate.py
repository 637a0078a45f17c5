"""Rewrites every file generated from the code or from committed data, in one run (`make generate`).

    python docs/generate.py           # rewrite what is stale (`make generate`; `make docs` is an alias)
    python docs/generate.py --check   # exit 1, naming each stale file, when a rewrite would change one

What it writes, in this order:

1. `components/catalog/data/generated/*.csv`: the price and spot rows rebuilt from the committed
   copies of SkyPilot's and Cyclenerd's tables (`components/catalog/build.py`, run as a file in its
   own process, so the rebuild never loads the tables it rewrites);
2. `infra/config.schema.json`: the stack file's JSON Schema (`python -m inference_infra.infra.config`);
3. the generated sections of `docs/reference.md`. A section sits between
   `<!-- BEGIN GENERATED <name> ... -->` and `<!-- END GENERATED <name> -->`:

   - `cli`: every `inference-infra` command, its usage and its options, as `--help` prints them;
   - `alerts`: every alert of the rule files (group, severity, category, when it fires at the
     defaults), from the `Alert` values of components/monitoring;
   - `policies`: the policy pack's policies (kind, enforcement, severity, description), their config
     keys, and what the reference stacks' policy configs set;
   - `config`: the stack config keys, from the stack file's JSON Schema only, so it follows the schema
     whatever produces it.

   Everything outside the markers is written by hand.

tests/docs/test_generate.py fails when any of these is stale.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference.md"
_BEGIN = re.compile(r"<!-- BEGIN GENERATED (?P<name>[a-z-]+)[^>]*-->\n")
_END = "<!-- END GENERATED {name} -->"


def render(text: str, sections: Mapping[str, Callable[[], str]] | None = None) -> str:
    """The document with every generated section rewritten (sections: name -> its text)."""
    sections = SECTIONS if sections is None else sections
    out: list[str] = []
    pos = 0
    found: list[str] = []
    for begin in _BEGIN.finditer(text):
        if begin.start() < pos:
            continue
        name = begin.group("name")
        end = text.find(_END.format(name=name), begin.end())
        if name not in sections or end < 0:
            raise SystemExit(f"docs/generate.py: section {name!r} has no generator or no end marker")
        out += [text[pos : begin.end()], sections[name]().rstrip("\n") + "\n"]
        pos = end
        found.append(name)
    if missing := sorted(set(sections) - set(found)):
        raise SystemExit(f"docs/generate.py: {REFERENCE.name} lacks the sections {missing}")
    return "".join(out) + text[pos:]


# --- the stack config, from its JSON Schema -------------------------------------------------------


def stack_schema_text() -> str:
    """The stack file's JSON Schema, as `python -m inference_infra.infra.config` prints it (the text of
    infra/config.schema.json)."""
    run = subprocess.run(
        [sys.executable, "-m", "inference_infra.infra.config"], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        raise SystemExit(f"docs/generate.py: the stack config schema failed to print:\n{run.stderr}")
    return run.stdout


def stack_schema() -> dict[str, Any]:
    return json.loads(stack_schema_text())


def config_section(schema: Mapping[str, Any] | None = None) -> str:
    """Markdown tables of the stack config keys: the top-level keys, then each object they hold."""
    schema = stack_schema() if schema is None else schema
    return _ConfigWriter(schema).write()


class _ConfigWriter:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = schema.get("$defs", {})
        self.config: Mapping[str, Any] = schema["properties"]["config"]
        self.paths: dict[str, list[str]] = {}  # object definition -> the key paths it appears at
        self.order: list[str] = []  # definitions in the order first met

    def write(self) -> str:
        properties = self.config.get("properties", {})
        namespace = next(iter(properties), ":").split(":", 1)[0]
        top = self._table(properties, self.config.get("required", ()), strip=f"{namespace}:")
        lines = [
            f"{len(properties)} keys in the `{namespace}:` namespace. Any other `{namespace}:` key is an "
            "error; keys of other namespaces (`aws:region`, `gcp:project`, ...) belong to their providers.",
            "",
            *top,
        ]
        done: set[str] = set()
        while len(done) < len(self.order):
            name = next(n for n in self.order if n not in done)
            done.add(name)
            definition = self.defs[name]
            first, *others = self.paths[name]
            tag = _tag(definition)
            title = f"`{first}` ({tag[0]}: {tag[1]})" if tag else f"`{first}`"
            lines += ["", f'<a id="{self._anchor_of(name)}"></a>', "", f"#### {title}", ""]
            if definition.get("description"):
                lines += [_cell(definition["description"]), ""]
            if others:
                lines += ["Also at " + ", ".join(f"`{p}`" for p in others) + ".", ""]
            properties, required = definition.get("properties", {}), definition.get("required", ())
            lines += self._table(properties, required, prefix=first)
        return "\n".join(lines) + "\n"

    def _table(
        self,
        properties: Mapping[str, Any],
        required: Iterable[str],
        *,
        prefix: str = "",
        strip: str = "",
    ) -> list[str]:
        required = set(required)
        rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
        for key, prop in properties.items():
            path = f"{prefix}.{key.removeprefix(strip)}" if prefix else key.removeprefix(strip)
            kind = self._type(prop, path)
            default = "**required**" if key in required else _default(prop)
            rows.append(f"| `{key}` | {kind} | {default} | {self.meaning(prop)} |")
        return rows

    def _type(self, prop: Mapping[str, Any], path: str) -> str:
        if "$ref" in prop:
            name = prop["$ref"].rsplit("/", 1)[-1]
            definition = self.defs[name]
            if "properties" not in definition:
                return self._type(definition, path)
            if name not in self.paths:
                self.paths[name] = []
                self.order.append(name)
            self.paths[name].append(path)
            tag = _tag(definition)
            text = f"object ({tag[0]}: {tag[1]})" if tag else "object"
            return f"[{text}](#{self._anchor_of(name)})"
        for combinator in ("anyOf", "oneOf"):
            if combinator in prop:
                options = [o for o in prop[combinator] if o.get("type") != "null"]
                return " or ".join(dict.fromkeys(self._type(o, path) for o in options)) or "null"
        if "allOf" in prop and len(prop["allOf"]) == 1:
            return self._type(prop["allOf"][0], path)
        if "enum" in prop:
            return "one of " + ", ".join(f"`{_literal(v)}`" for v in prop["enum"])
        if "const" in prop:
            return f"`{_json(prop['const'])}`"
        kind = prop.get("type")
        if isinstance(kind, list):
            return " or ".join(self._type({**prop, "type": k}, path) for k in kind if k != "null")
        if kind == "array":
            items = self._type(prop.get("items", {}), f"{path}[]")
            return f"list of {items}{_sizes(prop, 'minItems', 'maxItems', 'items')}"
        if kind == "object":
            extra = prop.get("additionalProperties")
            if isinstance(extra, Mapping):
                return f"map of {self._type(extra, f'{path}.<name>')}"
            if inner := prop.get("properties"):
                needed = set(prop.get("required", ()))
                keys = [
                    f"`{k}` ({self._type(v, f'{path}.{k}')}{', required' if k in needed else ''})"
                    for k, v in inner.items()
                ]
                return "object with " + ", ".join(keys)
            return "object"
        if kind in ("integer", "number"):
            return f"{kind}{_range(prop)}"
        if kind == "string":
            text = "non-empty string" if prop.get("minLength") == 1 else "string"
            if prop.get("minLength", 1) != 1 or "maxLength" in prop:
                text += _sizes(prop, "minLength", "maxLength", "characters")
            return text + (f" matching `{prop['pattern']}`" if "pattern" in prop else "")
        return kind or "any"

    def _anchor_of(self, name: str) -> str:
        """The anchor of a definition's table: its first path, and its tag for a member of a union."""
        tag = _tag(self.defs[name])
        return _anchor(self.paths[name][0]) + (
            f"-{_anchor(str(tag[1])).removeprefix('config-')}" if tag else ""
        )

    def meaning(self, prop: Mapping[str, Any]) -> str:
        """A key's description, else that of the object (or list of objects) it holds."""
        if prop.get("description"):
            return _cell(prop["description"])
        for inner in [prop, prop.get("items") or {}, *prop.get("anyOf", ())]:
            if "$ref" in inner:
                return _cell(self.defs[inner["$ref"].rsplit("/", 1)[-1]].get("description", ""))
        return ""


def _range(prop: Mapping[str, Any]) -> str:
    low = prop.get("minimum")
    high = prop.get("maximum")
    if low is not None and high is not None:
        return f" {_json(low)}..{_json(high)}"
    parts = []
    if low is not None:
        parts.append(f"≥ {_json(low)}")
    if "exclusiveMinimum" in prop:
        parts.append(f"> {_json(prop['exclusiveMinimum'])}")
    if high is not None:
        parts.append(f"≤ {_json(high)}")
    if "exclusiveMaximum" in prop:
        parts.append(f"< {_json(prop['exclusiveMaximum'])}")
    return (" " + ", ".join(parts)) if parts else ""


def _sizes(prop: Mapping[str, Any], low: str, high: str, unit: str) -> str:
    if prop.get(low) == 1 and high not in prop:
        return ", not empty"
    parts = [
        f"at least {prop[low]}" if prop.get(low) else "",
        f"at most {prop[high]}" if high in prop else "",
    ]
    text = " and ".join(p for p in parts if p)
    return f", {text} {unit}" if text else ""


def _default(prop: Mapping[str, Any]) -> str:
    if "default" not in prop:
        return "—"
    if prop["default"] is None:
        return "unset"
    return f"`{_json(prop['default'])}`"


def _literal(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False).replace("|", "\\|")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _tag(definition: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(key, value) of the key that picks a union's member (`kind: new`, `cloud: aws`); None elsewhere."""
    return next(((k, v["const"]) for k, v in definition.get("properties", {}).items() if "const" in v), None)


def _anchor(path: str) -> str:
    return "config-" + re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


# --- the CLI, from its click commands -------------------------------------------------------------


def cli_section() -> str:
    """Every command with its usage and options, as `inference-infra <command> --help` prints them."""
    import click

    from inference_infra.components import cli

    package = Path(cli.__file__).parent
    for module in pkgutil.iter_modules([str(package)]):
        if module.name != "__main__":  # importing a command's module registers it
            importlib.import_module(f"{cli.__name__}.{module.name}")
    root = click.Context(cli.app, info_name="inference-infra")
    lines: list[str] = []
    for ctx in _contexts(root):
        command = ctx.command
        usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
        lines += [f"#### `{ctx.command_path}`", "", f"`{usage}`", ""]
        lines += [_cell(command.help or ""), ""]
        rows = [
            _help_record(param, ctx)
            for param in command.get_params(ctx)
            if not (isinstance(param, click.Option) and "--help" in param.opts)
        ]
        if rows:
            lines += ["| option | meaning |", "| --- | --- |"]
            lines += [f"| `{_cell(opt)}` | {_cell(text)} |" for opt, text in rows]
            lines.append("")
        if isinstance(command, click.Group):
            subcommands = ", ".join(f"`{name}`" for name in command.list_commands(ctx))
            lines += [f"Subcommands: {subcommands}.", ""]
    return "\n".join(lines)


def _contexts(ctx: Any) -> list[Any]:
    import click

    found = [ctx]
    if isinstance(ctx.command, click.Group):
        for name in ctx.command.list_commands(ctx):
            child = ctx.command.get_command(ctx, name)
            found += _contexts(click.Context(child, info_name=name, parent=ctx))
    return found


def _help_record(param: Any, ctx: Any) -> tuple[str, str]:
    """(the option as --help lists it, its help); an argument has no help of its own."""
    import click

    record = param.get_help_record(ctx)
    if isinstance(param, click.Argument):
        return param.human_readable_name, "argument" + (", required" if param.required else "")
    return record


# --- the policy pack, from its policy objects ------------------------------------------------------


def policies_section() -> str:
    """Each policy's kind, enforcement, severity and description; its config keys; the reference
    stacks' policy configs."""
    from pulumi_policy import StackValidationPolicy

    from inference_infra.policy.rules import POLICIES

    lines = [
        f"{len(POLICIES)} policies.",
        "",
        "| policy | kind | enforcement | severity | what it checks |",
        "| --- | --- | --- | --- | --- |",
    ]
    for p in POLICIES:
        kind = "stack" if isinstance(p, StackValidationPolicy) else "resource"
        severity = getattr(p.severity, "value", p.severity) or "—"
        lines.append(
            f"| `{p.name}` | {kind} | {p.enforcement_level.value} | {severity} | {_cell(p.description)} |"
        )
    shape = "`pulumi preview --policy-pack-config` shape: `{<policy>: {<key>: <value>}}`"
    lines += ["", f"Config keys ({shape}):", ""]
    lines += ["| policy | key | type | default | meaning |", "| --- | --- | --- | --- | --- |"]
    writer = _ConfigWriter({"properties": {"config": {}}})
    for p in POLICIES:
        schema = p.config_schema
        required = set(getattr(schema, "required", None) or ())
        for key, prop in (getattr(schema, "properties", None) or {}).items():
            default = "**required**" if key in required else _default(prop)
            lines.append(
                f"| `{p.name}` | `{key}` | {writer._type(prop, key)} | {default} | "
                f"{_cell(prop.get('description', ''))} |"
            )
    configs = sorted((ROOT / "policy" / "config").glob("*.json"))
    if configs:
        stacks = [c.stem for c in configs]
        values = {c.stem: json.loads(c.read_text()) for c in configs}
        lines += ["", "What the reference stacks' configs set (`policy/config/<stack>.json`):", ""]
        lines += ["| policy | " + " | ".join(stacks) + " |", "| --- |" + " --- |" * len(stacks)]
        for p in POLICIES:
            cells = [_json(values[s][p.name]) if p.name in values[s] else "" for s in stacks]
            if any(cells):
                lines.append(f"| `{p.name}` | " + " | ".join(f"`{c}`" if c else "—" for c in cells) + " |")
    return "\n".join(lines) + "\n"


# --- the alerts, from the rule modules' Alert values ------------------------------------------------


def alerts_section() -> str:
    """One row per alert the rule files can carry: group, severity, category, when it fires (defaults)."""
    from inference_infra.components.monitoring.rules import alert_reference

    return alert_reference()


SECTIONS: dict[str, Callable[[], str]] = {
    "cli": cli_section,
    "alerts": alerts_section,
    "policies": policies_section,
    "config": config_section,
}


# --- every generated file ---------------------------------------------------------------------------

SCHEMA = ROOT / "infra" / "config.schema.json"
CATALOG_BUILD = ROOT / "components" / "catalog" / "build.py"


def catalog_tables(*, check: bool) -> list[str]:
    """Rebuild (or, with check, compare) the catalog's generated tables; the stale ones' names."""
    run = subprocess.run(
        [sys.executable, str(CATALOG_BUILD), *(["--check"] if check else [])],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode not in (0, 1) or (run.returncode == 1 and not check):
        raise SystemExit(f"docs/generate.py: the catalog build failed:\n{run.stderr}")
    if check:
        return [
            line.split(" ", 1)[0] for line in run.stderr.splitlines() if line.startswith("data/generated/")
        ]
    changed = run.stdout.rsplit("changed: ", 1)[-1].strip()
    return [] if changed == "none" else [f"data/generated/{n}" for n in changed.split(", ")]


def generated_texts() -> dict[Path, str]:
    """What the schema file and docs/reference.md should hold (the catalog tables have their own build)."""
    schema = stack_schema_text()
    sections = {**SECTIONS, "config": lambda: config_section(json.loads(schema))}
    return {SCHEMA: schema, REFERENCE: render(REFERENCE.read_text(encoding="utf-8"), sections)}


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def stale() -> list[str]:
    """Every generated file a rewrite would change, by its path in the repository."""
    found = [f"components/catalog/{name}" for name in catalog_tables(check=True)]
    for path, text in generated_texts().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            found.append(_shown(path))
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        sys.stderr.write("usage: python docs/generate.py [--check]\n")
        return 2
    if args == ["--check"]:
        found = stale()
        for name in found:
            sys.stderr.write(f"{name} is stale: run `make generate`\n")
        return 1 if found else 0
    written = [f"components/catalog/{name}" for name in catalog_tables(check=False)]
    for path, text in generated_texts().items():  # after the catalog: the reference quotes its tables
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(_shown(path))
    sys.stdout.write(
        f"make generate: rewrote {', '.join(written)}\n" if written else "make generate: all current\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
