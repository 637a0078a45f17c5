"""The stack's typed configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference_infra.infra.config import ConfigError, parse_stack_settings, stack_file_schema

REPO_ROOT = Path(__file__).resolve().parents[2]
BASE = {"costCenter": "ml-platform", "owner": "team@example.com"}


def test_parse_stack_settings_defaults_environment_to_the_stack_and_auto_shutdown_to_non_prod():
    dev = parse_stack_settings(BASE, stack="dev")
    prod = parse_stack_settings(BASE, stack="prod")
    assert dev.environment == "dev"
    assert dev.cost_tags().auto_shutdown is True
    assert prod.is_production
    assert prod.cost_tags().auto_shutdown is False


def test_parse_stack_settings_decodes_structured_values():
    settings = parse_stack_settings(
        {**BASE, "extraTags": json.dumps({"Service": "llm"}), "autoShutdown": "true"}, stack="prod"
    )
    assert settings.extra_tags == {"Service": "llm"}
    assert settings.cost_tags().auto_shutdown is True
    assert settings.cost_tags().aws_tags()["Service"] == "llm"


def test_parse_stack_settings_rejects_unknown_keys_with_close_matches():
    with pytest.raises(ConfigError) as caught:
        parse_stack_settings({**BASE, "costCentre": "x"}, stack="dev")
    message = str(caught.value)
    assert "inference-infra:costCentre is not a setting here (did you mean 'costCenter'?)" in message
    allowed = set(message.split("allowed: ", 1)[1].rstrip(".").split(", "))
    assert {"autoShutdown", "costCenter", "environment", "extraTags", "owner"} <= allowed  # parts add more


def test_parse_stack_settings_rejects_missing_required_keys():
    with pytest.raises(ConfigError, match=r"inference-infra:owner is required but not set"):
        parse_stack_settings({"costCenter": "x"}, stack="dev")


def test_parse_stack_settings_rejects_bad_values_naming_key_and_value():
    with pytest.raises(
        ConfigError, match=r"inference-infra:environment = 'Prod': must be lower-case letters"
    ):
        parse_stack_settings({**BASE, "environment": "Prod"}, stack="dev")
    with pytest.raises(ConfigError, match=r"inference-infra:autoShutdown = 'maybe'"):
        parse_stack_settings({**BASE, "autoShutdown": "maybe"}, stack="dev")


def test_parse_stack_settings_collects_every_problem_at_once():
    with pytest.raises(ConfigError) as caught:
        parse_stack_settings({"environment": "Prod", "typo": "1"}, stack="dev")
    assert "(4 problems)" in str(caught.value)
    assert len(caught.value.problems) == 4


def test_parse_stack_settings_rejects_invalid_tags():
    with pytest.raises(ConfigError, match=r"extraTags 'aws:team' uses the reserved prefix 'aws:'"):
        parse_stack_settings({**BASE, "extraTags": '{"aws:team": "x"}'}, stack="dev")


def test_schema_file_is_current():
    on_disk = json.loads((REPO_ROOT / "infra" / "config.schema.json").read_text())
    assert on_disk == stack_file_schema(), (
        "run: python -m inference_infra.infra.config > infra/config.schema.json"
    )


def test_schema_types_the_namespaced_keys_and_forbids_unknown_ones():
    config = stack_file_schema()["properties"]["config"]
    assert "inference-infra:costCenter" in config["properties"]
    assert config["additionalProperties"] is False
    assert "inference-infra:costCenter" in config["required"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_files_validate_against_the_schema(stack):
    import jsonschema
    import yaml

    doc = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())
    jsonschema.validate(doc, stack_file_schema())
