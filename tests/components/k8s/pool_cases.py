"""Shared inputs of the KubernetesServingPool tests: an EKS GPU pool and a GKE TPU pool (test data)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.fleet import ElasticArgs, ScheduleArgs, ServedModel
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.k8s.serving_pool_args import (
    GatewayRef,
    KubernetesCluster,
    KubernetesServingPoolArgs,
    PrometheusRef,
)
from inference_infra.components.offline_plan.model import Unknown

PIN = "a" * 64
OIDC = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF"
ISSUER = "oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF"
AWS_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:llama-api-key-AbCdEf"
GCP_SECRET = "projects/acme-inference/secrets/tpu-api-key/versions/3"
MODEL = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)

EKS = KubernetesServingPoolArgs(
    cluster=KubernetesCluster(cloud=Cloud.AWS, oidc_provider_arn=OIDC, region="us-east-1"),
    model=MODEL,
    on_demand=2,
    weights=S3Weights(bucket_name="acme-models", prefix="llama-3.1-8b", manifest_sha256=PIN),
    api_key_secret=AWS_SECRET,
    gateway=GatewayRef(name="inference", namespace="gateway", pod_labels={"app": "envoy"}),
    prometheus=PrometheusRef(release="gpu-obs-kps"),
    environment="prod",
)
EKS_ELASTIC = replace(
    EKS,
    environment="dev",
    elastic=ElasticArgs(
        min_size=1,
        max_size=4,
        schedule=ScheduleArgs(time_zone="Europe/Berlin", off_hours_size=0),
    ),
)
GKE_TPU = KubernetesServingPoolArgs(
    cluster=KubernetesCluster(cloud=Cloud.GCP, workload_pool="acme-inference.svc.id.goog", region="us-west4"),
    model=MODEL,
    accelerator=AcceleratorFamily.GOOGLE_TPU,
    spot=1,
    weights=GcsWeights(bucket="acme-models", uris=["gs://acme-models/llama-3.1-8b"], manifest_sha256=PIN),
    api_key_secret=GCP_SECRET,
    gateway=GatewayRef(name="inference", namespace="gateway"),
    prometheus=PrometheusRef(release="gpu-obs-kps"),
    environment="dev",
)


def known(value: Any) -> Any:
    """Values known only at deploy as a placeholder string (for schema validation)."""
    if isinstance(value, Unknown):
        return "unknown-at-preview"
    if isinstance(value, dict):
        return {k: known(v) for k, v in value.items()}
    if isinstance(value, list):
        return [known(v) for v in value]
    return value
