"""PrometheusDiscoveryRole: an IRSA role only Prometheus's service account may assume, that may
only list instances."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.aws import PrometheusDiscoveryRole, PrometheusDiscoveryRoleArgs
from inference_infra.components.errors import InputError

PROVIDER = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E5"
ISSUER = "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E5"


def _args(**overrides) -> PrometheusDiscoveryRoleArgs:
    base = {"oidc_provider_arn": PROVIDER, "namespace": "monitoring", "service_account": "obs-kps-prometheus"}
    return PrometheusDiscoveryRoleArgs(**{**base, **overrides})


def test_prometheus_discovery_role_trusts_only_prometheus_service_account(plan_of):
    capture = plan_of(PrometheusDiscoveryRole("prom-discovery", _args(tags={"Environment": "prod"})))
    role = capture.one("aws:iam/role:Role").props
    trust = json.loads(role["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    assert statement["Principal"] == {"Federated": PROVIDER}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {
        "StringEquals": {
            f"{ISSUER}:sub": "system:serviceaccount:monitoring:obs-kps-prometheus",
            f"{ISSUER}:aud": "sts.amazonaws.com",
        }
    }
    assert role["tags"]["Environment"] == "prod"


def test_prometheus_discovery_role_may_only_describe_instances_and_zones(plan_of):
    capture = plan_of(PrometheusDiscoveryRole("prom-discovery", _args()))
    (policy,) = capture.of_type("aws:iam/rolePolicy:RolePolicy")
    statements = json.loads(policy.props["policy"])["Statement"]
    actions = sorted(a for s in statements for a in s["Action"])
    assert actions == ["ec2:DescribeAvailabilityZones", "ec2:DescribeInstances"]
    assert {s["Effect"] for s in statements} == {"Allow"}
    assert capture.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment") == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("oidc_provider_arn", "arn:aws:iam::123456789012:role/x", "EKS cluster's IAM OIDC provider ARN"),
        ("namespace", "Monitoring", "Kubernetes namespace name"),
        ("service_account", "prom_sa", "Kubernetes service account name"),
    ],
)
def test_prometheus_discovery_role_rejects_bad_input(plan_of, field, value, message):
    with pytest.raises(InputError, match=message) as error:
        plan_of(PrometheusDiscoveryRole("prom-discovery", _args(**{field: value})))
    assert field in str(error.value)
    assert value in str(error.value)
