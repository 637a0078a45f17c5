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
