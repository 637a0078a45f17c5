"""ModelStore: the versioned, encrypted, private S3 bucket of model weights (+ gateway endpoint)."""

from __future__ import annotations

import json

import pytest

from inference_infra.components.aws import ModelStore, ModelStoreArgs
from inference_infra.components.aws.model_store import GatewayEndpointArgs
from inference_infra.components.errors import InputError


def test_model_store_bucket_is_private_versioned_and_encrypted(plan_of):
    capture = plan_of(ModelStore("models", ModelStoreArgs(bucket_name="acme-models")))
    assert capture.one("aws:s3/bucket:Bucket", "models-bucket").props["bucket"] == "acme-models"
    block = capture.one(
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "models-public-access"
    ).props
    assert all(
        block[k] is True
        for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    )
    versioning = capture.one("aws:s3/bucketVersioning:BucketVersioning").props
    assert versioning["versioningConfiguration"] == {"status": "Enabled"}
    encryption = capture.one(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "models-encryption",
    )
    assert encryption.props["rules"][0]["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
    for bucket in ("models", "models-access-logs"):  # the access-log bucket is as private as the store
        ownership = capture.one(
            "aws:s3/bucketOwnershipControls:BucketOwnershipControls", f"{bucket}-ownership"
        )
        assert ownership.props["rule"] == {"objectOwnership": "BucketOwnerEnforced"}


def test_model_store_expires_replaced_weights_and_requires_tls(plan_of):
    capture = plan_of(ModelStore("models", ModelStoreArgs(noncurrent_version_days=14)))
    rule = capture.one(
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "models-lifecycle"
    ).props["rules"][0]
    assert rule["noncurrentVersionExpiration"] == {"noncurrentDays": 14}
    assert rule["abortIncompleteMultipartUpload"] == {"daysAfterInitiation": 7}
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy", "models-tls-only").props["policy"])
    assert policy["Statement"][0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert capture.one("aws:s3/bucket:Bucket", "models-bucket").props["bucketPrefix"] == "models-"


def test_model_store_adds_an_s3_gateway_endpoint_on_request(plan_of):
    args = ModelStoreArgs(
        gateway_endpoint=GatewayEndpointArgs(vpc_id="vpc-0test", route_table_ids=["rtb-0a"])
    )
    store = ModelStore("models", args)
    capture = plan_of(store)
    endpoint = capture.one("aws:ec2/vpcEndpoint:VpcEndpoint").props
    assert endpoint["serviceName"] == "com.amazonaws.us-east-1.s3"
    assert endpoint["vpcEndpointType"] == "Gateway"
    assert endpoint["routeTableIds"] == ["rtb-0a"]
    source = store.source("meta-llama/70b")
    assert source.prefix == "meta-llama/70b"


def test_model_store_without_endpoint_creates_none(plan_of):
    capture = plan_of(ModelStore("models", ModelStoreArgs()))
    assert capture.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") == []


def test_model_store_rejects_an_invalid_bucket_name():
    with pytest.raises(InputError, match=r"bucket_name 'Acme_Models' must be 3-63 lower-case letters"):
        ModelStore("models", ModelStoreArgs(bucket_name="Acme_Models"))


def test_model_store_logs_every_access_to_a_private_log_bucket(plan_of):
    capture = plan_of(ModelStore("weights", ModelStoreArgs(bucket_name="acme-models")))
    logging = capture.one("aws:s3/bucketLogging:BucketLogging").props
    logs = capture.one("aws:s3/bucket:Bucket", "weights-access-logs")
    assert logging["targetBucket"] == logs.id
    assert logging["targetPrefix"] == "weights/"
    policy = json.loads(
        capture.one("aws:s3/bucketPolicy:BucketPolicy", "weights-access-logs-policy").props["policy"]
    )
    (statement,) = policy["Statement"]
    assert statement["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    assert statement["Action"] == "s3:PutObject"
    assert statement["Condition"]["ArnLike"]["aws:SourceArn"] == "arn:aws:s3:::acme-models"
    block = capture.one(
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "weights-access-logs-public-access"
    )
    assert block.props["restrictPublicBuckets"] is True


PUBLISHER = "arn:aws:iam::123456789012:role/weights-publisher"


def test_model_store_denies_object_writes_to_everyone_but_the_publishers(plan_of):
    capture = plan_of(ModelStore("models", ModelStoreArgs(publishers=[PUBLISHER])))
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy", "models-tls-only").props["policy"])
    deny = next(s for s in policy["Statement"] if s["Sid"] == "OnlyPublishersWriteWeights")
    assert deny["Effect"] == "Deny"
    assert deny["Principal"] == "*"
    assert {"s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"} <= set(deny["Action"])
    assert deny["Resource"].endswith("/*")
    # Exactly the listed publishers: the deploying role is not added on its own.
    assert deny["Condition"] == {"ArnNotEquals": {"aws:PrincipalArn": [PUBLISHER]}}


def test_model_store_without_publishers_keeps_only_the_tls_rule(plan_of):
    capture = plan_of(ModelStore("models", ModelStoreArgs()))
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy", "models-tls-only").props["policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["RefuseWithoutTls"]


@pytest.mark.parametrize(
    "arn",
    ["arn:aws:iam::123456789012:root", "*", "arn:aws:iam::123456789012:role/*x y", "arn:aws:s3:::bucket"],
)
def test_model_store_rejects_publishers_that_are_not_a_role_or_user(arn):
    with pytest.raises(InputError, match=r"publishers\[0\] .* must be an IAM role or user ARN"):
        ModelStore("models", ModelStoreArgs(publishers=[arn]))


def test_model_store_source_carries_the_pinned_manifest_digest(plan_of):
    store = ModelStore("models", ModelStoreArgs())
    plan_of(store)
    source = store.source("meta-llama/70b", manifest_sha256="ab" * 32)
    assert source.manifest_sha256 == "ab" * 32
