"""required-cost-tags: every taggable resource carries the cost tags.

Accelerator hours are the bill; a resource nobody can attribute is a resource
nobody turns off. AWS resources carry CostCenter, Environment and Owner on
`tags` (or through `tagsAll` / the provider's defaultTags); GCP resources carry
the same as labels (`cost-center`, `environment`, `owner`). Accelerator
instances also carry AutoShutdown (`true`/`false`), which the idle watchdog
reads. A launch template must put the tags on the instances it launches, since
those are what is billed. Which types take tags is read from the provider SDKs.

What a group launches is judged too: the instances of an Auto Scaling group (its launch
template's or configuration's instance tags, then the tags it propagates at launch), a Batch
compute environment (its template's, then `computeResources.tags`), an EKS managed node group or
an EC2 Fleet (their template's only: neither tags its instances itself) and a Spot Fleet (its
launch specifications' tags, or its template's) must carry the cost tags, and AutoShutdown when
they are accelerators. That needs the stack's templates, so this is a stack policy that judges
each resource on its own.

Kubernetes workloads whose pods use accelerators (policy/rules/_k8s.py) carry the same cost tags as
labels on their pods (`spec.template.metadata.labels`, a Pod's own `metadata.labels`): pod labels are
what cost allocation (OpenCost, Kubecost, GKE cost allocation, EKS split cost allocation) groups
by. A label key may be the tag key (`CostCenter`), its GCP label form (`cost-center`), either under a
prefix (`example.com/cost-center`). AutoShutdown is not asked of pods: the watchdog stops machines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_BATCH_COMPUTE_ENVIRONMENT,
    AWS_EKS_NODE_GROUP,
    AWS_LAUNCH_TEMPLATE,
    AWS_SPOT_FLEET,
    TemplateLookup,
    accelerator_use,
    is_accelerator_instance,
)
from inference_infra.components.tagging import AUTO_SHUTDOWN, COST_TAG_KEYS, gcp_label_key, gcp_label_value
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    not_applicable,
    per_resource_stack_policy,
    rule_metadata,
)
from inference_infra.policy.rules._k8s import accelerator_templates, is_workload, known_mapping, where
from inference_infra.policy.rules._machines import AWS_LAUNCHERS, launch_template
from inference_infra.policy.rules._tags import TagSet, cost_tags, instance_tags

NAME = "required-cost-tags"
SEVERITY = Severity.MEDIUM
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Every taggable resource carries the cost tags (AWS tags, GCP labels): CostCenter, Environment, "
    "Owner, and AutoShutdown on accelerator instances."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "requiredTags": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": list(COST_TAG_KEYS),
            "description": "Tag keys every taggable resource carries (GCP: the label form of each key).",
        },
        "acceleratorTags": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "default": [AUTO_SHUTDOWN],
            "description": "More tag keys on resources that run accelerators.",
        },
        "allowedValues": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "default": {},
            "description": 'Allowed values per tag key, e.g. {"Environment": ["dev", "prod"]}.',
        },
        "launchTemplateInstanceTags": {
            "type": "boolean",
            "default": True,
            "description": "Also require the tags on the instances a launch template launches "
            "(its tagSpecifications). Turn off when an Auto Scaling group propagates them instead.",
        },
    }
)
_BOOLEAN_TAGS = {AUTO_SHUTDOWN: ("true", "false")}


APPLIES_TO = "resources that take tags (AWS) or labels (GCP), and Kubernetes accelerator workloads"


def check(
    resource: Resource, config: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> Outcome:
    if is_workload(resource):
        return _check_pod_labels(resource, config)
    tags = cost_tags(resource)
    if tags is None:
        return not_applicable(f"applies to {APPLIES_TO}")
    if not tags.known:
        return Outcome(unknown=(tags.field,))
    wanted = list(config["requiredTags"])
    if is_accelerator_instance(resource.type, resource.props):
        wanted += [k for k in config["acceleratorTags"] if k not in wanted]
    found = Findings()
    if missing := _missing(tags, wanted, found):
        keys = ", ".join(tags.key(k) for k in missing)
        noun, pronoun = _nouns(tags, len(missing))
        defaults = "defaultLabels" if tags.gcp else "defaultTags"
        found.violation(
            f"{resource.label} is missing the cost {noun} {keys}; "
            f"set {pronoun} on `{tags.field}` or the provider's {defaults}."
        )
    allowed_values = {**_BOOLEAN_TAGS, **config["allowedValues"]}
    for key, allowed in allowed_values.items():
        value = tags.get(key)
        if value is UNKNOWN or not isinstance(value, str) or not value.strip():
            continue
        accepted = [gcp_label_value(a) for a in allowed] if tags.gcp else list(allowed)
        if value not in accepted:
            found.violation(
                f"{resource.label} has {tags.key(key)}={value!r}, which is not allowed; "
                f"allowed: {', '.join(accepted)}."
            )
    if resource.type == AWS_LAUNCH_TEMPLATE and config["launchTemplateInstanceTags"]:
        _check_launched_instances(resource, config, found)
    if resource.type in AWS_LAUNCHERS:
        _check_group_instances(resource, config, template_of, found)
    return found.outcome()


_GROUP_ADVICE = {
    AWS_AUTOSCALING_GROUP: "propagate {it} at launch (propagateAtLaunch: true) or add {it} to its launch "
    "template's tagSpecifications for resourceType 'instance'",
    AWS_BATCH_COMPUTE_ENVIRONMENT: "set {it} on computeResources.tags (or its launch template's "
    "tagSpecifications)",
    AWS_EKS_NODE_GROUP: "EKS does not put a node group's tags on its instances: launch it from a template "
    "whose tagSpecifications tag resourceType 'instance'",
    AWS_SPOT_FLEET: "set {it} on each launch specification's tags, or its launch template's "
    "tagSpecifications",
}
_TEMPLATE_ADVICE = "add {it} to its launch template's tagSpecifications for resourceType 'instance'"


def _check_group_instances(
    resource: Resource, config: Mapping[str, Any], template_of: TemplateLookup | None, found: Findings
) -> None:
    """A group, node group, fleet or Batch environment: the tags its instances end up with."""
    tags = instance_tags(resource, launch_template(resource, template_of))
    if tags is None:
        return
    if not tags.known:
        found.not_known("launchTemplate.tagSpecifications")
        return
    wanted = list(config["requiredTags"])
    use = accelerator_use(resource.type, resource.props, template_of)
    if use is not None:
        wanted += [k for k in config["acceleratorTags"] if k not in wanted]
    if missing := _missing(tags, wanted, found, path="instance tags"):
        noun, pronoun = _nouns(tags, len(missing))
        what = f"{use.machine_type} instances" if use is not None else "instances"
        advice = _GROUP_ADVICE.get(resource.type, _TEMPLATE_ADVICE).format(it=pronoun)
        found.violation(
            f"{resource.label} launches {what} without the cost {noun} {', '.join(missing)}; {advice}."
        )


def _check_launched_instances(resource: Resource, config: Mapping[str, Any], found: Findings) -> None:
    tags = instance_tags(resource)
    if tags is None or not tags.known:
        found.not_known("tagSpecifications")
        return
    wanted = list(config["requiredTags"])
    if accelerator_use(resource.type, resource.props) is not None:
        wanted += [k for k in config["acceleratorTags"] if k not in wanted]
    if missing := _missing(tags, wanted, found, path="tagSpecifications"):
        noun, pronoun = _nouns(tags, len(missing))
        found.violation(
            f"{resource.label} launches instances without the cost {noun} {', '.join(missing)}; "
            f"add {pronoun} to its tagSpecifications for resourceType 'instance'."
        )


def _label_for(labels: Mapping[str, Any], tag_key: str) -> tuple[str, Any] | None:
    """(label key, value) of the label that carries a cost tag: its key as is, its GCP label form, or
    either under a prefix; None when the pod has none of them."""
    names = {tag_key, gcp_label_key(tag_key)}
    for key, value in labels.items():
        if isinstance(key, str) and key.rsplit("/", 1)[-1] in names:
            return key, value
    return None


def _check_pod_labels(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    templates = accelerator_templates(resource)
    if not templates:
        return not_applicable("a Kubernetes workload whose pods use no accelerator")
    found = Findings()
    for template in templates:
        if template.labels is UNKNOWN:
            found.not_known(template.labels_path or "metadata.labels")
            continue
        labels = template.labels if isinstance(template.labels, Mapping) else {}
        if not template.labels_path:  # a bare pod spec: its object's labels stand for its pods'
            labels = known_mapping(known_mapping(resource.props.get("metadata")).get("labels"))
        missing = []
        for key in config["requiredTags"]:
            hit = _label_for(labels, key)
            if hit is not None and hit[1] is UNKNOWN:
                found.not_known(f"{template.labels_path}.{hit[0]}")
            elif hit is None or not isinstance(hit[1], str) or not hit[1].strip():
                missing.append(gcp_label_key(key))
        where_to = template.labels_path or "metadata.labels"
        if missing:
            noun, pronoun = ("label", "it") if len(missing) == 1 else ("labels", "them")
            found.violation(
                f"{where(resource, template)} runs accelerator pods without the cost {noun} "
                f"{', '.join(missing)}; set {pronoun} on {where_to} (the pods' labels, which cost "
                "allocation reads)."
            )
        for key, allowed in config["allowedValues"].items():
            hit = _label_for(labels, key)
            if hit is None or not isinstance(hit[1], str) or not hit[1].strip():
                continue
            accepted = list(dict.fromkeys([*allowed, *(gcp_label_value(a) for a in allowed)]))
            if hit[1] not in accepted:
                found.violation(
                    f"{where(resource, template)} labels its pods {hit[0]}={hit[1]!r}, which is not "
                    f"allowed; allowed: {', '.join(accepted)}."
                )
    return found.outcome()


def _missing(tags: TagSet, wanted: Sequence[str], found: Findings, path: str | None = None) -> list[str]:
    missing = []
    for key in wanted:
        value = tags.get(key)
        if value is UNKNOWN:
            found.not_known(f"{path or tags.field}.{tags.key(key)}")
        elif value is None or (isinstance(value, str) and not value.strip()):
            missing.append(key)
    return missing


def _nouns(tags: TagSet, count: int) -> tuple[str, str]:
    noun = "label" if tags.gcp else "tag"
    return (noun, "it") if count == 1 else (f"{noun}s", "them")


POLICY = per_resource_stack_policy(**rule_metadata(__name__), check=check, applies_to=APPLIES_TO)
