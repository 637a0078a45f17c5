"""inference-endpoint-internal: load balancers are internal unless the stack allows internet-facing ones."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp

from inference_infra.policy.rules import inference_endpoint_internal as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

ALB = "aws:lb/loadBalancer:LoadBalancer"
RULE = "gcp:compute/forwardingRule:ForwardingRule"
GLOBAL = "gcp:compute/globalForwardingRule:GlobalForwardingRule"


def test_inference_endpoint_internal_passes_internal_load_balancers(check):
    assert check(rule, ALB, {"internal": True}) == Outcome()
    assert check(rule, RULE, {"loadBalancingScheme": "INTERNAL_MANAGED"}) == Outcome()


def test_inference_endpoint_internal_passes_internet_facing_when_allowed(check):
    assert check(rule, ALB, {"internal": False}, {"allowInternetFacing": True}) == Outcome()
    assert check(rule, ALB, {}, {"allowedNames": ["public-api"]}, name="public-api") == Outcome()


def test_inference_endpoint_internal_rejects_aws_default_scheme(check):
    [message] = check(rule, ALB, {}, name="llm").violations
    assert message.startswith(f"{ALB} 'llm' is internet-facing (internal None; AWS's default")


def test_inference_endpoint_internal_rejects_external_forwarding_rules(check):
    assert check(rule, RULE, {"loadBalancingScheme": "EXTERNAL_MANAGED"}).violations
    [message] = check(rule, GLOBAL, {}).violations
    assert "external scheme 'EXTERNAL'" in message


def test_inference_endpoint_internal_defers_unknown_values(check):
    assert check(rule, ALB, {"internal": UNKNOWN}) == Outcome(unknown=("internal",))


def test_inference_endpoint_internal_ignores_other_resources(check):
    assert check(rule, "aws:s3/bucket:Bucket", {}).not_applicable


def test_inference_endpoint_internal_on_captured_resources_rejects_public_alb(plan_of, run_pack):
    aws.lb.LoadBalancer("private", internal=True, load_balancer_type="application", subnets=["s-1", "s-2"])
    aws.lb.LoadBalancer("public", load_balancer_type="application", subnets=["s-1", "s-2"])
    gcp.compute.ForwardingRule("ilb", load_balancing_scheme="INTERNAL_MANAGED", region="us-central1")
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message.split(" is ")[0] for v in report.violations] == [f"{ALB} 'public'"]


def test_inference_endpoint_internal_rejects_an_internet_facing_classic_elb(check):
    classic = "aws:elb/loadBalancer:LoadBalancer"
    listeners = [{"instancePort": 8000, "instanceProtocol": "http", "lbPort": 80, "lbProtocol": "http"}]
    assert check(rule, classic, {"listeners": listeners}, name="old").violations
    assert check(rule, classic, {"listeners": listeners, "internal": False}, name="old").violations


def test_inference_endpoint_internal_passes_an_internal_classic_elb(check):
    classic = "aws:elb/loadBalancer:LoadBalancer"
    assert check(rule, classic, {"internal": True}) == Outcome()
