"""DevicePlugins: the NVIDIA and Neuron device plugins as pinned Helm releases on the pools' nodes only.

The NVIDIA chart's values are held against its values.yaml at v0.20.0 (github.com/NVIDIA/k8s-device-plugin
commit 1b826acc, deployments/helm/nvidia-device-plugin/values.yaml, copied to tests/components/k8s/charts/);
the Neuron chart's against aws-neuron/neuron-helm-charts 1.9.0 (commit b77a6f9, values.yaml read
2026-12-02: devicePlugin.{enabled,image.repository,image.tag,nodeSelector,tolerations}, npd.enabled,
scheduler.enabled, draDriver.enabled, ultraserverOperator.enabled are its keys).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.errors import InputError
from inference_infra.components.images import PINNED_REFERENCE
from inference_infra.components.k8s.device_plugins import (
    NEURON_DEVICE_PLUGIN_CHART,
    NVIDIA_DEVICE_PLUGIN_CHART,
    DevicePlugins,
    DevicePluginsArgs,
    nvidia_values,
)
from inference_infra.components.k8s.scheduling import node_labels, node_taints

RELEASE = "kubernetes:helm.sh/v3:Release"
NEURON_IMAGE = "public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0@sha256:" + "a" * 64
CHART_VALUES = Path(__file__).parent / "charts" / "nvidia-device-plugin-0.20.0-values.yaml"


def _tolerates(tolerations: list[dict], taint) -> bool:
    return any(
        t["key"] == taint.key and t["effect"] == taint.effect and t["operator"] == "Exists"
        for t in tolerations
    )


def test_nvidia_device_plugin_release_is_pinned_and_on_gpu_pool_nodes_only(plan_of):
    capture = plan_of(DevicePlugins("plugins", DevicePluginsArgs(families=[AcceleratorFamily.NVIDIA_GPU])))
    release = capture.one(RELEASE).props
    assert release["chart"] == "nvidia-device-plugin"
    assert release["version"] == NVIDIA_DEVICE_PLUGIN_CHART.version == "0.20.0"
    assert release["repositoryOpts"] == {"repo": "https://nvidia.github.io/k8s-device-plugin"}
    assert release["namespace"] == "kube-system"
    values = release["values"]
    image = f"{values['image']['repository']}:{values['image']['tag']}"
    assert PINNED_REFERENCE.match(image)
    assert image.startswith("nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:a61ba9fd")
    labels = node_labels("chat", AcceleratorFamily.NVIDIA_GPU)
    assert values["nodeSelector"].items() <= labels.items()
    for taint in node_taints("chat", AcceleratorFamily.NVIDIA_GPU):
        assert _tolerates(values["tolerations"], taint)
    [term] = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    [expr] = term["matchExpressions"]
    assert labels[expr["key"]] in expr["values"]
    assert values["gfd"] == {"enabled": False}


def test_nvidia_values_use_only_the_charts_own_keys():
    chart = yaml.safe_load(CHART_VALUES.read_text())
    assert set(nvidia_values()) <= set(chart)
    assert set(nvidia_values()["image"]) <= set(chart["image"])
    assert set(nvidia_values()["gfd"]) <= set(chart["gfd"])
    # the default affinity needs NFD labels our nodes lack: the component replaces its terms
    terms = chart["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    keys = {e["key"] for t in terms for e in t["matchExpressions"]}
    assert "feature.node.kubernetes.io/pci-10de.present" in keys


def test_neuron_device_plugin_release_runs_only_the_plugin(plan_of):
    args = DevicePluginsArgs(families=[AcceleratorFamily.AWS_NEURON], neuron_device_plugin_image=NEURON_IMAGE)
    capture = plan_of(DevicePlugins("plugins", args))
    release = capture.one(RELEASE).props
    assert release["chart"] == "oci://public.ecr.aws/neuron/neuron-helm-chart"
    assert release["version"] == NEURON_DEVICE_PLUGIN_CHART.version == "1.9.0"
    values = release["values"]
    plugin = values["devicePlugin"]
    assert f"{plugin['image']['repository']}:{plugin['image']['tag']}" == NEURON_IMAGE
    assert plugin["nodeSelector"] == {"inference-infra.dev/accelerator-family": "aws-neuron"}
    for taint in node_taints("inf", AcceleratorFamily.AWS_NEURON):
        assert _tolerates(plugin["tolerations"], taint)
    assert (
        values["npd"]
        == values["scheduler"]
        == values["draDriver"]
        == values["ultraserverOperator"]
        == {"enabled": False}
    )


def test_device_plugins_both_families(plan_of):
    args = DevicePluginsArgs(
        families=[AcceleratorFamily.NVIDIA_GPU, AcceleratorFamily.AWS_NEURON],
        neuron_device_plugin_image=NEURON_IMAGE,
    )
    capture = plan_of(DevicePlugins("plugins", args))
    assert sorted(r.name for r in capture.of_type(RELEASE)) == ["plugins-neuron", "plugins-nvidia"]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"families": []}, "families [] must list nvidia-gpu/aws-neuron once each"),
        (
            {"families": [AcceleratorFamily.GOOGLE_TPU]},
            "needs no plugin installed: GKE runs the TPU device plugin",
        ),
        (
            {"families": [AcceleratorFamily.AWS_NEURON]},
            "neuron_device_plugin_image (unset) is required with aws-neuron",
        ),
        (
            {
                "families": [AcceleratorFamily.AWS_NEURON],
                "neuron_device_plugin_image": "public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0",
            },
            "must be public.ecr.aws/neuron/neuron-device-plugin:<tag>@sha256:<64 hex>",
        ),
        (
            {"families": [AcceleratorFamily.NVIDIA_GPU], "neuron_device_plugin_image": NEURON_IMAGE},
            "is only for aws-neuron pools",
        ),
        ({"families": [AcceleratorFamily.NVIDIA_GPU], "namespace": "Kube_System"}, "namespace 'Kube_System'"),
    ],
)
def test_device_plugins_rejects_bad_input_before_registering(plan_of, kw, message):
    with pytest.raises(InputError) as raised:
        DevicePlugins("bad", DevicePluginsArgs(**kw))
    assert message in str(raised.value)
    assert [r for r in plan_of() if r.name.startswith("bad")] == []
