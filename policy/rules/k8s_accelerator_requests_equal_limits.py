"""k8s-accelerator-requests-equal-limits: every container asks for its accelerators exactly.

Accelerators are extended resources: Kubernetes cannot overcommit them, so a container that
requests an accelerator must limit it to the same amount (the API server refuses a request without
a limit, or one that differs from it, at deploy time: `pulumi preview` would pass and `pulumi up`
fail half-way). This catches both in preview, for nvidia.com/gpu, aws.amazon.com/neuron(core|device),
google.com/tpu and the other device plugins' names, on every container of every pod template of a
Kubernetes workload (init and ephemeral containers included). A limit alone is fine: the request
defaults to it. Amounts are compared as quantities ('1' equals 1), and must be whole devices.
A Helm release's values are judged the same way in every `resources`-shaped block (a mapping with
`requests` or `limits`) that names an accelerator.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import is_accelerator_resource
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    resource_policy,
    show,
)
from inference_infra.policy.rules._k8s import (
    WORKLOAD_NOUNS,
    accelerator_amounts,
    accelerator_templates,
    helm_values,
    is_workload,
    mappings,
    where,
)

NAME = "k8s-accelerator-requests-equal-limits"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Kubernetes containers that request accelerators (nvidia.com/gpu, aws.amazon.com/neuron, "
    "google.com/tpu) limit them to the same whole number."
)
CONFIG_SCHEMA = PolicyConfigSchema(properties={})

# Kubernetes quantity suffixes (k8s.io/apimachinery/pkg/api/resource/quantity.go, read 2026-12-02).
_SUFFIX = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
}
_QUANTITY = re.compile(r"^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")


def quantity(value: Any) -> Decimal | None:
    """A quantity as a number ('2', 2, '2000m' -> 2); None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))
    match = _QUANTITY.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    try:
        return Decimal(match.group(1)) * _SUFFIX[match.group(2) or ""]
    except InvalidOperation:
        return None


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    values = helm_values(resource)
    if values is not None:
        return _check_helm(resource, values)
    if not is_workload(resource):
        return not_applicable(f"applies to {WORKLOAD_NOUNS}, and Helm values that request accelerators")
    templates = accelerator_templates(resource)
    if not templates:
        return not_applicable("its pods use no accelerator")
    found = Findings()
    for template in templates:
        label = where(resource, template)
        for path, container in template.containers():
            _judge(label, path, container, found)
    return found.outcome()


def _section(resources: Any, key: str, block: str, found: Findings) -> Mapping[str, Any] | None:
    value = resources.get(key) if isinstance(resources, Mapping) else None
    if value is UNKNOWN:
        found.not_known(f"{block}.{key}")
        return None
    return value if isinstance(value, Mapping) else {}


def _check_helm(resource: Resource, values: Any) -> Outcome:
    """A Helm release: every `resources`-shaped block of its values that names an accelerator."""
    if values is UNKNOWN:
        return Outcome(unknown=("values",))
    blocks = [(path, block) for path, block in mappings(values) if accelerator_amounts(block)]
    if not blocks:
        return not_applicable("a Helm release whose values request no accelerator")
    found = Findings()
    for path, block in blocks:
        _judge_resources(resource.label, path, block, "in its values", found)
    return found.outcome()


def _judge(label: str, path: str, container: Mapping[str, Any], found: Findings) -> None:
    resources = container.get("resources")
    if resources is UNKNOWN:
        found.not_known(f"{path}.resources")
        return
    name = container.get("name") if isinstance(container.get("name"), str) else path
    _judge_resources(label, f"{path}.resources", resources, f"on container {name!r}", found)


def _judge_resources(label: str, block: str, resources: Any, subject: str, found: Findings) -> None:
    """One `resources` block at path `block`; `subject` says whose ('on container 'vllm'')."""
    requests = _section(resources, "requests", block, found)
    limits = _section(resources, "limits", block, found)
    if requests is None or limits is None:
        return
    for kind in sorted({k for k in (*requests, *limits) if is_accelerator_resource(k)}):
        asked, capped = requests.get(kind), limits.get(kind)
        if asked is UNKNOWN or capped is UNKNOWN:
            found.not_known(f"{block}.{'requests' if asked is UNKNOWN else 'limits'}.{kind}")
            continue
        for section, amount in (("requests", asked), ("limits", capped)):
            number = quantity(amount) if amount is not None else None
            if amount is not None and (number is None or number != number.to_integral_value() or number < 1):
                found.violation(
                    f"{label} sets {block}.{section}.{kind} to {show(amount)} {subject}; accelerators are "
                    "counted in whole devices: give a whole number of at least 1."
                )
        if asked is not None and capped is None:
            found.violation(
                f"{label} requests {kind}: {show(asked)} {subject} without a limit ({block}.limits.{kind}); "
                "Kubernetes refuses that for an accelerator: set the limit to the same number (or set only "
                "the limit)."
            )
        elif asked is not None and quantity(asked) != quantity(capped):
            found.violation(
                f"{label} requests {kind}: {show(asked)} but limits it to {show(capped)} {subject}; "
                "accelerators cannot be overcommitted: make the request equal the limit."
            )


POLICY = resource_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
