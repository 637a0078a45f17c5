"""accelerator-spend-budget (stack policy): the plan's own estimate against maxHourlyUsd."""

from __future__ import annotations

import pulumi_aws as aws
import pytest
from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions, StackValidationArgs

from inference_infra.components.offline_plan.policy import _analyzer_props
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.policy.rules import accelerator_spend_budget as rule
from inference_infra.policy.rules._base import Outcome, Resource, config_defaults

INSTANCE = "aws:ec2/instance:Instance"
EAST = {"region": "us-east-1"}


def _check(resources: list[Resource], **config) -> Outcome:
    return rule.check(resources, {**config_defaults(rule.CONFIG_SCHEMA), **config})


def _gpu(name: str, instance_type: str, provider=EAST, **props) -> Resource:
    return Resource(INSTANCE, name, {"instanceType": instance_type, **props}, f"urn:{name}", provider)


SPOT = {"instanceMarketOptions": {"marketType": "spot"}}


def test_spend_budget_passes_a_stack_within_budget():
    assert _check([_gpu("a", "g5.xlarge", **SPOT), _gpu("b", "g6.xlarge")], maxHourlyUsd=2) == Outcome()


def test_spend_budget_rejects_a_stack_over_budget_naming_the_largest_costs():
    resources = [
        _gpu("small", "g6.xlarge"),
        _gpu("spot", "g5.xlarge", **SPOT),
        _gpu("big", "p5.48xlarge", provider={"region": "us-west-2"}),
        Resource("aws:s3/bucket:Bucket", "weights", {}, "urn:weights"),
    ]
    assert _check(resources, maxHourlyUsd=50, topContributors=2).violations == (
        "estimated spend $56.30/hour ($41,096/month) exceeds maxHourlyUsd $50.00; largest: "
        "big $55.04/h (p5.48xlarge on-demand us-west-2); small $0.80/h (g6.xlarge on-demand us-east-1).",
    )


def test_spend_budget_prices_a_reservation_once_and_the_instances_inside_it_at_zero():
    reservation = Resource(
        "aws:ec2/capacityReservation:CapacityReservation",
        "cr",
        {"id": "cr-123", "instanceType": "p5.48xlarge", "instanceCount": 1, "availabilityZone": "us-east-1a"},
        "urn:cr",
    )
    inside = {
        "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": "cr-123"}}
    }
    outcome = _check([reservation, _gpu("in-cr", "p5.48xlarge", **inside)], maxHourlyUsd=50)
    assert outcome.violations == (
        "estimated spend $55.04/hour ($40,179/month) exceeds maxHourlyUsd $50.00; largest: cr "
        "$55.04/h "
        "(p5.48xlarge on-demand us-east-1; reserved capacity, billed whether used or not).",
    )


def test_spend_budget_names_what_it_could_not_price():
    vm = Resource(
        "gcp:compute/instance:Instance",
        "v100",
        {"machineType": "n1-standard-8", "guestAccelerators": [{"type": "nvidia-tesla-v100", "count": 1}]},
        "urn:v100",
    )
    assert _check([_gpu("big", "p5.48xlarge"), vm], maxHourlyUsd=1, topContributors=1).violations == (
        "estimated spend $55.04/hour ($40,179/month) exceeds maxHourlyUsd $1.00; largest: big "
        "$55.04/h "
        "(p5.48xlarge on-demand us-east-1); not priced: v100.",
    )


def test_spend_budget_says_when_it_does_not_apply():
    assert _check([Resource("aws:s3/bucket:Bucket", "b", {})], maxHourlyUsd=1) == Outcome(
        not_applicable="the stack runs, launches or reserves no accelerators"
    )
    assert _check([_gpu("a", "g6.xlarge")]) == Outcome(
        not_applicable="maxHourlyUsd is not configured (estimate $0.80/hour)"
    )


def test_spend_budget_through_the_sdk_with_policy_resources():
    options = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
    resources = [
        PolicyResource(
            INSTANCE,
            _analyzer_props({"instanceType": "p5.48xlarge"}),
            "urn:a",
            "a",
            options,
            None,
            None,
            [],
            {},
        )
    ]
    messages: list[str] = []
    rule.POLICY.validate(
        StackValidationArgs(resources, {"maxHourlyUsd": 10.0}), lambda m, urn=None: messages.append(m)
    )
    assert messages == [
        "estimated spend $55.04/hour ($40,179/month) exceeds maxHourlyUsd $10.00; largest: a "
        "$55.04/h "
        "(p5.48xlarge on-demand us-east-1)."
    ]


@pytest.mark.stack_config({"aws:region": "us-west-2"})
def test_spend_budget_on_a_captured_stack_matches_the_plans_cost(plan_of, run_pack):
    aws.ec2.Instance("a", instance_type="p5.48xlarge", ami="ami-1")
    aws.ec2.Instance(
        "b", instance_type="g6.xlarge", ami="ami-1", instance_market_options={"market_type": "spot"}
    )
    capture = plan_of()
    estimate = price_capture(capture).hourly_usd
    (violation,) = run_pack(capture, rule.NAME, {"maxHourlyUsd": 20, "topContributors": 1}).violations
    assert violation.urn is None
    assert violation.message.startswith(f"estimated spend ${estimate:,.2f}/hour")
    assert violation.message.endswith("largest: a $55.04/h (p5.48xlarge on-demand us-west-2).")
    assert run_pack(capture, rule.NAME, {"maxHourlyUsd": 100}).violations == []


def _storage_heavy() -> list[Resource]:
    volume = {"rootBlockDevice": {"volumeType": "gp3", "volumeSize": 1000}}
    nat = Resource("aws:ec2/natGateway:NatGateway", "nat", {"subnetId": "s"}, "urn:nat", EAST)
    return [_gpu("a", "g6.xlarge", **volume), nat]


def test_spend_budget_judges_the_whole_stack_by_default():
    # g6.xlarge $0.8048/h + 1000 GiB gp3 ($80/month = $0.1096/h) + NAT $0.045/h = $0.9594/h
    outcome = _check(_storage_heavy(), maxHourlyUsd=0.9)
    (message,) = outcome.violations
    assert message.startswith("estimated spend $0.96/hour")
    assert "a $0.91/h (g6.xlarge on-demand us-east-1); nat $0.04/h (NAT gateway" in message


def test_spend_budget_scope_accelerators_leaves_storage_and_network_out():
    assert _check(_storage_heavy(), maxHourlyUsd=0.9, scope="accelerators") == Outcome()
    (message,) = _check(_storage_heavy(), maxHourlyUsd=0.5, scope="accelerators").violations
    assert message.startswith("estimated accelerator spend $0.80/hour")


def test_spend_budget_schema_offers_total_or_accelerators_scope():
    assert rule.CONFIG_SCHEMA.properties["scope"]["enum"] == ["total", "accelerators"]


def _cpu_stack() -> list[Resource]:
    node_group = Resource(
        "aws:eks/nodeGroup:NodeGroup",
        "system",
        {"instanceTypes": ["m5.large"], "scalingConfig": {"desiredSize": 3, "minSize": 1, "maxSize": 5}},
        "urn:system",
        EAST,
    )
    return [node_group, _gpu("bastion", "t3.micro")]


def test_spend_budget_counts_cpu_machines_in_the_total():
    # 3 x m5.large $0.096/h + their 3 x 20 GiB gp2 node disks $0.0082/h + t3.micro $0.0104/h = $0.3066/h
    (message,) = _check(_cpu_stack(), maxHourlyUsd=0.25, topContributors=1).violations
    assert message == (
        "estimated spend $0.31/hour ($224/month) exceeds maxHourlyUsd $0.25; largest: system $0.30/h "
        "(3 x m5.large on-demand us-east-1 ($0.096/h each); desired 3 (min 1, max 5))."
    )
    assert _check(_cpu_stack(), maxHourlyUsd=0.31) == Outcome()


def test_spend_budget_scope_accelerators_leaves_cpu_machines_out():
    assert _check(_cpu_stack(), maxHourlyUsd=0.25, scope="accelerators") == Outcome(
        not_applicable="the stack runs, launches or reserves no accelerators"
    )
    (message,) = _check(
        [*_cpu_stack(), _gpu("gpu", "g6.xlarge")], maxHourlyUsd=0.5, scope="accelerators"
    ).violations
    assert message.startswith("estimated accelerator spend $0.80/hour")


def _elastic_pool() -> list[Resource]:
    template = Resource(
        "aws:ec2/launchTemplate:LaunchTemplate", "lt", {"id": "lt-1", "instanceType": "g5.xlarge"}, "urn:lt"
    )
    group = Resource(
        "aws:autoscaling/group:Group",
        "pool",
        {"minSize": 0, "maxSize": 10, "desiredCapacity": 1, "launchTemplate": {"id": "lt-1"}},
        "urn:pool",
        EAST,
    )
    return [template, group]


def test_spend_budget_judges_an_elastic_pool_at_its_maximum_by_default():
    # g5.xlarge on demand is $1.006/h: 10 machines at most, 1 expected
    outcome = _check(_elastic_pool(), maxHourlyUsd=5)
    (message,) = outcome.violations
    assert message.startswith(
        "estimated spend (elastic pools at their maximum) $10.06/hour ($7,344/month) exceeds "
        "maxHourlyUsd $5.00"
    )
    assert "elastic 0..10 machines" in message


def test_spend_budget_judges_an_elastic_pool_at_its_expected_size_when_told():
    assert _check(_elastic_pool(), maxHourlyUsd=5, elasticPools="expected") == Outcome()
    assert _check(_elastic_pool(), maxHourlyUsd=0.5, elasticPools="minimum").not_applicable is None
    assert _check(_elastic_pool(), maxHourlyUsd=0.5, elasticPools="expected").violations
