"""InferenceEndpoint access logs: the bucket admits the log delivery of the endpoint's real region."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import botocore
import pytest

from inference_infra.components.aws.endpoint import (
    ELB_LOG_ACCOUNTS,
    ELB_SERVICE_PRINCIPAL_REGIONS,
    LOG_DELIVERY_SERVICE,
    InferenceEndpoint,
    InferenceEndpointArgs,
    log_delivery_principals,
)
from inference_infra.components.endpoints import EndpointPool, PoolWeight, Route
from inference_infra.components.errors import InputError

POOL = EndpointPool(
    name="llama-8b", model="llama-3.1-8b", ports=[8000], instance_ids=["i-0a"], security_group_id="sg-0a"
)
ARGS = InferenceEndpointArgs(
    vpc_id="vpc-0a",
    subnet_ids=["subnet-0a", "subnet-0b"],
    pools=[POOL],
    routes=[Route(pools=[PoolWeight("llama-8b")])],
    client_cidr_blocks=["10.0.0.0/16"],
)
# Partitions whose ALB log delivery the table covers (ISO and sovereign partitions are not known here).
COVERED_PARTITIONS = ("aws", "aws-us-gov", "aws-cn")


def _botocore_regions() -> dict[str, list[str]]:
    with open(os.path.join(os.path.dirname(botocore.__file__), "data", "endpoints.json")) as f:
        partitions = json.load(f)["partitions"]
    return {p["partition"]: sorted(p["regions"]) for p in partitions}


def _registered(capture) -> list[str]:
    return [r.type for r in capture.resources if r.type != "pulumi:pulumi:Stack"]


def _log_principals(capture) -> list[object]:
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy").props["policy"])
    return [s["Principal"] for s in policy["Statement"] if s["Effect"] == "Allow"]


def test_log_delivery_tables_cover_every_region_botocore_knows():
    regions = _botocore_regions()
    missing = [
        r
        for partition in COVERED_PARTITIONS
        for r in regions[partition]
        if r not in ELB_LOG_ACCOUNTS and r not in ELB_SERVICE_PRINCIPAL_REGIONS
    ]
    assert missing == [], f"regions with no known ALB log delivery (components/aws/endpoint.py): {missing}"
    assert not ELB_LOG_ACCOUNTS.keys() & ELB_SERVICE_PRINCIPAL_REGIONS


def test_log_delivery_principals_use_the_regions_partition():
    assert {"AWS": "arn:aws-us-gov:iam::048591011584:root"} in log_delivery_principals("us-gov-west-1")
    assert {"AWS": "arn:aws-cn:iam::638102146993:root"} in log_delivery_principals("cn-north-1")
    assert {"AWS": "arn:aws:iam::797873946194:root"} in log_delivery_principals("us-west-2")


def test_log_delivery_principals_in_a_region_opened_after_august_2022_are_the_service_only():
    assert log_delivery_principals("il-central-1") == [{"Service": LOG_DELIVERY_SERVICE}]


@pytest.mark.stack_config({"aws:region": "us-west-2"})
def test_inference_endpoint_in_a_us_west_2_stack_grants_the_us_west_2_elb_account(plan_of):
    principals = _log_principals(plan_of(InferenceEndpoint("llm", ARGS)))
    assert {"AWS": "arn:aws:iam::797873946194:root"} in principals
    assert {"AWS": "arn:aws:iam::127311923021:root"} not in principals  # us-east-1's account


@pytest.mark.stack_config({"aws:region": "ap-southeast-5"})
def test_inference_endpoint_in_a_new_region_grants_the_log_delivery_service(plan_of):
    assert _log_principals(plan_of(InferenceEndpoint("llm", ARGS))) == [{"Service": LOG_DELIVERY_SERVICE}]


def test_inference_endpoint_rejects_a_region_with_no_known_log_delivery(plan_of):
    with pytest.raises(InputError, match=r"region 'us-west-3' has no known ELB access-log delivery") as e:
        InferenceEndpoint("llm", replace(ARGS, region="us-west-3"))
    assert "did you mean" in str(e.value)
    assert _registered(plan_of()) == []


@pytest.mark.stack_config({"aws:region": "eu-isoe-west-1"})
def test_inference_endpoint_rejects_a_provider_region_with_no_known_log_delivery(plan_of):
    with pytest.raises(InputError, match=r"aws:region \(the aws provider's region\) 'eu-isoe-west-1' has no"):
        InferenceEndpoint("llm", ARGS)
    assert _registered(plan_of()) == []


@pytest.mark.stack_config({"aws:region": "eu-isoe-west-1"})
def test_inference_endpoint_with_its_own_log_bucket_needs_no_known_log_delivery(plan_of):
    capture = plan_of(InferenceEndpoint("llm", replace(ARGS, access_logs_bucket="acme-alb-logs")))
    assert capture.one("aws:lb/loadBalancer:LoadBalancer").props["accessLogs"]["bucket"] == "acme-alb-logs"
