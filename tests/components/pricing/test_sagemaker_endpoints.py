"""A program's SageMaker endpoints are priced at SageMaker's own rate per instance, counted in the
accelerator total and judged by the budget (issue #35 item 8: two ml.inf2.48xlarge endpoints)."""

from __future__ import annotations

import json
from pathlib import Path

from inference_infra.components.catalog.sagemaker import sagemaker_price
from inference_infra.components.offline_plan import plan

REPO_POLICY = Path(__file__).resolve().parents[3] / "policy"

TWO_INF2_ENDPOINTS = """
import pulumi_aws as aws

for name, count in (("chat", 1), ("batch", 2)):
    config = aws.sagemaker.EndpointConfiguration(f"{name}-config", production_variants=[{
        "variant_name": "all", "model_name": "llama", "instance_type": "ml.inf2.48xlarge",
        "initial_instance_count": count}])
    aws.sagemaker.Endpoint(name, endpoint_config_name=config.name)
"""


def _budget(tmp_path: Path, max_hourly_usd: float) -> Path:
    config = tmp_path / "budget.json"
    config.write_text(
        json.dumps(
            {
                "all": "disabled",
                "accelerator-spend-budget": {"enforcementLevel": "mandatory", "maxHourlyUsd": max_hourly_usd},
            }
        )
    )
    return config


def test_sagemaker_endpoints_are_priced_per_instance_in_the_accelerator_total(pulumi_project):
    result = plan(pulumi_project(TWO_INF2_ENDPOINTS, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    rate = sagemaker_price("ml.inf2.48xlarge").hourly_usd
    assert rate == 15.58  # FMBench's pricing.yml at 39ce6b9c
    items = {i.urn.rsplit("::", 1)[-1]: i for i in result.cost.items if i.category == "accelerator"}
    assert items["chat-config"].hourly_usd == rate
    assert items["batch-config"].hourly_usd == 2 * rate
    assert "2 x ml.inf2.48xlarge SageMaker on-demand $15.58/h" in items["batch-config"].basis
    assert result.cost.accelerators_hourly_usd >= 3 * rate
    assert not [why for _, why in result.cost.unpriced if "SageMaker" in why]


def test_sagemaker_endpoints_outside_us_east_1_say_they_use_its_rate(pulumi_project):
    result = plan(pulumi_project(TWO_INF2_ENDPOINTS, {"dev": "config:\n  aws:region: us-west-2\n"}), "dev")
    item = next(i for i in result.cost.items if i.urn.endswith("::chat-config"))
    assert item.hourly_usd == 15.58
    assert "us-east-1 rate (no us-west-2 rate recorded)" in item.basis


def test_sagemaker_endpoints_count_against_the_budget(pulumi_project, tmp_path):
    project = pulumi_project(TWO_INF2_ENDPOINTS, {"dev": "config:\n  aws:region: us-east-1\n"})
    over = plan(project, "dev", policy_pack=REPO_POLICY, policy_config=_budget(tmp_path, 40.0))
    violations = [v for v in over.policy.as_json()["violations"] if v["policy"] == "accelerator-spend-budget"]
    assert len(violations) == 1
    assert violations[0]["enforcement"] == "mandatory"
    under = plan(project, "dev", policy_pack=REPO_POLICY, policy_config=_budget(tmp_path, 50.0))
    assert not [v for v in under.policy.as_json()["violations"] if v["policy"] == "accelerator-spend-budget"]


# Every production variant is billed on its own (SageMaker's CreateEndpointConfig: each variant
# runs InitialInstanceCount instances of its InstanceType, or is serverless); issue #35's remainder.
VARIANTS = """
import pulumi_aws as aws

aws.sagemaker.EndpointConfiguration("two", production_variants=[
    {"variant_name": "blue", "model_name": "llama", "instance_type": "ml.g5.xlarge",
     "initial_instance_count": 2, "initial_variant_weight": 0.9},
    {"variant_name": "green", "model_name": "llama", "instance_type": "ml.inf2.48xlarge",
     "initial_instance_count": 1, "initial_variant_weight": 0.1},
])
aws.sagemaker.EndpointConfiguration("three", production_variants=[
    {"variant_name": "a", "model_name": "llama", "instance_type": "ml.g5.xlarge",
     "initial_instance_count": 3},
    {"variant_name": "b", "model_name": "llama", "instance_type": "ml.g5.12xlarge",
     "initial_instance_count": 1},
    {"variant_name": "c", "model_name": "small",
     "serverless_config": {"max_concurrency": 5, "memory_size_in_mb": 4096}},
])
aws.sagemaker.EndpointConfiguration("serverless-only", production_variants=[
    {"variant_name": "s", "model_name": "small",
     "serverless_config": {"max_concurrency": 5, "memory_size_in_mb": 2048}},
])
"""


def _items(result) -> dict:
    return {i.urn.rsplit("::", 1)[-1]: i for i in result.cost.items}


def test_two_variants_are_each_priced_at_their_instance_counts(pulumi_project):
    result = plan(pulumi_project(VARIANTS, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    g5, inf2 = sagemaker_price("ml.g5.xlarge").hourly_usd, sagemaker_price("ml.inf2.48xlarge").hourly_usd
    item = _items(result)["two"]
    assert item.category == "accelerator"
    assert item.hourly_usd == 2 * g5 + inf2  # not the first variant's alone (2 x 1.4084)
    assert "variant 'blue': 2 x ml.g5.xlarge SageMaker on-demand $1.4084/h" in item.basis
    assert "variant 'green': 1 x ml.inf2.48xlarge SageMaker on-demand $15.58/h" in item.basis


def test_three_variants_price_the_instances_and_say_the_serverless_one_is_unpriced(pulumi_project):
    result = plan(pulumi_project(VARIANTS, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    g5, g5_12 = sagemaker_price("ml.g5.xlarge").hourly_usd, sagemaker_price("ml.g5.12xlarge").hourly_usd
    item = _items(result)["three"]
    assert item.hourly_usd == 3 * g5 + g5_12
    assert "variant 'a': 3 x ml.g5.xlarge" in item.basis
    assert "variant 'b': 1 x ml.g5.12xlarge" in item.basis
    unpriced = [why for urn, why in result.cost.unpriced if urn.endswith("::three")]
    assert len(unpriced) == 1
    assert unpriced[0].startswith("variant 'c': serverless: billed per use")


def test_an_endpoint_of_serverless_variants_only_is_unpriced_not_free(pulumi_project):
    result = plan(pulumi_project(VARIANTS, {"dev": "config:\n  aws:region: us-east-1\n"}), "dev")
    assert "serverless-only" not in _items(result)
    unpriced = [why for urn, why in result.cost.unpriced if urn.endswith("::serverless-only")]
    assert len(unpriced) == 1
    assert "serverless variant(s) s: serverless: billed per use" in unpriced[0]


def test_the_policy_judges_every_variants_type(pulumi_project, tmp_path):
    # dev allows one-accelerator machines only: a second variant's ml.inf2.48xlarge (12 chips) and
    # ml.g5.12xlarge (4 GPUs) are refused, though each configuration's first variant is allowed.
    config = tmp_path / "dev.json"
    config.write_text(
        json.dumps(
            {
                "all": "disabled",
                "allowed-accelerator-types": {"enforcementLevel": "mandatory", "environment": "dev"},
            }
        )
    )
    project = pulumi_project(VARIANTS, {"dev": "config:\n  aws:region: us-east-1\n"})
    result = plan(project, "dev", policy_pack=REPO_POLICY, policy_config=config)
    refused = [v for v in result.policy.as_json()["violations"] if v["policy"] == "allowed-accelerator-types"]
    by_name = {v["urn"].rsplit("::", 1)[-1]: v["message"] for v in refused}
    assert sorted(by_name) == ["three", "two"]
    assert "uses inf2.48xlarge," in by_name["two"]
    assert "g5.xlarge" not in by_name["two"]
    assert "uses g5.12xlarge," in by_name["three"]
