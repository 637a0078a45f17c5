"""The whole pack over resources captured from the real components, as stacks build them.

The per-policy modules test each rule on hand-written props and raw provider
resources; here the inputs come from GpuFleet, InferentiaFleet, EfsModelCache,
ModelStore, IdleGpuWatchdog and the GCP components, so a component change that
breaks a guardrail fails here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from inference_infra.components.aws import (
    EfsModelCache,
    EfsModelCacheArgs,
    GpuFleet,
    GpuFleetArgs,
    IdleGpuWatchdog,
    IdleGpuWatchdogArgs,
    InferentiaFleet,
    InferentiaFleetArgs,
    ModelStore,
    ModelStoreArgs,
)
from inference_infra.components.aws.network import SubnetRef
from inference_infra.components.gcp import FilestoreModelCache, FilestoreModelCacheArgs, TpuVm, TpuVmArgs
from inference_infra.components.gcp import GpuFleet as GcpGpuFleet
from inference_infra.components.gcp import GpuFleetArgs as GcpGpuFleetArgs
from inference_infra.components.offline_plan.model import Capture
from inference_infra.components.offline_plan.policy import PolicyReport, evaluate
from inference_infra.components.offline_plan.policy_pack import reconcile

SUBNETS = [
    SubnetRef(id="subnet-0a", availability_zone="us-east-1a"),
    SubnetRef(id="subnet-0b", availability_zone="us-east-1b"),
]
NONPROD = {"environment": "test"}


def run_whole_pack(pack, capture: Capture, **settings: Mapping[str, Any]) -> PolicyReport:
    given: dict[str, tuple[str | None, Mapping[str, Any]]] = {"all": ("mandatory", {})}
    given |= {name.replace("_", "-"): (None, extra) for name, extra in settings.items()}
    return evaluate(capture, pack, reconcile(pack, given, "test"))


def _messages(report: PolicyReport) -> list[tuple[str, str]]:
    return sorted((v.policy, v.message) for v in report.violations)


def _aws_stack(*, auto_shutdown: bool | None = None, spot: int = 1, on_demand: int = 0) -> None:
    ModelStore("models", ModelStoreArgs(bucket_name="acme-test-models"))
    EfsModelCache("cache", EfsModelCacheArgs(vpc_id="vpc-0test", subnets=SUBNETS))
    GpuFleet(
        "serving",
        GpuFleetArgs(
            instance_type="g6e.xlarge",
            vpc_id="vpc-0test",
            subnets=SUBNETS,
            spot=spot,
            on_demand=on_demand,
            auto_shutdown=auto_shutdown,
            client_security_group_ids=["sg-0lb"],
            monitoring_security_group_ids=["sg-0prom"],
        ),
    )
    InferentiaFleet(
        "neuron",
        InferentiaFleetArgs(instance_type="inf2.xlarge", vpc_id="vpc-0test", subnets=SUBNETS, spot=1),
    )


def _gcp_stack() -> None:
    GcpGpuFleet(
        "l4",
        GcpGpuFleetArgs(machine_type="g2-standard-8", zone="us-central1-a", subnetwork="sub", spot=1),
    )
    TpuVm(
        "tpu",
        TpuVmArgs(zone="us-central1-a", network="net", subnetwork="sub", accelerator_type="v5litepod-1"),
    )
    FilestoreModelCache(
        "fs", FilestoreModelCacheArgs(network="net", location="us-central1-a", client_ranges=["10.40.0.0/20"])
    )


def test_pack_passes_the_aws_components_and_the_watchdog(pack, plan_of, tagged):
    _aws_stack()
    IdleGpuWatchdog("idle", IdleGpuWatchdogArgs())
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    assert report.evaluated
    assert _messages(report) == []


def test_pack_passes_the_gcp_components_and_the_gcp_watchdog(pack, plan_of, tagged):
    from inference_infra.components.gcp import IdleGpuWatchdog as GcpIdleGpuWatchdog
    from inference_infra.components.gcp import IdleGpuWatchdogArgs as GcpIdleGpuWatchdogArgs

    _gcp_stack()
    GcpIdleGpuWatchdog("idle", GcpIdleGpuWatchdogArgs())
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    assert _messages(report) == []


def test_pack_asks_for_the_gcp_watchdog_when_gcp_machines_opt_in(pack, plan_of, tagged):
    _gcp_stack()
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    ((policy, message),) = _messages(report)
    assert policy == "idle-watchdog-required"
    assert message.startswith("2 GCP accelerator VM(s) or TPU VM(s) labelled auto-shutdown=true")


def test_pack_requires_the_watchdog_for_fleets_that_opt_in(pack, plan_of, tagged):
    _aws_stack()  # `tagged`: AutoShutdown=true outside production
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    assert [policy for policy, _ in _messages(report)] == ["idle-watchdog-required"]


def test_pack_refuses_an_on_demand_nonprod_fleet_that_opts_out_of_auto_shutdown(pack, plan_of, tagged):
    _aws_stack(auto_shutdown=False, spot=0, on_demand=1)
    IdleGpuWatchdog("idle", IdleGpuWatchdogArgs())
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    violations = _messages(report)
    assert {policy for policy, _ in violations} == {"nonprod-accelerators-spot-or-autoshutdown"}
    # The on-demand instance; its launch template names no market, so the instance is what is judged.
    tail = (
        "runs g6e.xlarge on on-demand capacity in environment 'test' without the tag AutoShutdown=true; "
        "outside production use spot capacity or set the tag so the idle watchdog can stop it."
    )
    assert [m for _, m in violations] == [
        f"aws:ec2/instance:Instance 'serving-ondemand-0' {tail}",
    ]


def test_pack_passes_a_spot_only_nonprod_fleet_that_opts_out_of_auto_shutdown(pack, plan_of, tagged):
    # Regression: the -lt template launched only by spot instances was judged as on-demand capacity.
    _aws_stack(auto_shutdown=False, spot=1, on_demand=0)
    IdleGpuWatchdog("idle", IdleGpuWatchdogArgs())
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    assert [m for p, m in _messages(report) if p == "nonprod-accelerators-spot-or-autoshutdown"] == []


def test_pack_refuses_components_without_the_cost_tags(pack, plan_of):
    _aws_stack()  # no `tagged` fixture: nothing applies the stack's cost tags
    report = run_whole_pack(
        pack, plan_of(), nonprod_accelerators_spot_or_autoshutdown=NONPROD, allowed_accelerator_types=NONPROD
    )
    tag_violations = [m for p, m in _messages(report) if p == "required-cost-tags"]
    assert tag_violations
    assert all("CostCenter" in m for m in tag_violations)


def test_pack_holds_the_budget_against_component_prices(pack, plan_of, tagged):
    _aws_stack()
    IdleGpuWatchdog("idle", IdleGpuWatchdogArgs())
    report = run_whole_pack(
        pack,
        plan_of(),
        nonprod_accelerators_spot_or_autoshutdown=NONPROD,
        allowed_accelerator_types=NONPROD,
        accelerator_spend_budget={"maxHourlyUsd": 0.5},
    )
    ((policy, message),) = _messages(report)
    assert policy == "accelerator-spend-budget"
    assert message == (
        "estimated spend $1.50/hour ($1,096/month) exceeds maxHourlyUsd $0.50; largest: "
        "serving-spot-0 $1.26/h (g6e.xlarge spot $1.1975/h (highest of 4 zones; us-east-1a maps to a zone "
        "per account in us-east-1; snapshot 2026-11-25) us-east-1); "
        "neuron-spot-0 $0.24/h (inf2.xlarge spot $0.1783/h (highest of 4 zones; us-east-1a maps to a zone "
        "per account in us-east-1; snapshot 2026-11-25) us-east-1)."
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_reference_stacks_run_every_policy_without_violations(plan_stack, stack):
    report = plan_stack(stack).policy
    assert report.evaluated
    assert report.violations == []
