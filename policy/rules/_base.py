"""What every rule shares: a plain view of a resource, the outcome of a check, and the
adapters that wire a pure check function to CrossGuard.

A check never sees CrossGuard's proxies. `plain()` turns the analyzer's props into
ordinary dicts and lists in which a value not known until deploy time is the
`UNKNOWN` marker (`components.resources.UNKNOWN_VALUE`; read paths with
`components.resources.get_path`). A check must look for `UNKNOWN` before it judges a value: a value
not yet known is never a violation. It records the property path instead, and the
adapter reports it the way the Policy SDK does for preview (an advisory "can't be
known during preview" diagnostic), so it is visible without failing the gate.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
    proxy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from inference_infra.components.resources import UNKNOWN_VALUE as UNKNOWN
from inference_infra.components.resources import StackIndex, holder_template_lookup, template_index

# Every sentinel the engine uses for a value not known yet, one per type.
_UNKNOWN_SENTINELS = frozenset(
    getattr(proxy, n) for n in dir(proxy) if n.startswith("UNKNOWN_") and n.endswith("_VALUE")
)


def plain(value: Any) -> Any:
    """Analyzer props (proxies, unknown sentinels) as plain dicts/lists with UNKNOWN markers."""
    kind = type(value)  # the common plain types first: this runs for every value of every resource
    if kind is str:
        return UNKNOWN if value in _UNKNOWN_SENTINELS else value
    if kind in (int, float, bool) or value is None:
        return value
    if kind is dict:
        return {k: plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        target = _proxy_target(value)
        return {k: plain(v) for k, v in target.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        target = _proxy_target(value)
        return [plain(v) for v in target]
    if isinstance(value, str) and value in _UNKNOWN_SENTINELS:
        return UNKNOWN
    return value


# Resource policies of one evaluation receive the same props object for a resource (the analyzer
# deserializes once): converted once, by identity. The object is held, so its id is not reused.
_PLAIN_CACHE: dict[int, tuple[Any, Any]] = {}
_PLAIN_CACHE_SIZE = 20_000


def plain_once(value: Any) -> Any:
    """plain(value), remembered for this very object (checks never change what they are given)."""
    hit = _PLAIN_CACHE.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    if len(_PLAIN_CACHE) >= _PLAIN_CACHE_SIZE:
        _PLAIN_CACHE.clear()
    converted = plain(value)
    _PLAIN_CACHE[id(value)] = (value, converted)
    return converted


def show(value: Any) -> str:
    """A value as a message shows it: JSON-style booleans, whole numbers without '.0', quoted strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _proxy_target(value: Any) -> Any:
    # The SDK's proxies raise on reading an unknown value; their "__target" key is the
    # unproxied container (the SDK's own serializer reads it the same way).
    if type(value).__name__ in ("_DictProxy", "_ListProxy", "_DictSecretsProxy", "_ListSecretsProxy"):
        return value["__target"]
    return value


@dataclass(frozen=True)
class Resource:
    """One resource as a check sees it: engine-shaped (camelCase) plain props."""

    type: str
    name: str
    props: Mapping[str, Any]
    urn: str = ""
    provider: Mapping[str, Any] = field(default_factory=dict)  # the provider's inputs (region, ...)
    parent: str | None = None  # parent URN (stack policies)
    dependencies: tuple[str, ...] = ()  # URNs of the resources it depends on (stack policies)

    @property
    def id(self) -> str | None:
        """The id where known: a stack policy sees it among the outputs."""
        ident = self.props.get("id")
        return ident if isinstance(ident, str) else None

    @property
    def label(self) -> str:
        return f"{self.type} {self.name!r}"

    def provider_value(self, key: str) -> Any:
        """A provider input; object-valued provider config arrives JSON-encoded."""
        value = self.provider.get(key)
        if isinstance(value, str) and value[:1] in "{[":
            try:
                return json.loads(value)
            except ValueError:
                return None
        return value


@dataclass(frozen=True)
class Outcome:
    """What a check found: violations, or that it does not apply, plus what it could not judge."""

    violations: tuple[str, ...] = ()
    not_applicable: str | None = None
    unknown: tuple[str, ...] = ()  # property paths not known until deploy time


def passed() -> Outcome:
    return Outcome()


def not_applicable(reason: str) -> Outcome:
    return Outcome(not_applicable=reason)


class Findings:
    """Collects a check's violations and unknown paths."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.unknown: list[str] = []

    def violation(self, message: str) -> None:
        self.violations.append(message)

    def not_known(self, path: str) -> None:
        self.unknown.append(path)

    def outcome(self) -> Outcome:
        return Outcome(violations=tuple(self.violations), unknown=tuple(self.unknown))


def config_defaults(schema: PolicyConfigSchema) -> dict[str, Any]:
    """The schema's default values, as the engine fills them in before calling the pack."""
    return {k: v["default"] for k, v in schema.properties.items() if "default" in v}


def exempt_names(example: str) -> dict[str, Any]:
    """The `allowedNames` config property: resource names the policy skips, with an example of why."""
    return {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "default": [],
        "description": f"Resource names exempt from this policy ({example}).",
    }


class Metadata(TypedDict):
    """What CrossGuard shows of a policy: a rule module's NAME, DESCRIPTION, SEVERITY, ENFORCEMENT and
    CONFIG_SCHEMA (the registry's contract: tests/policy/test_registry.py)."""

    name: str
    description: str
    severity: Severity
    enforcement: EnforcementLevel
    schema: PolicyConfigSchema


def rule_metadata(module: str) -> Metadata:
    """The metadata of the rule module named `module` (its `__name__`), read from its constants, which
    stand above the `POLICY = ...` that asks: `resource_policy(**rule_metadata(__name__), check=check)`."""
    rule = sys.modules[module]
    return Metadata(
        name=rule.NAME,
        description=rule.DESCRIPTION,
        severity=rule.SEVERITY,
        enforcement=rule.ENFORCEMENT,
        schema=rule.CONFIG_SCHEMA,
    )


def _fields(metadata: Metadata) -> dict[str, Any]:
    """A metadata's fields under the names pulumi_policy's policies take."""
    return {
        "name": metadata["name"],
        "description": metadata["description"],
        "enforcement_level": metadata["enforcement"],
        "config_schema": metadata["schema"],
        "severity": metadata["severity"],
    }


def _report(outcome: Outcome, args: ResourceValidationArgs | StackValidationArgs, report: ReportViolation):
    for message in outcome.violations:
        report(message, None)
    if outcome.unknown:
        raise UnknownValueError(UNKNOWN_STRING_VALUE, outcome.unknown[0].split("."))
    if outcome.not_applicable is not None:
        args.not_applicable(outcome.not_applicable)


ResourceCheck = Callable[[Resource, Mapping[str, Any]], Outcome]
StackCheck = Callable[[Sequence[Resource], Mapping[str, Any]], Outcome]


def resource_policy(*, check: ResourceCheck, **metadata: Unpack[Metadata]) -> ResourceValidationPolicy:
    """A CrossGuard resource policy that runs a pure check on each resource."""
    defaults = config_defaults(metadata["schema"])

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        provider = plain_once(args.provider.props) if args.provider is not None else {}
        resource = Resource(
            args.resource_type, args.name, plain_once(args.props), args.urn, provider, args.opts.parent
        )
        _report(check(resource, {**defaults, **plain(args.get_config())}), args, report)

    return ResourceValidationPolicy(validate=validate, **_fields(metadata))


TemplatedCheck = Callable[[Resource, Mapping[str, Any], Callable[[Mapping[str, Any]], Any]], Outcome]
StackJudgement = Callable[[Sequence[Resource], Mapping[str, Any]], Iterable[tuple[Resource, Outcome]]]


def judged_stack_policy(
    *, judge: StackJudgement, applies_to: str, **metadata: Unpack[Metadata]
) -> StackValidationPolicy:
    """A stack policy that judges resources one by one, with the whole stack at hand.

    `judge(resources, config)` yields (resource, outcome) for every resource it judged or found not
    applicable; each violation is reported on that resource's URN, as a resource policy would.
    Unknown values are collected per resource (named `<resource>.<path>`) and reported after every
    violation. When no resource applied, the policy says why (once per reason).
    """
    defaults = config_defaults(metadata["schema"])

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = _stack_resources(args)
        config = {**defaults, **plain(args.get_config())}
        unknown: list[list[str]] = []
        applied = False
        reasons: dict[str, None] = {}  # why it applied to none, in order, once each
        for resource, outcome in judge(resources, config):
            applied = applied or outcome.not_applicable is None
            if outcome.not_applicable is not None:
                reasons.setdefault(outcome.not_applicable)
            for message in outcome.violations:
                report(message, resource.urn or None)
            unknown.extend([resource.name, *path.split(".")] for path in outcome.unknown)
        if unknown:
            raise UnknownValueError(UNKNOWN_STRING_VALUE, unknown[0])
        if not applied:
            scope = f"applies to {applies_to}"
            reasons.pop(scope, None)
            found = f"; {'; '.join(reasons)}" if reasons else "; the stack has none"
            args.not_applicable(f"not applicable to any of the {len(resources)} resources: {scope}{found}")

    return StackValidationPolicy(validate=validate, **_fields(metadata))


def with_templates(check: TemplatedCheck) -> StackJudgement:
    """Judge each resource with `check(resource, config, template_of)`, where template_of resolves a
    launch template (or launch configuration, or instance template) reference to its props: by id
    or name, else, for a reference not known until deploy time, the one template the resource
    depends on."""

    def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterable[tuple[Resource, Outcome]]:
        template_of = template_index(resources)
        stack = StackIndex(resources)
        for resource in resources:
            yield resource, check(resource, config, holder_template_lookup(template_of, stack, resource))

    return judge


def per_resource_stack_policy(
    *, check: TemplatedCheck, applies_to: str, **metadata: Unpack[Metadata]
) -> StackValidationPolicy:
    """A stack policy that judges each resource on its own, but with the whole stack at hand.

    A resource policy sees one resource: an Auto Scaling group or an instance that takes its
    instance type and market from a launch template cannot be judged there. This adapter runs
    `check(resource, config, template_of)` on every resource (see `with_templates`) and reports
    each violation on the resource's URN, as a resource policy would.
    """
    return judged_stack_policy(judge=with_templates(check), applies_to=applies_to, **metadata)


# The last stack converted, by the identity of the analyzer's list: every stack policy of one
# evaluation gets the same list, and converts it once.
_CONVERTED: tuple[Any, list[Resource]] | None = None


def _stack_resources(args: StackValidationArgs) -> list[Resource]:
    global _CONVERTED
    if _CONVERTED is not None and _CONVERTED[0] is args.resources:
        return _CONVERTED[1]
    converted = _convert_stack(args)
    _CONVERTED = (args.resources, converted)
    return converted


def _convert_stack(args: StackValidationArgs) -> list[Resource]:
    return [
        Resource(
            r.resource_type,
            r.name,
            plain(r.props),
            r.urn,
            plain(r.provider.props) if r.provider is not None else {},
            r.parent.urn if r.parent is not None else None,
            tuple(d.urn for d in r.dependencies),
        )
        for r in args.resources
    ]


def stack_policy(*, check: StackCheck, **metadata: Unpack[Metadata]) -> StackValidationPolicy:
    """A CrossGuard stack policy that runs a pure check over every resource of the stack."""
    defaults = config_defaults(metadata["schema"])

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        _report(check(_stack_resources(args), {**defaults, **plain(args.get_config())}), args, report)

    return StackValidationPolicy(validate=validate, **_fields(metadata))
