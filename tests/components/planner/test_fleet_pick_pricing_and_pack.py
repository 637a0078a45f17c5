"""The fleets' picks (issue #35's remainders): a mixed spot/on-demand fleet ranked at its blended rate,
and the pick kept to the types the stack's own pack config allows, not the pack's default's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference_infra.components.catalog import AcceleratorFamily, PriceModel, hourly_price, instance_type
from inference_infra.components.fleet.capacity import CapacityCounts
from inference_infra.components.fleet.plan import spot_share
from inference_infra.components.offline_plan import plan
from inference_infra.components.planner import Traffic, choose_instance_type, size
from inference_infra.components.planner.allowed import (
    PackAllowed,
    pack_config_allowed,
    stack_pack_allowed,
    stack_pack_config,
)

REPO_POLICY = Path(__file__).resolve().parents[3] / "policy"
TRAFFIC = Traffic(context_tokens=8192, concurrency=16)
GPU = {AcceleratorFamily.NVIDIA_GPU}


# --- mixed fleets: ranked at the blended rate ----------------------------------------------------------


def test_a_fleets_spot_share_counts_spot_and_preemptible_against_the_rest():
    assert spot_share(CapacityCounts(spot=1, on_demand=1)) == 0.5
    assert spot_share(CapacityCounts(spot=3, reserved=1)) == 0.75
    assert spot_share(CapacityCounts(preemptible=1, on_demand=3)) == 0.25
    # one market only: priced at that market as before (spot_only or on-demand), no blend
    assert spot_share(CapacityCounts(spot=2)) is None
    assert spot_share(CapacityCounts(on_demand=2, reserved=1)) is None
    assert spot_share(CapacityCounts()) is None


def test_every_option_of_a_mixed_fleet_is_priced_at_the_blended_rate():
    mixed = size("llama-3.1-8b", TRAFFIC, cloud="aws", families=GPU, region="us-east-1", spot_share=0.25)
    for option in mixed.options:
        item = instance_type(option.instance_type, "aws")
        spot = hourly_price(item, region="us-east-1", model=PriceModel.SPOT).hourly_usd
        on_demand = hourly_price(item, region="us-east-1").hourly_usd
        assert option.hourly_usd == pytest.approx(0.25 * spot + 0.75 * on_demand, abs=1e-6)
        assert option.price.basis.startswith("blended by the fleet's capacity: 25% at ")
        assert option.spot_share == 0.25


def test_a_mixed_fleets_pick_is_the_cheapest_at_the_blended_rate_and_says_so():
    choice = choose_instance_type(
        "llama-3.1-8b", TRAFFIC, "aws", families=GPU, region="us-east-1", spot_share=0.5
    )
    ranked = size(
        "llama-3.1-8b", TRAFFIC, cloud="aws", families=GPU, region="us-east-1", spot_share=0.5
    ).options
    assert choice.instance_type == min(ranked, key=lambda o: o.usd_per_million_tokens).instance_type
    assert "/h blended (50% spot, 50% at the on-demand rate, by the fleet's counts)" in choice.summary()
    on_demand = choose_instance_type("llama-3.1-8b", TRAFFIC, "aws", families=GPU, region="us-east-1")
    assert choice.option.hourly_usd < on_demand.option.hourly_usd or (
        choice.instance_type != on_demand.instance_type
    )  # cheaper than its on-demand rate, or another machine


def test_a_fleet_of_one_market_is_not_blended():
    one = size("llama-3.1-8b", TRAFFIC, cloud="aws", families=GPU, region="us-east-1", spot_share=1.0)
    assert all(o.spot_share is None and not o.price.basis.startswith("blended") for o in one.options)


# --- the stack's own pack config ------------------------------------------------------------------------

PICK = """
import pulumi
from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.fleet import ServedModel
from inference_infra.components.serving.model import choose_machine
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml", environment="dev", owner="a@example.com", auto_shutdown=True))
found = choose_machine(
    ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16), None,
    cloud=Cloud.AWS, family=AcceleratorFamily.NVIDIA_GPU,
)
pulumi.export("pick", found.instance_type)
pulumi.export("note", found.note)
"""


def _pick(project: Path, config: Path | None) -> tuple[str, str]:
    result = plan(project, "dev", policy_pack=REPO_POLICY, policy_config=config)
    outputs = result.capture.stack_outputs
    return outputs["pick"], outputs["note"]


def test_the_pick_keeps_to_the_stacks_own_allowed_types(pulumi_project, tmp_path):
    project = pulumi_project(PICK, {"dev": "config:\n  aws:region: us-east-1\n"})
    default_pick, default_note = _pick(project, None)
    assert "among the machines allowed in environment 'dev' (allowedTypes['*'])" in default_note
    # An override that removes the default pick: only g5 sizes in dev.
    assert not default_pick.startswith("g5.")
    override = tmp_path / "dev-policy.json"
    override.write_text(json.dumps({"allowed-accelerator-types": {"allowedTypes": {"dev": ["g5.*"]}}}))
    pick, note = _pick(project, override)
    assert pick.startswith("g5.")
    assert f"among the machines allowed in environment 'dev' (allowedTypes['dev'] of {override})" in note
    # and the stack's gate passes it
    result = plan(project, "dev", policy_pack=REPO_POLICY, policy_config=override)
    violations = result.policy.as_json()["violations"]
    assert not [v for v in violations if v["policy"] == "allowed-accelerator-types"]


def test_the_pack_configs_environment_decides_as_the_policy_does(pulumi_project, tmp_path):
    # The config names the stack's environment "prod" (every type allowed by default), so the pick is
    # unrestricted even though the program's cost tags say dev, as the policy would judge it.
    project = pulumi_project(PICK, {"dev": "config:\n  aws:region: us-east-1\n"})
    config = tmp_path / "as-prod.json"
    config.write_text(json.dumps({"allowed-accelerator-types": {"environment": "prod"}}))
    pick, note = _pick(project, config)
    unrestricted = choose_instance_type("llama-3.1-8b", TRAFFIC, "aws", families=GPU, region="us-east-1")
    assert pick == unrestricted.instance_type
    assert "allowed" not in note


def test_a_disabled_allowed_types_policy_restricts_nothing(pulumi_project, tmp_path):
    project = pulumi_project(PICK, {"dev": "config:\n  aws:region: us-east-1\n"})
    config = tmp_path / "off.json"
    config.write_text(json.dumps({"allowed-accelerator-types": "disabled"}))
    _, note = _pick(project, config)
    assert "among the machines allowed in environment 'dev' (allowedTypes['*'])" in note  # the default's


def test_the_stack_pack_config_is_held_only_while_the_program_runs():
    held = PackAllowed(allowed_types={"*": ("g5.*",)}, environment="dev", source="x.json")
    assert stack_pack_allowed() is None
    with stack_pack_config(held):
        assert stack_pack_allowed() is held
    assert stack_pack_allowed() is None
    assert not held.is_default
    assert PackAllowed({"@production": ("*",), "*": ("@one-accelerator",)}, None, "(defaults)").is_default


def test_a_pack_config_file_is_read_as_the_policy_reads_it():
    # What the reference stack reads under `pulumi up` (policy/config/<stack>.json beside Pulumi.yaml).
    found = pack_config_allowed(
        {"allowed-accelerator-types": {"environment": "dev", "allowedTypes": {"dev": ["g5.*"]}}}, "dev.json"
    )
    assert found == PackAllowed({"dev": ("g5.*",)}, "dev", "dev.json")
    defaults = pack_config_allowed({"required-cost-tags": {}}, "x.json")
    assert defaults is not None
    assert defaults.is_default
    assert defaults.environment is None
    assert pack_config_allowed({"allowed-accelerator-types": "disabled"}, "x.json") is None
    assert pack_config_allowed({"allowed-accelerator-types": {"enforcementLevel": "disabled"}}, "x") is None
    assert pack_config_allowed({"allowed-accelerator-types": {"allowedTypes": ["g5.*"]}}, "x") is None
