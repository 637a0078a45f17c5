"""Device plugins for the serving pools' EKS nodes, as pinned Helm releases (pure values + one component).

A pod's `nvidia.com/gpu` or `aws.amazon.com/neuron` request is schedulable only where a device plugin
advertises the resource. Who provides it (read 2026-12-02):

- EKS, AL2023 NVIDIA AMI (`AL2023_x86_64_NVIDIA`, what `EksNodeGroups` and Karpenter's al2023 alias
  launch): the driver and container toolkit are on the AMI, the device plugin is not; EKS's guide
  says to install NVIDIA's (docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html).
  Bottlerocket NVIDIA AMIs and EKS Auto Mode ship it, so do not install it there.
- EKS, AL2023 Neuron AMI: the driver is on the AMI; the Neuron device plugin must be installed (same
  page; AWS Neuron docs, "Kubernetes environment setup").
- GKE: none to install. GKE runs the NVIDIA device plugin on GPU node pools and the TPU device plugin
  on TPU node pools itself (with `gpu_driver_installation_config` it also installs the driver).

Charts (values read at the pinned versions):

- `nvidia-device-plugin` 0.20.0 from https://nvidia.github.io/k8s-device-plugin (github.com/NVIDIA/
  k8s-device-plugin tag v0.20.0, deployments/helm/nvidia-device-plugin: `image.repository`/`image.tag`,
  rendered `repository:tag`, so the tag carries `@sha256:`; `nodeSelector`, `tolerations`,
  `affinity`, whose default requires NFD's `pci-10de` label or `nvidia.com/gpu.present`, labels our
  nodes do not carry, so its node selector terms are replaced by the family label; `gfd.enabled`
  false).
- `neuron-helm-chart` 1.9.0 from oci://public.ecr.aws/neuron (aws-neuron/neuron-helm-charts commit
  b77a6f9, the 1.9.0 release: `devicePlugin.image`, `devicePlugin.nodeSelector`,
  `devicePlugin.tolerations`; `npd`, `scheduler`, `draDriver`, `ultraserverOperator` turned off:
  the node problem detector runs privileged and the others are not needed to schedule whole devices).

Both DaemonSets are restricted to the serving pools' nodes: they select the accelerator family's label
and tolerate the pools' taints (`scheduling.py`), nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.images import NEURON_DEVICE_PLUGIN as NEURON_IMAGE
from inference_infra.components.images import NVIDIA_DEVICE_PLUGIN as NVIDIA_IMAGE
from inference_infra.components.images import SHA256_HEX, PinnedImage
from inference_infra.components.k8s.charts import HelmChart
from inference_infra.components.k8s.scheduling import ACCELERATOR_TAINTS, FAMILY_LABEL, POOL_TAINT
from inference_infra.components.validation import input_problems

NVIDIA_DEVICE_PLUGIN_CHART = HelmChart(
    name="nvidia-device-plugin",
    version="0.20.0",
    repo="https://nvidia.github.io/k8s-device-plugin",
    app_version="0.20.0",
    source="https://github.com/NVIDIA/k8s-device-plugin/tree/v0.20.0/deployments/helm/nvidia-device-plugin",
    as_of=date(2026, 12, 2),
)
NEURON_DEVICE_PLUGIN_CHART = HelmChart(
    name="oci://public.ecr.aws/neuron/neuron-helm-chart",
    version="1.9.0",
    repo="oci://public.ecr.aws/neuron",
    app_version="1.9.0 (Neuron SDK 2.31.0; device plugin 2.31.0.0)",
    source="https://github.com/aws-neuron/neuron-helm-charts/releases/tag/1.9.0 (commit b77a6f9)",
    as_of=date(2026, 12, 2),
)
# Which families need a plugin installed, and which platform provides the rest.
INSTALLED = (AcceleratorFamily.NVIDIA_GPU, AcceleratorFamily.AWS_NEURON)
_NEURON_REFERENCE = re.compile(
    rf"^public\.ecr\.aws/neuron/neuron-device-plugin:([\w.-]+)@sha256:{SHA256_HEX}\Z"
)


@dataclass(frozen=True, kw_only=True)
class DevicePluginsArgs:
    """The device plugins of an EKS cluster's serving pools."""

    families: Sequence[AcceleratorFamily] = arg(
        doc="The pools' accelerator families: nvidia-gpu, aws-neuron (google-tpu is GKE's own)."
    )
    namespace: str = arg(
        "kube-system", "Where the plugins run (they mount the kubelet's device-plugin socket)."
    )
    neuron_device_plugin_image: str | None = arg(
        None,
        "With aws-neuron: public.ecr.aws/neuron/neuron-device-plugin:<tag>@sha256:<digest> (no public digest "
        f"of {NEURON_IMAGE.reference} was found; resolve one with `crane digest`).",
    )


def validate_device_plugins(args: DevicePluginsArgs) -> list[Problem]:
    problems: list[Problem] = []
    families = list(args.families)
    if not families or len(set(families)) != len(families):
        problems.append(
            Problem("families", [str(f) for f in families], "must list nvidia-gpu/aws-neuron once each")
        )
    for i, family in enumerate(families):
        if family is AcceleratorFamily.GOOGLE_TPU:
            problems.append(
                Problem(
                    f"families[{i}]", str(family), "needs no plugin installed: GKE runs the TPU device plugin"
                )
            )
    if AcceleratorFamily.AWS_NEURON in families:
        image = args.neuron_device_plugin_image
        if image is None:
            problems.append(
                Problem(
                    "neuron_device_plugin_image",
                    None,
                    "is required with aws-neuron: "
                    "public.ecr.aws/neuron/neuron-device-plugin:<tag>@sha256:<digest>",
                )
            )
        elif not _NEURON_REFERENCE.fullmatch(image):
            problems.append(
                Problem(
                    "neuron_device_plugin_image",
                    image,
                    "must be public.ecr.aws/neuron/neuron-device-plugin:<tag>@sha256:<64 hex> "
                    "(pinned by digest)",
                )
            )
    elif args.neuron_device_plugin_image is not None:
        problems.append(
            Problem(
                "neuron_device_plugin_image", args.neuron_device_plugin_image, "is only for aws-neuron pools"
            )
        )
    if not re.fullmatch(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", str(args.namespace)):
        problems.append(Problem("namespace", args.namespace, "must be a namespace name (a DNS label)"))
    return problems


def _tolerations(family: AcceleratorFamily) -> list[dict[str, str]]:
    """Every serving pool's taint (whatever its name) and the accelerator's."""
    return [
        {"key": POOL_TAINT, "operator": "Exists", "effect": "NoSchedule"},
        {"key": ACCELERATOR_TAINTS[family], "operator": "Exists", "effect": "NoSchedule"},
    ]


def nvidia_values(image: PinnedImage = NVIDIA_IMAGE) -> dict[str, Any]:
    """The nvidia-device-plugin chart's values: the pinned image, the NVIDIA pools' nodes only."""
    return {
        "image": {"repository": image.name, "tag": f"{image.tag}@{image.digest}"},
        "nodeSelector": {FAMILY_LABEL: AcceleratorFamily.NVIDIA_GPU.value},
        # Replaces the chart's NFD-label terms (Helm merges maps but replaces lists): our nodes carry
        # the family label, not NFD's.
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": FAMILY_LABEL,
                                    "operator": "In",
                                    "values": [AcceleratorFamily.NVIDIA_GPU.value],
                                }
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": _tolerations(AcceleratorFamily.NVIDIA_GPU),
        "gfd": {"enabled": False},
    }


def neuron_values(image: str) -> dict[str, Any]:
    """The neuron-helm-chart's values: only the device plugin, pinned, on the Neuron pools' nodes."""
    repository, _, tag = image.partition(":")
    return {
        "devicePlugin": {
            "enabled": True,
            "image": {"repository": repository, "tag": tag},
            "nodeSelector": {FAMILY_LABEL: AcceleratorFamily.AWS_NEURON.value},
            "tolerations": _tolerations(AcceleratorFamily.AWS_NEURON),
        },
        "npd": {"enabled": False},
        "scheduler": {"enabled": False},
        "draDriver": {"enabled": False},
        "ultraserverOperator": {"enabled": False},
    }


class DevicePlugins(pulumi.ComponentResource):
    """The NVIDIA and Neuron device plugins of an EKS cluster's serving pools, as pinned Helm releases."""

    def __init__(self, name: str, args: DevicePluginsArgs, opts: pulumi.ResourceOptions | None = None):
        raise_if_invalid(f"DevicePlugins {name!r}", input_problems(args, validate_device_plugins))
        super().__init__("inference-infra:k8s:DevicePlugins", name, None, opts)
        import pulumi_kubernetes as k8s

        child = pulumi.ResourceOptions(parent=self)
        self.releases: list[pulumi.Resource] = []
        if AcceleratorFamily.NVIDIA_GPU in args.families:
            self.releases.append(
                k8s.helm.v3.Release(
                    f"{name}-nvidia",
                    chart=NVIDIA_DEVICE_PLUGIN_CHART.name,
                    version=NVIDIA_DEVICE_PLUGIN_CHART.version,
                    repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NVIDIA_DEVICE_PLUGIN_CHART.repo),
                    namespace=args.namespace,
                    atomic=True,
                    cleanup_on_fail=True,
                    max_history=10,
                    values=nvidia_values(),
                    opts=child,
                )
            )
        if AcceleratorFamily.AWS_NEURON in args.families:
            assert args.neuron_device_plugin_image is not None  # validated before
            self.releases.append(
                k8s.helm.v3.Release(
                    f"{name}-neuron",
                    chart=NEURON_DEVICE_PLUGIN_CHART.name,
                    version=NEURON_DEVICE_PLUGIN_CHART.version,
                    namespace=args.namespace,
                    atomic=True,
                    cleanup_on_fail=True,
                    max_history=10,
                    values=neuron_values(args.neuron_device_plugin_image),
                    opts=child,
                )
            )
        self.register_outputs({"releases": [r.urn for r in self.releases]})
