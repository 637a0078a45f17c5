"""The EKS side of KubernetesServingPool held against what AWS and its SDK do (review of issue #34).

- the S3 fetch gets its region and STS endpoint from its own environment, never from the instance
  metadata service (IMDSv2 hop limit 1 keeps pods from it): botocore 1.44.8 reads the region from
  AWS_DEFAULT_REGION only (configprovider.py), so the rendered environment is fed to a real botocore
  session here;
- the plan says that EKS enforces the pool's NetworkPolicy only with the VPC CNI's network policy agent;
- KEDA's query clamps each series at 0 and, for a pool that never goes to zero, an empty answer is an
  error (the HPA holds) rather than KEDA's default 0 (read in kedacore/keda v2.20.2
  pkg/scalers/prometheus_scaler.go);
- a customer managed KMS key of the secret is decryptable through Secrets Manager only;
- the IRSA role reads the API key's secret by its exact ARN, or, for a partial ARN, by the name and
  exactly six suffix characters (`-??????`), as Secrets Manager ARNs carry a random suffix.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace

import botocore.session
import pytest
import yaml
from botocore.utils import InstanceMetadataFetcher

from inference_infra.components.catalog import Cloud
from inference_infra.components.fleet import ElasticArgs
from inference_infra.components.k8s.pool_manifests import aws_region, s3_fetch_environment, scaled_object
from inference_infra.components.k8s.pool_profile import plan_pool
from inference_infra.components.k8s.serving_pool import KubernetesServingPool, irsa_policy, secret_resource
from inference_infra.components.k8s.serving_pool_args import KubernetesCluster, serving_pool_problems
from tests.components.k8s.pool_cases import AWS_SECRET, EKS, EKS_ELASTIC, GKE_TPU, OIDC

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
AWS_ENV = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_STS_REGIONAL_ENDPOINTS",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_CONFIG_FILE",
    "AWS_PROFILE",
)


def _init(capture, name):
    pod = capture.one(DEPLOYMENT, "llama-engine").props["spec"]["template"]
    return next(c for c in pod["spec"]["initContainers"] if c["name"] == name)


def test_s3_fetch_sets_its_region_and_regional_sts_without_imds(plan_of):
    KubernetesServingPool("llama", EKS)
    fetch = _init(plan_of(), "fetch-weights")
    env = {e["name"]: e["value"] for e in fetch["env"]}
    assert env["AWS_DEFAULT_REGION"] == "us-east-1"  # what botocore reads
    assert env["AWS_REGION"] == "us-east-1"
    assert env["AWS_STS_REGIONAL_ENDPOINTS"] == "regional"
    assert env["AWS_EC2_METADATA_DISABLED"] == "true"
    # IRSA's variables are the webhook's to inject: the pod never sets a role or a token path itself.
    assert not {"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ACCESS_KEY_ID"} & set(env)
    verify = _init(plan_of(), "verify-weights")
    assert not any(e["name"].startswith("AWS_") for e in verify["env"])  # the verifier reads no AWS


def test_the_rendered_environment_gives_botocore_the_region_and_the_regional_sts(monkeypatch, tmp_path):
    for key in AWS_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    args = replace(EKS, cluster=replace(EKS.cluster, region="eu-west-1"))
    for item in s3_fetch_environment(args):
        monkeypatch.setenv(item["name"], item["value"])
    session = botocore.session.get_session()
    assert session.get_config_variable("region") == "eu-west-1"
    sts = session.create_client("sts", aws_access_key_id="x", aws_secret_access_key="y")
    assert sts.meta.endpoint_url == "https://sts.eu-west-1.amazonaws.com"
    # botocore's metadata client (utils.py IMDSFetcher) reads AWS_EC2_METADATA_DISABLED itself: off.
    assert InstanceMetadataFetcher()._disabled is True


@pytest.mark.parametrize(
    ("cluster", "region"),
    [
        (KubernetesCluster(cloud=Cloud.AWS, oidc_provider_arn=OIDC, region="ap-south-1"), "ap-south-1"),
        (KubernetesCluster(cloud=Cloud.AWS, oidc_provider_arn=OIDC), "us-east-1"),
    ],
)
def test_aws_region_is_the_clusters_then_its_oidc_issuers(cluster, region):
    assert aws_region(replace(EKS, cluster=cluster)) == region


def test_aws_region_falls_back_to_the_secrets_region():
    other = "arn:aws:iam::123456789012:oidc-provider/issuer.example.com/id/AB12"
    args = replace(
        EKS,
        cluster=KubernetesCluster(cloud=Cloud.AWS, oidc_provider_arn=other),
        api_key_secret="arn:aws:secretsmanager:eu-central-1:123456789012:secret:k-AbCdEf",
    )
    assert aws_region(args) == "eu-central-1"


@pytest.mark.parametrize(
    ("given", "resource"),
    [
        (AWS_SECRET, AWS_SECRET),  # complete: the exact secret
        (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:llama-api-key",
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:llama-api-key-??????",
        ),
        (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:team/key",
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:team/key-??????",
        ),
    ],
)
def test_secret_resource_matches_the_real_arn_and_no_other_secret(given, resource):
    assert secret_resource(given) == resource
    assert "*" not in secret_resource(given)


def test_irsa_policy_of_a_partial_secret_arn_grants_the_suffixed_secret():
    partial = "arn:aws:secretsmanager:us-east-1:123456789012:secret:llama-api-key"
    policy = irsa_policy(replace(EKS, api_key_secret=partial), "acme-models")
    (key,) = [s for s in policy["Statement"] if s["Sid"] == "ReadApiKey"]
    assert key["Resource"] == f"{partial}-??????"
    json.dumps(policy)  # a plain JSON document


def test_eks_plan_notes_that_network_policy_needs_the_vpc_cni_agent():
    eks = plan_pool("llama", EKS)
    (note,) = [n for n in eks.notes if "NetworkPolicy" in n]
    assert 'enableNetworkPolicy "true"' in note
    assert "vpc-cni" in note
    assert not [n for n in plan_pool("tpu", GKE_TPU).notes if "enableNetworkPolicy" in n]  # EKS only


def _prometheus_trigger(args):
    body = scaled_object("llama", args, plan_pool("llama", args))
    (trigger,) = [t for t in body["spec"]["triggers"] if t["type"] == "prometheus"]
    return body, trigger["metadata"]


def test_scaler_query_clamps_each_series_so_a_forged_negative_cannot_hold_the_pool_down():
    _, meta = _prometheus_trigger(EKS_ELASTIC)
    query = meta["query"]
    selector = 'job="vllm",namespace="inference",pool="llama"'
    assert query == (
        f"sum(clamp_min(vllm:num_requests_running{{{selector}}}, 0)) + "
        f"sum(clamp_min(vllm:num_requests_waiting{{{selector}}}, 0))"
    )


def test_a_pool_that_never_scales_to_zero_treats_an_empty_answer_as_an_error():
    production = replace(EKS_ELASTIC, environment="prod", elastic=ElasticArgs(min_size=1, max_size=4))
    body, meta = _prometheus_trigger(production)
    assert body["spec"]["minReplicaCount"] >= 1
    assert meta["ignoreNullValues"] == "false"  # KEDA's default (true) reads lost series as 0 load
    body, meta = _prometheus_trigger(EKS_ELASTIC)  # dev, 0 off hours: no series at zero pods
    assert body["spec"]["minReplicaCount"] == 0
    assert "ignoreNullValues" not in meta


def test_promtool_evaluates_the_scaler_query_past_a_forged_negative_series(tmp_path):
    """The query as Prometheus itself evaluates it (promtool test rules): two engines in flight 3 + 2
    and waiting 1, and a series another namespace forged with this pool's labels at -1000."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed: run .ci/system-deps"
    _, meta = _prometheus_trigger(EKS_ELASTIC)
    labels = 'job="vllm",namespace="inference",pool="llama"'
    (tmp_path / "rules.yml").write_text(
        yaml.safe_dump({"groups": [{"name": "g", "rules": [{"record": "pool_load", "expr": meta["query"]}]}]})
    )
    series = [
        (f'vllm:num_requests_running{{{labels},instance="a"}}', "3x5"),
        (f'vllm:num_requests_running{{{labels},instance="b"}}', "2x5"),
        (f'vllm:num_requests_waiting{{{labels},instance="a"}}', "1x5"),
        (f'vllm:num_requests_waiting{{{labels},instance="b"}}', "0x5"),
        (f'vllm:num_requests_waiting{{{labels},instance="forged"}}', "-1000x5"),
    ]
    test = {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "promql_expr_test": [
                    {
                        "expr": "pool_load",
                        "eval_time": "2m",
                        "exp_samples": [{"labels": "pool_load", "value": 6}],
                    }
                ],
            }
        ],
    }
    (tmp_path / "test.yml").write_text(yaml.safe_dump(test))
    done = subprocess.run(
        [promtool, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_customer_managed_key_is_decrypted_through_secrets_manager_only(plan_of):
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    KubernetesServingPool("llama", replace(EKS, api_key_kms_key=key))
    policy = json.loads(plan_of().one("aws:iam/rolePolicy:RolePolicy").props["policy"])
    (decrypt,) = [s for s in policy["Statement"] if s["Sid"] == "DecryptApiKey"]
    assert decrypt["Action"] == ["kms:Decrypt"]
    assert decrypt["Resource"] == key
    assert decrypt["Condition"] == {
        "StringEquals": {"kms:ViaService": "secretsmanager.us-east-1.amazonaws.com"}
    }
    assert not [s for s in irsa_policy(EKS, "acme-models")["Statement"] if s["Sid"] == "DecryptApiKey"]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (replace(EKS, api_key_kms_key="arn:aws:kms:us-east-1:123456789012:alias/api"), "KMS key ARN"),
        (replace(EKS, api_key_kms_key="1234abcd"), "KMS key ARN"),
        (replace(GKE_TPU, api_key_kms_key="arn:aws:kms:us-east-1:123456789012:key/ab-12"), "only on EKS"),
    ],
)
def test_a_bad_api_key_kms_key_is_refused_before_anything_is_registered(args, why):
    problems = serving_pool_problems("p", args)
    (problem,) = [p for p in problems if p.input == "api_key_kms_key"]
    assert why in problem.allowed
