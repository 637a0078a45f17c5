"""Policy evaluation for the offline plan: the pack's own policy objects over the capture.

What each policy receives is built the way the Policy SDK's analyzer builds it
for `pulumi preview`: a resource policy runs on every registered resource
(components and the root stack too) with the inputs deserialized from the wire
form by the SDK's own `deserialize_properties` and wrapped in its
`unknown_checking_proxy`, so unknown values behave exactly as in preview; a
stack policy gets every resource as a `PolicyResource` with parent and
dependencies linked. Custom resources without an explicit provider get the
default provider the engine would make from the stack's `<package>:*` config.
Stack policies see custom resources' inputs (plus their mock id) where the
engine passes outputs, and components' registered outputs.

Enforcement levels come from the reconciled config (see `policy_pack`):
disabled policies do not run, `remediate` violations count as mandatory, and a
violation of a mandatory policy fails the gate (`plan` exits 1). A policy that
does not apply says so (`not_applicable`); a check that met a value not known
until deploy time is listed as `undetermined`, never as a violation.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.model import (
    SECRET_SIG,
    SIG_KEY,
    UNKNOWN,
    Capture,
    CapturedResource,
    is_resource_reference,
    is_secret,
    plain,
)
from inference_infra.components.offline_plan.policy_pack import (
    LoadedPack,
    PolicySettings,
    load_pack,
    read_config_file,
    reconcile,
)
from inference_infra.components.planner.allowed import PackAllowed
from inference_infra.components.resources.secrets import is_plaintext_secret

MANDATORY = "mandatory"


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str
    urn: str | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "urn": self.urn,
            "message": self.message,
        }


@dataclass(frozen=True)
class NotApplicable:
    policy: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "reason": self.reason}


@dataclass(frozen=True)
class Undetermined:
    policy: str
    urn: str | None
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "urn": self.urn, "message": self.message}


@dataclass
class PolicyReport:
    evaluated: bool
    violations: list[Violation] = field(default_factory=list)
    pack: str | None = None
    note: str | None = None
    config: str | None = None  # the policy config file used, if any
    not_applicable: list[NotApplicable] = field(default_factory=list)
    undetermined: list[Undetermined] = field(default_factory=list)
    policies: int = 0  # policies that ran
    packs: list[dict[str, Any]] = field(default_factory=list)  # every pack that ran: name, path, config

    @property
    def gate_failed(self) -> bool:
        return any(v.enforcement == MANDATORY for v in self.violations)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "evaluated": self.evaluated,
            "violations": [v.as_json() for v in self.violations],
        }
        if self.evaluated:
            out.update(
                pack=self.pack,
                config=self.config,
                packs=self.packs,
                not_applicable=[n.as_json() for n in self.not_applicable],
                undetermined=[u.as_json() for u in self.undetermined],
            )
        return out


class PolicyPackError(InputError):
    """A policy raised an error of its own while checking (CLI exit code 2)."""


@dataclass(frozen=True)
class PreparedPack:
    """A pack loaded and its config read and reconciled: what a run needs besides the capture."""

    pack: LoadedPack
    settings: dict[str, PolicySettings]
    config: str | None  # the config file, if any


def prepare_pack(pack_dir: Path, config_path: Path | None) -> PreparedPack:
    """Load a pack and check its config (InputError on a bad one): `plan` does this before the
    program runs, so a malformed --policy-config fails in a second, not after the program."""
    pack = load_pack(pack_dir)
    given = read_config_file(config_path) if config_path is not None else {}
    settings = reconcile(pack, given, str(config_path) if config_path else "(defaults)")
    return PreparedPack(pack, settings, str(config_path) if config_path else None)


ALLOWED_TYPES_POLICY = "allowed-accelerator-types"


def pack_allowed(prepared: list[PreparedPack]) -> PackAllowed | None:
    """allowed-accelerator-types' settings in the first pack that runs it (not disabled), for the
    planner to pick among the machines the stack's own gate allows; None when no pack runs it."""
    from pulumi_policy import EnforcementLevel

    for run in prepared:
        settings = run.settings.get(ALLOWED_TYPES_POLICY)
        if settings is None or settings.enforcement == EnforcementLevel.DISABLED:
            continue
        table = settings.properties.get("allowedTypes")
        if not isinstance(table, Mapping):
            continue
        environment = settings.properties.get("environment")
        return PackAllowed(
            allowed_types={str(k): tuple(v) for k, v in table.items()},
            environment=environment if isinstance(environment, str) and environment else None,
            source=run.config or "(defaults)",
        )
    return None


def evaluate_policies(capture: Capture, pack_dir: Path | None, config_path: Path | None) -> PolicyReport:
    if pack_dir is None:
        return PolicyReport(evaluated=False, note="no policy pack (pass --policy-pack DIR)")
    prepared = prepare_pack(pack_dir, config_path)
    return evaluate(capture, prepared.pack, prepared.settings, prepared.config)


def evaluate_packs(
    capture: Capture,
    runs: list[tuple[Path, Path | None]],
    prepared: list[PreparedPack] | None = None,
) -> PolicyReport:
    """Several packs over one capture (as `pulumi preview --policy-pack A --policy-pack B`), merged.

    First, every plaintext secret in the capture (a token in user data, in an SSM String parameter,
    in a container's environment: `components.resources.secrets`) is marked secret, so the plan
    shows `[secret]` where it sits and scrubs it from every text, whichever packs run; the policies
    still see the value (the analyzer unwraps secrets), so no-plaintext-secrets reports where it is.
    """
    mark_plaintext_secrets(capture)
    if not runs:
        return evaluate_policies(capture, None, None)
    if prepared is None:
        prepared = [prepare_pack(pack, config) for pack, config in runs]
    reports = [evaluate(capture, p.pack, p.settings, p.config) for p in prepared]
    merged = PolicyReport(
        evaluated=True,
        pack=", ".join(r.pack or "?" for r in reports),
        config=", ".join(r.config for r in reports if r.config) or None,
        note="; ".join(r.note for r in reports if r.note) or None,
        policies=sum(r.policies for r in reports),
    )
    for (pack, config), r in zip(runs, reports, strict=True):
        merged.violations += r.violations
        merged.not_applicable += r.not_applicable
        merged.undetermined += r.undetermined
        merged.packs.append({"name": r.pack, "path": str(pack), "config": str(config) if config else None})
    return merged


def evaluate(
    capture: Capture, pack: LoadedPack, settings: dict[str, PolicySettings], config: str | None = None
) -> PolicyReport:
    """Run a loaded pack's policies, at the reconciled settings, over a capture."""
    return _Evaluation(capture, pack, settings, config).run()


class _Evaluation:
    def __init__(
        self, capture: Capture, pack: LoadedPack, settings: dict[str, PolicySettings], config: str | None
    ) -> None:
        self.capture, self.pack, self.settings = capture, pack, settings
        self.report = PolicyReport(evaluated=True, pack=pack.label, config=config)
        # The analyzer deserializes a resource's props once and hands them to every policy; the
        # same for a provider's props (shared by every resource it manages) and a policy's config.
        self._props: dict[str, Any] = {}
        self._providers: dict[tuple[str, str | None], Any] = {}
        self._configs: dict[str, dict[str, Any] | None] = {}
        self._stack: list[Any] | None = None  # what every stack policy sees, built once

    def run(self) -> PolicyReport:
        from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

        for policy in self.pack.policies:
            level = self.settings[policy.name].enforcement
            if level == EnforcementLevel.DISABLED:
                self._not_applicable(policy.name, "disabled by the policy config")
            elif isinstance(policy, ResourceValidationPolicy):
                self._resource_policy(policy, level)
            elif isinstance(policy, StackValidationPolicy):
                self._stack_policy(policy, level)
        return self.report

    # -- resource policies ---------------------------------------------------------------------

    def _resource_policy(self, policy: Any, level: Any) -> None:
        from pulumi_policy import ResourceValidationArgs

        self.report.policies += 1
        if not policy.has_validation():
            self._not_applicable(policy.name, "the policy does not implement validate")
            return
        reasons: dict[str, int] = defaultdict(int)
        applied = 0
        for resource in self.capture.resources:
            if resource.urn not in self._props:
                self._props[resource.urn] = _analyzer_props(resource.wire_props)
            args = ResourceValidationArgs(
                resource.type,
                self._props[resource.urn],
                resource.urn,
                resource.name,
                _options(resource),
                self._provider(resource),
                self._config(policy.name),
                {},
            )
            outcome = self._run(policy, args, level, resource.urn)
            if isinstance(outcome, str):
                reasons[outcome] += 1
            else:
                applied += 1
        if not applied:
            count = len(self.capture.resources)
            plural = "s" if count != 1 else ""
            listed = f"not applicable to any of the {count} resource{plural}: {'; '.join(reasons)}"
            self._not_applicable(policy.name, listed if reasons else "the stack registers no resources")

    # -- stack policies ------------------------------------------------------------------------

    def _stack_policy(self, policy: Any, level: Any) -> None:
        from pulumi_policy import StackValidationArgs

        self.report.policies += 1
        args = StackValidationArgs(self._stack_resources(), self._config(policy.name), {})
        outcome = self._run(policy, args, level, None)
        if isinstance(outcome, str):
            self._not_applicable(policy.name, outcome)

    def _stack_resources(self) -> list[Any]:
        if self._stack is None:
            self._stack = self._build_stack_resources()
        return self._stack

    def _build_stack_resources(self) -> list[Any]:
        from pulumi_policy import PolicyResource

        resources, by_urn = [], {}
        for r in self.capture.resources:
            if r.custom:
                props = {**r.wire_props, **({"id": r.id} if r.id else {})}
            elif r.parent is None:
                props = self.capture.stack_outputs
            else:
                props = r.outputs
            item = PolicyResource(
                r.type, _analyzer_props(props), r.urn, r.name, _options(r), self._provider(r), None, [], {}
            )
            resources.append(item)
            by_urn[r.urn] = item
        for r, item in zip(self.capture.resources, resources, strict=True):
            item.parent = by_urn.get(r.parent or "")
            item.dependencies.extend(by_urn[d] for d in r.dependencies if d in by_urn)
        return resources

    # -- running one validation ----------------------------------------------------------------

    def _run(self, policy: Any, args: Any, level: Any, resource_urn: str | None) -> str | None:
        """Run a validation; returns the not-applicable reason, or None when it applied."""
        from pulumi_policy import EnforcementLevel
        from pulumi_policy.policy import _NotApplicableError
        from pulumi_policy.proxy import UnknownValueError

        enforcement = EnforcementLevel.MANDATORY if level == EnforcementLevel.REMEDIATE else level

        def report(message: str, urn: str | None = None) -> None:
            if message and not isinstance(message, str):
                raise TypeError("Expected message to be a string")
            where = resource_urn if resource_urn is not None else urn or None
            self.report.violations.append(Violation(policy.name, enforcement.value, where, message))

        try:
            result = policy.validate(args, report)
            if inspect.isawaitable(result):
                loop = asyncio.new_event_loop()
                try:
                    loop.run_until_complete(result)
                finally:
                    loop.close()
        except UnknownValueError as e:
            message = (
                f"can't run policy '{policy.name}' from policy pack '{self.pack.label}' during preview: "
            )
            self.report.undetermined.append(Undetermined(policy.name, resource_urn, message + e.message))
        except _NotApplicableError as e:
            return e.reason or "the policy does not apply"
        except Exception as e:
            where = f" on {resource_urn}" if resource_urn else ""
            raise PolicyPackError(
                f"policy '{policy.name}' of pack {self.pack.label} failed{where}: {type(e).__name__}: {e}."
            ) from e
        return None

    def _config(self, name: str) -> dict[str, Any] | None:
        """The policy's config as the analyzer's Configure hands it over (numbers become floats), a
        copy per call as the SDK hands it."""
        from google.protobuf import json_format, struct_pb2

        if name not in self._configs:
            struct = json_format.ParseDict(dict(self.settings[name].properties), struct_pb2.Struct())
            self._configs[name] = json_format.MessageToDict(struct) or None
        config = self._configs[name]
        return dict(config) if config is not None else None

    def _not_applicable(self, policy: str, reason: str) -> None:
        self.report.not_applicable.append(NotApplicable(policy, reason))

    def _provider(self, resource: CapturedResource) -> Any:
        """The provider the engine would pass: the explicit one, else the default from config."""
        package = resource.type.split(":", 1)[0]
        if not resource.custom or package == "pulumi":
            return None
        key = (package, resource.provider or None)
        if key not in self._providers:
            self._providers[key] = self._provider_of(package, resource)
        return self._providers[key]

    def _provider_of(self, package: str, resource: CapturedResource) -> Any:
        from pulumi_policy import PolicyProviderResource

        if resource.provider:
            urn = resource.provider.rsplit("::", 1)[0]
            for p in self.capture.resources:
                if p.urn == urn:
                    return PolicyProviderResource(p.type, _analyzer_props(p.wire_props), p.urn, p.name)
        config = {
            key.split(":", 1)[1]: value
            for key, value in self.capture.config.items()
            if key.startswith(f"{package}:")
        }
        urn = f"urn:pulumi:{self.capture.stack}::{self.capture.project}::pulumi:providers:{package}::default"
        return PolicyProviderResource(f"pulumi:providers:{package}", _analyzer_props(config), urn, "default")


def mark_plaintext_secrets(capture: Capture) -> None:
    """Wrap every string of the capture's inputs that holds a plaintext secret in a secret envelope."""
    for i, resource in enumerate(capture.resources):
        props = _marked(resource.wire_props)
        if props is not resource.wire_props:
            capture.resources[i] = CapturedResource(**{**resource.__dict__, "wire_props": props})


def _marked(value: Any, name: str | None = None) -> Any:
    """value with secret strings enveloped; the same object when nothing changed."""
    if isinstance(value, str):
        if value != UNKNOWN and is_plaintext_secret(name, value):
            return {SIG_KEY: SECRET_SIG, "value": value}
        return value
    if isinstance(value, dict) and not is_secret(value) and not is_resource_reference(value):
        entry = value.get("name") if isinstance(value.get("name"), str) else None  # {name, value}: a variable
        changed = {k: _marked(v, entry if k == "value" and entry else k) for k, v in value.items()}
        return value if all(changed[k] is value[k] for k in value) else changed
    if isinstance(value, list):
        items = [_marked(v, name) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _analyzer_props(wire: Any) -> Any:
    """Wire-form props as the SDK's analyzer hands them to a policy (protobuf Struct round trip:
    numbers become floats, as they do in the real analyzer)."""
    from pulumi_policy.deserialize import deserialize_properties
    from pulumi_policy.proxy import unknown_checking_proxy

    try:
        struct = _struct_round_trip(dict(wire or {}))
    except _NotStructValueError:
        from google.protobuf import json_format, struct_pb2

        struct = json_format.MessageToDict(json_format.ParseDict(dict(wire or {}), struct_pb2.Struct()))
    return unknown_checking_proxy(deserialize_properties(_without_resource_references(struct)))


class _NotStructValueError(Exception):
    """A value `_struct_round_trip` leaves to protobuf itself (which raises its own error)."""


def _struct_round_trip(value: Any) -> Any:
    """What `MessageToDict(ParseDict(value, Struct()))` returns, without building the message (it was
    2 s of the prod plan): numbers become doubles (protobuf 5.29 json_format: `_ConvertValueMessage`
    sets `number_value`, `_FieldToJsonObject` returns the double as is), mappings with string keys,
    lists, strings, booleans and None stay. Anything else (a tuple, a non-string key, an infinite
    number) goes to protobuf for its own answer or error."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isinf(number) or math.isnan(number):
            raise _NotStructValueError
        return number
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _NotStructValueError
        return {k: _struct_round_trip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_struct_round_trip(v) for v in value]
    raise _NotStructValueError


def _without_resource_references(value: Any) -> Any:
    """Resource references (a component or resource passed as an input, e.g. pulumi-eks's
    `ManagedNodeGroup(cluster=...)`) as the engine hands them to an analyzer, which the Policy SDK
    cannot deserialize: a custom resource's id, else its URN."""
    if isinstance(value, dict):
        if is_resource_reference(value):
            return plain(value)
        return {k: _without_resource_references(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_resource_references(v) for v in value]
    return value


def _options(resource: CapturedResource) -> Any:
    from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions

    return PolicyResourceOptions(
        resource.protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], resource.parent
    )
