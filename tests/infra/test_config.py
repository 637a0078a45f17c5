"""The stack's typed configuration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inference_infra.infra.config import StackSettings
from inference_infra.infra.schema import ArgsSettings, models_in
from inference_infra.infra.stack_file import ConfigError, parse_stack_settings, stack_file_schema

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


def test_parse_stack_settings_names_the_stack_file():
    with pytest.raises(
        ConfigError, match=r"^invalid stack config in Pulumi\.dev\.yaml: inference-infra:owner"
    ):
        parse_stack_settings({"costCenter": "x"}, stack="dev")


def test_generated_sections_describe_every_key():
    missing = [
        f"{model.__name__}.{name}"
        for model in models_in(StackSettings)
        if issubclass(model, ArgsSettings)
        for name, field in model.model_fields.items()
        if not field.description
    ]
    assert missing == []


def test_efs_model_cache_config_accepts_writer_role_arns_with_a_warning():
    role = "arn:aws:iam::123456789012:role/publisher"
    settings = parse_stack_settings(
        {**BASE, "efsModelCache": json.dumps({"writerRoleArns": [role]})}, stack="dev"
    )
    assert settings.efs_model_cache.writer_principal_arns == [role]
    assert settings.warnings == [
        "Pulumi.dev.yaml: inference-infra:efsModelCache.writerRoleArns is now "
        "inference-infra:efsModelCache.writerPrincipalArns; the old key is accepted until the next release, "
        "rename it"
    ]


def test_plan_shows_the_old_key_warning(tmp_path):
    from inference_infra.components.offline_plan import plan

    (tmp_path / "Pulumi.yaml").write_text(
        f"name: inference-infra\nruntime: python\nmain: {REPO_ROOT / 'infra'}\n"
    )
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n"
        "  aws:region: us-west-2\n"
        "  inference-infra:costCenter: ml\n"
        "  inference-infra:owner: team\n"
        "  inference-infra:watchdog:\n"
        "    schedule: rate(10 minutes)\n"
    )
    result = plan(tmp_path, "dev")
    assert (
        "Pulumi.dev.yaml: inference-infra:watchdog.schedule is now "
        "inference-infra:watchdog.scheduleExpression; the old key is accepted until the next release, "
        "rename it"
    ) in result.warnings()
    schedule = result.capture.one("aws:scheduler/schedule:Schedule")
    assert schedule.props["scheduleExpression"] == "rate(10 minutes)"


def test_config_imports_no_provider_sdk():
    code = (
        "import sys, inference_infra.infra.config; "
        "print(sorted(m for m in ('pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes') if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert run.stdout.strip() == "[]"


def test_args_modules_import_no_provider_sdk():
    """Every component's `*_args.py` (what the stack config is generated from) loads no provider SDK."""
    modules = sorted(
        f"inference_infra.components.{p.parent.name}.{p.stem}"
        for p in (REPO_ROOT / "components").glob("*/*_args.py")
    )
    assert len(modules) >= 14
    code = (
        f"import importlib, sys; [importlib.import_module(m) for m in {modules!r}]; "
        "print(sorted(m for m in ('pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes') if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert run.stdout.strip() == "[]"
