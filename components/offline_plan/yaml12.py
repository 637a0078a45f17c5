"""YAML 1.2 (core schema) on PyYAML, the way Pulumi reads Pulumi.yaml and stack files.

PyYAML follows YAML 1.1, where `off`, `on`, `yes`, `no`, `y` and `n` are
booleans, `010` is octal and `1:20` is base 60. Pulumi reads its files with a
YAML 1.2 parser: those stay strings (`default: off` is the string "off") and
only `true`/`false` (any case style) are booleans. This loader keeps PyYAML's
parser and replaces only how plain scalars are typed.

A key given twice in one mapping is refused, naming both lines, as Pulumi's YAML library does
(gopkg.in/yaml.v3 v3.0.1, pinned by pulumi/pulumi v3.259.0 sdk/go.mod; its decoder reports
`mapping key "x" already defined at line N`); PyYAML would keep the second value silently.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from inference_infra.components import bounded_yaml


class CoreSchemaLoader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types; duplicate keys refused."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in first:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} is given twice, at line {first[key]} and at line {line}; Pulumi refuses "
                    "a duplicate key (keep one)",
                    key_node.start_mark,
                )
            first[key] = line
        return super().construct_mapping(node, deep=deep)


# Start from no implicit resolvers at all, then add the core schema's.
CoreSchemaLoader.yaml_implicit_resolvers = {}

_CORE = (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
)
for _tag, _pattern, _first in _CORE:
    CoreSchemaLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # a leading zero is decimal in YAML 1.2, not octal


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
CoreSchemaLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def load(text: str) -> Any:
    """One document, core schema, aliases bounded (components/bounded_yaml.py: go-yaml refuses alias
    bombs too)."""
    return bounded_yaml.load(text, CoreSchemaLoader)
