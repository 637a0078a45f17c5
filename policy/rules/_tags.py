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

from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_LAUNCH_TEMPLATE,
    GCP_GKE_NODE_POOL,
    GCP_GROUP_MANAGERS,
    GCP_INSTANCE_TEMPLATE,
    GCP_TPU_QUEUED_RESOURCE,
    Unknown,
    get_path,
)
from inference_infra.components.tagging import AUTO_SHUTDOWN, ENVIRONMENT, gcp_label_key, tag_field
from inference_infra.policy.rules._base import UNKNOWN, Resource


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

    An instance or VM: its own. A launch template: its `tagSpecifications` for
    instances. An Auto Scaling group: the tags it propagates at launch. A queued
    TPU resource: the labels of its (first) node. Given the launch template an
    instance or group launches from (stack policies), the template's instance tags
    come first and the instance's or group's own win, as EC2 applies them.
    """
    if template is not None and resource.type in GCP_GROUP_MANAGERS:  # its VMs carry the template's labels
        return instance_tags(Resource(GCP_INSTANCE_TEMPLATE, "", template))
    if template is not None and resource.type != AWS_LAUNCH_TEMPLATE:
        own = instance_tags(resource)
        inherited = instance_tags(Resource(AWS_LAUNCH_TEMPLATE, "", template))
        if own is None or inherited is None:
            return own
        return TagSet(own.field, {**inherited.values, **own.values}, own.known and inherited.known)
    if resource.type == GCP_TPU_QUEUED_RESOURCE:
        labels = get_path(resource.props, "tpu", "nodeSpecs", 0, "node", "labels")
        return TagSet("labels", _mapping(labels), labels is not UNKNOWN)
    if resource.type == AWS_LAUNCH_TEMPLATE:
        specs = resource.props.get("tagSpecifications")
        if specs is UNKNOWN:
            return TagSet("tags", {}, False)
        for spec in specs if isinstance(specs, list) else []:
            if isinstance(spec, Mapping) and spec.get("resourceType") == "instance":
                tags = spec.get("tags")
                return TagSet("tags", _mapping(tags), tags is not UNKNOWN)
        return TagSet("tags", {}, True)
    if resource.type == AWS_AUTOSCALING_GROUP:
        own = resource.props.get("tags")
        return TagSet("tags", _mapping(_asg_tags(own, propagated_only=True)), own is not UNKNOWN)
    return cost_tags(resource)


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
