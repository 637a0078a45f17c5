"""Reading tags and labels the way AWS and GCP apply them, for the rules.

AWS: a resource's own `tags` over `tagsAll` over the provider's `defaultTags`
(an Auto Scaling group lists them as `{key, value, propagateAtLaunch}`).
GCP: `labels` over the provider's `defaultLabels`, with keys and values in GCP's
label alphabet (`CostCenter` -> `cost-center`; see inference_infra.components.tagging).
Which types take tags at all is read from the provider SDKs (`tag_field`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyConfigSchema

from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_BATCH_COMPUTE_ENVIRONMENT,
    AWS_EC2_FLEET,
    AWS_EKS_NODE_GROUP,
    AWS_LAUNCH_CONFIGURATION,
    AWS_LAUNCH_TEMPLATE,
    AWS_SPOT_FLEET,
    GCP_GKE_NODE_POOL,
    GCP_GROUP_MANAGERS,
    GCP_INSTANCE_TEMPLATE,
    GCP_TPU_QUEUED_RESOURCE,
    Unknown,
    get_path,
)
from inference_infra.components.tagging import (
    AUTO_SHUTDOWN,
    ENVIRONMENT,
    gcp_label_key,
    is_production,
    tag_field,
)
from inference_infra.policy.rules._base import UNKNOWN, Outcome, Resource, not_applicable


@dataclass(frozen=True)
class TagSet:
    """The tags (AWS) or labels (GCP) a resource ends up with."""

    field: str  # "tags" or "labels"
    values: Mapping[str, Any]  # key -> value; UNKNOWN where not known yet
    known: bool  # False when the map itself is not known yet (preview)

    @property
    def gcp(self) -> bool:
        return self.field in ("labels", "resourceLabels", "nodeConfig.resourceLabels")

    def key(self, tag_key: str) -> str:
        """The key a tag has on this resource ('CostCenter' or 'cost-center')."""
        return gcp_label_key(tag_key) if self.gcp else tag_key

    def get(self, tag_key: str) -> Any:
        return self.values.get(self.key(tag_key))


def cost_tags(resource: Resource) -> TagSet | None:
    """The resource's own tags/labels, or None when its type takes none."""
    if resource.type == GCP_GKE_NODE_POOL:  # the nodes' GCE labels (resourceLabels, over k8s labels)
        config = resource.props.get("nodeConfig")
        if config is UNKNOWN:
            return TagSet("nodeConfig.resourceLabels", {}, False)
        config = _mapping(config)
        own = config.get("resourceLabels")
        merged = {**_mapping(config.get("labels")), **_mapping(own)}
        defaults = _mapping(resource.provider_value("defaultLabels"))
        return TagSet("nodeConfig.resourceLabels", {**defaults, **merged}, own is not UNKNOWN)
    field = tag_field(resource.type)
    if field is None:
        return None
    own = resource.props.get(field)
    if field in ("labels", "resourceLabels"):
        defaults = _mapping(resource.provider_value("defaultLabels"))
        return TagSet(field, {**defaults, **_mapping(own)}, own is not UNKNOWN)
    defaults = _mapping(_mapping(resource.provider_value("defaultTags")).get("tags"))
    tags_all = resource.props.get("tagsAll")
    if resource.type == AWS_AUTOSCALING_GROUP:
        own = _asg_tags(own, propagated_only=False)
    known = own is not UNKNOWN or isinstance(tags_all, Mapping)
    return TagSet(field, {**defaults, **_mapping(tags_all), **_mapping(own)}, known)


def instance_tags(resource: Resource, template: Mapping[str, Any] | None = None) -> TagSet | None:
    """The tags the machines a resource runs or launches carry.

    An instance or VM: its own. A launch template: its `tagSpecifications` for instances (a launch
    configuration: none). An Auto Scaling group: its template's instance tags, then the tags it
    propagates at launch. A Batch compute environment: its template's, then `computeResources.tags`
    (Batch merges them, its own winning). An EKS managed node group or an EC2 Fleet: its template's
    only (neither puts its own tags on the instances). A Spot Fleet: each launch specification's
    tags, or its template's. A queued TPU resource: the labels of its (first) node. A managed
    instance group: its template's labels. An instance launched from a template: the template's,
    its own winning.

    Sources (read 2026-11-25): Batch, docs.aws.amazon.com/batch/latest/userguide/launch-templates.html
    ("Amazon EC2 tags are merged between the launch template and the compute environment"); EKS,
    docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html (node group tags "do not
    propagate to any other resources associated with the node group, such as the Amazon EC2
    instances").
    """
    if resource.type in GCP_GROUP_MANAGERS:
        return instance_tags(Resource(GCP_INSTANCE_TEMPLATE, "", template)) if template is not None else None
    inherited = _template_instance_tags(template)
    if resource.type == AWS_BATCH_COMPUTE_ENVIRONMENT:
        own = get_path(resource.props, "computeResources", "tags")
        return _merged(inherited, TagSet("tags", _mapping(own), own is not UNKNOWN))
    if resource.type in (AWS_EKS_NODE_GROUP, AWS_EC2_FLEET):
        return inherited if inherited is not None else TagSet("tags", {}, True)
    if resource.type == AWS_SPOT_FLEET and inherited is None:
        specs = resource.props.get("launchSpecifications")
        if specs is UNKNOWN:
            return TagSet("tags", {}, False)
        first = specs[0] if isinstance(specs, list) and specs else {}
        tags = get_path(first, "tags")
        return TagSet("tags", _mapping(tags), tags is not UNKNOWN)
    if resource.type == AWS_SPOT_FLEET:
        return inherited
    if resource.type == GCP_TPU_QUEUED_RESOURCE:
        labels = get_path(resource.props, "tpu", "nodeSpecs", 0, "node", "labels")
        return TagSet("labels", _mapping(labels), labels is not UNKNOWN)
    if resource.type == AWS_LAUNCH_TEMPLATE:
        return _template_instance_tags(resource.props)
    if resource.type == AWS_LAUNCH_CONFIGURATION:
        return TagSet("tags", {}, True)
    if resource.type == AWS_AUTOSCALING_GROUP:
        own = resource.props.get("tags")
        return _merged(
            inherited, TagSet("tags", _mapping(_asg_tags(own, propagated_only=True)), own is not UNKNOWN)
        )
    own_tags = cost_tags(resource)
    if template is not None and own_tags is not None and inherited is not None:
        return _merged(inherited, own_tags)
    return own_tags


def _template_instance_tags(template: Mapping[str, Any] | None) -> TagSet | None:
    """The tags a launch template puts on the instances it launches; None without a template."""
    if template is None:
        return None
    specs = template.get("tagSpecifications")
    if specs is UNKNOWN:
        return TagSet("tags", {}, False)
    for spec in specs if isinstance(specs, list) else []:
        if isinstance(spec, Mapping) and spec.get("resourceType") == "instance":
            tags = spec.get("tags")
            return TagSet("tags", _mapping(tags), tags is not UNKNOWN)
    return TagSet("tags", {}, True)


def _merged(first: TagSet | None, then: TagSet) -> TagSet:
    """first's tags with then's over them (known only when both are)."""
    if first is None:
        return then
    return TagSet(then.field, {**first.values, **then.values}, first.known and then.known)


def auto_shutdown(tags: TagSet | None) -> bool | Unknown | None:
    """True/False from the AutoShutdown tag (auto-shutdown label); None when absent."""
    if tags is None:
        return None
    value = tags.get(AUTO_SHUTDOWN)
    if value is UNKNOWN or (value is None and not tags.known):
        return UNKNOWN
    if not isinstance(value, str):
        return None
    return value.strip().lower() == "true"


def environment_of(resource: Resource, config: Mapping[str, Any]) -> str | None:
    """The environment a resource belongs to: the policy config's `environment`, else its
    Environment tag (environment label), else None."""
    configured = config.get("environment")
    if isinstance(configured, str) and configured:
        return configured
    tags = cost_tags(resource)
    value = tags.get(ENVIRONMENT) if tags is not None else None
    return value if isinstance(value, str) and value else None


def production_schema(tagged: str = "each resource's") -> PolicyConfigSchema:
    """The config of a rule that applies in production only: the stack's `environment` (when unset,
    the Environment tag of `tagged` decides) and the environments that count as `production`."""
    return PolicyConfigSchema(
        properties={
            "environment": {
                "type": "string",
                "default": "",
                "description": f"The stack's environment; when unset, {tagged} Environment tag decides.",
            },
            "production": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Further environments that count as production, beside every name that "
                "starts with prod or prd (components.tagging.is_production).",
            },
        }
    )


def counts_as_production(environment: str | None, also: Any = ()) -> bool:
    """The pack's one production test: the library's rule (a name starting with prod or prd,
    `components.tagging.is_production`), or a name the policy config lists as production too."""
    if environment is None:
        return False
    listed = also if isinstance(also, list | tuple) else ()
    return is_production(environment) or environment in listed


def production_environment(resource: Resource, config: Mapping[str, Any]) -> str | None:
    """The resource's environment (`environment_of`) when it counts as production, else None."""
    environment = environment_of(resource, config)
    return environment if counts_as_production(environment, config.get("production")) else None


def not_production(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    """Not applicable: the resource's environment is not production (or it has none)."""
    environment = environment_of(resource, config)
    where = f"environment {environment!r}" if environment else "an environment with no Environment tag"
    return not_applicable(f"{where} is not production")


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _asg_tags(value: Any, *, propagated_only: bool) -> dict[str, Any] | Any:
    if value is UNKNOWN or not isinstance(value, list):
        return value
    found: dict[str, Any] = {}
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            continue
        if propagated_only and item.get("propagateAtLaunch") is not True:
            continue
        found[item["key"]] = item.get("value")
    return found
