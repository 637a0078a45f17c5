"""Launch and instance templates by reference: what an instance, group or fleet launches from.

An EC2 instance, Auto Scaling group or fleet may take its instance type and market from a
launch template, and a managed instance group its machine from an instance template. The
readers resolve such references through a `TemplateLookup` built here from the stack's
resources (the offline plan's capture, or what a stack policy sees).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference_infra.components.resources.links import Linked, StackIndex
from inference_infra.components.resources.props import UNKNOWN_VALUE
from inference_infra.components.resources.types import (
    AWS_LAUNCH_CONFIGURATION,
    AWS_LAUNCH_TEMPLATE,
    GCP_INSTANCE_TEMPLATE,
    GCP_REGION_INSTANCE_TEMPLATE,
)
from inference_infra.components.resources.use import TemplateLookup

_GCE_API = "https://www.googleapis.com/compute/v1/"


def _gce_path(ref: str) -> str:
    """A GCE self link (or self link with ?uniqueId=) as its resource path: projects/.../name."""
    return ref.removeprefix(_GCE_API).split("?", 1)[0]


def template_index(resources: Sequence[Linked]) -> TemplateLookup:
    """Resolves a launchTemplate reference (id or name) to the AWS template's props, and a managed
    instance group's instanceTemplate (id, self link or unique self link) to the GCE template's."""
    by_ref: dict[str, Mapping[str, Any]] = {}
    for r in resources:
        if r.type in (AWS_LAUNCH_TEMPLATE, AWS_LAUNCH_CONFIGURATION):
            props = r.props
            for ref in (r.id, props.get("name")):
                if isinstance(ref, str):
                    by_ref[ref] = props
        elif r.type in (GCP_INSTANCE_TEMPLATE, GCP_REGION_INSTANCE_TEMPLATE) and isinstance(r.id, str):
            by_ref[_gce_path(r.id)] = r.props

    def template_of(reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        # instances, groups, Spot Fleets: {id | name}; mixed-instances policies, EC2 Fleets:
        # {launchTemplateId | launchTemplateName}
        for key in ("id", "name", "launchTemplateId", "launchTemplateName"):
            if isinstance(reference.get(key), str) and reference[key] in by_ref:
                return by_ref[reference[key]]
        link = reference.get("selfLink")
        return by_ref.get(_gce_path(link)) if isinstance(link, str) else None

    return template_of


_TEMPLATE_TYPES = (
    AWS_LAUNCH_TEMPLATE,
    AWS_LAUNCH_CONFIGURATION,
    GCP_INSTANCE_TEMPLATE,
    GCP_REGION_INSTANCE_TEMPLATE,
)
_REF_KEYS = ("id", "name", "launchTemplateId", "launchTemplateName", "selfLink")


def holder_template_lookup(template_of: TemplateLookup, stack: StackIndex, holder: Linked) -> TemplateLookup:
    """template_of for one resource: a reference whose id or name is not known until deploy time
    (`pulumi preview` before the template exists, or a template's generated name) resolves to the
    one template the resource depends on."""

    def lookup(reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        found = template_of(reference)
        if found is not None or not any(reference.get(k) is UNKNOWN_VALUE for k in _REF_KEYS):
            return found
        candidates = stack.dependencies(holder, _TEMPLATE_TYPES)
        return candidates[0].props if len(candidates) == 1 else None

    return lookup
