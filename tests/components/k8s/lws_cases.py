"""Shared inputs of the multi-host pool tests: Llama 3.1 405B in BF16 on 2 x p5.48xlarge (test data)."""

from __future__ import annotations

from dataclasses import replace

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.fleet import ElasticArgs, ServedModel
from tests.components.k8s.pool_cases import EKS, PIN

BIG_MODEL = ServedModel(name="llama-3.1-405b", context_tokens=8192, concurrency=32)
LWS_EKS = replace(
    EKS,
    model=BIG_MODEL,
    machine="p5.48xlarge",
    hosts_per_replica=2,
    weights=S3Weights(bucket_name="acme-models", prefix="llama-3.1-405b", manifest_sha256=PIN),
    on_demand=2,
)
LWS_ELASTIC = replace(LWS_EKS, environment="dev", elastic=ElasticArgs(min_size=1, max_size=2))
