"""accelerator-no-public-ip: accelerator machines get no public (external) IP address.

A GPU host with a public address is one security-group mistake away from an
open inference endpoint or a crypto miner. Traffic reaches accelerators through
load balancers; egress goes through NAT.

On AWS an instance (or spot request) that leaves `associatePublicIpAddress`
unset lets its subnet decide (mapPublicIpOnLaunch), so by default it must say
false itself, launch template or not. A launch template starts nothing on its
own; it fails only when it asks for a public address (as AWS Security Hub's
EC2.25 control judges templates). An Auto Scaling group, EKS node group or fleet
cannot set the address itself: it is judged by the launch template it launches
from (its network interface must say false), which is why this is a stack policy
that judges each resource on its own with the stack's templates at hand. A
SageMaker endpoint's instances run in SageMaker's account: not applicable.

An Elastic IP is a public IP too: an `Eip` that names an accelerator instance (or a network
interface attached to one), and an `EipAssociation` that binds one to such an instance or
interface, are violations on the address. An interface counts as attached when an instance lists
it among its network interfaces, the interface lists the instance among its attachments, or a
`NetworkInterfaceAttachment` joins them. References are followed by id, or by dependency while an
id is not known yet (preview).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.resources import (
    AWS_INSTANCE,
    AWS_LAUNCH_TEMPLATE,
    AWS_SAGEMAKER_ENDPOINT_CONFIG,
    AWS_SPOT_FLEET,
    GCP_TPU_NODE,
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
    StackIndex,
    get_path,
    holder_template_lookup,
    template_index,
)
from inference_infra.components.resources.types import (
    AWS_EIP,
    AWS_EIP_ASSOCIATION,
    AWS_NETWORK_INTERFACE,
    AWS_NETWORK_INTERFACE_ATTACHMENT,
)
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    judged_stack_policy,
    not_applicable,
    rule_metadata,
    show,
)
from inference_infra.policy.rules._machines import (
    AWS_LAUNCHERS,
    AWS_MACHINES,
    MACHINE_NOUNS,
    SAGEMAKER_HOSTED,
    accelerator_machine,
    launches_from_template,
    machine_label,
    untyped_template,
)

NAME = "accelerator-no-public-ip"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = "Accelerator instances, VMs and TPU slices have no public or external IP address."
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "requireExplicitOnAws": {
            "type": "boolean",
            "default": True,
            "description": "On AWS, require instances and spot requests to set associatePublicIpAddress "
            "to false rather than leave it to the subnet's mapPublicIpOnLaunch.",
        }
    }
)


TemplateLookup = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
APPLIES_TO = (
    f"{MACHINE_NOUNS}, to AWS launch templates without an instance type, and to Elastic IPs on "
    "accelerator instances"
)


def check(
    resource: Resource, config: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> Outcome:
    use = accelerator_machine(resource, template_of=template_of)
    if use is None and not untyped_template(resource):
        return not_applicable(f"applies to {APPLIES_TO}")
    if resource.type == AWS_SAGEMAKER_ENDPOINT_CONFIG:
        return not_applicable(SAGEMAKER_HOSTED)
    found = Findings()
    where = f"{resource.label} runs {machine_label(use)}"
    if resource.type in AWS_LAUNCHERS and launches_from_template(resource):
        _check_launch_template(resource, where, config["requireExplicitOnAws"], template_of, found)
    elif resource.type in AWS_LAUNCHERS:
        _check_launcher(resource, where, config["requireExplicitOnAws"], found)
    elif resource.type in AWS_MACHINES:
        _check_aws(resource, where, config["requireExplicitOnAws"], found)
    elif resource.type in (GCP_TPU_VM, GCP_TPU_QUEUED_RESOURCE):
        _check_tpu(resource, where, found)
    elif resource.type != GCP_TPU_NODE:  # legacy TPU nodes have no external address to give
        _check_gce(resource, where, found)
    return found.outcome()


def _aws_settings(resource: Resource) -> list[tuple[str, Any]]:
    """(path, value) of every associatePublicIpAddress that applies; [] when attached interfaces decide."""
    props = resource.props
    if resource.type == AWS_LAUNCH_TEMPLATE:
        interfaces = props.get("networkInterfaces")
        if interfaces is UNKNOWN:
            return [("networkInterfaces", UNKNOWN)]
        return [
            (f"networkInterfaces[{i}].associatePublicIpAddress", get_path(ni, "associatePublicIpAddress"))
            for i, ni in enumerate(interfaces if isinstance(interfaces, list) else [])
            if ni is UNKNOWN or isinstance(ni, Mapping)
        ]
    if props.get("networkInterfaces") is not None:
        return []  # attached network interfaces carry their own addressing
    return [("associatePublicIpAddress", props.get("associatePublicIpAddress"))]


def _check_aws(resource: Resource, where: str, require_explicit: bool, found: Findings) -> None:
    for path, value in _aws_settings(resource):
        if value is UNKNOWN:
            found.not_known(path)
        elif value is True or (isinstance(value, str) and value.lower() == "true"):
            found.violation(
                f"{where} with a public IP ({path} is {show(value)}); set it to false and reach the host "
                "through a load balancer, VPN or SSM."
            )
        elif value is None and require_explicit and resource.type != AWS_LAUNCH_TEMPLATE:
            found.violation(
                f"{where} with {path} unset, so the subnet's mapPublicIpOnLaunch decides whether it "
                "gets a public IP; set it to false."
            )


def _template_refs(resource: Resource) -> list[Any]:
    props = resource.props
    refs = [
        props.get("launchTemplate"),
        get_path(props, "mixedInstancesPolicy", "launchTemplate", "launchTemplateSpecification"),
        get_path(props, "computeResources", "launchTemplate"),  # Batch compute environments
    ]
    configs = props.get("launchTemplateConfigs")
    refs += [get_path(c, "launchTemplateSpecification") for c in configs or [] if isinstance(c, Mapping)]
    return [r for r in refs if isinstance(r, Mapping)]


def _check_launch_template(
    resource: Resource,
    where: str,
    require_explicit: bool,
    template_of: TemplateLookup | None,
    found: Findings,
) -> None:
    """A group, node group or fleet cannot set the address: its launch template's interface must."""
    for ref in _template_refs(resource):
        template = template_of(ref) if template_of is not None else None
        if template is None:
            continue  # a template made outside the stack: not visible here
        interfaces = template.get("networkInterfaces")
        if interfaces is UNKNOWN:
            found.not_known("launchTemplate.networkInterfaces")
            continue
        values = [
            get_path(ni, "associatePublicIpAddress") for ni in interfaces or [] if isinstance(ni, Mapping)
        ]
        if any(v is UNKNOWN for v in values):
            found.not_known("launchTemplate.networkInterfaces.associatePublicIpAddress")
        elif any(v is True or (isinstance(v, str) and v.lower() == "true") for v in values):
            found.violation(
                f"{where} from a launch template that asks for a public IP; set associatePublicIpAddress to "
                "false on its network interface."
            )
        elif require_explicit and not any(v is False or v == "false" for v in values):
            found.violation(
                f"{where} from a launch template that leaves associatePublicIpAddress unset, so the subnets' "
                "mapPublicIpOnLaunch decides whether its instances get public IPs; set it to false on the "
                "template's network interface (the group cannot set it)."
            )


def _check_launcher(resource: Resource, where: str, require_explicit: bool, found: Findings) -> None:
    """A group, node group or fleet without a launch template: Spot Fleet launch specifications carry
    associatePublicIpAddress; the others leave it to the subnets' mapPublicIpOnLaunch."""
    specs = resource.props.get("launchSpecifications")
    if resource.type == AWS_SPOT_FLEET and isinstance(specs, list):
        for i, spec in enumerate(specs):
            value = get_path(spec, "associatePublicIpAddress")
            path = f"launchSpecifications[{i}].associatePublicIpAddress"
            if value is UNKNOWN:
                found.not_known(path)
            elif value is True or (isinstance(value, str) and value.lower() == "true"):
                found.violation(f"{where} with a public IP ({path} is {show(value)}); set it to false.")
            elif value is None and require_explicit:
                found.violation(f"{where} with {path} unset, so the subnet decides; set it to false.")
        return
    if require_explicit:
        found.violation(
            f"{where} without a launch template, so the subnets' mapPublicIpOnLaunch decides whether its "
            "instances get public IPs; launch them from a template whose network interface sets "
            "associatePublicIpAddress to false, or use subnets that map none."
        )


def _check_gce(resource: Resource, where: str, found: Findings) -> None:
    interfaces = resource.props.get("networkInterfaces")
    if interfaces is UNKNOWN:
        found.not_known("networkInterfaces")
        return
    for i, ni in enumerate(interfaces if isinstance(interfaces, list) else []):
        for field in ("accessConfigs", "ipv6AccessConfigs"):
            configs = get_path(ni, field)
            if configs is UNKNOWN:
                found.not_known(f"networkInterfaces[{i}].{field}")
            elif isinstance(configs, list) and configs:
                found.violation(
                    f"{where} with an external IP (networkInterfaces[{i}].{field}); remove the access "
                    "config and use Cloud NAT for egress."
                )


def _check_tpu(resource: Resource, where: str, found: Findings) -> None:
    if resource.type == GCP_TPU_VM:
        configs = [("networkConfig", resource.props.get("networkConfig"))]
    else:
        specs = get_path(resource.props, "tpu", "nodeSpecs")
        if specs is UNKNOWN:
            found.not_known("tpu.nodeSpecs")
            return
        configs = [
            (f"tpu.nodeSpecs[{i}].node.networkConfig", get_path(spec, "node", "networkConfig"))
            for i, spec in enumerate(specs if isinstance(specs, list) else [])
            if spec is UNKNOWN or isinstance(spec, Mapping)
        ]
    for path, config in configs:
        value = get_path(config, "enableExternalIps")
        if value is UNKNOWN:
            found.not_known(f"{path}.enableExternalIps")
        elif value is True:
            found.violation(
                f"{where} with an external IP ({path}.enableExternalIps is true); set it to false and "
                "use Cloud NAT for egress."
            )


_INSTANCES = frozenset({AWS_INSTANCE})
_INTERFACES = frozenset({AWS_NETWORK_INTERFACE})


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterator[tuple[Resource, Outcome]]:
    templates = template_index(resources)
    stack = StackIndex(resources)
    attached = _attachments(stack)
    for resource in resources:
        template_of = holder_template_lookup(templates, stack, resource)
        if resource.type in (AWS_EIP, AWS_EIP_ASSOCIATION):
            yield resource, _check_address(resource, stack, attached, templates)
        else:
            yield resource, check(resource, config, template_of)


def _attachments(stack: StackIndex) -> dict[str, list[Resource]]:
    """Network interface URN -> the instances it is attached to."""
    found: dict[str, list[Resource]] = {}

    def join(interface: Any, instance: Any) -> None:
        if (
            interface is not None
            and instance is not None
            and instance not in found.setdefault(interface.urn, [])
        ):
            found[interface.urn].append(instance)

    for instance in stack.of_type(AWS_INSTANCE):
        for ni in instance.props.get("networkInterfaces") or []:
            ref = get_path(ni, "networkInterfaceId")
            join(stack.find(ref, _INTERFACES, holder=instance), instance)
    for interface in stack.of_type(AWS_NETWORK_INTERFACE):
        for attachment in interface.props.get("attachments") or []:
            join(interface, stack.find(get_path(attachment, "instance"), _INSTANCES, holder=interface))
    for link in stack.of_type(AWS_NETWORK_INTERFACE_ATTACHMENT):
        props = link.props
        join(
            stack.find(props.get("networkInterfaceId"), _INTERFACES, holder=link),
            stack.find(props.get("instanceId"), _INSTANCES, holder=link),
        )
    return found


def _check_address(
    resource: Resource, stack: StackIndex, attached: Mapping[str, list[Resource]], templates: TemplateLookup
) -> Outcome:
    """An Elastic IP, or its association, that gives an accelerator instance a public address."""
    keys = (
        ("instance", "networkInterface") if resource.type == AWS_EIP else ("instanceId", "networkInterfaceId")
    )
    found = Findings()
    judged = False
    for key in keys:
        value = resource.props.get(key)
        if value is None:
            continue
        judged = True
        kinds = _INSTANCES if key.startswith("instance") else _INTERFACES
        target = stack.find(value, kinds, holder=resource)
        if target is None:
            if value is UNKNOWN:
                found.not_known(key)
            continue
        instances = [target] if target.type == AWS_INSTANCE else attached.get(target.urn, [])
        for instance in instances:
            use = accelerator_machine(
                instance, template_of=holder_template_lookup(templates, stack, instance)
            )
            if use is None:
                continue
            via = "" if target is instance else f" through network interface {target.label}"
            found.violation(
                f"{resource.label} gives accelerator instance {instance.label} ({machine_label(use)}) a "
                f"public IP ({key}{via}); release the address and reach the host through a load balancer, "
                "VPN or SSM."
            )
    if not judged:
        return not_applicable("an Elastic IP not attached to an instance or network interface")
    return found.outcome()


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)
