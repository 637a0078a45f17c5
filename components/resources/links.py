"""References between a stack's resources: which resource a property names.

A rule names its security group by id, an Elastic IP its instance, a bucket policy its bucket, a
flow log its VPC. Offline (and after deploy) the id is known and names the resource directly;
in `pulumi preview` an id of a resource not created yet is not known, but the engine still says
which resources a resource depends on. `StackIndex.find` uses both: the resource whose id (or a
name-like property) the value names, else, when the value is not known yet, the one resource of
the wanted types among the holder's dependencies.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from inference_infra.components.resources.props import UNKNOWN_VALUE


class Linked(Protocol):
    """A stack's resource as every reader sees it: a captured resource (the offline plan) or a policy's
    view of one (policy/rules/_base.py). The one such protocol: the stack index, the template index,
    the scaling schedules and the pricer (`pricing.Priceable` adds its name) all read this."""

    @property
    def type(self) -> str: ...
    @property
    def urn(self) -> str: ...
    @property
    def id(self) -> str | None: ...
    @property
    def props(self) -> Mapping[str, Any]: ...
    @property
    def dependencies(self) -> Sequence[str]: ...


class StackIndex:
    """A stack's resources by URN, type and id (and named properties), for following references."""

    def __init__(self, resources: Iterable[Linked], names: Mapping[str, Sequence[str]] | None = None) -> None:
        """names: per type, properties that also identify a resource of that type (a bucket's
        `bucket`, a launch template's `name`)."""
        self.resources = list(resources)
        self.by_urn = {r.urn: r for r in self.resources if r.urn}
        self._by_type: dict[str, list[Linked]] = {}
        self._keys: dict[str, dict[str, Linked]] = {}
        for r in self.resources:
            self._by_type.setdefault(r.type, []).append(r)
            keys = self._keys.setdefault(r.type, {})
            if isinstance(r.id, str) and r.id:
                keys.setdefault(r.id, r)
            for prop in (names or {}).get(r.type, ()):
                value = r.props.get(prop)
                if isinstance(value, str) and value:
                    keys.setdefault(value, r)

    def of_type(self, *types: str) -> list[Linked]:
        return [r for t in types for r in self._by_type.get(t, ())]

    def dependencies(self, holder: Linked, types: Collection[str]) -> list[Linked]:
        """The holder's dependencies of the given types, in the order the engine lists them."""
        found = (self.by_urn.get(urn) for urn in holder.dependencies)
        return [r for r in found if r is not None and r.type in types]

    def find(self, value: Any, types: Collection[str], holder: Linked | None = None) -> Linked | None:
        """The stack's resource of one of `types` that value names (its id, a name property, or an ARN
        ending in its id); when value is not known until deploy time and holder depends on exactly one
        resource of those types, that one. A known value naming nothing in the stack (a resource made
        elsewhere) and an absent one are None."""
        if isinstance(value, str) and value:
            for kind in types:
                if (hit := self._keys.get(kind, {}).get(value)) is not None:
                    return hit
            # An ARN or URL that ends with a stack resource's id (arn:...:instance/i-0abc).
            for kind in types:
                for key, hit in self._keys.get(kind, {}).items():
                    if value.endswith(f"/{key}") or value.endswith(f":{key}"):
                        return hit
            return None
        if holder is None or value is not UNKNOWN_VALUE:
            return None
        candidates = self.dependencies(holder, types)
        return candidates[0] if len(candidates) == 1 else None
