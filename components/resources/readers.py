"""Which accelerators (or machines) a resource runs: one entry point over the readers by cloud.

The cost-tag transform, the offline plan's pricing and the policy pack all ask
here, so they cannot disagree. Pure functions: no Pulumi runtime needed. Values
that are not known yet (preview) are never guessed: a property that is not a
plain value is treated as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inference_infra.components.catalog import Cloud
from inference_infra.components.resources import aws, gcp, gke
from inference_infra.components.resources.types import GCP_TPU_NODE, GCP_TPU_VM, RUNNING_TYPES
from inference_infra.components.resources.use import AcceleratorUse, MachineUse, Reader, TemplateLookup

_READERS: dict[str, Reader] = {**aws.READERS, **gcp.READERS, **gke.READERS}


def _in_accelerator_catalog(name: str, cloud: Cloud) -> bool:
    """An accelerator type: in the catalog, or of an accelerated family the catalog lacks (judged by the
    policies, reported unpriced)."""
    if cloud is Cloud.AWS:
        return aws.is_aws_accelerator_type(name)
    return gcp.is_gcp_accelerator_type(name)


def _any_machine(name: str, cloud: Cloud) -> bool:
    return bool(name)


def accelerator_use(
    type_token: str, props: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> AcceleratorUse | None:
    """The accelerator capacity of one resource, or None when it has none.

    template_of resolves an AWS instance's `launchTemplate` reference to the
    template's props, so an instance whose type comes from its template is
    still recognised.
    """
    reader = _READERS.get(type_token)
    return reader(props, template_of, _in_accelerator_catalog) if reader else None


def machine_use(
    type_token: str, props: Mapping[str, Any], template_of: TemplateLookup | None = None
) -> MachineUse | None:
    """The machines one resource runs, describes or reserves, whatever their type (CPU machines too).

    The same readers as accelerator_use, accepting any machine type: pricing
    uses it so that a bastion, a system node group or a GKE default pool is
    priced (or reported unpriced) rather than silently free. Policies keep
    asking accelerator_use, which decides what an accelerator is.
    """
    reader = _READERS.get(type_token)
    return reader(props, template_of, _any_machine) if reader else None


def is_accelerator_instance(type_token: str, props: Mapping[str, Any]) -> bool:
    """True for a resource that runs accelerators (the ones that carry AutoShutdown)."""
    if type_token in (GCP_TPU_VM, GCP_TPU_NODE):
        return True
    use = accelerator_use(type_token, props)
    return use is not None and type_token in RUNNING_TYPES
