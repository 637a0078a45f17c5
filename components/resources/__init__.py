"""What a captured resource runs: the one home of reading resources.

- `types`: the type tokens the readers, the pricing and the policies name, and their groups (which
  types start accelerator machines, which launch EC2 instances from a template); all re-exported here;
- `props`: the one prop reader (`get_path`) and the marker for a value not known yet
  (`UNKNOWN_VALUE`, of type `Unknown`); `known` reads such a value as absent;
- `use`: the record every reader returns (`AcceleratorUse`, `Purchase`);
- `aws`, `gcp`, `gke`: the readers by cloud; `readers`: `accelerator_use` and `machine_use` over them;
- `templates`: launch and instance templates by reference (`template_index`);
- `k8s`: the Kubernetes capacity reader (workloads' requests, Karpenter pools, ComputeClasses, charts).

Pricing (`inference_infra.components.pricing`) prices what these read; the policy pack judges it;
the offline plan reports both. Pure: no Pulumi runtime and no provider SDK.
"""

from inference_infra.components.resources import types as _types
from inference_infra.components.resources.addresses import Exposure, exposure, is_public_address
from inference_infra.components.resources.aws import EKS_DEFAULT_INSTANCE_TYPE, is_aws_accelerator_type
from inference_infra.components.resources.gcp import (
    group_manager_template_refs,
    is_gcp_accelerator_type,
    tpu_slice_name,
)
from inference_infra.components.resources.gke import gke_tpu_slice
from inference_infra.components.resources.k8s import (
    helm_chart_warnings,
    is_accelerator_resource,
    node_pool_types,
)
from inference_infra.components.resources.links import Linked, StackIndex
from inference_infra.components.resources.props import UNKNOWN_VALUE, Unknown, get_path, known
from inference_infra.components.resources.readers import accelerator_use, is_accelerator_instance, machine_use
from inference_infra.components.resources.templates import holder_template_lookup, template_index
from inference_infra.components.resources.types import *  # noqa: F403 (every type token: types.__all__)
from inference_infra.components.resources.use import (
    AcceleratorUse,
    Known,
    MachineUse,
    Purchase,
    Reader,
    TemplateLookup,
    region_of_zone,
)

__all__ = [
    *_types.__all__,
    "EKS_DEFAULT_INSTANCE_TYPE",
    "UNKNOWN_VALUE",
    "AcceleratorUse",
    "Exposure",
    "Known",
    "Linked",
    "MachineUse",
    "Purchase",
    "Reader",
    "StackIndex",
    "TemplateLookup",
    "Unknown",
    "accelerator_use",
    "exposure",
    "get_path",
    "gke_tpu_slice",
    "group_manager_template_refs",
    "helm_chart_warnings",
    "holder_template_lookup",
    "is_accelerator_instance",
    "is_accelerator_resource",
    "is_aws_accelerator_type",
    "is_gcp_accelerator_type",
    "is_public_address",
    "known",
    "machine_use",
    "node_pool_types",
    "region_of_zone",
    "template_index",
    "tpu_slice_name",
]
