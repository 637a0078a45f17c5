"""The Kubernetes objects GpuObservability creates, checked by real tools from PyPI.

- kubernetes-validate: each object against the Kubernetes API's own OpenAPI
  schemas (strict: an unknown field is an error), at the oldest and newest
  versions it ships that we support.
- checkov's Kubernetes framework: the security checks, on the same objects.
  checkov cannot share an environment with Pulumi (it pins `packaging<24`,
  Pulumi needs `>=26`), so it runs from its own virtualenv, `.venv-checkov`,
  which `make test` creates (`make tools`). The test fails, never skips, when
  checkov is missing.

The Helm releases' own objects are rendered by Helm on the cluster, not here;
their values are checked by tests/components/k8s/test_k8s_hardening.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from inference_infra.components.k8s.gpu_observability import (
    AlertReceiver,
    GpuObservability,
    GpuObservabilityArgs,
)
from inference_infra.components.monitoring.alertmanager import ReceiverKind
from inference_infra.components.offline_plan.model import Unknown

REPO = Path(__file__).resolve().parents[3]
NEURON_IMAGE = "registry.example.com/neuron/neuron-monitor:1.3.0@sha256:" + "d" * 64  # a test input
ARGS = GpuObservabilityArgs(
    neuron_monitor=True,
    neuron_monitor_image=NEURON_IMAGE,
    alert_receivers=(AlertReceiver(name="oncall", kind=ReceiverKind.PAGERDUTY, secret="k"),),
)
# Objects with a schema in the Kubernetes API (PrometheusRule and PodMonitor are the operator's CRDs).
CORE_KINDS = {"Namespace", "Secret", "ConfigMap", "DaemonSet", "NetworkPolicy"}
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")

# checkov checks the component fails on purpose, each with why. Keyed by (kind, check id).
DELIBERATE = {
    # neuron-monitor reads /dev/neuron* with no device plugin to hand them over: privileged, as AWS's
    # manifest runs it, in the exporters namespace labelled privileged for that reason.
    ("DaemonSet", "CKV_K8S_16"): "privileged container (neuron-monitor needs the Neuron devices)",
    (
        "DaemonSet",
        "CKV_K8S_20",
    ): "allowPrivilegeEscalation is implied by privileged and cannot be false with it",
    ("DaemonSet", "CKV_K8S_23"): "root: the Neuron devices are root's",
    ("DaemonSet", "CKV_K8S_28"): "NET_RAW: a privileged container has every capability",
    ("DaemonSet", "CKV_K8S_37"): "capabilities: a privileged container has every capability",
    ("DaemonSet", "CKV_K8S_40"): "high UID: the Neuron devices are root's",
    ("DaemonSet", "CKV_K8S_22"): "read-only root not verified for AWS's neuron-monitor image",
    # neuron-monitor serves metrics only; AWS's manifest defines no probes and the port answers
    # only once the Neuron driver is up.
    ("DaemonSet", "CKV_K8S_8"): "no liveness probe (as AWS's manifest)",
    ("DaemonSet", "CKV_K8S_9"): "no readiness probe (as AWS's manifest)",
}


def _manifests() -> list[dict[str, Any]]:
    from inference_infra.components.offline_plan.runtime import Harness

    harness = Harness(config={"aws:region": "us-east-1"}).start()
    try:
        GpuObservability("gpu-obs", ARGS)
        capture = harness.capture()
    finally:
        harness.stop()
    objects = []
    for resource in capture.custom:
        props = _known(resource.props)
        if resource.type.startswith("kubernetes:") and props.get("kind") in CORE_KINDS:
            objects.append(props)
    return objects


def _known(value: Any) -> Any:
    """Values only known at deploy (the generated password) as a placeholder string."""
    if isinstance(value, Unknown):
        return "unknown-at-preview"
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_known(v) for v in value]
    return value


@pytest.fixture(scope="module")
def manifests() -> list[dict[str, Any]]:
    objects = _manifests()
    assert {o["kind"] for o in objects} == CORE_KINDS
    return objects


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_rendered_objects_match_the_kubernetes_schemas(manifests, version):
    for manifest in manifests:
        kubernetes_validate.validate(manifest, version, strict=True)


def test_kubernetes_validate_rejects_a_misplaced_security_context(manifests):
    daemon_set = json.loads(json.dumps(next(m for m in manifests if m["kind"] == "DaemonSet")))
    daemon_set["spec"]["template"]["spec"]["containers"][0]["securityContext"]["seccompProfile"] = (
        "RuntimeDefault"
    )
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(daemon_set, KUBERNETES_VERSIONS[-1], strict=True)


def checkov_binary() -> str:
    for candidate in (os.environ.get("CHECKOV"), str(REPO / ".venv-checkov" / "bin" / "checkov")):
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which("checkov")
    assert found, "checkov is missing: run `make tools` (creates .venv-checkov) or set CHECKOV"
    return found


def run_checkov(manifests: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """checkov's failed checks on the objects, offline: no platform download, no PyPI update check."""
    path = folder / "objects.yaml"
    path.write_text(yaml.safe_dump_all(manifests, sort_keys=False))
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true"}
    result = subprocess.run(
        [
            checkov_binary(),
            "-f",
            str(path),
            "--framework",
            "kubernetes",
            "-o",
            "json",
            "--skip-download",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    report = json.loads(result.stdout)
    reports = report if isinstance(report, list) else [report]
    return [check for r in reports for check in r.get("results", {}).get("failed_checks", [])]


def _kind(check: dict[str, Any]) -> str:
    return check["resource"].split(".")[0]


def test_checkov_passes_the_rendered_objects_but_for_deliberate_choices(manifests, tmp_path):
    failed = run_checkov(manifests, tmp_path)
    unexpected = sorted(
        f"{c['check_id']} {c['resource']}: {c['check_name']}"
        for c in failed
        if (_kind(c), c["check_id"]) not in DELIBERATE
    )
    assert unexpected == []
    # Every deliberate exception is still needed (a fixed one must leave the list).
    assert {(_kind(c), c["check_id"]) for c in failed} == set(DELIBERATE)


def test_checkov_flags_a_namespace_pod_that_drops_the_hardening(manifests, tmp_path):
    daemon_set = json.loads(json.dumps(next(m for m in manifests if m["kind"] == "DaemonSet")))
    pod = daemon_set["spec"]["template"]["spec"]
    del pod["securityContext"]
    del pod["automountServiceAccountToken"]
    pod["hostNetwork"] = True
    daemon_set["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "public.ecr.aws/neuron/neuron-monitor:1.3.0"
    )
    failed = {c["check_id"] for c in run_checkov([daemon_set], tmp_path)}
    assert {
        "CKV_K8S_31",
        "CKV_K8S_38",
        "CKV_K8S_19",
        "CKV_K8S_43",
    } <= failed  # seccomp, token, host net, digest
