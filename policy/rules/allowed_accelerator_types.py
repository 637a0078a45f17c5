"""allowed-accelerator-types: each environment uses only the accelerator types it allows.

Dev needs one small GPU, not eight H100s. `allowedTypes` maps an environment to
glob patterns of EC2 instance types, GCE machine types, TPU slice types and (for
N1 VMs) attached GPU types; the "*" entry covers every other environment. The
environment is the policy config's `environment`, else the resource's
Environment tag. Instances, VMs, TPU slices, templates and capacity
reservations are all checked: each of them buys or launches accelerators. So are
Karpenter NodePools, on every accelerator type their requirements allow, and
groups on every type they may launch (node group instanceTypes, overrides).

In production (`@production`: every name starting with prod or prd) every type is allowed by default;
outside production the default is `@one-accelerator`: every catalog type with exactly one
accelerator (one GPU, Neuron chip or TPU chip; an N1 VM with one attached GPU), derived from the
catalog rather than listed by hand, so a new single-GPU size is allowed when the catalog learns it.
The token may be combined with glob patterns to widen an environment's list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.planner.allowed import (
    DEFAULT_ALLOWED_TYPES,
    ONE_ACCELERATOR,
    PRODUCTION_KEY,
    allowed_patterns,
    allows,
    one_accelerator_types,  # noqa: F401 (re-exported: the rule names its token's types)
)
from inference_infra.components.resources import accelerator_use, node_pool_types
from inference_infra.policy.rules._base import (
    Outcome,
    Resource,
    not_applicable,
    passed,
    resource_policy,
    rule_metadata,
)
from inference_infra.policy.rules._tags import environment_of

NAME = "allowed-accelerator-types"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Accelerator instance, machine and TPU types are among those allowed for the environment."
# Outside production: every catalog type with one accelerator (one_accelerator_types). The reading of
# allowedTypes lives in the domain (components/planner/allowed.py) so the capacity planner picks among
# the same machines this policy allows.


CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "environment": {
            "type": "string",
            "minLength": 1,
            "description": "The stack's environment; when unset, each resource's Environment tag decides.",
        },
        "allowedTypes": {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "pattern": f"^({ONE_ACCELERATOR}|[^@].*)$"},
            },
            "default": {env: list(patterns) for env, patterns in DEFAULT_ALLOWED_TYPES.items()},
            "description": 'Environment -> glob patterns of allowed types ("g6.*", "v5litepod-*"), or '
            f'"{ONE_ACCELERATOR}" (every catalog type with one accelerator); "{PRODUCTION_KEY}" is every '
            'production environment not listed by name (a name starting with prod or prd); "*" is every '
            "other environment.",
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
    found, key = allowed_patterns(environment, config["allowedTypes"])
    patterns = list(found) if found is not None else None
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
    single = use is None or sum(n for _, n in use.guest_accelerators) <= 1
    if not (refused := [n for n in names if not any(allows(p, n, single) for p in patterns)]):
        return passed()
    shown = ", ".join(refused[:8]) + (f" and {len(refused) - 8} more" if len(refused) > 8 else "")
    verb, fix = (
        ("may launch", "; narrow its requirements (instance-type or instance-family) to allowed types")
        if use is None
        else ("uses", "")
    )
    entry = f"allowedTypes[{environment!r}]" if environment and key == "*" else f"allowedTypes[{key!r}]"
    return Outcome(
        violations=(
            f"{resource.label} {verb} {shown}, which {where} does not allow; allowed there: "
            f"{_listed(patterns)} (config allowedTypes[{key!r}]){fix}. To widen it, set {entry} in the "
            f'policy config, e.g. ["{ONE_ACCELERATOR}", "{refused[0]}"].',
        )
    )


def _listed(patterns: list[str]) -> str:
    shown = [
        f"{p} (every catalog type with one accelerator, e.g. g6.xlarge, g6e.2xlarge, v5litepod-1)"
        if p == ONE_ACCELERATOR
        else p
        for p in patterns
    ]
    return ", ".join(shown) or "(none)"


POLICY = resource_policy(**rule_metadata(__name__), check=check)
