"""endpoint-tls-in-production (advisory): production listeners and proxies use HTTPS/TLS."""

from __future__ import annotations

import pulumi_aws as aws

from inference_infra.policy.rules import endpoint_tls_in_production as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

LISTENER = "aws:lb/listener:Listener"
HTTP_PROXY = "gcp:compute/regionTargetHttpProxy:RegionTargetHttpProxy"
PROD = {"environment": "prod"}


def test_endpoint_tls_in_production_passes_https_listener(check):
    assert check(rule, LISTENER, {"protocol": "HTTPS", "port": 443}, PROD) == Outcome()


def test_endpoint_tls_in_production_passes_http_outside_production(check):
    outcome = check(rule, LISTENER, {"protocol": "HTTP"}, {"environment": "dev"})
    assert outcome.not_applicable == "environment 'dev' is not production"


def test_endpoint_tls_in_production_says_when_a_resource_has_no_environment(check):
    outcome = check(rule, LISTENER, {"protocol": "HTTP"})
    assert outcome.not_applicable == "an environment with no Environment tag is not production"


def test_endpoint_tls_in_production_rejects_http_listener_in_prod(check):
    [message] = check(rule, LISTENER, {"protocol": "HTTP"}, PROD, name="llm").violations
    assert message == (
        f"{LISTENER} 'llm' listens with protocol 'HTTP' in production 'prod'; use HTTPS with a certificate "
        "(certificateArn)."
    )


def test_endpoint_tls_in_production_rejects_gcp_http_proxy_in_prod(check):
    assert check(rule, HTTP_PROXY, {}, PROD).violations


def test_endpoint_tls_in_production_uses_the_environment_tag(check):
    props = {"protocol": "HTTP", "tags": {"Environment": "production"}}
    assert check(rule, LISTENER, props).violations


def test_endpoint_tls_in_production_defers_unknown_protocol(check):
    assert check(rule, LISTENER, {"protocol": UNKNOWN}, PROD) == Outcome(unknown=("protocol",))


def test_endpoint_tls_in_production_on_captured_resources_rejects_plain_http(plan_of, run_pack):
    lb = aws.lb.LoadBalancer("llm", internal=True, subnets=["s-1", "s-2"])
    aws.lb.Listener("plain", load_balancer_arn=lb.arn, port=80, protocol="HTTP", default_actions=[])
    aws.lb.Listener(
        "tls",
        load_balancer_arn=lb.arn,
        port=443,
        protocol="HTTPS",
        certificate_arn="arn:aws:acm:x",
        default_actions=[],
    )
    report = run_pack(plan_of(), rule.NAME, PROD)
    assert [v.message.split(" listens")[0] for v in report.violations] == [f"{LISTENER} 'plain'"]
