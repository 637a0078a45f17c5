"""allowed-accelerator-types: each environment uses only the accelerator types it allows.

Dev needs one small GPU, not eight H100s. `allowedTypes` maps an environment to
glob patterns of EC2 instance types, GCE machine types, TPU slice types and (for
N1 VMs) attached GPU types; the "*" entry covers every other environment. The
environment is the policy config's `environment`, else the resource's
Environment tag. Instances, VMs, TPU slices, templates and capacity
reservations are all checked: each of them buys or launches accelerators.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.inventory import accelerator_use
from inference_infra.policy.rules._base import Outcome, Resource, not_applicable, passed, resource_policy
from inference_infra.policy.rules._tags import environment_of

NAME = "allowed-accelerator-types"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Accelerator instance, machine and TPU types are among those allowed for the environment."
# Outside production: single-accelerator machines and the smallest TPU slices.
SMALL_TYPES = [
    "g4dn.xlarge",
    "g4dn.2xlarge",
    "g5.xlarge",
    "g5.2xlarge",
    "g6.xlarge",
    "g6.2xlarge",
    "g6e.xlarge",
    "inf2.xlarge",
    "g2-standard-4",
    "g2-standard-8",
    "nvidia-tesla-t4",
    "nvidia-l4",
    "v5litepod-1",
    "v5litepod-4",
    "v6e-1",
]
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "environment": {
            "type": "string",
            "minLength": 1,
            "description": "The stack's environment; when unset, each resource's Environment tag decides.",
        },
        "allowedTypes": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string", "minLength": 1}},
            "default": {"prod": ["*"], "production": ["*"], "*": SMALL_TYPES},
            "description": 'Environment -> glob patterns of allowed types ("g6.*", "v5litepod-*"); '
            '"*" is every other environment.',
        },
    }
)


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    use = accelerator_use(resource.type, resource.props)
    if use is None:
        return not_applicable("applies to resources that run, launch or reserve accelerators")
    environment = environment_of(resource, config)
    allowed_types = config["allowedTypes"]
    key = environment if environment in allowed_types else "*"
    patterns = allowed_types.get(key)
    where = f"environment {environment!r}" if environment else "an environment with no Environment tag"
    if patterns is None:
        return not_applicable(f"allowedTypes has no entry for {where} and no '*' entry")
    # A SageMaker ml.g5.xlarge is judged as the g5.xlarge it runs on.
    # A group that may launch several types (node group instanceTypes, overrides) is judged on all.
    names = (
        [t.removeprefix("ml.") for t in use.all_types]
        if use.in_catalog
        else [kind for kind, _ in use.guest_accelerators]
    )
    if not (refused := [n for n in names if not any(fnmatchcase(n, p) for p in patterns)]):
        return passed()
    return Outcome(
        violations=(
            f"{resource.label} uses {', '.join(refused)}, which {where} does not allow; allowed there: "
            f"{', '.join(patterns) or '(none)'} (config allowedTypes[{key!r}]).",
        )
    )


POLICY = resource_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
