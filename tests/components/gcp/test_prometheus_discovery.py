"""PrometheusDiscoveryAccount: a Workload Identity account only Prometheus's service account may use,
that may only list instances."""

from __future__ import annotations

import re

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp import PrometheusDiscoveryAccount, PrometheusDiscoveryAccountArgs


def _args(**overrides) -> PrometheusDiscoveryAccountArgs:
    base = {"project": "acme-ml-prod", "namespace": "monitoring", "service_account": "obs-kps-prometheus"}
    return PrometheusDiscoveryAccountArgs(**{**base, **overrides})


def test_prometheus_discovery_account_lists_instances_only(plan_of):
    capture = plan_of(PrometheusDiscoveryAccount("prom-discovery", _args()))
    role = capture.one("gcp:projects/iAMCustomRole:IAMCustomRole").props
    assert role["permissions"] == ["compute.instances.list"]
    assert role["roleId"] == "promDiscoveryGceList"
    (grant,) = capture.of_type("gcp:projects/iAMMember:IAMMember")
    assert grant.props["member"].startswith("serviceAccount:")
    assert grant.props["role"] != "roles/compute.viewer"
    assert capture.of_type("gcp:serviceaccount/key:Key") == []


def test_prometheus_discovery_account_binds_one_kubernetes_service_account(plan_of):
    capture = plan_of(
        PrometheusDiscoveryAccount("prom-discovery", _args(workload_pool="acme-gke.svc.id.goog"))
    )
    (binding,) = capture.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.props["role"] == "roles/iam.workloadIdentityUser"
    assert binding.props["member"] == "serviceAccount:acme-gke.svc.id.goog[monitoring/obs-kps-prometheus]"


def test_prometheus_discovery_account_defaults_to_the_projects_workload_pool(plan_of):
    default = plan_of(PrometheusDiscoveryAccount("prom-discovery", _args()))
    (binding,) = default.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.props["member"] == "serviceAccount:acme-ml-prod.svc.id.goog[monitoring/obs-kps-prometheus]"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("project", "Acme", "GCP project id"),
        ("workload_pool", "acme-ml-prod", "workload pool"),
        ("namespace", "mon_itoring", "namespace name"),
    ],
)
def test_prometheus_discovery_account_rejects_bad_input(plan_of, field, value, message):
    with pytest.raises(InputError, match=message) as error:
        plan_of(PrometheusDiscoveryAccount("prom-discovery", _args(**{field: value})))
    assert field in str(error.value)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("namespace", "Monitoring", "must be a Kubernetes namespace name (RFC 1123)"),
        ("service_account", "prom_sa", "must be a Kubernetes service account name"),
    ],
)
def test_prometheus_discovery_account_rejects_bad_kubernetes_names(plan_of, field, value, message):
    """The same check and words as the AWS role's (monitoring.scrape.discovery_subject_problems)."""
    with pytest.raises(InputError, match=re.escape(message)) as error:
        plan_of(PrometheusDiscoveryAccount("prom-discovery", _args(**{field: value})))
    assert field in str(error.value)
    assert value in str(error.value)
