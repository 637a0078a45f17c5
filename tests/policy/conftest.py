"""Fixtures for the policy tests.

Three ways to run a policy, from the inside out:

- `check(module, type, props, ...)`: the rule's pure check on hand-written
  engine-shaped props (camelCase; `UNKNOWN` for a value not known yet), with the
  schema defaults under the given config. Returns the `Outcome`.
- `sdk(module, type, wire_props, ...)`: the rule's CrossGuard policy object, called
  as the SDK's analyzer calls it (props deserialized from the wire form, behind
  the SDK's unknown-checking proxy). Returns (messages, not-applicable reason,
  preview message).
- `run_pack(capture, name, config)`: the pack as `inference-infra plan` runs it on a
  capture (from `plan_of`), with only the named policy enabled (mandatory).
  Returns the `PolicyReport`. Component-based captures work the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.policy import _NotApplicableError
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from inference_infra.components.offline_plan.model import Capture
from inference_infra.components.offline_plan.policy import PolicyReport, _analyzer_props, evaluate
from inference_infra.components.offline_plan.policy_pack import LoadedPack, load_pack, reconcile
from inference_infra.policy.rules._base import Outcome, Resource, config_defaults

PACK_DIR = Path(__file__).resolve().parents[2] / "policy"
WIRE_UNKNOWN = UNKNOWN_STRING_VALUE  # how the engine sends a value not known yet


@pytest.fixture(scope="session")
def pack() -> LoadedPack:
    return load_pack(PACK_DIR)


@pytest.fixture
def check() -> Callable[..., Outcome]:
    def run(
        module: ModuleType,
        type_token: str,
        props: Mapping[str, Any],
        config: Mapping[str, Any] | None = None,
        *,
        name: str = "r",
        provider: Mapping[str, Any] | None = None,
    ) -> Outcome:
        settings = {**config_defaults(module.CONFIG_SCHEMA), **(config or {})}
        return module.check(Resource(type_token, name, props, provider=provider or {}), settings)

    return run


@pytest.fixture
def sdk() -> Callable[..., tuple[list[str], str | None, str | None]]:
    def run(
        module: ModuleType,
        type_token: str,
        wire_props: Mapping[str, Any],
        config: Mapping[str, Any] | None = None,
        *,
        name: str = "r",
        provider: Mapping[str, Any] | None = None,
    ) -> tuple[list[str], str | None, str | None]:
        urn = f"urn:pulumi:test::test::{type_token}::{name}"
        options = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
        provider_resource = (
            PolicyProviderResource("pulumi:providers:aws", _analyzer_props(provider), "urn:p", "default")
            if provider is not None
            else None
        )
        if isinstance(module.POLICY, StackValidationPolicy):  # judged per resource, with the stack at hand
            resource = PolicyResource(
                type_token, _analyzer_props(wire_props), urn, name, options, provider_resource, None, [], {}
            )
            args = StackValidationArgs([resource], config, {})
        else:
            args = ResourceValidationArgs(
                type_token, _analyzer_props(wire_props), urn, name, options, provider_resource, config, {}
            )
        messages: list[str] = []
        try:
            module.POLICY.validate(args, lambda message, urn=None: messages.append(message))
        except _NotApplicableError as e:
            return messages, e.reason, None
        except UnknownValueError as e:
            return messages, None, e.message
        return messages, None, None

    return run


@pytest.fixture
def run_pack(pack: LoadedPack) -> Callable[..., PolicyReport]:
    def run(capture: Capture, name: str, config: Mapping[str, Any] | None = None) -> PolicyReport:
        settings = reconcile(pack, {"all": ("disabled", {}), name: ("mandatory", dict(config or {}))}, "test")
        return evaluate(capture, pack, settings)

    return run
