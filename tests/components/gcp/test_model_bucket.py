"""GcsModelPublishers: object writes to the model bucket only by its publishers (a tag-bound deny policy)."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp.model_bucket import GcsModelPublishers, GcsModelPublishersArgs
from inference_infra.components.gcp.model_bucket_args import DENIED_PERMISSIONS, principal_of

PUBLISHERS = ["serviceAccount:publisher@acme-ml.iam.gserviceaccount.com", "group:ml-release@acme.example"]


def test_gcs_model_publishers_deny_object_writes_to_everyone_but_the_publishers(plan_of):
    plan = plan_of(
        GcsModelPublishers("models", GcsModelPublishersArgs(bucket="acme-models", publishers=PUBLISHERS))
    )
    key = plan.one("gcp:tags/tagKey:TagKey").props
    assert key["parent"] == "projects/test-project"
    binding = plan.one("gcp:tags/locationTagBinding:LocationTagBinding").props
    assert binding["parent"] == "//storage.googleapis.com/projects/_/buckets/acme-models"
    assert binding["location"] == "us-central1"
    policy = plan.one("gcp:iam/denyPolicy:DenyPolicy").props
    assert policy["parent"] == "cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-project"
    rule = policy["rules"][0]["denyRule"]
    assert rule["deniedPrincipals"] == [
        "principalSet://goog/public:all"
    ]  # project owners and the deployer too
    assert rule["exceptionPrincipals"] == [
        "principal://iam.googleapis.com/projects/-/serviceAccounts/publisher@acme-ml.iam.gserviceaccount.com",
        "principalSet://goog/group/ml-release@acme.example",
    ]
    assert rule["deniedPermissions"] == list(DENIED_PERMISSIONS)
    assert "storage.googleapis.com/objects.create" in rule["deniedPermissions"]
    assert rule["denialCondition"]["expression"].startswith("resource.matchTagId('tagKeys/")
    grants = plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    assert [(g.props["member"], g.props["role"]) for g in grants] == [
        (m, "roles/storage.objectUser") for m in PUBLISHERS
    ]


@pytest.mark.parametrize(
    ("publishers", "message"),
    [
        ([], r"publishers \[\] must name at least one IAM member"),
        (["allUsers"], r"publishers\[0\] 'allUsers' must be an IAM member"),
        (["domain:acme.example"], r"publishers\[0\] 'domain:acme.example' must be an IAM member"),
        (["user:*@acme.example"], r"must be an IAM member"),
        (["serviceAccount:a@b.example", "serviceAccount:a@b.example"], r"must not repeat a member"),
    ],
)
def test_gcs_model_publishers_rejects_publishers_that_are_not_named_members(plan_of, publishers, message):
    with pytest.raises(InputError, match=message):
        GcsModelPublishers("models", GcsModelPublishersArgs(bucket="acme-models", publishers=publishers))


def test_gcs_model_publishers_rejects_a_bucket_uri(plan_of):
    with pytest.raises(InputError, match=r"bucket 'gs://acme-models' must be a Cloud Storage bucket name"):
        GcsModelPublishers("models", GcsModelPublishersArgs(bucket="gs://acme-models", publishers=PUBLISHERS))


def test_principal_of_maps_iam_members_to_v2_principals():
    assert principal_of("user:ana@acme.example") == "principal://goog/subject/ana@acme.example"
    assert principal_of("serviceAccount:x") is None
