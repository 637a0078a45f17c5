"""accelerator-no-public-ip: accelerator machines get no public (external) IP address.

A GPU host with a public address is one security-group mistake away from an
open inference endpoint or a crypto miner. Traffic reaches accelerators through
load balancers; egress goes through NAT.

On AWS an instance (or spot request) that leaves `associatePublicIpAddress`
unset lets its subnet decide (mapPublicIpOnLaunch), so by default it must say
false itself, launch template or not. A launch template starts nothing on its
own; it fails only when it asks for a public address (as AWS Security Hub's
EC2.25 control judges templates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.inventory import (
    AWS_LAUNCH_TEMPLATE,
    GCP_TPU_NODE,
    GCP_TPU_QUEUED_RESOURCE,
    GCP_TPU_VM,
)
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    get_path,
    not_applicable,
    resource_policy,
    show,
)
from inference_infra.policy.rules._machines import (
    AWS_MACHINES,
    MACHINE_NOUNS,
    accelerator_machine,
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


def check(resource: Resource, config: Mapping[str, Any]) -> Outcome:
    use = accelerator_machine(resource)
    if use is None and not untyped_template(resource):
        return not_applicable(
            f"applies to {MACHINE_NOUNS}, and to AWS launch templates without an instance type"
        )
    found = Findings()
    where = f"{resource.label} runs {machine_label(use)}"
    if resource.type in AWS_MACHINES:
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


POLICY = resource_policy(
    name=NAME,
    description=DESCRIPTION,
    severity=SEVERITY,
    enforcement=ENFORCEMENT,
    schema=CONFIG_SCHEMA,
    check=check,
)
