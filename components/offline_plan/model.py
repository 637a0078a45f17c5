"""What the offline plan captured: resources as the engine would receive them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# The marker for a value not known yet lives with the readers (components.resources.props).
from inference_infra.components.resources.props import UNKNOWN_MASK, UNKNOWN_VALUE
from inference_infra.components.resources.props import Unknown as Unknown

# The engine's wire markers (pulumi.runtime.rpc): an input not known until
# deploy time, and the envelope around a secret value.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"  # a resource passed as an input (a resource reference)

SECRET_MASK = "[secret]"


def is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get(SIG_KEY) == SECRET_SIG


def is_resource_reference(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get(SIG_KEY) == RESOURCE_SIG


def plain(value: Any) -> Any:
    """Wire form -> Python: secrets unwrapped, unknowns as UNKNOWN_VALUE, a resource reference as
    the engine hands it to an analyzer (a custom resource's id, else its URN)."""
    if value == UNKNOWN:
        return UNKNOWN_VALUE
    if is_secret(value):
        return plain(value.get("value"))
    if is_resource_reference(value):
        ident = value.get("id")
        return ident if isinstance(ident, str) and ident else value.get("urn", "")
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def masked(value: Any) -> Any:
    """Wire form -> printable: secrets and unknowns replaced by markers."""
    if value == UNKNOWN:
        return UNKNOWN_MASK
    if is_secret(value):
        return SECRET_MASK
    if is_resource_reference(value):
        return value.get("urn", "")  # the resource passed, by its URN
    if isinstance(value, Mapping):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def secret_values(value: Any, found: set[str] | None = None) -> set[str]:
    """Every plain string inside a secret envelope of a wire value (to scrub from free text)."""
    found = set() if found is None else found
    if is_secret(value):
        inner = plain(value.get("value"))
        stack = [inner]
        while stack:
            item = stack.pop()
            if isinstance(item, str) and len(item) >= 4:
                found.add(item)
            elif isinstance(item, Mapping):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
    elif isinstance(value, Mapping):
        for v in value.values():
            secret_values(v, found)
    elif isinstance(value, list):
        for v in value:
            secret_values(v, found)
    return found


def scrub(text: str, secrets: set[str]) -> str:
    """text with every secret value in it replaced by [secret] (longest first)."""
    for value in sorted(secrets, key=len, reverse=True):
        if value in text:
            text = text.replace(value, SECRET_MASK)
    return text


@dataclass(frozen=True)
class CapturedResource:
    """One registered resource, custom or component."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    wire_props: Mapping[str, Any]  # inputs exactly as sent to the engine (after transforms)
    id: str | None = None
    provider: str | None = None
    protect: bool = False
    dependencies: tuple[str, ...] = ()
    outputs: Mapping[str, Any] = field(default_factory=dict)  # component outputs (register_outputs)
    remote: bool = False  # a multi-language component: children built by its plugin, not visible offline
    inferred: bool = False  # not registered by the program: read from a remote component's inputs

    @property
    def props(self) -> dict[str, Any]:
        """Inputs as Python values: secrets unwrapped, unknowns as UNKNOWN_VALUE."""
        return plain(self.wire_props)

    def as_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "props": masked(self.wire_props),
            **({"remote": True, "outputs": UNKNOWN_MASK} if self.remote else {}),
            **({"inferred": True} if self.inferred else {}),
        }


@dataclass
class Capture:
    """Everything one program run registered, in registration order."""

    project: str
    stack: str
    resources: list[CapturedResource] = field(default_factory=list)
    stack_outputs: dict[str, Any] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)  # (severity, message)
    invokes: list[str] = field(default_factory=list)  # data-source tokens called
    unmocked_invokes: list[str] = field(default_factory=list)
    secret_config: set[str] = field(default_factory=set)  # secret config values, to scrub from text
    helm_templates: list[dict[str, Any]] = field(default_factory=list)  # v3 Charts' options (not rendered)
    reads: list[tuple[str, str, str]] = field(default_factory=list)  # (type, name, id): .get and stack refs
    unfetched: list[str] = field(default_factory=list)  # manifest URLs the program asked for (no network)

    def secrets(self) -> set[str]:
        """Every secret value the program saw or registered (config, props, outputs)."""
        found = set(self.secret_config)
        for r in self.resources:
            secret_values(r.wire_props, found)
            secret_values(r.outputs, found)
        return secret_values(self.stack_outputs, found)

    def __iter__(self) -> Iterator[CapturedResource]:
        return iter(self.resources)

    def __len__(self) -> int:
        return len(self.resources)

    @property
    def custom(self) -> list[CapturedResource]:
        return [r for r in self.resources if r.custom]

    def of_type(self, type_token: str) -> list[CapturedResource]:
        return [r for r in self.resources if r.type == type_token]

    def one(self, type_token: str, name: str | None = None) -> CapturedResource:
        """The single resource of a type (and name); fails loudly when there are 0 or several."""
        hits = [r for r in self.of_type(type_token) if name is None or r.name == name]
        if len(hits) != 1:
            names = sorted(r.name for r in self.of_type(type_token))
            raise LookupError(f"expected one {type_token}{f' named {name!r}' if name else ''}, found {names}")
        return hits[0]

    def named(self, name: str) -> CapturedResource:
        hits = [r for r in self.resources if r.name == name]
        if len(hits) != 1:
            raise LookupError(f"expected one resource named {name!r}, found {len(hits)}")
        return hits[0]

    def by_urn(self, urn: str) -> CapturedResource:
        for r in self.resources:
            if r.urn == urn:
                return r
        raise LookupError(f"no resource with urn {urn!r}")

    def children(self, parent: CapturedResource) -> list[CapturedResource]:
        return [r for r in self.resources if r.parent == parent.urn]

    def descendants(self, root: CapturedResource) -> list[CapturedResource]:
        found, frontier = [], [root.urn]
        while frontier:
            urn = frontier.pop()
            kids = [r for r in self.resources if r.parent == urn]
            found.extend(kids)
            frontier.extend(k.urn for k in kids)
        return found

    def errors(self) -> list[str]:
        return [m for s, m in self.log if s == "error"]
