"""The reference stack's elastic-pool operations: spot drain for elastic spot pools, working hours."""

from __future__ import annotations

import json

from inference_infra.infra.elastic_ops_stack import has_spot
from inference_infra.lambdas.spot_drain.settings import Settings

SPOT_DRAIN = "inference-infra:aws:SpotDrain"
OFF_HOURS = "inference-infra:aws:OffHours"


def test_stacks_drain_their_elastic_spot_pools_scoped_to_their_cost_tags(plan_stack):
    for stack, pools in (("prod", ["llama-8b"]), ("dev", ["dev-gpu"])):
        result = plan_stack(stack)
        capture = result.capture
        drain = capture.one(SPOT_DRAIN)
        (function,) = [r for r in capture.descendants(drain) if r.type == "aws:lambda/function:Function"]
        scope = Settings.from_env(function.props["environment"]["variables"]).scope_tags
        tags = {k: v for k, v in function.props["tags"].items() if k in scope}
        assert tags == dict(scope)  # the drain may touch what carries the stack's own cost tags
        assert set(scope) == {"CostCenter", "Environment", "Owner"}
        assert result.as_json()["outputs"]["spotDrain"]["pools"] == pools


def test_dev_pool_sleeps_outside_berlin_working_hours_and_its_endpoint_answers_503(plan_stack):
    capture = plan_stack("dev").capture
    hours = capture.one(OFF_HOURS, "dev-gpu-hours")
    inside = capture.descendants(hours)
    # The pool makes its own scheduled actions (elastic.schedule, issue #38 item 8); OffHours adds the
    # responder and the rule switch only.
    assert [r for r in inside if r.type == "aws:autoscaling/schedule:Schedule"] == []
    pool = capture.descendants(capture.one("inference-infra:aws:GpuFleet", "dev-gpu"))
    actions = {
        r.props["scheduledActionName"]: r.props for r in pool if r.type == "aws:autoscaling/schedule:Schedule"
    }
    assert actions["working-hours-end"]["recurrence"] == "0 19 * * 1,2,3,4,5"
    assert actions["working-hours-end"]["timeZone"] == "Europe/Berlin"
    assert actions["working-hours-start"]["desiredCapacity"] == 1
    group = capture.one("aws:autoscaling/group:Group")
    assert {a["autoscalingGroupName"] for a in actions.values()} == {group.id}
    switches = [r for r in inside if r.type == "aws:scheduler/schedule:Schedule"]
    rules = {json.loads(s.props["target"]["input"])["RuleArn"] for s in switches}
    assert len(switches) == 4  # asleep and awake for each rule
    names = {arn.rsplit("/", 1)[1] for arn in rules}
    assert names == {r.id for r in capture.of_type("aws:lb/listenerRule:ListenerRule")}  # header + route


def test_dev_plan_expects_the_pool_only_in_working_hours(plan_stack):
    cost = plan_stack("dev").as_json()["cost"]
    (pool,) = [i for i in cost["items"] if i.get("expected_basis")]
    assert pool["expected_basis"] == "scheduled actions replayed over a week: 113 h/week at 0, 55 h/week at 1"
    assert pool["hourly_min"] == 0
    assert cost["hourly_min"] < cost["hourly_expected"] < cost["hourly_max"] == cost["hourly_usd"]


def test_prod_does_not_count_reserved_machines_of_its_elastic_pool_twice(plan_stack):
    cost = plan_stack("prod").as_json()["cost"]
    (group,) = [
        i for i in cost["items"] if i["urn"].endswith("::llama-70b-asg") and i["category"] == "accelerator"
    ]
    assert (group["min_size"], group["max_size"], group["hourly_min"]) == (2, 3, 0)
    assert "the first 2 run in a capacity reservation, priced there" in group["expected_basis"]


def test_has_spot_reads_counts_and_capacity_orders():
    class Pool:
        def __init__(self, **values):
            self.__dict__.update(values)

    assert has_spot(Pool(spot=2))
    assert has_spot(Pool(spot=0, count=3, capacity_order=["reserved", "spot"]))
    assert not has_spot(Pool(spot=0, count=3, capacity_order=["on-demand"]))
    assert not has_spot(None)
