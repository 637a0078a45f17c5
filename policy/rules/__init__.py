"""The pack's policies, one module each: a pure `check` function and its `POLICY` object.

Each module also names its `NAME`, `DESCRIPTION`, `SEVERITY`, `ENFORCEMENT` (the
default level) and `CONFIG_SCHEMA`; `tests/policy/test_registry.py` walks them.
"""

from __future__ import annotations

from pulumi_policy import Policy

from inference_infra.policy.rules import (
    accelerator_images_pinned,
    accelerator_imdsv2_required,
    accelerator_no_public_ip,
    accelerator_service_account_restricted,
    accelerator_spend_budget,
    allowed_accelerator_types,
    endpoint_tls_in_production,
    gcp_no_basic_roles,
    gcs_bucket_not_public,
    iam_no_wildcard_access,
    idle_watchdog_required,
    inference_endpoint_internal,
    k8s_accelerator_pods_unprivileged,
    k8s_accelerator_requests_equal_limits,
    load_balancer_api_paths_only,
    load_balancer_hardened_in_production,
    model_cache_write_restricted,
    no_open_ingress,
    no_plaintext_secrets,
    nonprod_accelerators_spot_or_autoshutdown,
    required_cost_tags,
    s3_bucket_not_public,
    storage_encrypted,
    vpc_flow_logs_in_production,
)

MODULES = (
    required_cost_tags,
    accelerator_imdsv2_required,
    accelerator_no_public_ip,
    storage_encrypted,
    no_open_ingress,
    nonprod_accelerators_spot_or_autoshutdown,
    allowed_accelerator_types,
    accelerator_spend_budget,
    idle_watchdog_required,
    inference_endpoint_internal,
    endpoint_tls_in_production,
    model_cache_write_restricted,
    accelerator_images_pinned,
    s3_bucket_not_public,
    gcs_bucket_not_public,
    iam_no_wildcard_access,
    gcp_no_basic_roles,
    accelerator_service_account_restricted,
    no_plaintext_secrets,
    load_balancer_hardened_in_production,
    vpc_flow_logs_in_production,
    load_balancer_api_paths_only,
    k8s_accelerator_pods_unprivileged,
    k8s_accelerator_requests_equal_limits,
)
POLICIES: tuple[Policy, ...] = tuple(m.POLICY for m in MODULES)
