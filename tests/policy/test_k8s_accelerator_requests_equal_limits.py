"""k8s-accelerator-requests-equal-limits: accelerators requested exactly, in whole devices."""

from __future__ import annotations

import pulumi_kubernetes as k8s
import pytest

from inference_infra.policy.rules import k8s_accelerator_requests_equal_limits as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome
from tests.policy.k8s_objects import (
    CRON_JOB,
    DEPLOYMENT,
    STATEFUL_SET,
    cron_job,
    deployment,
    pod_spec,
    with_container,
)

PATH = "spec.template.spec.containers[0].resources"


@pytest.mark.parametrize(("requests", "limits"), [(1, 1), ("2", 2), ("4", "4000m"), (None, 8)])
def test_k8s_accelerator_requests_equal_limits_passes_equal_or_limit_only(check, requests, limits):
    resources = {"limits": {"nvidia.com/gpu": limits}}
    if requests is not None:
        resources["requests"] = {"nvidia.com/gpu": requests, "cpu": "4"}
    spec = with_container(pod_spec(), resources=resources)
    assert check(rule, DEPLOYMENT, deployment(spec)) == Outcome()


def test_k8s_accelerator_requests_equal_limits_rejects_requests_without_limits(check):
    spec = with_container(pod_spec(), resources={"requests": {"aws.amazon.com/neuron": 1}})
    [message] = check(rule, STATEFUL_SET, deployment(spec), name="inf2").violations
    assert message == (
        f"{STATEFUL_SET} 'inf2' requests aws.amazon.com/neuron: 1 on container 'vllm' without a limit "
        f"({PATH}.limits.aws.amazon.com/neuron); Kubernetes refuses that for an accelerator: set the limit "
        "to the same number (or set only the limit)."
    )


def test_k8s_accelerator_requests_equal_limits_rejects_a_request_below_its_limit(check):
    spec = with_container(
        pod_spec(), resources={"requests": {"google.com/tpu": "4"}, "limits": {"google.com/tpu": "8"}}
    )
    [message] = check(rule, DEPLOYMENT, deployment(spec), name="tpu").violations
    assert message.startswith(f"{DEPLOYMENT} 'tpu' requests google.com/tpu: '4' but limits it to '8'")


def test_k8s_accelerator_requests_equal_limits_rejects_an_init_container_request_without_limit(check):
    spec = with_container(pod_spec(), index=-1, resources={"requests": {"nvidia.com/gpu": 1}})
    [message] = check(rule, CRON_JOB, cron_job(spec), name="eval").violations
    assert message.startswith(f"{CRON_JOB} 'eval' requests nvidia.com/gpu: 1 on container 'verify-weights'")


@pytest.mark.parametrize("amount", ["500m", 0, "0.5", "one", True])
def test_k8s_accelerator_requests_equal_limits_rejects_part_devices(check, amount):
    spec = with_container(pod_spec(), resources={"limits": {"nvidia.com/gpu": amount}})
    violations = check(rule, DEPLOYMENT, deployment(spec)).violations
    assert any(f"{PATH}.limits.nvidia.com/gpu to " in v and "whole number" in v for v in violations)


def test_k8s_accelerator_requests_equal_limits_skips_cpu_pods_and_waits_for_unknowns(check):
    cpu = {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}
    assert check(rule, DEPLOYMENT, deployment(cpu)).not_applicable == "its pods use no accelerator"
    spec = with_container(pod_spec(), resources={"requests": {"nvidia.com/gpu": 1}, "limits": UNKNOWN})
    assert check(rule, DEPLOYMENT, deployment(spec)) == Outcome(unknown=(f"{PATH}.limits",))


def test_k8s_accelerator_requests_equal_limits_rejects_a_captured_deployment(plan_of, run_pack):
    k8s.apps.v1.Deployment(
        "vllm",
        spec={
            "selector": {"match_labels": {"app": "vllm"}},
            "template": {
                "metadata": {"labels": {"app": "vllm"}},
                "spec": {
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai",
                            "resources": {
                                "requests": {"nvidia.com/gpu": "2"},
                                "limits": {"nvidia.com/gpu": "1"},
                            },
                        }
                    ]
                },
            },
        },
    )
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(";")[0] for v in report.violations] == [
        f"{DEPLOYMENT} 'vllm' requests nvidia.com/gpu: '2' but limits it to '1' on container 'vllm'"
    ]


def test_k8s_accelerator_requests_equal_limits_judges_helm_values_resources_blocks(check):
    release = "kubernetes:helm.sh/v3:Release"
    good = {"engine": {"resources": {"requests": {"nvidia.com/gpu": 2}, "limits": {"nvidia.com/gpu": "2"}}}}
    assert check(rule, release, {"values": good}) == Outcome()
    bad = {"engine": {"resources": {"requests": {"aws.amazon.com/neuron": 1}}}}
    [message] = check(rule, release, {"values": bad}, name="inf").violations
    assert message.startswith(
        f"{release} 'inf' requests aws.amazon.com/neuron: 1 in its values without a limit "
        "(values.engine.resources.limits.aws.amazon.com/neuron)"
    )
    assert check(rule, release, {"values": {"replicas": 2}}).not_applicable is not None
