"""The stack's Prometheus scrapes the stack's own VM fleets: the jobs `monitoring scrape-config` renders."""

from __future__ import annotations

import shutil
import subprocess

import yaml

from inference_infra.components.k8s.gpu_observability import (
    GpuObservability,
    GpuObservabilityArgs,
    validate_gpu_observability,
)
from inference_infra.components.monitoring.scrape import (
    AwsDiscovery,
    ScrapeSettings,
    discovery_policy,
    scrape_config,
)

RELEASE = "kubernetes:helm.sh/v3:Release"
NEURON_IMAGE = "registry.example.com/neuron/neuron-monitor:1.3.0@sha256:" + "a" * 64  # a test input
ROLE = "arn:aws:iam::123456789012:role/prometheus-discovery"
FLEETS = ScrapeSettings(discovery=AwsDiscovery(regions=["us-east-1"], tags={"Environment": "prod"}))


def _prometheus(capture) -> dict:
    return capture.one(RELEASE, "gpu-obs-kube-prometheus-stack").props["values"]["prometheus"]


def test_gpu_observability_scrapes_the_fleets_with_the_cli_renderer(plan_of, tmp_path):
    capture = plan_of(
        GpuObservability(
            "gpu-obs",
            GpuObservabilityArgs(
                fleet_discovery=FLEETS,
                prometheus_service_account_annotations={"eks.amazonaws.com/role-arn": ROLE},
            ),
        )
    )
    prometheus = _prometheus(capture)
    jobs = prometheus["prometheusSpec"]["additionalScrapeConfigs"]
    assert jobs == scrape_config(FLEETS)["scrape_configs"]
    assert [j["job_name"] for j in jobs] == ["dcgm-exporter", "node-exporter", "vllm"]
    assert prometheus["serviceAccount"]["annotations"] == {"eks.amazonaws.com/role-arn": ROLE}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({"scrape_configs": jobs}))
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed: run .ci/system-deps"
    result = subprocess.run(
        [promtool, "check", "config", str(tmp_path / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_gpu_observability_without_fleets_adds_no_scrape_configs(plan_of):
    prometheus = _prometheus(plan_of(GpuObservability("gpu-obs", GpuObservabilityArgs())))
    assert "additionalScrapeConfigs" not in prometheus["prometheusSpec"]
    assert "serviceAccount" not in prometheus


def test_gpu_observability_rejects_bad_fleet_discovery():
    bad = ScrapeSettings(discovery=AwsDiscovery(regions=["mars-1"]))
    problems = validate_gpu_observability("gpu-obs", GpuObservabilityArgs(fleet_discovery=bad))
    assert [(p.input, p.value) for p in problems] == [("fleet_discovery.region", "mars-1")]


def test_discovery_policy_may_only_list_instances():
    aws = discovery_policy("aws")
    assert [s["Action"] for s in aws["Statement"]] == [
        ["ec2:DescribeInstances", "ec2:DescribeAvailabilityZones"]
    ]
    assert discovery_policy("gcp")["includedPermissions"] == ["compute.instances.list"]


def test_gpu_observability_neuron_monitor_runs_as_awss_manifest(plan_of):
    capture = plan_of(
        GpuObservability(
            "gpu-obs", GpuObservabilityArgs(neuron_monitor=True, neuron_monitor_image=NEURON_IMAGE)
        )
    )
    daemon_set = capture.one("kubernetes:apps/v1:DaemonSet")
    container = daemon_set.props["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[args.index("--neuron-monitor-config") + 1] == "/opt/aws/neuron/bin/neuron-monitor.conf"
    assert container["resources"]["limits"]["memory"] == "256Mi"
    assert {"name": "GOMEMLIMIT", "value": "160MiB"} in container["env"]
