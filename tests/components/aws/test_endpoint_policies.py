"""The VPC endpoints' policies hold egress and still let every boot through (#33 item 4).

Every call a rendered boot makes (`node_services.boot_calls`, and for S3 the objects `s3_reads` derives)
is evaluated against the policies the prod plan gives its endpoints: interface endpoints admit this
account's principals, the S3 gateway endpoint this account's buckets with its own credentials and reads
of the AWS-owned buckets the boot needs. Hostile requests (another account's bucket or keys, a write to an
AWS bucket, a look-alike bucket name, an anonymous read of the weights) are refused.

`_allowed` is a small evaluator of the statement shapes these policies use (Allow only; Principal "*";
Action and Resource with `*` wildcards; StringEquals conditions, a missing key failing the condition),
after IAM's policy evaluation logic (IAM User Guide, "Policy evaluation logic" and "Condition operators":
a condition on a key absent from the request does not match; read 2026-12-02). The first test holds the
policies to those shapes, so the evaluator cannot silently read more into them.
"""

from __future__ import annotations

import base64
import fnmatch
import gzip
import json

import pytest

from inference_infra.components.aws.node_services import (
    NODE,
    PRESIGNED,
    S3,
    UNSIGNED,
    boot_calls,
    s3_reads,
)
from inference_infra.components.aws.private_endpoints_args import (
    AWS_OWNED_BUCKETS,
    interface_endpoint_policy,
    s3_gateway_endpoint_policy,
)

ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ACCOUNT = "123456789012"  # the offline plan's account (components/offline_plan/mocks.py)
OTHER = "210987654321"
AWS_SERVICE_ACCOUNT = "999988887777"  # whoever owns an AWS bucket or presigns an ECR layer URL
REGION = "us-east-1"


def _allowed(policy: dict, action: str, resource: str, context: dict[str, str]) -> bool:
    for statement in policy["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = (
            statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        )
        if not any(fnmatch.fnmatchcase(action, a) for a in actions):
            continue
        if not any(fnmatch.fnmatchcase(resource, r) for r in resources):
            continue
        wanted = statement.get("Condition", {}).get("StringEquals", {})
        if all(context.get(key) == value for key, value in wanted.items()):
            return True
    return False


def _s3_context(signer: str, bucket_account: str) -> dict[str, str]:
    context = {"aws:ResourceAccount": bucket_account}
    if signer == NODE:
        context["aws:PrincipalAccount"] = ACCOUNT
    elif signer == PRESIGNED:
        context["aws:PrincipalAccount"] = AWS_SERVICE_ACCOUNT
    return context  # unsigned: no principal at all


def _bucket_account(arn: str) -> str:
    bucket = arn.split(":::", 1)[1].split("/", 1)[0]
    owned = {pattern.format(region=REGION) for pattern in AWS_OWNED_BUCKETS}
    return AWS_SERVICE_ACCOUNT if bucket in owned else ACCOUNT  # the stack's model store and tools bucket


@pytest.fixture(scope="module")
def prod(plan_stack):
    return plan_stack("prod").capture


def _document(template) -> str:
    return gzip.decompress(base64.b64decode(template.props["userData"])).decode()


def test_endpoint_policies_keep_to_the_shapes_the_evaluator_reads(prod):
    endpoints = prod.of_type(ENDPOINT)
    assert endpoints
    for endpoint in endpoints:
        policy = json.loads(endpoint.props["policy"])  # every endpoint has one: none is full access
        for statement in policy["Statement"]:
            assert statement["Effect"] == "Allow"
            assert statement["Principal"] == "*"
            assert set(statement.get("Condition", {})) <= {"StringEquals"}
            assert set(statement) <= {"Sid", "Effect", "Principal", "Action", "Resource", "Condition"}


def test_the_prod_gateway_endpoints_carry_the_s3_policy(prod):
    gateways = [e for e in prod.of_type(ENDPOINT) if e.props.get("vpcEndpointType") == "Gateway"]
    assert gateways
    for gateway in gateways:
        assert json.loads(gateway.props["policy"]) == s3_gateway_endpoint_policy("aws", REGION, ACCOUNT)


def test_every_prod_boot_call_is_allowed_by_the_endpoint_policies(prod):
    interfaces = {
        e.props["serviceName"].split(".", 3)[3]: json.loads(e.props["policy"])
        for e in prod.of_type(ENDPOINT)
        if e.props.get("vpcEndpointType") == "Interface"
    }
    (gateway,) = {
        e.props["policy"] for e in prod.of_type(ENDPOINT) if e.props.get("vpcEndpointType") == "Gateway"
    }
    gateway_policy = json.loads(gateway)
    # EKS node groups' templates carry no user data: EKS's AMI boots those nodes (nodeadm).
    templates = [t for t in prod.of_type(TEMPLATE) if "inference-infra:k8s:EksNodeGroups$" not in t.urn]
    assert templates
    kinds = set()
    for template in templates:
        document = _document(template)
        for service in boot_calls(document):
            if service == S3:
                continue
            # the node's own role signs every interface call: an action of that service on any resource
            context = {"aws:PrincipalAccount": ACCOUNT, "aws:ResourceAccount": ACCOUNT}
            assert _allowed(interfaces[service], f"{service}:AnyAction", "*", context), (
                template.name,
                service,
            )
        reads = s3_reads(document, REGION)
        assert reads, template.name  # every boot reads S3 (dnf at least)
        for arn, signer in reads.items():
            kinds.add(signer)
            context = _s3_context(signer, _bucket_account(arn))
            assert _allowed(gateway_policy, "s3:GetObject", arn, context), (template.name, arn, signer)
    assert kinds == {NODE, UNSIGNED, PRESIGNED}  # weights or wheel, dnf, ECR layers: all exercised


@pytest.mark.parametrize(
    ("action", "resource", "context", "why"),
    [
        (
            "s3:PutObject",
            "arn:aws:s3:::exfil/x",
            {"aws:PrincipalAccount": OTHER, "aws:ResourceAccount": OTHER},
            "another account's keys and bucket",
        ),
        (
            "s3:PutObject",
            "arn:aws:s3:::exfil/x",
            {"aws:PrincipalAccount": ACCOUNT, "aws:ResourceAccount": OTHER},
            "the node's own keys, another account's bucket",
        ),
        (
            "s3:GetObject",
            "arn:aws:s3:::acme-models/x",
            {"aws:PrincipalAccount": OTHER, "aws:ResourceAccount": ACCOUNT},
            "another account's keys on the model store",
        ),
        (
            "s3:GetObject",
            "arn:aws:s3:::acme-models/x",
            {"aws:ResourceAccount": ACCOUNT},
            "an anonymous read of the model store",
        ),
        (
            "s3:PutObject",
            f"arn:aws:s3:::prod-{REGION}-starport-layer-bucket/x",
            {},
            "a write to an AWS-owned bucket",
        ),
        (
            "s3:GetObject",
            f"arn:aws:s3:::al2023-repos-{REGION}-evil/x",
            {"aws:ResourceAccount": OTHER},
            "a look-alike of the AL2023 bucket",
        ),
        (
            "s3:GetObject",
            "arn:aws:s3:::al2023-repos-eu-west-1-de612dc2/x",
            {"aws:ResourceAccount": OTHER},
            "another region's repository (the gateway serves its own region)",
        ),
    ],
)
def test_the_s3_gateway_policy_refuses_hostile_requests(action, resource, context, why):
    assert not _allowed(s3_gateway_endpoint_policy("aws", REGION, ACCOUNT), action, resource, context), why


def test_the_interface_policy_refuses_other_accounts_and_anonymous_calls():
    policy = interface_endpoint_policy(ACCOUNT)
    assert not _allowed(policy, "sts:GetCallerIdentity", "*", {"aws:PrincipalAccount": OTHER})
    assert not _allowed(policy, "ssm:GetParameter", "*", {})
    assert _allowed(policy, "ssm:GetParameter", "*", {"aws:PrincipalAccount": ACCOUNT})


def test_the_s3_gateway_policy_names_aws_buckets_exactly_per_partition_and_region():
    policy = s3_gateway_endpoint_policy("aws-cn", "cn-north-1", ACCOUNT)
    owned = next(s for s in policy["Statement"] if s["Sid"] == "AwsOwnedBucketsNodesRead")
    assert owned["Resource"] == [
        "arn:aws-cn:s3:::al2023-repos-cn-north-1-de612dc2/*",
        "arn:aws-cn:s3:::prod-cn-north-1-starport-layer-bucket/*",
    ]
    assert owned["Action"] == "s3:GetObject"
    assert all("*" not in r.split(":::", 1)[1].split("/", 1)[0] for r in owned["Resource"])
