"""The pack as a whole: every policy carries its metadata and its tests, so neither can drift."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pulumi_policy import EnforcementLevel, Severity, StackValidationPolicy

from inference_infra.policy.rules import MODULES, POLICIES
from inference_infra.policy.rules._base import config_defaults

RULES_DIR = Path(__file__).resolve().parents[2] / "policy" / "rules"
TESTS_DIR = Path(__file__).resolve().parent
SPEC_NAMES = {
    "required-cost-tags",
    "accelerator-imdsv2-required",
    "accelerator-no-public-ip",
    "storage-encrypted",
    "no-open-ingress",
    "nonprod-accelerators-spot-or-autoshutdown",
    "allowed-accelerator-types",
    "accelerator-spend-budget",
    "idle-watchdog-required",
    "inference-endpoint-internal",
    "endpoint-tls-in-production",
    "model-cache-write-restricted",
    "accelerator-images-pinned",
    "s3-bucket-not-public",
    "gcs-bucket-not-public",
    "iam-no-wildcard-access",
    "gcp-no-basic-roles",
    "accelerator-service-account-restricted",
    "no-plaintext-secrets",
    "load-balancer-hardened-in-production",
    "vpc-flow-logs-in-production",
    "load-balancer-api-paths-only",
    "k8s-accelerator-pods-unprivileged",
    "k8s-accelerator-requests-equal-limits",
}
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def test_registry_lists_every_rule_module_once():
    on_disk = {p.stem for p in RULES_DIR.glob("*.py") if not p.stem.startswith("_")}
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in MODULES) == sorted(on_disk)


def test_registry_policy_names_are_the_specs_unique_and_kebab_case():
    names = [p.name for p in POLICIES]
    assert len(names) == len(set(names))
    assert set(names) == SPEC_NAMES
    assert all(KEBAB.match(n) for n in names)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)
def test_registry_module_matches_its_policy_and_carries_metadata(module):
    policy = module.POLICY
    assert module.__name__.rsplit(".", 1)[1] == module.NAME.replace("-", "_")
    assert (policy.name, policy.description) == (module.NAME, module.DESCRIPTION)
    assert policy.description.endswith(".")
    assert 20 < len(policy.description) <= 160
    assert isinstance(policy.severity, Severity)
    assert policy.severity is module.SEVERITY
    assert isinstance(policy.enforcement_level, EnforcementLevel)
    assert policy.config_schema is module.CONFIG_SCHEMA
    assert module.__doc__
    assert module.__doc__.startswith(f"{module.NAME}")
    assert callable(module.check)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)
def test_registry_config_schemas_are_described_and_their_defaults_valid(module):
    from jsonschema import Draft7Validator

    schema = {"type": "object", "properties": module.CONFIG_SCHEMA.properties}
    Draft7Validator.check_schema(schema)
    assert all(p.get("description") for p in module.CONFIG_SCHEMA.properties.values())
    assert list(Draft7Validator(schema).iter_errors(config_defaults(module.CONFIG_SCHEMA))) == []


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)
def test_registry_every_policy_has_a_test_module_with_passing_and_rejecting_cases(module):
    path = TESTS_DIR / f"test_{module.__name__.rsplit('.', 1)[1]}.py"
    assert path.is_file(), f"{module.NAME} has no tests at {path}"
    text = path.read_text()
    assert re.search(r"^def test_\w*(passes|passed)\w*\(", text, re.M), "no compliant case"
    assert re.search(r"^def test_\w*rejects\w*\(", text, re.M), "no violating case"
    assert "plan_of" in text, "no case built from captured resources"


def test_registry_stack_policies_are_the_specs():
    stack = {p.name for p in POLICIES if isinstance(p, StackValidationPolicy)}
    # The per-resource stack policies judge each resource, but need the stack: the launch templates
    # that groups take their type, market, tags and network interfaces from (nonprod, no-public-ip,
    # cost tags), the instances an Elastic IP reaches (no-public-ip), every rule that opens one group
    # (no-open-ingress), a load balancer's log bucket, its lifecycle and policy, a VPC's flow logs, the
    # target groups and backend services a route reaches (api-paths-only), the IAM grants an
    # accelerator's service account holds (service-account-restricted).
    assert stack == {
        "accelerator-spend-budget",
        "idle-watchdog-required",
        "nonprod-accelerators-spot-or-autoshutdown",
        "accelerator-no-public-ip",
        "no-open-ingress",
        "required-cost-tags",
        "load-balancer-hardened-in-production",
        "vpc-flow-logs-in-production",
        "load-balancer-api-paths-only",
        "accelerator-service-account-restricted",
    }
    budget = next(p for p in POLICIES if p.name == "accelerator-spend-budget")
    assert "maxHourlyUsd" in budget.config_schema.properties


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_registry_stack_config_files_name_only_known_policies(stack):
    config = json.loads((RULES_DIR.parent / "config" / f"{stack}.json").read_text())
    assert set(config) <= SPEC_NAMES | {"all"}
