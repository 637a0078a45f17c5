"""ECS services on Fargate are priced as desired tasks x the task definition's vCPUs and memory."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pytest

from inference_infra.components.catalog.resources import resource_rate
from inference_infra.components.offline_plan.pricing import price_capture
from inference_infra.components.pricing.fargate import (
    FargateNotPricedError,
    find_task_definition,
    price_fargate_service,
)

CONTAINERS = json.dumps([{"name": "app", "image": "nginx@sha256:" + "0" * 64, "essential": True}])


def _task(name: str = "task", **extra) -> aws.ecs.TaskDefinition:
    return aws.ecs.TaskDefinition(
        name, family=name, cpu="512", memory="1024", network_mode="awsvpc",
        requires_compatibilities=["FARGATE"], container_definitions=CONTAINERS, **extra,
    )  # fmt: skip


def _service(name: str, task: aws.ecs.TaskDefinition, **extra) -> None:
    aws.ecs.Service(
        name, cluster="arn:aws:ecs:us-east-1:123456789012:cluster/c", task_definition=task.arn,
        network_configuration={"subnets": ["subnet-1"]}, **extra,
    )  # fmt: skip


def _item(report, name: str):
    (item,) = [i for i in report.items if i.urn.endswith(f"::{name}")]
    return item


def _rate(key: str) -> float:
    return resource_rate(key).usd["us-east-1"]


def test_fargate_service_is_priced_by_desired_tasks_vcpus_and_memory(plan_of):
    _service("api", _task(), launch_type="FARGATE", desired_count=3)
    item = _item(price_capture(plan_of()), "api")
    each = 0.5 * _rate("aws.fargate.vcpu.x86_64") + 1 * _rate("aws.fargate.memory.x86_64")
    assert item.hourly_usd == pytest.approx(3 * each)
    assert item.hourly_usd == pytest.approx(3 * (0.5 * 0.04048 + 0.004445))  # the figures read
    assert item.category == "compute"
    assert item.basis.startswith("3 x Fargate Linux/x86_64 task (0.5 vCPU x $0.04048 + 1 GB x $0.004445)/h")


def test_fargate_service_on_arm_uses_the_arm_rates(plan_of):
    task = _task(runtime_platform={"cpu_architecture": "ARM64", "operating_system_family": "LINUX"})
    _service("arm", task, launch_type="FARGATE", desired_count=2)
    item = _item(price_capture(plan_of()), "arm")
    assert item.hourly_usd == pytest.approx(2 * (0.5 * 0.03238 + 1 * 0.00356))


def test_fargate_spot_strategy_is_priced_at_on_demand_and_says_so(plan_of):
    _service("batch", _task(), desired_count=1, capacity_provider_strategies=[
        {"capacity_provider": "FARGATE_SPOT", "weight": 1}])  # fmt: skip
    item = _item(price_capture(plan_of()), "batch")
    assert item.hourly_usd == pytest.approx(0.5 * 0.04048 + 0.004445)
    assert "FARGATE_SPOT tasks priced at on-demand" in item.basis


def test_ec2_launch_type_service_is_not_priced_as_fargate(plan_of):
    _service("ec2", _task(), launch_type="EC2", desired_count=4)
    report = price_capture(plan_of())
    assert not [i for i in report.items if i.urn.endswith("::ec2")]
    assert not [u for u, _ in report.unpriced if u.endswith("::ec2")]


def test_fargate_windows_task_is_listed_not_priced(plan_of):
    task = _task(runtime_platform={"operating_system_family": "WINDOWS_SERVER_2022_CORE"})
    _service("win", task, launch_type="FARGATE", desired_count=1)
    report = price_capture(plan_of())
    (reason,) = [why for u, why in report.unpriced if u.endswith("::win")]
    assert "WINDOWS_SERVER_2022_CORE tasks are not in the catalog" in reason


def test_fargate_rejects_pricing_a_task_definition_it_cannot_find():
    with pytest.raises(FargateNotPricedError, match="task definition 'other:3' is not in the plan"):
        price_fargate_service(
            {"launchType": "FARGATE", "desiredCount": 1, "taskDefinition": "other:3"}, [], None
        )


def test_fargate_rejects_a_negative_or_unknown_desired_count():
    task = [("td-1", {"family": "t", "cpu": "256", "memory": "512"})]
    with pytest.raises(FargateNotPricedError, match="desiredCount -1"):
        price_fargate_service({"desiredCount": -1, "taskDefinition": "t"}, task, "us-east-1")


def test_fargate_task_definition_is_found_by_arn_id_or_family_and_sizes_parse_both_notations():
    defs = [("td-1", {"family": "web", "cpu": "1 vCPU", "memory": "2 GB"})]
    assert find_task_definition("arn:aws:ecs:us-east-1:1:taskdefinition/td-1", defs) is defs[0][1]
    assert find_task_definition("arn:aws:ecs:us-east-1:1:task-definition/web:7", defs) is defs[0][1]
    assert find_task_definition("web", defs) is defs[0][1]
    assert find_task_definition("api", defs) is None
    hourly, basis = price_fargate_service({"desiredCount": 2, "taskDefinition": "web"}, defs, "us-west-2")
    assert hourly == pytest.approx(2 * (0.04048 + 2 * 0.004445))
    assert "us-east-1 (reference; no us-west-2 rate in the catalog)" in basis
