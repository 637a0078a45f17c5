"""A pool's `max_machines` bounds the machines its counts become, in a user's own program too.

The reference stack refuses these before anything is planned (infra/stack_bounds.py); a program that
builds a KubernetesServingPool or an elastic fleet directly gets the same bound from the one fleet
skeleton (components/fleet/plan.py `_machine_bound_problems`).
"""

from __future__ import annotations

from dataclasses import replace

from inference_infra.components.fleet.elastic import ElasticArgs
from inference_infra.components.k8s.pool_profile import plan_pool
from tests.components.k8s.lws_cases import LWS_EKS
from tests.components.k8s.pool_cases import EKS


def _bound(plan, name):
    return [p for p in plan.problems if p.input.endswith(name) and "max_machines" in p.allowed]


def test_pool_refuses_replicas_times_hosts_over_max_machines():
    plan = plan_pool("big", replace(LWS_EKS, on_demand=600, spot=0, reserved=0, count=None, nodes=None))
    (problem,) = _bound(plan, "hosts_per_replica")
    assert problem.value == 2
    assert "600 replicas 1,200 machines" in problem.allowed
    assert "at most 1,000" in problem.allowed


def test_pool_of_many_replicas_within_max_machines_plans():
    plan = plan_pool("big", replace(LWS_EKS, on_demand=500, spot=0, reserved=0, count=None, nodes=None))
    assert not _bound(plan, "hosts_per_replica")
    assert plan.machines == 1000


def test_pool_refuses_an_elastic_max_size_over_max_machines():
    plan = plan_pool("small", replace(EKS, elastic=ElasticArgs(max_size=5000)))
    (problem,) = _bound(plan, "max_size")
    assert problem.value == 5000
    assert "at most 1,000" in problem.allowed
    assert plan.scaling is None  # nothing is sized from a refused maximum


def test_raising_max_machines_lets_the_elastic_maximum_through():
    plan = plan_pool("small", replace(EKS, elastic=ElasticArgs(max_size=1500), max_machines=2000))
    assert not _bound(plan, "max_size")
