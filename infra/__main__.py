"""The inference-infra reference stack.

Reads the stack's typed config, tags everything it creates, then deploys the
parts the config asks for. A part is a module of this package with
`validate(settings) -> list[Problem]` and `deploy(settings, built) -> dict` (the
stack outputs it adds; `built` carries what earlier parts made to later ones).
Every part validates its whole input before any part deploys, so a stack with
bad config registers nothing at all; a part imports its provider SDK only when
the stack uses it.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

import pulumi

from inference_infra.components.errors import InputError
from inference_infra.infra.stack_bounds import raw_stack_values, refuse_machines_over_bounds

if TYPE_CHECKING:
    from inference_infra.infra.config import StackSettings


def active_parts(settings: StackSettings) -> list[ModuleType]:
    """The stack's parts, in deployment order, for the sections its config sets."""
    parts: list[ModuleType] = []
    if (
        settings.aws_gpu_fleets
        or settings.aws_inferentia_fleets
        or settings.aws_network
        or settings.model_store
        or settings.efs_model_cache
    ):
        from inference_infra.infra import aws_stack

        parts.append(aws_stack)
    if settings.watchdog is not None:
        from inference_infra.infra import watchdog_stack

        parts.append(watchdog_stack)
    if settings.uses_gcp:
        from inference_infra.infra import gcp_stack

        parts.append(gcp_stack)
    if settings.endpoints:
        from inference_infra.infra import endpoints_stack

        parts.append(endpoints_stack)  # after the fleets it fronts
    if settings.kubernetes_pools:
        from inference_infra.infra import k8s_stack

        parts.append(k8s_stack)
    from inference_infra.infra import elastic_ops_stack

    if elastic_ops_stack.applies(settings):
        parts.append(elastic_ops_stack)  # after the fleets and the endpoints it wires to
    if settings.observability is not None:
        from inference_infra.infra import observability_stack

        parts.append(observability_stack)
    return parts


def main() -> None:
    # Counts first, from the raw stack file: a pool of 100,000 is refused before the typed config
    # and the components are imported (most of a second), let alone planned.
    refuse_machines_over_bounds(raw_stack_values(), stack=pulumi.get_stack())
    from inference_infra.components.planner.allowed import stack_pack_allowed, stack_pack_config
    from inference_infra.components.tagging import register_cost_tags
    from inference_infra.infra.built import Built
    from inference_infra.infra.stack_file import config_error, load_stack_settings

    settings = load_stack_settings()
    parts = active_parts(settings)
    # The fleets' planner picks keep to the types the stack's own gate allows: the pack config the
    # offline plan read (--policy-config), else policy/config/<stack>.json, as `pulumi up` pairs it.
    with stack_pack_config(stack_pack_allowed() or _stack_pack_allowed(pulumi.get_stack())):
        if problems := [p for part in parts for p in part.validate(settings)]:
            raise config_error(pulumi.get_stack(), problems)  # names the stack file and its keys
        register_cost_tags(settings.cost_tags())
        built = Built()
        for part in parts:
            for key, value in part.deploy(settings, built).items():
                pulumi.export(key, value)
    pulumi.export("environment", settings.environment)


def _stack_pack_allowed(stack: str):  # -> PackAllowed | None
    """allowed-accelerator-types' settings in policy/config/<stack>.json beside Pulumi.yaml (the
    reference pack's config for the stack), or None without one."""
    import json

    from inference_infra.components import input_size
    from inference_infra.components.planner.allowed import pack_config_allowed
    from inference_infra.infra.config import _project_root

    path = _project_root() / "policy" / "config" / f"{stack}.json"
    try:
        text = input_size.read_text(path, input_size.MAX_CONFIG_FILE_BYTES, "policy config")
        return pack_config_allowed(json.loads(text), str(path))
    except (OSError, ValueError):
        return None


try:
    main()
except InputError as error:
    # A clean one-paragraph failure in `pulumi up` as in `inference-infra plan`.
    raise pulumi.RunError(str(error)) from None
