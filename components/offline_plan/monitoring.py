"""What a stack's monitoring deploys, read from its offline plan: the rules of its GpuObservability.

`inference-infra monitoring rules --stack` prints these, so the command shows what the stack
would deploy whatever its program: a program that builds `GpuObservability` from any settings,
the reference stack or another, is planned offline (`capture_stack`) and the PrometheusRule the
component registers is read back. The engine does not keep the order of an object's keys, so
the rule file is written back in the order Prometheus documents and the library writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan.model import Capture

GPU_OBSERVABILITY = "inference-infra:k8s:GpuObservability"
PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"

# Key order of a Prometheus rule file (prometheus.io, recording and alerting rules), then the
# labels and annotations in the order components.monitoring.rules writes them; any other key
# follows, in sorted order.
_GROUP_KEYS = ("name", "interval", "query_offset", "limit", "labels", "rules")
_RULE_KEYS = ("record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations")
_LABEL_KEYS = (
    "severity",
    "category",
    "cloud",
    "instance_type",
    "accelerator",
    "pool",
    "latency",
    "job",
    "slo",
)
_ANNOTATION_KEYS = ("summary", "description", "runbook_url")


def deployed_rule_files(capture: Capture) -> dict[str, dict[str, Any]]:
    """Each GpuObservability's rule file ({"groups": [...]}) by component name, in registration
    order: the groups of every PrometheusRule under it."""
    found: dict[str, dict[str, Any]] = {}
    for component in capture.of_type(GPU_OBSERVABILITY):
        rules = [r for r in capture.descendants(component) if r.type == PROMETHEUS_RULE]
        rules.sort(key=capture.resources.index)
        groups = [g for r in rules for g in _groups(r.props)]
        found[component.name] = ordered_rule_file({"groups": groups})
    return found


def stack_rule_file(cwd: Path, stack: str, component: str | None = None) -> dict[str, Any]:
    """The rule file the stack's GpuObservability deploys (the one named `component` when the stack
    has several), from an offline plan of the stack's program."""
    from inference_infra.components.offline_plan import capture_stack

    files = deployed_rule_files(capture_stack(cwd, stack))
    if not files:
        raise InputError(
            f"stack {stack!r} deploys no GpuObservability (its program registers no {GPU_OBSERVABILITY}), "
            "so it has no rules; drop --stack to render the defaults."
        )
    if component is not None:
        if component not in files:
            raise InputError(
                f"stack {stack!r} has no GpuObservability named {component!r}; it has {_listed(files)}."
            )
        return files[component]
    if len(files) > 1:
        raise InputError(
            f"stack {stack!r} deploys {len(files)} GpuObservability components ({_listed(files)}): "
            "pick one with --component NAME."
        )
    return next(iter(files.values()))


def ordered_rule_file(rule_file: Mapping[str, Any]) -> dict[str, Any]:
    """A rule file with its keys in the documented order (groups, rules, labels, annotations)."""
    return {
        **_ordered(rule_file, ("groups",)),
        "groups": [_group(g) for g in rule_file.get("groups") or [] if isinstance(g, Mapping)],
    }


def _group(group: Mapping[str, Any]) -> dict[str, Any]:
    out = _ordered(group, _GROUP_KEYS)
    if isinstance(out.get("labels"), Mapping):
        out["labels"] = _ordered(out["labels"], _LABEL_KEYS)
    if isinstance(out.get("rules"), list):
        out["rules"] = [_rule(r) if isinstance(r, Mapping) else r for r in out["rules"]]
    return out


def _rule(rule: Mapping[str, Any]) -> dict[str, Any]:
    out = _ordered(rule, _RULE_KEYS)
    for key, order in (("labels", _LABEL_KEYS), ("annotations", _ANNOTATION_KEYS)):
        if isinstance(out.get(key), Mapping):
            out[key] = _ordered(out[key], order)
    return out


def _ordered(mapping: Mapping[str, Any], first: Sequence[str]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(first)}
    keys = sorted(mapping, key=lambda k: (rank.get(k, len(first)), k))
    return {k: mapping[k] for k in keys}


def _groups(props: Mapping[str, Any]) -> list[Any]:
    spec = props.get("spec")
    groups = spec.get("groups") if isinstance(spec, Mapping) else None
    return list(groups) if isinstance(groups, list) else []


def _listed(files: Mapping[str, Any]) -> str:
    return ", ".join(repr(name) for name in sorted(files))
