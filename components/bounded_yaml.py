"""YAML read with bounds: no alias bombs, no nesting that exhausts the stack.

PyYAML builds an alias as a second reference to the anchored value, so a ten-line document whose
aliases refer to aliases ("billion laughs") loads as a few objects but stands for 10^9 values:
anything that walks or serialises it (the offline plan turns every stack value into the string
the engine would pass, a policy walks user data) then runs until the machine gives out. Go's YAML
library (go-yaml v3, decode.go's alias ratio) refuses such a document ("document contains excessive
aliasing"); so does this module, by counting each document's values with every alias expanded,
on the composed node graph (each node counted once and its size reused), before anything is
constructed. A document nested deeper than Python's recursion allows is refused too.

Both refusals are `yaml.YAMLError`s, so a caller's existing handling of invalid YAML applies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

# The most values one document may stand for, aliases expanded. The largest document read here is
# a chart's CustomResourceDefinition (tens of thousands of values); a stack file has a few thousand.
MAX_VALUES = 1_000_000


class ExcessiveYaml(yaml.YAMLError):
    """A document that stands for too many values, refers to itself, or nests too deep."""


def load(text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader, *, max_values: int = MAX_VALUES) -> Any:
    """The single document in `text` (None when empty), as `yaml.load(text, Loader=loader)`."""
    reader = loader(text)
    try:
        node = _composed(reader.get_single_node)
        if node is None:
            return None
        _check(node, max_values)
        return reader.construct_document(node)
    finally:
        reader.dispose()


def load_all(
    text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader, *, max_values: int = MAX_VALUES
) -> Iterator[Any]:
    """Every document in `text`, as `yaml.load_all(text, Loader=loader)`."""
    reader = loader(text)
    try:
        while _composed(reader.check_node):
            node = _composed(reader.get_node)
            _check(node, max_values)
            yield reader.construct_document(node)
    finally:
        reader.dispose()


def _composed(step: Any) -> Any:
    try:
        return step()
    except RecursionError:
        raise ExcessiveYaml("the document is nested too deeply to read") from None


def _check(root: yaml.Node, max_values: int) -> None:
    """Refuse a node graph that stands for more than `max_values` values or contains itself."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > max_values:
                raise ExcessiveYaml(
                    f"the document stands for more than {max_values:,} values once its aliases are expanded "
                    "(an alias bomb?); go-yaml v3 refuses it too, as excessive aliasing"
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise ExcessiveYaml("the document contains an alias to a value that contains it")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
