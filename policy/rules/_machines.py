"""Which resources run or launch accelerator machines, for the rules (via components.resources).

Which types start accelerator machines (`AWS_MACHINES`, `GCP_MACHINES`) and which launch EC2 instances
from a launch template (`AWS_LAUNCHERS`) is the domain's (`components.resources.types`): the rules
import them from here with the helpers that read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inference_infra.components.resources import (
    AWS_AUTOSCALING_GROUP,
    AWS_BATCH_COMPUTE_ENVIRONMENT,
    AWS_EC2_FLEET,
    AWS_EKS_NODE_GROUP,
    AWS_INSTANCE,
    AWS_LAUNCH_CONFIGURATION,
    AWS_LAUNCH_TEMPLATE,
    AWS_SPOT_FLEET,
    GCP_GROUP_MANAGERS,
    AcceleratorUse,
    TemplateLookup,
    accelerator_use,
    get_path,
    group_manager_template_refs,
)
from inference_infra.components.resources import AWS_LAUNCHERS as AWS_LAUNCHERS
from inference_infra.components.resources import AWS_MACHINES as AWS_MACHINES
from inference_infra.components.resources import GCP_MACHINES as GCP_MACHINES
from inference_infra.policy.rules._base import Resource

# (Node pools, groups, fleets and SageMaker endpoints count as the machines they launch.)
MACHINE_NOUNS = "accelerator instances, VMs, TPU slices and the templates that launch them"


def accelerator_machine(
    resource: Resource,
    types: frozenset[str] = AWS_MACHINES | GCP_MACHINES,
    template_of: TemplateLookup | None = None,
):
    """The accelerator use of a resource that starts accelerator machines, else None.
    template_of (stack policies) lets a group or instance take its type from its launch template."""
    if resource.type not in types:
        return None
    return accelerator_use(resource.type, resource.props, template_of)


def untyped_template(resource: Resource) -> bool:
    """An AWS launch template that names no instance type: whoever launches from it picks
    one, accelerators included, so the host-hardening rules judge it too."""
    return resource.type == AWS_LAUNCH_TEMPLATE and not isinstance(resource.props.get("instanceType"), str)


def machine_label(use: AcceleratorUse | None) -> str:
    """'g5.xlarge', 'v5litepod-8', 'n1-standard-8 + 1 x nvidia-tesla-t4', or, for a template
    without an instance type, 'instances of a type chosen at launch'."""
    if use is None:
        return "instances of a type chosen at launch"
    guests = "".join(f" + {n} x {kind}" for kind, n in use.guest_accelerators)
    return f"{use.machine_type}{guests}"


SAGEMAKER_HOSTED = (
    "SageMaker runs endpoint instances in its own service account: their metadata service and "
    "addresses are not the stack's"
)


def launches_from_template(resource: Resource) -> bool:
    """An instance, group, node group or fleet whose instances take their settings from a launch
    template (which the host-hardening rules judge itself)."""
    props = resource.props
    if resource.type in (AWS_INSTANCE, AWS_EKS_NODE_GROUP):
        return isinstance(props.get("launchTemplate"), Mapping)
    if resource.type == AWS_AUTOSCALING_GROUP:
        mixed = get_path(props, "mixedInstancesPolicy", "launchTemplate", "launchTemplateSpecification")
        return isinstance(props.get("launchTemplate"), Mapping) or isinstance(mixed, Mapping)
    if resource.type == AWS_BATCH_COMPUTE_ENVIRONMENT:
        return isinstance(get_path(props, "computeResources", "launchTemplate"), Mapping)
    if resource.type in (AWS_EC2_FLEET, AWS_SPOT_FLEET):
        configs = props.get("launchTemplateConfigs")
        return isinstance(configs, list) and bool(configs) and not props.get("launchSpecifications")
    return False


def template_refs(resource: Resource) -> list[Mapping[str, Any]]:
    """The launch template references a resource launches from, in the order AWS reads them: an
    instance's, node group's or group's `launchTemplate`, a mixed-instances policy's specification,
    a Batch environment's `computeResources.launchTemplate`, a fleet's launch template configs; a
    group's `launchConfiguration` (by name); a managed instance group's instance templates."""
    props = resource.props
    if resource.type in GCP_GROUP_MANAGERS:
        return [{"selfLink": ref} for ref in group_manager_template_refs(props)]
    refs = [
        props.get("launchTemplate"),
        get_path(props, "mixedInstancesPolicy", "launchTemplate", "launchTemplateSpecification"),
        get_path(props, "computeResources", "launchTemplate"),
    ]
    configs = props.get("launchTemplateConfigs")
    refs += [get_path(c, "launchTemplateSpecification") for c in configs or [] if isinstance(c, Mapping)]
    found = [r for r in refs if isinstance(r, Mapping)]
    if resource.type == AWS_AUTOSCALING_GROUP and props.get("launchConfiguration") is not None:
        found.append({"name": props["launchConfiguration"]})
    return found


def launch_template(resource: Resource, template_of: TemplateLookup | None) -> Mapping[str, Any] | None:
    """The (first) launch template, launch configuration or instance template a resource launches
    from, where the stack has it."""
    if template_of is None or resource.type in (AWS_LAUNCH_TEMPLATE, AWS_LAUNCH_CONFIGURATION):
        return None
    for ref in template_refs(resource):
        if (template := template_of(ref)) is not None:
            return template
    return None
