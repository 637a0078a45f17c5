"""k8s-accelerator-pods-unprivileged: accelerator pods get no host privileges."""

from __future__ import annotations

import pulumi_kubernetes as k8s
import pytest

from inference_infra.components.k8s.gpu_observability import GpuObservability, GpuObservabilityArgs
from inference_infra.policy.rules import k8s_accelerator_pods_unprivileged as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome
from tests.policy.conftest import WIRE_UNKNOWN
from tests.policy.k8s_objects import (
    DAEMON_SET,
    DEPLOYMENT,
    LWS,
    POD,
    deployment,
    leader_worker_set,
    pod_spec,
    template,
    with_container,
)


def test_k8s_accelerator_pods_unprivileged_passes_a_hardened_vllm_deployment(check):
    assert check(rule, DEPLOYMENT, deployment()) == Outcome()


@pytest.mark.parametrize(
    ("key", "namespace"), [("hostNetwork", "network"), ("hostPID", "PID"), ("hostIPC", "IPC")]
)
def test_k8s_accelerator_pods_unprivileged_rejects_host_namespaces(check, key, namespace):
    [message] = check(rule, DEPLOYMENT, deployment(pod_spec(**{key: True})), name="vllm").violations
    assert message == (
        f"{DEPLOYMENT} 'vllm' shares the node's {namespace} namespace (spec.template.spec.{key}: true) on "
        "accelerator pods; remove it (the engine needs none of the host's namespaces)."
    )


def test_k8s_accelerator_pods_unprivileged_rejects_a_privileged_engine(check):
    spec = with_container(pod_spec(), securityContext={"privileged": True})
    [message] = check(rule, DEPLOYMENT, deployment(spec), name="vllm").violations
    assert message.startswith(
        f"{DEPLOYMENT} 'vllm' runs container 'vllm' privileged "
        "(spec.template.spec.containers[0].securityContext.privileged: true)"
    )


@pytest.mark.parametrize("capability", ["SYS_ADMIN", "CAP_SYS_ADMIN", "sys_admin", "ALL"])
def test_k8s_accelerator_pods_unprivileged_rejects_sys_admin_in_any_spelling(check, capability):
    spec = with_container(
        pod_spec(), securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", capability]}}
    )
    [message] = check(rule, POD, {"metadata": {"name": "p"}, "spec": spec}, name="p").violations
    assert message.startswith(f"{POD} 'p' adds {capability} to container 'vllm' (spec.containers[0]")


def test_k8s_accelerator_pods_unprivileged_rejects_a_privileged_init_container(check):
    spec = with_container(pod_spec(), index=-1, securityContext={"privileged": True})
    [message] = check(rule, DEPLOYMENT, deployment(spec)).violations
    assert "container 'verify-weights' privileged (spec.template.spec.initContainers[0]" in message


def test_k8s_accelerator_pods_unprivileged_rejects_a_privileged_worker_of_a_leader_worker_set(check):
    worker = with_container(pod_spec(), securityContext={"privileged": True})
    [message] = check(rule, LWS, leader_worker_set(pod_spec(), worker), name="vllm").violations
    assert message.startswith(
        f"{LWS} 'vllm' (pod template at spec.leaderWorkerTemplate.workerTemplate) runs container 'vllm' "
        "privileged"
    )


def test_k8s_accelerator_pods_unprivileged_rejects_a_daemon_set_pinned_to_gpu_nodes(check):
    # No accelerator request, but a node selector only GPU nodes satisfy: it runs beside the GPUs.
    spec = {
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        "hostPID": True,
        "containers": [{"name": "probe", "image": "busybox:1.37"}],
    }
    props = {"spec": {"template": template(spec)}}
    [message] = check(rule, DAEMON_SET, props, name="probe").violations
    assert "shares the node's PID namespace" in message


def test_k8s_accelerator_pods_unprivileged_skips_cpu_workloads_and_allowed_names(check):
    cpu = {"containers": [{"name": "web", "image": "nginx", "securityContext": {"privileged": True}}]}
    assert check(rule, DEPLOYMENT, deployment(cpu)).not_applicable == "its pods use no accelerator"
    spec = with_container(pod_spec(), securityContext={"privileged": True})
    outcome = check(rule, DAEMON_SET, deployment(spec), {"allowedNames": ["dcgm"]}, name="dcgm")
    assert outcome.not_applicable == "'dcgm' is in allowedNames"
    assert check(rule, "aws:ec2/instance:Instance", {}).not_applicable.startswith("applies to Kubernetes")


def test_k8s_accelerator_pods_unprivileged_leaves_unknown_values_to_deploy_time(check, sdk):
    spec = with_container(pod_spec(), securityContext=UNKNOWN)
    assert check(rule, DEPLOYMENT, deployment(spec)) == Outcome(
        unknown=("spec.template.spec.containers[0].securityContext",)
    )
    wire = with_container(pod_spec(), securityContext={"privileged": WIRE_UNKNOWN})
    messages, _, preview = sdk(rule, DEPLOYMENT, deployment(wire))
    assert messages == []
    assert preview is not None


def test_k8s_accelerator_pods_unprivileged_rejects_a_captured_deployment(plan_of, run_pack):
    k8s.apps.v1.Deployment(
        "vllm",
        spec={
            "selector": {"match_labels": {"app": "vllm"}},
            "template": {
                "metadata": {"labels": {"app": "vllm"}},
                "spec": {
                    "host_network": True,
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai:v0.11.0",
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                        }
                    ],
                },
            },
        },
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(" (")[0] for v in report.violations] == [
        f"{DEPLOYMENT} 'vllm' shares the node's network namespace"
    ]


def test_k8s_accelerator_pods_unprivileged_passes_gpu_observabilitys_neuron_monitor_by_default(
    plan_of, run_pack
):
    # The neuron-monitor DaemonSet is privileged on Neuron nodes (AWS's manifest does the same); the
    # component is in allowedComponents by default, and named there, the rule says why it stands aside.
    image = "registry.example.com/neuron/neuron-monitor:1.3.0@sha256:" + "d" * 64
    GpuObservability("gpu-obs", GpuObservabilityArgs(neuron_monitor=True, neuron_monitor_image=image))
    capture = plan_of()
    assert run_pack(capture, rule.NAME).violations == []
    found = run_pack(capture, rule.NAME, {"allowedComponents": []}).violations
    # without the exemption: the neuron-monitor DaemonSet, and the DCGM exporter's release, whose
    # values add SYS_ADMIN (profiling counters) on GPU nodes
    assert sorted(v.message.split(" (")[0].split(" at ")[0] for v in found) == [
        "kubernetes:apps/v1:DaemonSet 'gpu-obs-neuron-monitor' runs container 'neuron-monitor' privileged",
        "kubernetes:helm.sh/v3:Release 'gpu-obs-dcgm-exporter' adds SYS_ADMIN",
    ]
    assert {tuple(rule.parent_types(v.urn)) for v in found} == {("inference-infra:k8s:GpuObservability",)}


RELEASE = "kubernetes:helm.sh/v3:Release"


def test_k8s_accelerator_pods_unprivileged_passes_a_helm_release_without_host_rights(check):
    values = {"resources": {"limits": {"nvidia.com/gpu": 1}}, "securityContext": {"privileged": False}}
    assert check(rule, RELEASE, {"chart": "vllm", "values": values}) == Outcome()
    cpu = {"securityContext": {"privileged": True}}
    assert check(rule, RELEASE, {"values": cpu}).not_applicable.startswith(
        "a Helm release whose values request no"
    )


def test_k8s_accelerator_pods_unprivileged_rejects_helm_values_with_host_rights_on_gpu_nodes(check):
    values = {
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        "hostNetwork": True,
        "exporter": {"securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}},
    }
    found = check(rule, RELEASE, {"values": values}, name="probe").violations
    assert [m.split(";")[0] for m in found] == [
        f"{RELEASE} 'probe' sets values.hostNetwork: true in values that place pods on accelerators "
        "(the node's network namespace)",
        f"{RELEASE} 'probe' sets values.exporter.securityContext.privileged: true in values that place pods "
        "on accelerators",
        f"{RELEASE} 'probe' adds SYS_ADMIN at values.exporter.securityContext.capabilities.add in values "
        "that place pods on accelerators",
    ]
    assert (
        check(rule, RELEASE, {"values": values}, {"allowedNames": ["probe"]}, name="probe").violations == ()
    )
    assert check(rule, RELEASE, {"values": UNKNOWN}) == Outcome(unknown=("values",))
