"""tests/components/k8s/manifests.py: every kind a Kubernetes pool renders, valid and invalid.

The valid objects are written from the pinned CRDs in tests/k8s_schemas/ (see SOURCES) and the
Kubernetes API's own schemas; each invalid one breaks one rule the schema states (an undeclared
field, a wrong type, a missing required field, a value outside an enum), and must be caught.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest

from inference_infra.components.k8s.gpu_observability import GpuObservability, GpuObservabilityArgs
from tests.components.k8s.manifests import SCHEMAS, crd_schemas, objects_of, strict, validate

DIGEST = "sha256:" + "ab" * 32
POD = {
    "metadata": {"labels": {"app": "vllm"}},
    "spec": {
        "containers": [
            {
                "name": "vllm",
                "image": f"vllm/vllm-openai@{DIGEST}",
                "ports": [{"name": "http", "containerPort": 8000}],
                "resources": {"limits": {"nvidia.com/gpu": "1"}},
            }
        ]
    },
}

VALID: dict[str, dict[str, Any]] = {
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "vllm", "namespace": "serving"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "vllm"}}, "template": POD},
    },
    "Service": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "vllm"},
        "spec": {
            "selector": {"app": "vllm"},
            "ports": [{"name": "http", "port": 8000, "targetPort": "http"}],
        },
    },
    "NetworkPolicy": {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "vllm"},
        "spec": {
            "podSelector": {"matchLabels": {"app": "vllm"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"ports": [{"port": 8000, "protocol": "TCP"}]}],
        },
    },
    "PodDisruptionBudget": {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "vllm"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "vllm"}}},
    },
    "ScaledObject": {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "vllm"},
        "spec": {
            "scaleTargetRef": {"name": "vllm"},
            "minReplicaCount": 0,
            "maxReplicaCount": 4,
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": "http://prometheus:9090",
                        "query": "sum(x)",
                        "threshold": "8",
                    },
                }
            ],
        },
    },
    "NodePool": {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "metadata": {"labels": {"inference-infra.dev/pool": "gpu"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": ["g6e.xlarge"],
                        },
                    ],
                    "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                },
            },
            "limits": {"nvidia.com/gpu": 4},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
        },
    },
    "EC2NodeClass": {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {
            "role": "KarpenterNodeRole",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
            "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
        },
    },
    "LeaderWorkerSet": {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm"},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": POD}},
    },
    "HTTPRoute": {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "vllm"},
        "spec": {
            "parentRefs": [{"name": "internal"}],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/v1/"}}],
                    "backendRefs": [{"name": "vllm", "port": 8000, "weight": 90}],
                }
            ],
        },
    },
    "Gateway": {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "internal"},
        "spec": {"gatewayClassName": "eks", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
    },
    "PodMonitor": {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": "vllm"},
        "spec": {"selector": {"matchLabels": {"app": "vllm"}}, "podMetricsEndpoints": [{"port": "http"}]},
    },
    "ServiceMonitor": {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "vllm"},
        "spec": {
            "selector": {"matchLabels": {"app": "vllm"}},
            "endpoints": [{"port": "http", "interval": "15s"}],
        },
    },
    "PrometheusRule": {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "vllm"},
        "spec": {"groups": [{"name": "vllm", "rules": [{"alert": "Down", "expr": "up == 0", "for": "5m"}]}]},
    },
    "SecretProviderClass": {
        "apiVersion": "secrets-store.csi.x-k8s.io/v1",
        "kind": "SecretProviderClass",
        "metadata": {"name": "api-key"},
        "spec": {
            "provider": "aws",
            "parameters": {"objects": "- objectName: vllm-api-key\n  objectType: secretsmanager\n"},
            "secretObjects": [
                {
                    "secretName": "api-key",
                    "type": "Opaque",
                    "data": [{"objectName": "vllm-api-key", "key": "key"}],
                }
            ],
        },
    },
    "ExternalSecret": {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "api-key"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "aws", "kind": "ClusterSecretStore"},
            "target": {"name": "api-key"},
            "data": [{"secretKey": "key", "remoteRef": {"key": "vllm-api-key"}}],
        },
    },
}


def _broken(kind: str, path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A copy of VALID[kind] with the field at path set to value (or removed when value is DELETE)."""
    obj = copy.deepcopy(VALID[kind])
    node = obj
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return obj


class _Delete:
    """The field is removed (a stable repr, so the test ids are the same in every xdist worker)."""

    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()
INVALID = [
    ("Deployment", ("spec", "template", "spec", "containers", 0, "gpus"), 1, "containers.0: Additional"),
    ("Service", ("spec", "ports", 0, "port"), "eight thousand", "spec.ports.0.port:"),
    ("NetworkPolicy", ("spec", "ingress"), {"from": []}, "spec.ingress:"),
    ("PodDisruptionBudget", ("spec", "maxUnavailabel"), 1, "spec: Additional"),
    ("ScaledObject", ("spec", "triggers"), DELETE, "'triggers' is a required property"),
    (
        "ScaledObject",
        ("spec", "minReplicas"),
        0,
        "spec: Additional properties are not allowed ('minReplicas'",
    ),
    (
        "NodePool",
        ("spec", "template", "spec", "nodeClassRef", "group"),
        DELETE,
        "'group' is a required property",
    ),
    (
        "NodePool",
        ("spec", "disruption", "consolidateAfter"),
        "forever",
        "consolidateAfter: 'forever' does not match",
    ),
    (
        "EC2NodeClass",
        ("spec", "metadataOptions", "httpTokens"),
        "sometimes",
        "httpTokens: 'sometimes' is not one of",
    ),
    (
        "LeaderWorkerSet",
        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0, "gpu"),
        1,
        "Additional",
    ),
    ("HTTPRoute", ("spec", "rules", 0, "matches", 0, "path", "type"), "Glob", "'Glob' is not one of"),
    ("Gateway", ("spec", "listeners", 0, "protocol"), DELETE, "'protocol' is a required property"),
    ("PodMonitor", ("spec", "podMetricsEndpoints", 0, "scrapeInterval"), "15s", "Additional properties"),
    ("ServiceMonitor", ("spec", "endpoints"), DELETE, "'endpoints' is a required property"),
    (
        "PrometheusRule",
        ("spec", "groups", 0, "rules", 0, "expr"),
        [],
        "expr: [] is not valid under any of the given schemas",
    ),
    (
        "SecretProviderClass",
        ("spec", "secretObjects", 0, "data"),
        "key",
        "data: 'key' is not of type 'array'",
    ),
    ("ExternalSecret", ("spec", "target", "creationPolicy"), "Sometimes", "'Sometimes' is not one of"),
    ("ExternalSecret", ("metadata", "labels"), {"a": 1}, "metadata.labels.a: 1 is not of type"),
]


@pytest.mark.parametrize("kind", sorted(VALID))
def test_manifests_validate_passes_a_valid_object_of_every_kind(kind):
    assert validate(VALID[kind]) == []


@pytest.mark.parametrize(("kind", "path", "value", "expected"), INVALID, ids=lambda v: str(v)[:30])
def test_manifests_validate_rejects_an_invalid_object_of_every_kind(kind, path, value, expected):
    errors = validate(_broken(kind, path, value))
    assert errors, f"{kind} with {path} = {value!r} passed"
    assert any(expected in e for e in errors), errors
    assert all(e.startswith(f"{kind} {VALID[kind]['metadata']['name']}: ") for e in errors)


def test_manifests_validate_rejects_a_kind_nobody_declares():
    typo = {**VALID["ScaledObject"], "apiVersion": "keda.sh/v1"}
    [error] = validate(typo)
    assert error.startswith("ScaledObject vllm: no schema for apiVersion 'keda.sh/v1' kind 'ScaledObject'")


def test_manifests_strict_keeps_fields_the_crd_preserves():
    schema = {
        "type": "object",
        "properties": {
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {}}},
            "closed": {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}},
        },
    }
    tightened = strict(schema)
    assert "additionalProperties" not in tightened["properties"]["open"]
    assert tightened["properties"]["closed"]["additionalProperties"] is False
    assert tightened["properties"]["closed"]["properties"]["a"]["type"] == ["string", "null"]
    assert "additionalProperties" not in schema["properties"]["closed"]  # the input is left alone
    # KEDA's trigger metadata is a string map: any key, but only strings.
    scaled = copy.deepcopy(VALID["ScaledObject"])
    scaled["spec"]["triggers"][0]["metadata"]["anyKey"] = "x"
    assert validate(scaled) == []
    scaled["spec"]["triggers"][0]["metadata"]["threshold"] = 8
    assert any("threshold: 8 is not of type 'string'" in e for e in validate(scaled))


def test_manifests_vendored_crds_match_their_recorded_sha256():
    lines = [
        line.split() for line in (SCHEMAS / "SOURCES").read_text().splitlines() if line and line[0] != "#"
    ]
    recorded = {Path(path).name: digest.removeprefix("sha256:") for _, _, path, digest, *_ in lines}
    on_disk = {p.name for p in SCHEMAS.glob("*.yaml")}
    assert set(recorded) == on_disk
    for name, digest in recorded.items():
        assert hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest() == digest, name
    kinds = {kind for _, kind in crd_schemas()}
    assert kinds == {
        "ScaledObject",
        "NodePool",
        "EC2NodeClass",
        "LeaderWorkerSet",
        "HTTPRoute",
        "Gateway",
        "PodMonitor",
        "ServiceMonitor",
        "PrometheusRule",
        "SecretProviderClass",
        "ExternalSecret",
    }


def test_manifests_validate_passes_everything_gpu_observability_renders():
    from inference_infra.components.offline_plan.runtime import Harness

    harness = Harness(config={"aws:region": "us-east-1"}).start()
    try:
        GpuObservability(
            "gpu-obs",
            GpuObservabilityArgs(
                neuron_monitor=True,
                neuron_monitor_image=f"registry.example.com/neuron/neuron-monitor:1.3.0@{DIGEST}",
            ),
        )
        capture = harness.capture()
    finally:
        harness.stop()
    objects = objects_of(capture)
    kinds = {o["kind"] for o in objects}
    assert {"PrometheusRule", "DaemonSet", "NetworkPolicy"} <= kinds
    assert [e for o in objects for e in validate(o)] == []


@pytest.mark.parametrize("kind", ["Deployment", "Service", "NetworkPolicy", "PodDisruptionBudget"])
def test_manifests_validate_passes_the_built_in_kinds_at_the_oldest_supported_version(kind):
    assert validate(VALID[kind], "1.30.0") == []
    assert validate(_broken(kind, ("spec", "unknownField"), 1), "1.30.0") != []


def test_manifests_strict_leaves_the_value_constraints_of_a_oneof_alone():
    # Gateway API's address: oneOf branches constrain `type` (and `value`'s pattern) and declare only
    # part of the object's fields; refusing the others there would refuse every address.
    gateway = copy.deepcopy(VALID["Gateway"])
    gateway["spec"]["addresses"] = [
        {"type": "IPAddress", "value": "10.0.0.10"},
        {"type": "Hostname", "value": "gw.example.com"},  # refused when the branches were tightened
    ]
    assert validate(gateway) == []
    gateway["spec"]["addresses"][0]["port"] = 80
    assert any("Additional properties are not allowed ('port'" in e for e in validate(gateway))
