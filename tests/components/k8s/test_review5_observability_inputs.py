"""Review 5: GpuObservability's node labels are label keys the API server takes.

Each of `gpu_node_labels` becomes a matchExpressions key of dcgm-exporter's node affinity (Helm values);
a key such as 'a"b' planned, and the DaemonSet, with the Helm release, would fail at deploy.
"""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.k8s import GpuObservability, GpuObservabilityArgs
from inference_infra.components.k8s.observability_args import validate_gpu_observability


@pytest.mark.parametrize("key", ['a"b', "x/y/z", "nvidia.com/gpu present", "-gpu", "gpu\n", "a" * 64, ""])
def test_gpu_observability_rejects_node_labels_that_are_not_label_keys(key):
    problems = validate_gpu_observability(
        "obs", GpuObservabilityArgs(gpu_node_labels=["nvidia.com/gpu.present", key])
    )
    assert [p.input for p in problems] == [f"gpu_node_labels[{key!r}]"]


def test_gpu_observability_accepts_the_default_and_prefixed_node_labels():
    args = GpuObservabilityArgs(
        gpu_node_labels=["nvidia.com/gpu.present", "cloud.google.com/gke-accelerator", "gpu"]
    )
    assert validate_gpu_observability("obs", args) == []


def test_gpu_observability_refuses_a_bad_node_label_before_registering(tagged, plan_of):
    with pytest.raises(InputError, match=r"gpu_node_labels\['a\"b'\]"):
        GpuObservability("obs", GpuObservabilityArgs(gpu_node_labels=['a"b']))
    assert not [r for r in plan_of().resources if r.type.startswith("kubernetes:")]


@pytest.mark.parametrize("context", ["eks-prod\n", "eks prod", "ctx;$(id)", "a" * 254])
def test_gpu_observability_rejects_a_kube_context_that_is_not_a_context_name(context):
    problems = validate_gpu_observability("obs", GpuObservabilityArgs(kube_context=context))
    assert [p.input for p in problems] == ["kube_context"]


@pytest.mark.parametrize(
    "context", ["eks-prod", "arn:aws:eks:us-east-1:123456789012:cluster/prod", "gke_p_z_c"]
)
def test_gpu_observability_accepts_kube_context_names(context):
    assert validate_gpu_observability("obs", GpuObservabilityArgs(kube_context=context)) == []


@pytest.mark.parametrize("user", ["admin\n", "ad min", "admin$(id)", "a" * 65, "admín"])
def test_gpu_observability_rejects_a_grafana_admin_user_that_is_not_a_login_name(user):
    problems = validate_gpu_observability("obs", GpuObservabilityArgs(grafana_admin_user=user))
    assert [p.input for p in problems] == ["grafana_admin_user"]
    assert "no spaces or line breaks" in problems[0].allowed


@pytest.mark.parametrize("user", ["admin", "ml-platform.ops", "ops@example.com"])
def test_gpu_observability_accepts_grafana_login_names(user):
    assert validate_gpu_observability("obs", GpuObservabilityArgs(grafana_admin_user=user)) == []
