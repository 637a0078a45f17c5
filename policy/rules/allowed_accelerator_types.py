"""allowed-accelerator-types: each environment uses only the accelerator types it allows.

Dev needs one small GPU, not eight H100s. `allowedTypes` maps an environment to
glob patterns of EC2 instance types, GCE machine types, TPU slice types and (for
N1 VMs) attached GPU types; the "*" entry covers every other environment. The
environment is the policy config's `environment`, else the resource's
Environment tag. Instances, VMs, TPU slices, templates and capacity
reservations are all checked: each of them buys or launches accelerators. So are
Karpenter NodePools, on every accelerator type their requirements allow, and
groups on every type they may launch (node group instanceTypes, overrides).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import accelerator_use, node_pool_types
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
    # A Karpenter NodePool launches nodes only for pending pods, but what its requirements allow
    # is what it may launch: every such accelerator type is judged.
    pool_types = node_pool_types(resource.type, resource.props) if use is None else []
    if use is None and not pool_types:
        return not_applicable(
            "applies to resources that run, launch or reserve accelerators, and to Karpenter NodePools "
            "whose requirements allow accelerator types"
        )
    environment = environment_of(resource, config)
    allowed_types = config["allowedTypes"]
    key = environment if environment in allowed_types else "*"
    patterns = allowed_types.get(key)
    where = f"environment {environment!r}" if environment else "an environment with no Environment tag"
    if patterns is None:
        return not_applicable(f"allowedTypes has no entry for {where} and no '*' entry")
    # A SageMaker ml.g5.xlarge is judged as the g5.xlarge it runs on; a group that may launch
    # several types (node group instanceTypes, overrides) is judged on all of them.
    if use is None:
        names = pool_types
    elif use.in_catalog or not use.guest_accelerators:  # (an EC2 type the catalog lacks, too)
        names = [t.removeprefix("ml.") for t in use.all_types]
    else:
        names = [kind for kind, _ in use.guest_accelerators]
    if not (refused := [n for n in names if not any(fnmatchcase(n, p) for p in patterns)]):
        return passed()
    shown = ", ".join(refused[:8]) + (f" and {len(refused) - 8} more" if len(refused) > 8 else "")
    verb, fix = (
        ("may launch", "; narrow its requirements (instance-type or instance-family) to allowed types")
        if use is None
        else ("uses", "")
    )
    return Outcome(
        violations=(
            f"{resource.label} {verb} {shown}, which {where} does not allow; allowed there: "
            f"{', '.join(patterns) or '(none)'} (config allowedTypes[{key!r}]){fix}.",
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
